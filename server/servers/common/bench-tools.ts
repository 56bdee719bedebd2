// Tools for benchmarks and process-level tests, registered only with CRYPTOMCP_BENCH_TOOLS=1:
// a cost-1 tool that answers at once, one that fails after its reservation, one that takes as
// long as asked (for timeouts, graceful drain and crash tests), one that holds the CPU, and a
// long list paged like the data tools (pages cut for size on every paid path).
import { z } from 'zod';
import { ApiError } from '../../errors.ts';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import { cursorSchema, limitSchema, page } from './paging.ts';

export const benchTools: ToolDefinition[] = [
  defineTool({
    name: 'bench_echo',
    title: 'Benchmark echo',
    openWorld: false,
    description: 'Returns its input unchanged; for benchmarks and tests of metering.',
    input: z
      .object({
        message: z.string().max(200).default('ping'),
        pad: z.number().int().min(0).max(30_000).default(0).describe('Characters of padding added to the answer (for tests of large answers).'),
        empty: z.boolean().default(false).describe('Answer as a tool that found no data for what was asked (charged nothing).'),
      })
      .strict(),
    output: z.object({ echo: z.string(), pad: z.string().optional() }),
    credits: 1,
    handler: async (args) => ({
      data: { echo: args.message, ...(args.pad > 0 ? { pad: 'x'.repeat(args.pad) } : {}) },
      source: 'bench',
      data_as_of: null,
      ...(args.empty ? { empty: true } : {}),
    }),
  }),
  defineTool({
    name: 'bench_sleep',
    longRunning: true,
    title: 'Benchmark sleep',
    openWorld: false,
    description: 'Returns after waiting the given milliseconds; for tests of timeouts, draining and disconnects.',
    input: z
      .object({
        ms: z.number().int().min(0).max(60_000),
        ignore_abort: z.boolean().default(false).describe('Keep waiting when aborted, as a CPU-bound tool would.'),
      })
      .strict(),
    output: z.object({ slept_ms: z.number() }),
    credits: 1,
    handler: async (args, ctx) => {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, args.ms);
        if (args.ignore_abort) return;
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(new ApiError('UPSTREAM_TIMEOUT', undefined, { provider: 'bench' }));
        }, { once: true });
      });
      return { data: { slept_ms: args.ms }, source: 'bench', data_as_of: null };
    },
  }),
  defineTool({
    name: 'bench_spin',
    title: 'Benchmark CPU spin',
    openWorld: false,
    description: 'Holds the CPU of the thread it runs on for the given milliseconds, as heavy math does; for tests of CPU-bound calls.',
    input: z.object({ ms: z.number().int().min(0).max(10_000) }).strict(),
    output: z.object({ spun_ms: z.number(), spins: z.number() }),
    credits: 1,
    handler: async (args) => {
      const until = performance.now() + args.ms;
      let spins = 0;
      while (performance.now() < until) spins++;
      return { data: { spun_ms: args.ms, spins }, source: 'bench', data_as_of: null };
    },
  }),
  defineTool({
    name: 'bench_page',
    longRunning: true,
    title: 'Benchmark pages',
    openWorld: false,
    description: 'Returns a page of a list of `items` strings of `item_chars` characters, paged as the data tools page (cut for size); for tests of what a cut page costs.',
    input: z
      .object({
        items: z.number().int().min(1).max(1000).default(100),
        item_chars: z.number().int().min(1).max(10_000).default(1000),
        limit: limitSchema,
        cursor: cursorSchema,
      })
      .strict(),
    output: z.object({ total: z.number(), items: z.array(z.string()) }),
    credits: 5,
    handler: async (args) => {
      const all = Array.from({ length: args.items }, (_, i) => `${i}:`.padEnd(args.item_chars, 'x'));
      const { items, next_cursor, truncated, share } = page(all, args.limit, args.cursor);
      return { data: { total: all.length, items }, source: 'bench', data_as_of: null, next_cursor, truncated, page: share };
    },
  }),
  defineTool({
    name: 'bench_fail',
    longRunning: true,
    title: 'Benchmark failure',
    openWorld: false,
    description: 'Always fails as an upstream provider would; for tests of refunds.',
    input: z.object({}).strict(),
    output: z.object({}),
    credits: 1,
    handler: async () => {
      throw new ApiError('UPSTREAM_ERROR', undefined, { provider: 'bench' });
    },
  }),
];
