// The tool registry: for each hosted server, its tools with effective costs (overrides applied),
// public descriptions, JSON Schemas and the tools/list answer, all computed once at start-up so
// no request rebuilds them.
import { z } from 'zod';
import type { ServerName } from '../servers/names.ts';
import type { ServerModule, ToolDefinition, ToolInfo } from './tool.ts';

export const CREDITS_META_KEY = 'cryptomcp.dev/credits';

export interface RegisteredTool extends ToolInfo {
  definition: ToolDefinition;
  inputSchema: Record<string, unknown>;
  /** The entry of tools/list, ready to send. */
  listing: {
    name: string;
    description: string;
    inputSchema: Record<string, unknown>;
    annotations: { readOnlyHint: true };
    _meta: Record<string, unknown>;
  };
}

export interface RegisteredServer {
  name: ServerName;
  title: string;
  description: string;
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
          description,
          inputSchema,
          annotations: { readOnlyHint: true },
          _meta: { [CREDITS_META_KEY]: credits },
        },
      });
    }
    const all = [...tools.values()];
    registry.set(mod.name, {
      name: mod.name,
      title: mod.title,
      description: mod.description,
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
