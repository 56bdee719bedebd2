// The tool registry: for each hosted server, its tools with effective costs (overrides applied),
// public descriptions, JSON Schemas and the tools/list answer, all computed once at start-up so
// no request rebuilds them.
import type { Icon, Tool } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Freshness } from './envelope.ts';
import type { ServerName } from './names.ts';
import type { ServerModule, ToolDefinition, ToolInfo } from './tool.ts';

export const CREDITS_META_KEY = 'cryptomcp.dev/credits';

export interface RegisteredTool extends ToolInfo {
  /** The server the tool belongs to (metered, logged and scoped under it), or ALL_IN_ONE for that endpoint's own free tools. */
  server: ServerName | typeof ALL_IN_ONE;
  definition: ToolDefinition;
  inputSchema: Record<string, unknown>;
  /**
   * Its outputSchema with every `required` array (the listing publishes it without them,
   * publishedOutputSchema): what the tests validate every real answer against, so that a missing
   * field fails.
   */
  strictOutputSchema: NonNullable<Tool['outputSchema']>;
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

/** How long a task's result is kept after the task was created (2026-07-28 ttlMs, 2025-11-25 ttl); the catalog states it. */
export const TASK_RESULT_TTL_MS = 60 * 60_000;

/** What a long-running tool's description says about tasks (before its cost). */
export function taskSentence(ttlMs: number = TASK_RESULT_TTL_MS): string {
  const hours = ttlMs / 3_600_000;
  const kept = Number.isInteger(hours) ? `${hours} hour${hours === 1 ? '' : 's'}` : `${Math.round(ttlMs / 60_000)} minutes`;
  return `Can run as an MCP task, polled with tasks/get; a task's result is kept for ${kept}.`;
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

const omit = (node: Record<string, unknown>, key: string) => Object.fromEntries(Object.entries(node).filter(([k]) => k !== key));

/** Integer bounds zod states on every int; they say nothing a reader needs. */
const SAFE_INTEGER_BOUNDS = new Set([Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]);

/** The pattern zod writes for a `YYYY-MM-DD` string; `format: date` says the same in two tokens. */
const DATE_PATTERN = '^\\d{4}-\\d{2}-\\d{2}$';

/** Keywords that narrow a schema beyond its `type`: a `null` folded into its type would escape them or be refused by them. */
const NOT_A_PLAIN_TYPE = ['enum', 'const', 'anyOf', 'oneOf', 'allOf', 'not', '$ref'];

/**
 * `anyOf: [X, {type: null}]` (zod's nullable) as one schema: X with `null` added to its type (a
 * type-specific keyword such as `format` or `items` does not apply to null), or to its enum.
 * Undefined when X is a reference or a combination: those keep the anyOf.
 */
function nullableOf(branches: unknown[]): Record<string, unknown> | undefined {
  if (branches.length !== 2) return undefined;
  const nullAt = branches.findIndex((b) => isRecord(b) && b.type === 'null' && Object.keys(b).length === 1);
  const other = branches[1 - nullAt];
  if (nullAt < 0 || !isRecord(other)) return undefined;
  if (Array.isArray(other.enum) && other.$ref === undefined) {
    return { ...omit(other, 'type'), enum: [...other.enum, null] };
  }
  if (typeof other.type !== 'string' || NOT_A_PLAIN_TYPE.some((k) => k in other)) return undefined;
  return { ...other, type: [other.type, 'null'] };
}

/**
 * A zod JSON Schema as clients read it, smaller and the same to them: no safe-integer bounds, no
 * pattern beside a format (zod spells `date-time` out as a 200-character regex) and `format: date`
 * for zod's day pattern, no `propertyNames` on records (JSON keys are strings), a tuple of one type
 * as an array of it with its length (draft-07 validators, the v1 SDK client's among them, read
 * 2020-12's `prefixItems` + `items: false` as "no items"), no `type` beside an `enum` or `const`
 * (their values say it), a nullable as a type array (`["number", "null"]`), and no
 * `additionalProperties: false`: zod adds it to every output object, and an input's unknown field
 * is refused by the handler's strict schema at the gateway whether or not the listing says so.
 */
function compact(node: unknown): unknown {
  if (Array.isArray(node)) return node.map((n) => compact(n));
  if (!isRecord(node)) return node;
  let out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    // A map of names to schemas: its keys are field names, not keywords.
    out[k] = (k === 'properties' || k === '$defs') && isRecord(v)
      ? Object.fromEntries(Object.entries(v).map(([name, sub]) => [name, compact(sub)]))
      : compact(v);
  }
  for (const bound of ['minimum', 'maximum']) if (SAFE_INTEGER_BOUNDS.has(out[bound] as number)) delete out[bound];
  if (out.pattern === DATE_PATTERN && out.format === undefined) out.format = 'date';
  if (out.format !== undefined) delete out.pattern;
  if (out.propertyNames !== undefined && JSON.stringify(out.propertyNames) === '{"type":"string"}') delete out.propertyNames;
  if (out.additionalProperties === false) delete out.additionalProperties;
  if ((out.enum !== undefined || out.const !== undefined) && typeof out.type === 'string') delete out.type;
  const tuple = out.prefixItems;
  if (Array.isArray(tuple) && tuple.length > 0 && tuple.every((t) => JSON.stringify(t) === JSON.stringify(tuple[0]))) {
    delete out.prefixItems;
    out.items = tuple[0];
  }
  const nullable = Array.isArray(out.anyOf) ? nullableOf(out.anyOf) : undefined;
  if (nullable) out = { ...nullable, ...omit(out, 'anyOf') };
  return out;
}

function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  // An output names a part it uses more than once (an indicator reading, a hit count) once, in
  // $defs. Inputs stay inline: some clients that translate input schemas for their model refuse $ref.
  const raw = z.toJSONSchema(schema, { io, unrepresentable: 'any', ...(io === 'output' ? { reused: 'ref' as const } : {}) });
  const json = compact(nameDefs(inlineLeafDefs(raw as Record<string, unknown>))) as Record<string, unknown>;
  delete json.$schema;
  return json;
}

