// Every tool of every endpoint, called for real (the running service on the offline snapshot and a
// seeded devnet, over HTTP) with realistic arguments (test/helpers/tool-cases.ts); a tool without
// a case fails.
//
// Output schemas (issue 32 item 3): every tool's outputSchema types its `data`, and every tool's
// real answer validates against the outputSchema it lists (published without `required` arrays,
// the registry's publishedOutputSchema) and against the strict schema the registry keeps beside it
// (with them): the listed one by a JSON Schema 2020-12 validator (Ajv) and by the SDK clients' own
// checks (the v1 client and the v2 client pinned to 2026-07-28 both validate structuredContent
// against the listed schema and throw when it does not match); the strict one by Ajv, closed (no
// field the schema does not name), so a field missing from an answer still fails here. A tool
// without a typed output schema fails.
//
// Issue 35 items 6 and 8, on the same answers:
// - every answer's keys are snake_case: the real answer is walked, and so is every field name its
//   output schema declares; a key that is data (a record keyed by asset id or address) is not a
//   field name;
// - every answer says whether its data is stale (metadata.stale), and a stale one says so first
//   in metadata.notes, where an agent reading only the text sees it;
// - a tool called with its input schema's minimal valid input (only the required fields, each
//   with a value the listed JSON Schema accepts) is never refused as invalid (no 400): the
//   schema a client reads is the one the tool enforces;
// - a tool that lists solana among its chains serves it.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Client as V2Client } from '@modelcontextprotocol/client';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVER_NAMES, type ServerName } from '../../server/mcp/names.ts';
import { publishedOutputSchema, type RegisteredServer } from '../../server/mcp/registry.ts';
import { offlineAllInOne } from '../../scripts/offline-registry.ts';
import type { RunningService } from '../../server/runtime.ts';
import type { Devnet } from '../../server/devnet/devnet.ts';
import { mcpClient, mcpClientV2, post, toolCall } from '../helpers/service.ts';
import { ALERT_STATE, CASES, FREE, startToolsService, type Args, type Endpoint, type ToolsService } from '../helpers/tool-cases.ts';

/** The discovery relay answers with the data of the tool it calls, whose schema describe_tool gives: its own is an open record. */
const UNTYPED_BY_DESIGN = new Set(['call_tool']);

/** The envelope's metadata as DESIGN.md §3 types it (the listed schema only names its required fields). */
const METADATA = {
  type: 'object',
  properties: {
    timestamp: { type: 'string', format: 'date-time' },
    credits_used: { type: 'integer', minimum: 0 },
    remaining_credits: { type: 'integer', minimum: 0 },
    request_id: { type: 'string', minLength: 1 },
    source: { type: 'string', minLength: 1 },
    data_as_of: { type: ['string', 'null'] },
    stale: { type: 'boolean' },
    truncated: { type: 'boolean' },
    next_cursor: { type: 'string' },
    notes: { type: 'array', items: { type: 'string' } },
  },
  required: ['timestamp', 'credits_used', 'remaining_credits', 'request_id', 'source', 'data_as_of', 'stale', 'truncated'],
  additionalProperties: false,
};

/** The endpoint as the registry holds it: a server of the running service, or the all-in-one (and its discovery mode) a premium key sees. */
function registered(endpoint: Endpoint): RegisteredServer {
  if (endpoint !== '' && endpoint !== 'discover') return svc.registry.get(endpoint)!;
  const allInOne = offlineAllInOne();
  const view = allInOne.view(SERVER_NAMES);
  return endpoint === '' ? view : allInOne.discovery(view);
}

/**
 * The schema with every object of `data` (and of its shared parts) that names its fields closed to
 * others: an answer carrying a field its schema does not document fails. The envelope stays open:
 * the listed schema names only `data` (success and metadata are typed by METADATA below).
 */
function closedData(schema: Record<string, unknown>): Record<string, unknown> {
  const props = schema.properties as Record<string, unknown>;
  return {
    ...schema,
    properties: { ...props, data: closed(props.data) },
    ...(schema.$defs !== undefined ? { $defs: Object.fromEntries(Object.entries(schema.$defs as object).map(([n, s]) => [n, closed(s)])) } : {}),
  };
}

