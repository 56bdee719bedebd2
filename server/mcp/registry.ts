// The tool registry: for each hosted server, its tools with effective costs (overrides applied),
// public descriptions, JSON Schemas and the tools/list answer, all computed once at start-up so
// no request rebuilds them.
import type { Icon, Tool } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { ServerName } from './names.ts';
import type { ServerModule, ToolDefinition, ToolInfo } from './tool.ts';

export const CREDITS_META_KEY = 'cryptomcp.dev/credits';

export interface RegisteredTool extends ToolInfo {
  definition: ToolDefinition;
  inputSchema: Record<string, unknown>;
  /** The entry of tools/list, ready to send. */
  listing: Tool;
}

export interface RegisteredServer {
  name: ServerName;
  title: string;
  description: string;
  icons: Icon[];
  chains: readonly string[];
  dataFreshness: string;
  tools: Map<string, RegisteredTool>;
  toolInfos: readonly ToolInfo[];
  toolList: RegisteredTool['listing'][];
}

export type Registry = Map<ServerName, RegisteredServer>;

export function costSentence(credits: number): string {
  return `Costs ${credits} credit${credits === 1 ? '' : 's'}.`;
}

function toInputSchema(input: z.ZodObject): Record<string, unknown> {
  const schema = z.toJSONSchema(input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete schema.$schema;
  return schema;
}

/**
 * The schema every tools/call result's structuredContent validates against: the success envelope
 * of DESIGN.md §3. Errors are HTTP answers with the error envelope, never tool results, so a
 * client validating results against it never sees one fail.
 */
export const SUCCESS_ENVELOPE_SCHEMA = {
  type: 'object',
  properties: {
    success: { const: true },
    data: { type: 'object', description: "The tool's answer; its fields are described in the tool's description." },
    metadata: {
      type: 'object',
      properties: {
        timestamp: { type: 'string', format: 'date-time' },
        credits_used: { type: 'integer', minimum: 0 },
        remaining_credits: { type: 'integer', minimum: 0 },
        request_id: { type: 'string' },
        source: { type: 'string' },
        data_as_of: { type: ['string', 'null'] },
        truncated: { type: 'boolean' },
        next_cursor: { type: 'string' },
        notes: { type: 'array', items: { type: 'string' }, description: 'Statements to read beside the numbers: mixed dates, coverage gaps.' },
      },
      required: ['timestamp', 'credits_used', 'remaining_credits', 'request_id', 'source', 'data_as_of', 'truncated'],
    },
  },
  required: ['success', 'data', 'metadata'],
} as const satisfies Tool['outputSchema'];

function annotationsOf(def: ToolDefinition): NonNullable<Tool['annotations']> {
  return {
    title: def.title,
    ...(def.annotations ?? { readOnlyHint: true }),
    openWorldHint: def.openWorld ?? true,
  };
}

export function buildRegistry(modules: ServerModule[], costOverrides: Record<string, number> = {}): Registry {
  const registry: Registry = new Map();
  for (const mod of modules) {
    const tools = new Map<string, RegisteredTool>();
    for (const def of mod.tools) {
      if (!/^[a-z][a-z0-9_]*$/.test(def.name)) throw new Error(`tool name must be snake_case: ${mod.name}.${def.name}`);
      if (tools.has(def.name)) throw new Error(`duplicate tool ${mod.name}.${def.name}`);
      const credits = costOverrides[`${mod.name}.${def.name}`] ?? def.credits;
      const description = `${def.description.trim()} ${costSentence(credits)}`;
      const inputSchema = toInputSchema(def.input);
      tools.set(def.name, {
        name: def.name,
        description,
        credits,
        input: def.input,
        definition: def,
        inputSchema,
        listing: {
          name: def.name,
          title: def.title,
          description,
          inputSchema: inputSchema as Tool['inputSchema'],
          outputSchema: SUCCESS_ENVELOPE_SCHEMA,
          annotations: annotationsOf(def),
          _meta: { [CREDITS_META_KEY]: credits },
        },
      });
    }
    const all = [...tools.values()];
    registry.set(mod.name, {
      name: mod.name,
      title: mod.title,
      description: mod.description,
      icons: [{ src: `data:image/svg+xml;base64,${Buffer.from(mod.icon).toString('base64')}`, mimeType: 'image/svg+xml', sizes: ['any'] }],
      chains: mod.chains,
      dataFreshness: mod.dataFreshness,
      tools,
      toolInfos: all.map(({ name, description, credits, input }) => ({ name, description, credits, input })),
      toolList: all.map((t) => t.listing),
    });
  }
  const unknownOverrides = Object.keys(costOverrides).filter((k) => {
    const [server, tool] = k.split('.');
    const s = registry.get(server as ServerName);
    return s !== undefined && !s.tools.has(tool ?? '');
  });
  if (unknownOverrides.length > 0) throw new Error(`TOOL_COST_OVERRIDES names unknown tools: ${unknownOverrides.join(', ')}`);
  return registry;
}

/**
 * The registry as callers without an account see it (x402): tools bound to an account (its usage,
 * its watchlists) are neither listed nor callable there.
 */
export function withoutAccountTools(registry: Registry): Registry {
  const open: Registry = new Map();
  for (const [name, server] of registry) {
    const tools = new Map([...server.tools].filter(([, t]) => t.definition.accountBound !== true));
    const all = [...tools.values()];
    open.set(name, {
      ...server,
      tools,
      toolInfos: server.toolInfos.filter((t) => tools.has(t.name)),
      toolList: all.map((t) => t.listing),
    });
  }
  return open;
}