/** A shared part that is not an object with fields (a described string) costs as much as its $ref: it is written in place. */
function inlineLeafDefs(schema: Record<string, unknown>): Record<string, unknown> {
  const defs = isRecord(schema.$defs) ? schema.$defs : {};
  const leaves = new Map(Object.entries(defs).filter(([, d]) => !(isRecord(d) && 'properties' in d)));
  if (leaves.size === 0) return schema;
  const inline = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(inline);
    if (!isRecord(node)) return node;
    const name = typeof node.$ref === 'string' ? node.$ref.replace('#/$defs/', '') : undefined;
    const leaf = name === undefined ? undefined : leaves.get(name);
    if (leaf !== undefined) {
      const siblings = Object.fromEntries(Object.entries(node).filter(([k]) => k !== '$ref'));
      return { ...(inline(leaf) as Record<string, unknown>), ...siblings };
    }
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, inline(v)]));
  };
  const kept = Object.fromEntries(Object.entries(defs).filter(([name]) => !leaves.has(name)));
  const rest = omit(schema, '$defs');
  return inline(Object.keys(kept).length > 0 ? { ...rest, $defs: kept } : rest) as Record<string, unknown>;
}

const refName = (node: Record<string, unknown>) => (typeof node.$ref === 'string' ? node.$ref.replace('#/$defs/', '') : undefined);

/**
 * The shared parts named after the first field (depth first, the root before $defs) that holds
 * them, made unique: zod names them `__schema31`; a reference then reads `#/$defs/window`.
 */
function nameDefs(schema: Record<string, unknown>): Record<string, unknown> {
  if (!isRecord(schema.$defs)) return schema;
  const defs = schema.$defs;
  const names = new Map<string, string>();
  const taken = new Set<string>();
  const visit = (node: unknown, field: string): void => {
    if (Array.isArray(node)) return node.forEach((n) => visit(n, field));
    if (!isRecord(node)) return;
    const ref = refName(node);
    if (ref !== undefined && !names.has(ref)) {
      let name = field;
      for (let i = 2; taken.has(name); i++) name = `${field}${i}`;
      names.set(ref, name);
      taken.add(name);
      visit(defs[ref], name);
    }
    for (const [k, v] of Object.entries(node)) {
      if (k === '$defs') continue;
      if (k === 'properties' && isRecord(v)) for (const [prop, sub] of Object.entries(v)) visit(sub, prop);
      else visit(v, field);
    }
  };
  visit(schema, 'part');
  const rename = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rename);
    if (!isRecord(node)) return node;
    const ref = refName(node);
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, k === '$ref' && ref !== undefined ? `#/$defs/${names.get(ref) ?? ref}` : rename(v)]));
  };
  return { ...(rename(omit(schema, '$defs')) as Record<string, unknown>), $defs: Object.fromEntries(Object.entries(defs).map(([name, d]) => [names.get(name) ?? name, rename(d)])) };
}