function closed(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closed);
  if (node === null || typeof node !== 'object') return node;
  const out = Object.fromEntries(
    Object.entries(node).map(([k, v]) => [k, k === 'properties' || k === '$defs' ? Object.fromEntries(Object.entries(v as object).map(([n, s]) => [n, closed(s)])) : closed(v)]),
  );
  if ('properties' in out && !('additionalProperties' in out)) out.additionalProperties = false;
  return out;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const ajv = addFormats(new Ajv2020({ allErrors: true, strict: false }));
const metadata = ajv.compile(METADATA);

type Schema = { [k: string]: unknown; properties?: Record<string, Schema>; required?: string[] };

interface Listed {
  name: string;
  inputSchema: Schema;
  outputSchema?: { properties?: { data?: Record<string, unknown> } } & Record<string, unknown>;
}

let tools: ToolsService;
let devnet: Devnet;
let svc: RunningService;
let key: string;
const v1 = new Map<Endpoint, Client>();
const v2 = new Map<Endpoint, V2Client>();
const listings = new Map<Endpoint, Listed[]>();
const ENDPOINTS: Endpoint[] = [...SERVER_NAMES, '', 'discover'];

beforeAll(async () => {
  tools = await startToolsService();
  ({ devnet, svc, key } = tools);
  for (const endpoint of ENDPOINTS) {
    const client = await mcpClient(svc.url, endpoint, key);
    // Listing first: the clients validate answers against the schemas they listed.
    listings.set(endpoint, (await client.listTools()).tools as Listed[]);
    v1.set(endpoint, client);
    const modern = await mcpClientV2(svc.url, endpoint, key, 'pinned');
    await modern.listTools();
    v2.set(endpoint, modern);
  }
}, 120_000);
afterAll(async () => {
  for (const c of [...v1.values(), ...v2.values()]) await c.close();
  await tools?.stop();
});

/** lowerCamelCase: a lower-case start, then an upper-case letter (snake_case, numbers and addresses never match). */
const CAMEL = /^[a-z][a-z0-9]*[A-Z]/;

/** Every field name an output schema declares (under properties, anywhere, $defs included). */
function declaredNames(node: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((n) => declaredNames(n, out));
  else if (node !== null && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === 'properties' && v !== null && typeof v === 'object') for (const name of Object.keys(v)) out.add(name);
      declaredNames(v, out);
    }
  }
  return out;
}

/** The keys of a real answer that are field names (records keyed by data are not: their keys are not declared). */
function answerKeys(value: unknown, declared: Set<string>, path = '', out: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v, i) => answerKeys(v, declared, `${path}[${i}]`, out));
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (declared.has(k)) out.push(`${path}.${k}`);
      answerKeys(v, declared, `${path}.${k}`, out);
    }
  }
  return out;
}

/** A tools/call over plain HTTP (the answer's status and body as sent, a 400 included). */
function callTool(server: ServerName, tool: string, args: Args) {
  return post(`${svc.url}/mcp/${server}`, toolCall(tool, args), { 'x-api-key': key });
}

const isRecord = (v: unknown): v is Schema => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Values to try for a field, first the realistic one of the tool's case, then generic ones; the first the schema accepts is used. */
function candidates(schema: Schema, realistic: unknown): unknown[] {
  const out: unknown[] = [];
  if (realistic !== undefined) out.push(realistic);
  if (Array.isArray(schema.enum)) out.push(...(schema.enum as unknown[]));
  if (schema.const !== undefined) out.push(schema.const);
  if (schema.default !== undefined) out.push(schema.default);
  const min = typeof schema.minimum === 'number' ? schema.minimum : typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + 1 : 1;
  out.push(min, 'bitcoin', 'a', '2025-01-01', '0x0000000000000000000000000000000000000001', true, ['bitcoin', 'ethereum'], {});
  return out;
}

