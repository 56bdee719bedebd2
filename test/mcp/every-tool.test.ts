// Issue 35 items 6 and 8, over every tool of every server (the running service on the offline
// snapshot and a seeded devnet, called over HTTP):
// - every answer's keys are snake_case: the real answer to each tool's realistic arguments
//   (test/helpers/tool-cases.ts) is walked, and so is every field name its output schema
//   declares; a key that is data (a record keyed by asset id or address) is not a field name;
// - every answer says whether its data is stale (metadata.stale), and a stale one says so first
//   in metadata.notes, where an agent reading only the text sees it;
// - a tool called with its input schema's minimal valid input (only the required fields, each
//   with a value the listed JSON Schema accepts) is never refused as invalid (no 400): the
//   schema a client reads is the one the tool enforces.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVER_NAMES, type ServerName } from '../../server/mcp/names.ts';
import type { RunningService } from '../../server/runtime.ts';
import type { Devnet } from '../../server/devnet/devnet.ts';
import { post, toolCall } from '../helpers/service.ts';
import { ALERT_STATE, CASES, startToolsService, type Args, type ToolsService } from '../helpers/tool-cases.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const ajv = addFormats(new Ajv2020({ allErrors: true, strict: false }));

interface Listed {
  name: string;
  inputSchema: Schema;
  outputSchema?: Schema;
}
type Schema = { [k: string]: unknown; properties?: Record<string, Schema>; required?: string[] };

let tools: ToolsService;
let devnet: Devnet;
let svc: RunningService;
let key: string;
const listings = new Map<ServerName, Listed[]>();

beforeAll(async () => {
  tools = await startToolsService();
  ({ devnet, svc, key } = tools);
  for (const server of SERVER_NAMES) {
    const res = await post(`${svc.url}/mcp/${server}`, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'x-api-key': key });
    listings.set(server, (res.body as { result: { tools: Listed[] } }).result.tools);
  }
}, 120_000);
afterAll(async () => {
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

async function callTool(server: ServerName, tool: string, args: Args) {
  const res = await post(`${svc.url}/mcp/${server}`, toolCall(tool, args), { 'x-api-key': key });
  return res;
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

describe.each(SERVER_NAMES.map((s) => [s]))('%s', (server) => {
  it.each(Object.keys(CASES[server]))('%s: answers with snake_case keys, says whether it is stale, and its schema declares no camelCase field', async (tool) => {
    const listed = listings.get(server)!.find((t) => t.name === tool)!;
    const declared = declaredNames(listed.outputSchema);
    expect([...declared].filter((k) => CAMEL.test(k)), `${tool}: camelCase fields in its output schema`).toEqual([]);
    const res = await callTool(server, tool, CASES[server][tool]!(devnet.manifest));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const answer = (res.body as { result: { structuredContent: { data: { rule?: { id?: string } }; metadata: Record<string, unknown> } } }).result.structuredContent;
    if (tool.startsWith('create_') && answer.data.rule?.id) ALERT_STATE.ruleId = answer.data.rule.id;
    const keys = answerKeys(answer, new Set([...declared, ...Object.keys(answer.metadata), 'success', 'data', 'metadata']));
    expect(keys.filter((k) => CAMEL.test(k.slice(k.lastIndexOf('.') + 1))), `${tool}: camelCase keys in its answer`).toEqual([]);
    const meta = answer.metadata as { stale: unknown; data_as_of: string | null; notes?: string[] };
    expect(typeof meta.stale, `${tool}: metadata.stale`).toBe('boolean');
    if (meta.stale === true) {
      expect(meta.data_as_of).not.toBeNull();
      expect(meta.notes?.[0], `${tool}: a stale answer says so first`).toMatch(/^Stale data:/);
    }
  }, 120_000);

  it.each(Object.keys(CASES[server]))("%s: its input schema's minimal valid input is not refused as invalid", async (tool) => {
    const listed = listings.get(server)!.find((t) => t.name === tool)!;
    const input = minimalInput(listed.inputSchema, CASES[server][tool]!(devnet.manifest));
    const res = await callTool(server, tool, input);
    expect(res.status, `${tool} ${JSON.stringify(input)}: ${JSON.stringify(res.body)}`).not.toBe(400);
  }, 120_000);
});
