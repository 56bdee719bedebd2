// The three free tools every server has (DESIGN.md §4): get_capabilities, estimate_cost, get_usage.
import { z } from 'zod';
import { ApiError } from '../../errors.ts';
import { FRESHNESS } from '../../mcp/envelope.ts';
import { defineTool, type ServerModule, type ToolDefinition } from '../../mcp/tool.ts';

export function freeTools(server: Pick<ServerModule, 'title' | 'description' | 'chains' | 'dataFreshness'> & { name: ServerModule['name'] | 'all' }): ToolDefinition[] {
  return [
    defineTool({
      name: 'get_capabilities',
      title: 'Server capabilities',
      openWorld: false,
      description: `Returns what ${server.name === 'all' ? 'this endpoint (every server the credential may use)' : 'this server'} offers: tools with credit costs, chains, data freshness.`,
      input: z.object({}).strict(),
      output: z.object({
        server: z.string(),
        title: z.string(),
        description: z.string(),
        chains: z.array(z.string()),
        data_freshness: z.string(),
        freshness: z.record(z.string(), z.object({ stale_after_days: z.number().int(), covers: z.string() })),
        tools: z.array(z.object({ name: z.string(), description: z.string(), credits: z.number(), freshness: z.string().describe('Stale after freshness[it].stale_after_days.') })),
      }),
      credits: 0,
      handler: async (_args, ctx) => ({
        data: {
          server: server.name,
          title: server.title,
          description: server.description,
          chains: [...server.chains],
          data_freshness: server.dataFreshness,
          freshness: FRESHNESS,
          tools: ctx.tools.map((t) => ({ name: t.name, description: t.description, credits: t.credits, freshness: t.freshness })),
        },
        source: 'registry',
        data_as_of: null,
      }),
    }),
    defineTool({
      name: 'estimate_cost',
      title: "Estimate a call's cost",
      openWorld: false,
      description: "Returns a tool call's cost in credits and whether its arguments would be accepted.",
      input: z
        .object({
          tool: z.string().min(1).max(64).describe('A tool of this server.'),
          arguments: z.record(z.string(), z.unknown()).optional(),
        })
        .strict(),
      output: z.object({
        tool: z.string(),
        credits: z.number(),
        arguments_valid: z.boolean().nullable().describe('null without arguments'),
        issues: z.array(z.object({ path: z.string(), message: z.string() })),
        note: z.string(),
      }),
      credits: 0,
      handler: async (args, ctx) => {
        const tool = ctx.tools.find((t) => t.name === args.tool);
        if (!tool) {
          throw new ApiError('NOT_FOUND', `This server has no tool named "${args.tool}".`, {
            tool: args.tool,
            available: ctx.tools.map((t) => t.name),
          });
        }
        const check = args.arguments === undefined ? undefined : tool.input.safeParse(args.arguments);
        return {
          data: {
            tool: tool.name,
            credits: tool.credits,
            arguments_valid: check ? check.success : null,
            issues: check && !check.success ? check.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) : [],
            note: 'Only a successful call is charged; a call rejected for its arguments costs nothing.',
          },
          source: 'registry',
          data_as_of: null,
        };
      },
    }),
    defineTool({
      name: 'get_usage',
      accountBound: true,
      title: 'Plan and usage',
      openWorld: false,
      description: "Returns your plan, credit balance, renewal date, and this period's calls and credits by server and tool.",
      input: z.object({}).strict(),
      output: z.object({
        plan: z.string(),
        status: z.string(),
        balance: z.number(),
        renewal: z.enum(['one-time', 'monthly']),
        period_start: z.string(),
        renews_at: z.string().nullable(),
        allowance: z.number(),
        calls: z.number(),
        credits_used: z.number(),
        by_server: z.array(z.object({ server: z.string(), calls: z.number(), credits: z.number() })),
        by_tool: z.array(z.object({ server: z.string(), tool: z.string(), calls: z.number(), credits: z.number() })),
      }),
      credits: 0,
      handler: async (_args, ctx) => ({
        data: await ctx.usage.usage(ctx.account.id),
        source: 'account',
        data_as_of: null,
      }),
    }),
  ];
}