/** The schema's minimal valid input: its required fields only, each given the first candidate its schema accepts. */
function minimalInput(schema: Schema, realistic: Args): Args {
  const input: Args = {};
  for (const name of schema.required ?? []) {
    const field = schema.properties?.[name];
    if (!isRecord(field)) continue;
    const check = ajv.compile(field);
    const value = candidates(field, realistic[name]).find((c) => check(c));
    expect(value, `no candidate value fits the field ${name}: ${JSON.stringify(field)}`).toBeDefined();
    input[name] = value;
  }
  expect(ajv.validate(schema, input), `minimal input ${JSON.stringify(input)}: ${ajv.errorsText(ajv.errors)}`).toBe(true);
  return input;
}

const label = (e: Endpoint) => (e === '' ? 'all-in-one' : e === 'discover' ? 'all-in-one discovery mode' : e);

/** The rule a create_*_alert made is the one the next pause, resume and delete act on. */
function remember(tool: string, data: unknown): void {
  const id = (data as { rule?: { id?: string } } | undefined)?.rule?.id;
  if (tool.startsWith('create_') && id) ALERT_STATE.ruleId = id;
}

/** A write undone by the v1 call, redone before the v2 client repeats it (delete_alert_rule: its server's create_*_alert). */
const REDO_BEFORE_V2: Record<string, string> = { unwatch_address: 'watch_address' };

// Issue 35 item 8: EVM tools listed solana in their chain enum and always refused it. A tool that
// lists solana now serves it: called with chain solana it is never refused for being on Solana.
it('every tool that lists solana among its chains serves it (the EVM-only tools do not list it)', async () => {
  const listing = SERVER_NAMES.flatMap((server) => listings.get(server)!.map((t) => ({ server, t })));
  const withSolana = listing.filter(({ t }) => {
    const chain = t.inputSchema.properties?.chain;
    return isRecord(chain) && Array.isArray(chain.enum) && (chain.enum as unknown[]).includes('solana');
  });
  expect(withSolana.length).toBeGreaterThan(0);
  for (const { server, t } of withSolana) {
    const res = await callTool(server, t.name, { ...CASES[server][t.name]!(devnet.manifest), chain: 'solana' });
    expect(JSON.stringify(res.body), `${t.name} lists solana`).not.toMatch(/Solana is not served|works on EVM chains/);
  }
  const evmOnly = listing.filter(({ t }) => isRecord(t.inputSchema.properties?.chain) && !withSolana.some((w) => w.t === t)).map(({ t }) => t.name);
  expect(evmOnly).toEqual(expect.arrayContaining(['get_gas', 'get_block', 'read_contract', 'get_token_profile', 'get_holder_analysis', 'get_whale_transactions']));
}, 120_000);

