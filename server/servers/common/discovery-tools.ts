// The all-in-one endpoint's discovery mode ({base_url}/mcp/discover): three meta-tools in place of
// every tool definition, for clients that pay for each definition in their context. find_tools and
// describe_tool read the endpoint view the credential may use, so they find only tools it may
// call, and are free; call_tool is relayed by the gateway as a call of the tool it names
// (gateway/relay.ts), so it is metered, scoped, refused and refunded as that tool.
import { z } from 'zod';
import { ApiError } from '../../errors.ts';
import { ALL_IN_ONE, RELAY_TOOL, type RegisteredServer, type RegisteredTool } from '../../mcp/registry.ts';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import { cursorSchema, limitSchema, page } from './paging.ts';

/** A word as find_tools compares it: lower case, a plural's trailing "s" dropped. */
function stem(word: string): string {
  const w = word.toLowerCase();
  return w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w;
}

function wordsOf(text: string): string[] {
  return text.split(/[^A-Za-z0-9]+/).filter((w) => w.length > 0).map(stem);
}

/** The first sentence of a description: what the tool returns. */
export function summaryOf(description: string): string {
  const end = description.search(/\.(\s|$)/);
  return end < 0 ? description : description.slice(0, end + 1);
}

/** How many of the query's words the tool's name, title, server or description holds (as a word's start). */
function score(tool: RegisteredTool, query: readonly string[]): number {
  const words = wordsOf(`${tool.name} ${tool.listing.title ?? ''} ${tool.server} ${tool.description}`);
  return query.filter((q) => words.some((w) => w.startsWith(q))).length;
}

const FoundTool = z.object({
  name: z.string(),
  server: z.string().describe(`The server it belongs to ("${ALL_IN_ONE}": the endpoint's own free tools).`),
  summary: z.string().describe('What it returns, in one sentence.'),
  credits: z.int().describe('Credits a successful call costs.'),
});

export function discoveryTools(endpoint: RegisteredServer): ToolDefinition[] {
  const tools = [...endpoint.tools.values()];
  const servers = [...new Set(tools.map((t) => t.server).filter((s) => s !== ALL_IN_ONE))];
  const found = (t: RegisteredTool): z.infer<typeof FoundTool> => ({ name: t.name, server: t.server, summary: summaryOf(t.description), credits: t.credits });
  const unknown = (name: string) =>
    new ApiError('NOT_FOUND', `No tool named "${name}" is open to this credential; find_tools lists those that are.`, { tool: name });

  return [
    defineTool({
      name: 'find_tools',
      title: 'Find tools',
      openWorld: false,
      description: 'Returns the tools this credential may call that match the words or server given (all when none), best match first, each with its credits.',
      input: z
        .object({
          query: z.string().max(200).optional().describe('Words to look for, e.g. "whale transfers".'),
          server: (servers.length > 0 ? z.enum(servers as [string, ...string[]]) : z.string().max(64)).optional().describe('Only this server\'s tools.'),
          limit: limitSchema,
          cursor: cursorSchema,
        })
        .strict(),
      output: z.object({ tools: z.array(FoundTool), total: z.int().describe('Matches in all pages.') }),
      credits: 0,
      handler: async (args) => {
        const query = wordsOf(args.query ?? '');
        const inServer = tools.filter((t) => args.server === undefined || t.server === args.server);
        const matches =
          query.length === 0
            ? inServer
            : inServer
                .map((t, i) => ({ t, i, s: score(t, query) }))
                .filter((m) => m.s > 0)
                .sort((a, b) => b.s - a.s || a.i - b.i)
                .map((m) => m.t);
        const result = page(matches.map(found), args.limit, args.cursor);
        return {
          data: { tools: result.items, total: matches.length },
          source: 'registry',
          data_as_of: null,
          truncated: result.truncated,
          ...(result.next_cursor !== undefined ? { next_cursor: result.next_cursor } : {}),
        };
      },
    }),
    defineTool({
      name: 'describe_tool',
      title: 'Describe a tool',
      openWorld: false,
      description: `Returns one tool's full description, credits, server, and input and output JSON Schemas, to call it with ${RELAY_TOOL}.`,
      input: z.object({ name: z.string().min(1).max(64).describe('A tool name from find_tools.') }).strict(),
      output: z.object({
        name: z.string(),
        server: z.string(),
        title: z.string(),
        description: z.string(),
        credits: z.int(),
        input_schema: z.record(z.string(), z.unknown()),
        output_schema: z.record(z.string(), z.unknown()).nullable(),
        annotations: z.record(z.string(), z.unknown()),
      }),
      credits: 0,
      handler: async (args) => {
        const tool = endpoint.tools.get(args.name);
        if (!tool) throw unknown(args.name);
        const { listing } = tool;
        return {
          data: {
            name: tool.name,
            server: tool.server,
            title: listing.title ?? tool.name,
            description: tool.description,
            credits: tool.credits,
            input_schema: listing.inputSchema,
            output_schema: listing.outputSchema ?? null,
            annotations: listing.annotations ?? {},
          },
          source: 'registry',
          data_as_of: null,
        };
      },
    }),
    defineTool({
      name: RELAY_TOOL,
      title: 'Call a tool',
      // It may run any tool, a watchlist write or an upstream call included.
      annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: true },
      description:
        "Runs the named tool with its arguments and returns that tool's answer. Charged, limited and refused as that tool (its credits: find_tools); a failed call costs nothing.",
      input: z
        .object({
          name: z.string().min(1).max(64).describe('A tool name from find_tools.'),
          arguments: z.record(z.string(), z.unknown()).optional().describe("Its arguments, per describe_tool's input_schema."),
        })
        .strict(),
      output: z.record(z.string(), z.unknown()).describe("The called tool's data (describe_tool gives its shape)."),
      credits: 0,
      handler: async () => {
        throw new Error(`${RELAY_TOOL} reached its own handler: the gateway relays it as the tool it names`);
      },
    }),
  ];
}
