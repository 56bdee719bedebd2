// The three free tools every server has (DESIGN.md §4): get_capabilities, estimate_cost, get_usage.
import { z } from 'zod';
import { ApiError } from '../../errors.ts';
import { defineTool, type ServerModule, type ToolDefinition } from '../../mcp/tool.ts';

export function freeTools(server: Pick<ServerModule, 'title' | 'description' | 'chains' | 'dataFreshness'> & { name: ServerModule['name'] | 'all' }): ToolDefinition[] {
  return [
    defineTool({
      name: 'get_capabilities',
      title: 'Server capabilities',
      openWorld: false,
      description: `Returns what ${server.name === 'all' ? 'this endpoint offers (every server the credential may use)' : `the ${server.name} server does`}: its tools with their credit costs, the chains it covers and how fresh its data is.`,
      input: z.object({}).strict(),
      credits: 0,
      handler: async (_args, ctx) => ({
        data: {
          server: server.name,
          title: server.title,
          description: server.description,
          chains: server.chains,
          data_freshness: server.dataFreshness,
          tools: ctx.tools.map((t) => ({ name: t.name, description: t.description, credits: t.credits })),
        },
        source: 'registry',
        data_as_of: null,
      }),
    }),
    defineTool({
      name: 'estimate_cost',
      title: "Estimate a call's cost",
      openWorld: false,
      description:
        'Returns the credits a call of one of this server\'s tools would cost, and whether the given arguments would be accepted.',
      input: z
        .object({
          tool: z.string().min(1).max(64).describe('Name of a tool of this server.'),
          arguments: z.record(z.string(), z.unknown()).optional().describe('The arguments you intend to send.'),
        })
        .strict(),
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
      description:
        'Returns your plan, credit balance, renewal date, and this period\'s calls and credits by server and tool.',
      input: z.object({}).strict(),
      credits: 0,
      handler: async (_args, ctx) => ({
        data: await ctx.usage.usage(ctx.account.id),
        source: 'account',
        data_as_of: null,
      }),
    }),
  ];
}
