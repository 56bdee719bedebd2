// Tools for benchmarks and process-level tests, registered only with CRYPTOMCP_BENCH_TOOLS=1:
// a cost-1 tool that answers at once, and a cost-1 tool that fails after its reservation.
import { z } from 'zod';
import { ApiError } from '../../errors.ts';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';

export const benchTools: ToolDefinition[] = [
  defineTool({
    name: 'bench_echo',
    description: 'Returns its input unchanged; for benchmarks and tests of metering.',
    input: z.object({ message: z.string().max(200).default('ping') }).strict(),
    credits: 1,
    handler: async (args) => ({ data: { echo: args.message }, source: 'bench', data_as_of: null }),
  }),
  defineTool({
    name: 'bench_fail',
    description: 'Always fails as an upstream provider would; for tests of refunds.',
    input: z.object({}).strict(),
    credits: 1,
    handler: async () => {
      throw new ApiError('UPSTREAM_ERROR', undefined, { provider: 'bench' });
    },
  }),
];
