// The tool registry: for each hosted server, its tools with effective costs (overrides applied),
// public descriptions, JSON Schemas and the tools/list answer, all computed once at start-up so
// no request rebuilds them.
import type { Icon, Tool } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { ServerName } from './names.ts';
import type { ServerModule, ToolDefinition, ToolInfo } from './tool.ts';

export const CREDITS_META_KEY = 'cryptomcp.dev/credits';

export interface RegisteredTool extends ToolInfo {
  /** The server the tool belongs to (metered, logged and scoped under it), or ALL_IN_ONE for that endpoint's own free tools. */
  server: ServerName | typeof ALL_IN_ONE;
  definition: ToolDefinition;
  inputSchema: Record<string, unknown>;
  /** The entry of tools/list, ready to send. */
  listing: Tool;
}

/** The all-in-one endpoint's name ({base_url}/mcp): every server the credential may use, at one URL. */
export const ALL_IN_ONE = 'all';

export interface RegisteredServer {
  /** Distinct for every server and every all-in-one view (the protocol layer keys its handlers and caches by it). */
  id: string;
  name: ServerName | typeof ALL_IN_ONE;
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

function registerTool(def: ToolDefinition, server: ServerName | typeof ALL_IN_ONE, credits: number): RegisteredTool {
  if (!/^[a-z][a-z0-9_]*$/.test(def.name)) throw new Error(`tool name must be snake_case: ${server}.${def.name}`);
  const description = `${def.description.trim()} ${costSentence(credits)}`;
  const inputSchema = toInputSchema(def.input);
  return {
    server,
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
  };
}

/** What a server's tool map determines: the map itself, the infos tools see and the tools/list answer. */
function toolsPart(tools: Map<string, RegisteredTool>): Pick<RegisteredServer, 'tools' | 'toolInfos' | 'toolList'> {
  const all = [...tools.values()];
  return {
    tools,
    toolInfos: all.map(({ name, description, credits, input }) => ({ name, description, credits, input })),
    toolList: all.map((t) => t.listing),
  };
}

function serverOf(id: string, name: RegisteredServer['name'], mod: Omit<ServerModule, 'name' | 'tools'>, tools: Map<string, RegisteredTool>): RegisteredServer {
  return {
    id,
    name,
    title: mod.title,
    description: mod.description,
    icons: [{ src: `data:image/svg+xml;base64,${Buffer.from(mod.icon).toString('base64')}`, mimeType: 'image/svg+xml', sizes: ['any'] }],
    chains: mod.chains,
    dataFreshness: mod.dataFreshness,
    ...toolsPart(tools),
  };
}

export function buildRegistry(modules: ServerModule[], costOverrides: Record<string, number> = {}): Registry {
  const registry: Registry = new Map();
  for (const mod of modules) {
    const tools = new Map<string, RegisteredTool>();
    for (const def of mod.tools) {
      if (tools.has(def.name)) throw new Error(`duplicate tool ${mod.name}.${def.name}`);
      tools.set(def.name, registerTool(def, mod.name, costOverrides[`${mod.name}.${def.name}`] ?? def.credits));
    }
    registry.set(mod.name, serverOf(mod.name, mod.name, mod, tools));
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
    open.set(name, { ...server, id: `${server.id}:open`, ...toolsPart(tools) });
  }
  return open;
}

/** The relay is charged the called tool's credits, not its own: no "Costs 0 credits." and no cost in _meta. */
function priceless(tool: RegisteredTool): RegisteredTool {
  const listing = { ...tool.listing, description: tool.definition.description };
  delete listing._meta;
  return { ...tool, description: listing.description, listing };
}

/** What the all-in-one endpoint is besides the servers' data tools: its name, icon and its own free tools. */
export type AllInOneModule = Omit<ServerModule, 'name'> & {
  /** The discovery mode's meta-tools for an endpoint view (servers/common/discovery-tools.ts); absent: no discovery mode. */
  discoveryTools?: (endpoint: RegisteredServer) => ToolDefinition[];
};

/**
 * The discovery mode's relay: a tools/call of it is answered as a call of the tool it names, on
 * the endpoint the discovery view stands for (gateway/relay.ts), so it is metered, scoped and
 * refused exactly as that tool. Its own handler never runs.
 */
export const RELAY_TOOL = 'call_tool';

/**
 * The all-in-one endpoint ({base_url}/mcp): one URL for every server a credential may use. It
 * lists its own free tools once and the data tools of the permitted servers (tool names are
 * unique across servers), each still metered, logged and scoped under the server it belongs to.
 * A view per set of permitted servers is built on first use and kept: there are few such sets.
 */
export class AllInOne {
  readonly #mod: AllInOneModule;
  readonly #free = new Map<string, RegisteredTool>();
  readonly #data = new Map<string, RegisteredTool>();
  readonly #servers: readonly ServerName[];
  readonly #views = new Map<string, RegisteredServer>();