/**
 * The outputSchema of a tool: the success envelope of DESIGN.md §3 reduced to what the spec asks
 * of it (an object schema the structuredContent validates against) and what tells an agent
 * something, the tool's own `data` (its shared parts, $defs, move to the root, where its $refs
 * point). `success` and `metadata` are the same on every tool, so they are not restated on each:
 * DESIGN.md §3 and docs/clients.md type them, and an answer carrying them still validates (the
 * envelope is open). Spelling them out cost ~60 tokens a tool in every listing. Errors are HTTP
 * answers with the error envelope, never tool results, so a client validating results against it
 * never sees one fail.
 */
export function outputSchemaOf(data: Record<string, unknown>): NonNullable<Tool['outputSchema']> {
  const { $defs, ...own } = data;
  return {
    type: 'object',
    properties: { data: own },
    required: ['data'],
    ...($defs !== undefined ? { $defs } : {}),
  };
}

/** Keywords whose values are data (an answer's values, not schemas): never rewritten as schemas. */
const VALUE_KEYWORDS = new Set(['const', 'enum', 'default', 'examples']);

/**
 * The outputSchema as tools/list publishes it, from the strict one (the registry keeps both): what
 * issue 32 asks an output schema to say is the fields, their types, units and nullability, and that
 * is what stays. Gone are the `required` arrays, which listed nearly every field: a field that may
 * be empty says so by its null type, and the few a handler may leave out (zod's `.optional()`)
 * say "Optional." first in their description, so the rest are known to be always there. The strict
 * schema, with them, is what the tests validate every real answer against as well. A union of
 * objects (zod's discriminated union: `covered: false` | `covered: true`) lists the fields every
 * branch holds alike once, beside the choice of what each branch adds (its discriminator among
 * them), in place of every branch repeating them.
 */
export function publishedOutputSchema<T>(strict: T): T {
  return published(strict) as T;
}

function published(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(published);
  if (!isRecord(node)) return node;
  const out: Record<string, unknown> = {};
  const present = Array.isArray(node.required) ? new Set(node.required) : undefined;
  for (const [k, v] of Object.entries(node)) {
    if (k === 'required' && present) continue;
    out[k] = VALUE_KEYWORDS.has(k) ? v
      : k === '$defs' && isRecord(v) ? Object.fromEntries(Object.entries(v).map(([name, sub]) => [name, published(sub)]))
      : k === 'properties' && isRecord(v) ? Object.fromEntries(Object.entries(v).map(([name, sub]) => [name, present && !present.has(name) ? optional(published(sub)) : published(sub)]))
      : published(v);
  }
  return sharedFieldsOnce(out);
}

/** A field its object may leave out, as the published schema says it (it has no `required`). */
function optional(field: unknown): unknown {
  if (!isRecord(field)) return field;
  const said = typeof field.description === 'string' ? ` ${field.description}` : '';
  return { ...field, description: `Optional.${said}` };
}

/**
 * `oneOf`/`anyOf` of object schemas that hold some fields alike: those fields once, as the
 * object's, and each branch with only its own. The same to a validator: a field shared alike is
 * checked the same whichever branch it is read in. Unchanged when nothing is shared.
 */