describe.each(ENDPOINTS.map((e) => [label(e), e] as const))('%s', (_name, endpoint) => {
  it('lists an output schema with typed data for every tool, and this test has a case for each', () => {
    const tools = listings.get(endpoint)!;
    if (endpoint === '') {
      // The all-in-one lists its own free tools and every server's data tools, with the schemas the server lists.
      const own = tools.filter((t) => t.name in FREE);
      expect(own.map((t) => t.name).sort()).toEqual(Object.keys(FREE).sort());
      for (const server of SERVER_NAMES) {
        for (const t of listings.get(server)!.filter((x) => !(x.name in FREE))) expect(tools.find((x) => x.name === t.name)?.outputSchema, t.name).toEqual(t.outputSchema);
      }
      // Each name once: the free tools and the alert rules' management are on several servers.
      const names = new Set(SERVER_NAMES.flatMap((s) => listings.get(s)!.map((t) => t.name)));
      expect(tools.map((t) => t.name).sort()).toEqual([...names].sort());
    } else {
      expect(tools.map((t) => t.name).sort()).toEqual(Object.keys(CASES[endpoint]).sort());
    }
    const untyped = tools.filter((t) => !UNTYPED_BY_DESIGN.has(t.name)).filter((t) => {
      const data = t.outputSchema?.properties?.data;
      // Typed: fields, or a choice of typed shapes, or a named shape; a bare { type: 'object' } is not.
      return !data || !['properties', 'anyOf', 'oneOf', '$ref'].some((k) => k in data);
    });
    expect(untyped.map((t) => t.name), `${label(endpoint)}: tools whose outputSchema leaves data untyped`).toEqual([]);
  });

  it.each(Object.keys(CASES[endpoint]))("%s: its real answer validates against its listed outputSchema (Ajv 2020-12, the v1 and v2 SDK clients) and against its strict one (every field required, none undocumented), has snake_case keys and says whether it is stale", async (tool) => {
    const listed = listings.get(endpoint)!.find((t) => t.name === tool);
    expect(listed?.outputSchema, `${tool} is not listed with an outputSchema`).toBeDefined();
    const args = CASES[endpoint][tool]!(devnet.manifest);
    // The v1 client throws when structuredContent does not match the listed schema.
    const res = await v1.get(endpoint)!.callTool({ name: tool, arguments: args });
    expect(res.isError, JSON.stringify(res.content)).toBeFalsy();
    const answer = res.structuredContent as { data: unknown; metadata: Record<string, unknown> };
    remember(tool, answer.data);

    // snake_case, in the schema and in the answer; a stale answer says so first.
    const declared = declaredNames(listed!.outputSchema);
    expect([...declared].filter((k) => CAMEL.test(k)), `${tool}: camelCase fields in its output schema`).toEqual([]);
    const keys = answerKeys(answer, new Set([...declared, ...Object.keys(answer.metadata), 'success', 'data', 'metadata']));
    expect(keys.filter((k) => CAMEL.test(k.slice(k.lastIndexOf('.') + 1))), `${tool}: camelCase keys in its answer`).toEqual([]);
    const meta = answer.metadata as { stale: unknown; data_as_of: string | null; notes?: string[] };
    expect(typeof meta.stale, `${tool}: metadata.stale`).toBe('boolean');
    if (meta.stale === true) {
      expect(meta.data_as_of).not.toBeNull();
      expect(meta.notes?.[0], `${tool}: a stale answer says so first`).toMatch(/^Stale data:/);
    }

    const schema = listed!.outputSchema!;
    const strictSchema = registered(endpoint).tools.get(tool)!.strictOutputSchema;
    expect(schema, `${tool}: the listed outputSchema is the published form of the strict one`).toEqual(publishedOutputSchema(strictSchema));
    const open = ajv.compile(schema);
    expect(open(answer), `${tool}: ${ajv.errorsText(open.errors)}`).toBe(true);
    const strict = ajv.compile(closedData(strictSchema));
    expect(strict(answer), `${tool} against its strict schema (every field required, none undocumented): ${ajv.errorsText(strict.errors)}`).toBe(true);
    expect(metadata(answer.metadata), `${tool} metadata: ${ajv.errorsText(metadata.errors)}`).toBe(true);
    expect((answer as { success?: unknown }).success, tool).toBe(true);

    // The v2 client (2026-07-28) validates with its own validator and throws as well.
    const redo = REDO_BEFORE_V2[tool] ?? (tool === 'delete_alert_rule' ? Object.keys(CASES[endpoint]).find((t) => t.startsWith('create_')) : undefined);
    if (redo) remember(redo, ((await v1.get(endpoint)!.callTool({ name: redo, arguments: CASES[endpoint][redo]!(devnet.manifest) })).structuredContent as { data?: unknown } | undefined)?.data);
    const modern = await v2.get(endpoint)!.callTool({ name: tool, arguments: redo ? CASES[endpoint][tool]!(devnet.manifest) : args });
    expect(modern.isError, JSON.stringify(modern.content)).toBeFalsy();
  }, 120_000);
});

describe.each(SERVER_NAMES.map((s) => [s]))('%s', (server) => {
  it.each(Object.keys(CASES[server]))("%s: its input schema's minimal valid input is not refused as invalid", async (tool) => {
    const listed = listings.get(server)!.find((t) => t.name === tool)!;
    const input = minimalInput(listed.inputSchema, CASES[server][tool]!(devnet.manifest));
    const res = await callTool(server, tool, input);
    expect(res.status, `${tool} ${JSON.stringify(input)}: ${JSON.stringify(res.body)}`).not.toBe(400);
  }, 120_000);
});