  constructor(registry: Registry, mod: AllInOneModule) {
    this.#mod = mod;
    this.#servers = [...registry.keys()];
    for (const def of mod.tools) this.#free.set(def.name, registerTool(def, ALL_IN_ONE, def.credits));
    for (const server of registry.values()) {
      for (const tool of server.tools.values()) {
        if (this.#free.has(tool.name)) continue;
        const taken = this.#data.get(tool.name);
        if (taken) throw new Error(`the all-in-one endpoint needs unique tool names: ${tool.name} is on ${taken.server} and ${server.name}`);
        this.#data.set(tool.name, tool);
      }
    }
  }

  /** The servers hosted here, in catalog order. */
  get servers(): readonly ServerName[] {
    return this.#servers;
  }

  /** The server a data tool belongs to, whether or not a credential may use it. */
  homeOf(tool: string): ServerName | undefined {
    const found = this.#data.get(tool);
    return found && found.server !== ALL_IN_ONE ? found.server : undefined;
  }

  /** The endpoint as a credential allowed `permitted` sees it. */
  view(permitted: readonly ServerName[]): RegisteredServer {
    const chosen = this.#servers.filter((s) => permitted.includes(s));
    const id = `${ALL_IN_ONE}:${chosen.join(',')}`;
    let view = this.#views.get(id);
    if (!view) {
      const tools = new Map(this.#free);
      for (const tool of this.#data.values()) if (chosen.includes(tool.server as ServerName)) tools.set(tool.name, tool);
      view = serverOf(id, ALL_IN_ONE, this.#mod, tools);
      this.#views.set(id, view);
    }
    return view;
  }

  readonly #discovery = new Map<string, RegisteredServer>();
  readonly #endpoints = new Map<string, RegisteredServer>();

  /**
   * The discovery mode of an endpoint view (one of view()'s): it lists only the meta-tools
   * (find, describe, call), which see the tools of that view; built on first use and kept.
   */
  discovery(endpoint: RegisteredServer): RegisteredServer {
    const id = `${endpoint.id}:discover`;
    let view = this.#discovery.get(id);
    if (!view) {
      const make = this.#mod.discoveryTools;
      if (!make) throw new Error('the all-in-one module declares no discovery tools');
      const tools = new Map<string, RegisteredTool>();
      for (const def of make(endpoint)) {
        const tool = registerTool(def, ALL_IN_ONE, def.credits);
        tools.set(def.name, def.name === RELAY_TOOL ? priceless(tool) : tool);
      }
      view = serverOf(id, ALL_IN_ONE, { ...this.#mod, description: `${this.#mod.description} Discovery mode: find_tools, describe_tool, then ${RELAY_TOOL}.` }, tools);
      this.#discovery.set(id, view);
      this.#endpoints.set(id, endpoint);
    }
    return view;
  }

  /** The endpoint view a discovery view stands for; undefined for any other server or view. */
  endpointOf(view: RegisteredServer): RegisteredServer | undefined {
    return this.#endpoints.get(view.id);
  }
}