function sharedFieldsOnce(node: Record<string, unknown>): Record<string, unknown> {
  const keyword = Array.isArray(node.oneOf) ? 'oneOf' : Array.isArray(node.anyOf) ? 'anyOf' : undefined;
  if (keyword === undefined || 'properties' in node || 'type' in node) return node;
  const branches = node[keyword] as unknown[];
  if (branches.length < 2 || !branches.every((b) => isRecord(b) && b.type === 'object' && isRecord(b.properties))) return node;
  const fields = (branches as Record<string, unknown>[]).map((b) => b.properties as Record<string, unknown>);
  const [first, ...rest] = fields;
  const shared = Object.entries(first!).filter(([name, schema]) => rest.every((f) => name in f && JSON.stringify(f[name]) === JSON.stringify(schema)));
  if (shared.length === 0) return node;
  const isShared = new Set(shared.map(([name]) => name));
  const own = fields.map((f) => Object.fromEntries(Object.entries(f).filter(([name]) => !isShared.has(name))));
  return {
    ...omit(node, keyword),
    type: 'object',
    properties: Object.fromEntries(shared),
    [keyword]: (branches as Record<string, unknown>[]).map((b, i) => ({ ...omit(omit(b, 'type'), 'properties'), properties: own[i] })),
  };
}

/** `data` of a tool that declares no output schema: an object, nothing more said. */
const UNTYPED_DATA = { type: 'object' };

/**
 * The tool's hints, without what the listing already says: its title is the tool's own `title`
 * (which clients show first), and `openWorldHint` is written only when false (the spec's default
 * is true).
 */
function annotationsOf(def: ToolDefinition): NonNullable<Tool['annotations']> {
  return {
    ...(def.annotations ?? { readOnlyHint: true }),
    ...(def.openWorld === false ? { openWorldHint: false } : {}),
  };
}

/** `freshness`: its server's kind of data, which the tool's own `freshness` overrides. */
function registerTool(def: ToolDefinition, server: ServerName | typeof ALL_IN_ONE, credits: number, freshness: Freshness): RegisteredTool {
  if (!/^[a-z][a-z0-9_]*$/.test(def.name)) throw new Error(`tool name must be snake_case: ${server}.${def.name}`);
  const description = `${def.description.trim()} ${def.longRunning === true ? `${taskSentence()} ` : ''}${costSentence(credits)}`;
  const inputSchema = jsonSchemaOf(def.input, 'input');
  const strictOutputSchema = outputSchemaOf(def.output ? jsonSchemaOf(def.output, 'output') : UNTYPED_DATA);
  return {
    server,
    name: def.name,
    description,
    credits,
    input: def.input,
    freshness: def.freshness ?? freshness,
    definition: def,
    inputSchema,
    strictOutputSchema,
    listing: {
      name: def.name,
      title: def.title,
      description,
      inputSchema: inputSchema as Tool['inputSchema'],
      outputSchema: publishedOutputSchema(strictOutputSchema),
      annotations: annotationsOf(def),
      ...(def.longRunning === true ? { execution: { taskSupport: 'optional' as const } } : {}),
      _meta: { [CREDITS_META_KEY]: credits },
    },
  };
}

/** What a server's tool map determines: the map itself, the infos tools see and the tools/list answer. */
function toolsPart(tools: Map<string, RegisteredTool>): Pick<RegisteredServer, 'tools' | 'toolInfos' | 'toolList'> {
  const all = [...tools.values()];
  return {
    tools,
    toolInfos: all.map(({ name, description, credits, input, freshness }) => ({ name, description, credits, input, freshness })),
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
      tools.set(def.name, registerTool(def, mod.name, costOverrides[`${mod.name}.${def.name}`] ?? def.credits, mod.freshness));
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
 * its watchlists) are neither listed nor callable there, and no tool runs as a task (a task
 * belongs to an account; a paid call settles on its own answer), so the long tools say nothing of tasks.
 */
export function withoutAccountTools(registry: Registry): Registry {
  const open: Registry = new Map();
  for (const [name, server] of registry) {
    const tools = new Map(
      [...server.tools]
        .filter(([, t]) => t.definition.accountBound !== true)
        .map(([k, t]) => [k, t.definition.longRunning === true ? registerTool({ ...t.definition, longRunning: false }, t.server, t.credits, t.freshness) : t]),
    );
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
    for (const def of mod.tools) this.#free.set(def.name, registerTool(def, ALL_IN_ONE, def.credits, mod.freshness));
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
        const tool = registerTool(def, ALL_IN_ONE, def.credits, this.#mod.freshness);
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
