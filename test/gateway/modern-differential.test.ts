// The 2026-07-28 answers of server/gateway/modern.ts (a method table over precomputed answers)
// are the SDK's: for every method served, every tool (with valid and with invalid arguments) and
// every error row of DESIGN.md §3 that a 2026-07-28 request can meet, the answer equals what the
// SDK's createMcpHandler answers for the same request, request ids, timestamps, request_ids and
// remaining credits aside; and the v2 client pinned to 2026-07-28 validates every answer it gets.
//
// Two levels:
// - the answer stage itself (exact bytes): each message goes through classify() as the gateway
//   sends it, then through answer() (the table) and sdkAnswer() (the SDK's handler) of one
//   ProtocolAnswerer, on the real registry's servers and all-in-one views;
// - the whole service (real HTTP, real PostgreSQL): two processes' worth of gateway on one
//   database, one answering through the table, the other through the SDK
//   (CRYPTOMCP_BENCH_MODERN_SDK=1), with twin accounts; every request is sent to both and the two
//   HTTP answers (status, headers, body) compared. The v2 client drives the first through a fetch
//   that mirrors each of its requests to the second.
import type { IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SdkHttpError, Client as V2Client, StreamableHTTPClientTransport as V2StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { startDevnet, type Devnet } from '../../server/devnet/devnet.ts';
import { ProtocolAnswerer } from '../../server/gateway/answer.ts';
import { classify } from '../../server/gateway/classify.ts';
import type { Authorized } from '../../server/gateway/context.ts';
import { AllInOne, type RegisteredServer, type RegisteredTool } from '../../server/mcp/registry.ts';
import type { ServerModule } from '../../server/mcp/tool.ts';
import { allInOneModule } from '../../server/servers/index.ts';
import { SERVER_NAMES, type ServerName } from '../../server/mcp/names.ts';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createAccountWithKey, createUnlimitedPlan, inEra, MODERN_VERSION, mcpUrl, post, startTestService, toolCall, type RawResponse } from '../helpers/service.ts';

let db: TestDatabase;
let devnet: Devnet;
/** Answers 2026-07-28 through the table (the default). */
let direct: RunningService;
/** Answers 2026-07-28 through the SDK's createMcpHandler. */
let sdk: RunningService;

beforeAll(async () => {
  db = await createTestDatabase();
  devnet = await startDevnet();
  const env = { ETHEREUM_RPC_URL: devnet.manifest.rpc_url, EVM_RETRIES: '0' };
  [direct, sdk] = await Promise.all([startTestService(db.url, env), startTestService(db.url, { ...env, CRYPTOMCP_BENCH_MODERN_SDK: '1' })]);
  await createUnlimitedPlan(db, 'differential', 1_000_000);
}, 120_000);
afterAll(async () => {
  await direct?.close();
  await sdk?.close();
  await devnet?.stop();
  await db?.drop();
});

// ---------------------------------------------------------------------------------------------
// What differs between two answers to the same request by nature, and is set aside.

/**
 * Fields that name the request or the moment: ids, timestamps, a balance that depends on which
 * twin ran first, the moment each twin's account was made (get_usage's period) or its watch stored.
 */
const VOLATILE_KEYS: ReadonlySet<string> = new Set(['request_id', 'timestamp', 'remaining_credits', 'period_start', 'created_at']);

/**
 * The stale-data note names the day each twin answered ("352 days before 2026-11-26"): a run that
 * crosses midnight UTC between the twins' answers would differ there alone, so the day is set aside.
 */
const ANSWER_DAY = /\d+ days before \d{4}-\d{2}-\d{2}/g;

/** A JSON value with its volatile fields replaced; JSON held in a string (a result's text) is normalized too. */
function normalized(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalized);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, VOLATILE_KEYS.has(k) ? '<volatile>' : normalized(v)]));
  }
  if (typeof value === 'string' && value.startsWith('{')) {
    try {
      return { '<json>': normalized(JSON.parse(value)) };
    } catch {
      return value;
    }
  }
  if (typeof value === 'string') return value.replace(ANSWER_DAY, '<days> days before <answer day>');
  return value;
}

/** Where two JSON values differ, as paths with both values (for a readable failure). */
function differences(a: unknown, b: unknown, path = ''): string[] {
  if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null && Array.isArray(a) === Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) => differences((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}/${k}`));
  }
  return Object.is(a, b) ? [] : [`${path}: ${JSON.stringify(a)?.slice(0, 120)} != ${JSON.stringify(b)?.slice(0, 120)}`];
}

/** The headers an answer is compared on, with origins and counters that depend on the process or the clock set aside. */
const COMPARED_HEADERS = ['content-type', 'x-credits-used', 'ratelimit-policy', 'ratelimit', 'retry-after', 'www-authenticate', 'allow'];

function comparable(res: RawResponse, origin: string): unknown {
  const headers: Record<string, string | null> = {};
  for (const name of COMPARED_HEADERS) {
    let value = res.headers.get(name);
    if (value !== null && name === 'www-authenticate') value = value.replaceAll(origin, '<origin>');
    // r= (requests left) and t= (seconds to reset) follow the clock: only their presence is compared.
    if (value !== null && (name === 'ratelimit' || name === 'retry-after')) value = value.replace(/\d+/g, 'N');
    headers[name] = value;
  }
  return { status: res.status, headers, body: normalized(res.body) };
}

/** Twin accounts with the same plan: one calls the table's service, the other the SDK's. */
interface Twins {
  direct: string;
  sdk: string;
}

async function twins(opts: Parameters<typeof createAccountWithKey>[1] = { plan: 'differential' }): Promise<Twins> {
  const [a, b] = [await createAccountWithKey(db, opts), await createAccountWithKey(db, opts)];
  return { direct: a.key, sdk: b.key };
}

/** One request to both services (the table's first), each with its twin's key; the two answers, comparable. */
async function both(path: string, body: unknown, headers: Record<string, string>, keys: Twins | undefined): Promise<{ direct: unknown; sdk: unknown; raw: RawResponse }> {
  const send = async (svc: RunningService, key: string | undefined) =>
    comparable(await post(`${svc.url}${path}`, body, { ...headers, ...(key !== undefined ? { 'x-api-key': key } : {}) }), svc.url);
  const rawDirect = await post(`${direct.url}${path}`, body, { ...headers, ...(keys ? { 'x-api-key': keys.direct } : {}) });
  return { direct: comparable(rawDirect, direct.url), sdk: await send(sdk, keys?.sdk), raw: rawDirect };
}

/** A 2026-07-28 request (the _meta envelope and standard headers, as inEra builds them) to both; expects equal answers. */
async function expectSame(path: string, message: Record<string, unknown>, keys: Twins | undefined, headers: Record<string, string> = {}): Promise<RawResponse> {
  const framed = inEra('modern', message, headers);
  const answers = await both(path, framed.body, framed.headers, keys);
  expect(answers.direct, `${path} ${JSON.stringify(message).slice(0, 200)}`).toEqual(answers.sdk);
  return answers.raw;
}

// ---------------------------------------------------------------------------------------------
// Arguments for every tool, from what its input schema requires.

function argumentsFor(tool: RegisteredTool, addresses: { wallet: string; other: string; token: string; tx: string }): Record<string, unknown> {
  const required = (tool.inputSchema.required as string[] | undefined) ?? [];
  const value = (name: string): unknown => {
    switch (name) {
      case 'asset':
        return 'bitcoin';
      case 'assets':
        return ['bitcoin', 'ethereum'];
      case 'query':
        return tool.name === 'search_token' ? 'USDC' : 'bitcoin';
      case 'tool':
        return 'get_capabilities';
      case 'address':
        return ['get_token_profile', 'get_token_security', 'get_risk_score', 'get_contract_info'].includes(tool.name) ? addresses.token : addresses.wallet;
      case 'token':
        return addresses.token;
      case 'addresses':
        return [addresses.wallet];
      case 'hash':
        return addresses.tx;
      case 'signature':
        return 'function balanceOf(address) view returns (uint256)';
      case 'args':
        return [addresses.wallet];
      case 'handle':
        return 'coindesk';
      case 'project':
        return 'lido';
      case 'projects':
        return ['lido', 'aave'];
      case 'chain':
        return 'Ethereum';
      default:
        throw new Error(`no argument value for ${tool.name}.${name}: add one here`);
    }
  };
  const args = Object.fromEntries(required.map((name) => [name, value(name)]));
  // Tools whose schema requires one of several arguments, or more than one item.
  switch (tool.name) {
    case 'read_contract':
      return { ...args, address: addresses.token, args: [addresses.wallet] };
    case 'get_block':
      return { number: 1 };
    case 'get_token_transfers':
      return { token: addresses.token };
    case 'compare_wallets':
      return { addresses: [addresses.wallet, addresses.other] };
    case 'get_tvl_history':
      return { chain: 'Ethereum' };
    default:
      return args;
  }
}

/** Arguments the tool's input schema refuses: its first property given a value of the wrong type. */
function invalidArgumentsFor(tool: RegisteredTool): Record<string, unknown> {
  const properties = (tool.inputSchema.properties as Record<string, { type?: unknown }> | undefined) ?? {};
  const [first] = Object.entries(properties);
  if (!first) return { unexpected: { nested: true } };
  return { [first[0]]: first[1].type === 'string' ? { not: 'a string' } : 'not-of-this-type' };
}

// ---------------------------------------------------------------------------------------------

describe('the answer stage: the table answers every message it takes exactly as the SDK does (bytes)', () => {
  const answerer = new ProtocolAnswerer('9.9.9', () => {});
  const grant = { plan: 'differential', servers: [...SERVER_NAMES] } as unknown as Authorized['grant'];
  let views: RegisteredServer[];

  beforeAll(() => {
    const registry = direct.registry;
    // The all-in-one endpoint as the service builds it (only the servers' names, chains and tool names are read;
    // the alert tools' store is never reached: the answer stage lists and classifies, it does not run tools).
    const modules = [...registry.values()].map((s) => ({ name: s.name, chains: s.chains, tools: [...s.tools.values()].map((t) => t.definition) }) as unknown as ServerModule);
    const allInOne = new AllInOne(registry, allInOneModule(modules, { alerts: undefined as never }));
    views = [...registry.values(), allInOne.view(SERVER_NAMES), allInOne.view(['market-intelligence', 'kol-analytics'] as ServerName[])];
  });

  /** The message, framed and classified as the gateway does, answered both ways. */
  async function bothAnswers(server: RegisteredServer, message: Record<string, unknown>, result?: CallToolResult) {
    const framed = inEra('modern', message) as { body: Record<string, unknown>; headers: Record<string, string> };
    const headers: IncomingHttpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...framed.headers };
    const call = classify({ requestId: 'r', server, grant }, framed.body, headers);
    expect(call.era).toBe('modern');
    return { direct: await answerer.answer(call, headers, result), sdk: await answerer.sdkAnswer(call, headers, result) };
  }

  it('server/discover and tools/list of every server and all-in-one view, with a number id and a string id', async () => {
    for (const server of views) {
      for (const [id, method] of [
        [1, 'server/discover'],
        ['list-1', 'tools/list'],
        [7, 'tools/list'],
      ] as const) {
        const answers = await bothAnswers(server, { jsonrpc: '2.0', id, method });
        expect(answers.direct, `${server.id} ${method}`).toEqual(answers.sdk);
        expect(answers.direct.status).toBe(200);
      }
    }
  });

  it('tools/call frames a result with its id, a progress token, and as the SDK does when the shape is unusual', async () => {
    const server = views[0]!;
    // A tool without required arguments, so that classify() admits `arguments: {}`.
    const tool = server.tools.get('get_capabilities')!;
    const envelope = { success: true, data: { price: 1.5, note: 'ünïcode "quoted" \n' }, metadata: { credits_used: 1 } };
    const result: CallToolResult = { content: [{ type: 'text', text: JSON.stringify(envelope) }], structuredContent: envelope };
    const params = (extra: Record<string, unknown>) => ({ name: tool.name, arguments: {}, ...extra });
    for (const [label, message] of [
      ['plain', { jsonrpc: '2.0', id: 3, method: 'tools/call', params: params({}) }],
      ['string id', { jsonrpc: '2.0', id: 'call-3', method: 'tools/call', params: params({}) }],
      ['no arguments', { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: tool.name } }],
      ['arguments null (left to the SDK)', { jsonrpc: '2.0', id: 5, method: 'tools/call', params: params({ arguments: null }) }],
      ['requestState (left to the SDK)', { jsonrpc: '2.0', id: 6, method: 'tools/call', params: params({ requestState: 'opaque' }) }],
    ] as const) {
      const answers = await bothAnswers(server, message as Record<string, unknown>, result);
      expect(answers.direct, label).toEqual(answers.sdk);
    }
    // A result of another shape (no structuredContent, several blocks) is framed the same way too.
    const plain: CallToolResult = { content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] };
    const answers = await bothAnswers(server, { jsonrpc: '2.0', id: 8, method: 'tools/call', params: params({}) }, plain);
    expect(answers.direct).toEqual(answers.sdk);
  });

  it('methods the revision removed or these servers do not serve: Method not found, 404; notifications: 202', async () => {
    const server = views[0]!;
    for (const method of ['ping', 'initialize', 'logging/setLevel', 'resources/list', 'prompts/list', 'completion/complete', 'tasks/list', 'no/such/method']) {
      const answers = await bothAnswers(server, { jsonrpc: '2.0', id: 9, method });
      expect(answers.direct, method).toEqual(answers.sdk);
      expect(answers.direct).toMatchObject({ status: 404, jsonrpcError: true });
    }
    for (const method of ['notifications/cancelled', 'notifications/initialized', 'notifications/anything']) {
      const answers = await bothAnswers(server, { jsonrpc: '2.0', method, params: { requestId: 1 } });
      expect(answers.direct, method).toEqual(answers.sdk);
      expect(answers.direct.status).toBe(202);
    }
  });

  it('a changed field is seen: the comparison is not blind (one byte of the answer altered)', async () => {
    const answers = await bothAnswers(views[0]!, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const altered = { ...answers.direct, body: answers.direct.body.replace('"ttlMs":300000', '"ttlMs":300001') };
    expect(altered.body).not.toBe(answers.direct.body);
    expect(altered).not.toEqual(answers.sdk);
  });
});

describe('the whole service: the table and the SDK answer every 2026-07-28 request alike over HTTP', () => {
  let keys: Twins;
  let addresses: { wallet: string; other: string; token: string; tx: string };
  // Not the alert rule tools of [push]: they write per-account state whose ids differ between the
  // twin accounts, so the two services' answers cannot be equal; test/mcp/every-tool calls them.
  const ALERT_TOOLS = /^(create_[a-z]+_alert|list_alert_rules|pause_alert_rule|resume_alert_rule|delete_alert_rule|get_alerts)$/;
  const tools = () =>
    [...direct.registry.values()].flatMap((server) => [...server.tools.values()].filter((tool) => !ALERT_TOOLS.test(tool.name)).map((tool) => ({ server: server.name, tool })));

  beforeAll(async () => {
    keys = await twins();
    const m = devnet.manifest;
    addresses = { wallet: m.accounts[0]!.address, other: m.accounts[1]!.address, token: m.tokens[0]!.address, tx: m.transfers[0]!.tx_hash };
  });

  it('the registry has the 82 tools this test calls (plus bench tools)', () => {
    expect(tools().filter((t) => !t.tool.name.startsWith('bench_')).length).toBe(82);
  });

  it('the v2 client pinned to 2026-07-28 lists and calls every tool of every server and validates each answer; each exchange equals the SDK service\'s', async () => {
    const exchanges: { request: string; direct: unknown; sdk: unknown }[] = [];
    // Every request the client makes goes to the table's service; a copy, with the twin's key, to the SDK's.
    const mirroring = (async (input: string | URL | Request, init?: RequestInit) => {
      const url = String(input instanceof Request ? input.url : input);
      const response = await fetch(input, init);
      const text = await response.clone().text();
      const headers = new Headers(init?.headers);
      if (headers.has('x-api-key')) headers.set('x-api-key', keys.sdk);
      const mirrored = await fetch(url.replace(direct.url, sdk.url), { ...init, headers });
      const parse = async (r: Response, body: string): Promise<RawResponse> => {
        let parsed: unknown = body;
        try {
          parsed = body ? JSON.parse(body) : undefined;
        } catch {
          // left as text
        }
        return { status: r.status, headers: r.headers, body: parsed };
      };
      exchanges.push({
        request: `${url} ${String(init?.body ?? '').slice(0, 160)}`,
        direct: comparable(await parse(response, text), direct.url),
        sdk: comparable(await parse(mirrored, await mirrored.text()), sdk.url),
      });
      return response;
    }) as typeof fetch;

    const failures: string[] = [];
    const errors: string[] = [];
    for (const server of [...SERVER_NAMES, '']) {
      const client = new V2Client({ name: 'differential', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN_VERSION } } });
      await client.connect(
        new V2StreamableHTTPClientTransport(new URL(mcpUrl(direct.url, server)), { requestInit: { headers: { 'x-api-key': keys.direct } }, fetch: mirroring }),
      );
      // The client validates every listing and every result against the 2026-07-28 schemas, and
      // structuredContent against the tool's outputSchema; it throws on anything it refuses.
      const { tools: listed } = await client.listTools();
      const registered = server === '' ? undefined : direct.registry.get(server as ServerName);
      if (registered) expect(listed.map((t) => t.name)).toEqual([...registered.tools.keys()]);
      // Every tool once, on its own server (the all-in-one endpoint: its free tools and one data tool per server).
      const toCall = registered
        ? [...registered.tools.values()]
        : listed.filter((t, i) => i < 3 || t.name === 'get_prices').map((t) => ({ name: t.name, inputSchema: t.inputSchema }) as unknown as RegisteredTool);
      for (const tool of toCall) {
        const full = registered?.tools.get(tool.name) ?? tool;
        if (full.name.startsWith('bench_') || ALERT_TOOLS.test(full.name)) continue;
        try {
          const result = await client.callTool({ name: full.name, arguments: argumentsFor(full, addresses) });
          expect(result.isError ?? false).toBe(false);
        } catch (err) {
          // An HTTP error answer (the tool found nothing there) is compared below like any answer;
          // anything else is the client refusing what it got.
          if (!(err instanceof SdkHttpError)) failures.push(`${server}/${full.name}: ${String(err)}`);
          else errors.push(`${server}/${full.name}: ${err.message.slice(0, 160)}`);
        }
      }
      await client.close();
    }
    expect(failures).toEqual([]);
    expect(exchanges.length).toBeGreaterThan(90);
    const mismatches = exchanges.flatMap((e) => differences(e.direct, e.sdk).map((d) => `${e.request} :: ${d}`));
    expect(mismatches).toEqual([]);
    // The tools answered for real (with data), not with an error: the arguments above fit them.
    expect(errors).toEqual([]);
  }, 300_000);

  it('every tool with arguments its schema refuses: 400 INVALID_PARAMS alike', async () => {
    for (const { server, tool } of tools()) {
      const res = await expectSame(`/mcp/${server}`, toolCall(tool.name, invalidArgumentsFor(tool), 11), keys);
      if (tool.name !== 'get_capabilities' && tool.name !== 'get_usage') expect(res.status, tool.name).toBe(400);
    }
  }, 120_000);

  it('the error rows a 2026-07-28 request can meet answer alike', async () => {
    const mi = '/mcp/market-intelligence';
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    // Row 5: unknown tool, a method removed by the revision or never served, a notification.
    expect((await expectSame(mi, toolCall('no_such_tool', {}, 2), keys)).body).toMatchObject({ error: { code: 'UNKNOWN_TOOL' } });
    expect((await expectSame('/mcp', toolCall('no_such_tool', {}, 2), keys)).status).toBe(400);
    for (const method of ['ping', 'initialize', 'resources/list', 'no/such/method']) {
      expect((await expectSame(mi, { jsonrpc: '2.0', id: 3, method }, keys)).status, method).toBe(400);
    }
    expect((await expectSame(mi, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }, keys)).status).toBe(202);
    // Row 5: the standard headers and the envelope.
    for (const [label, headers] of [
      ['a protocol version header naming another revision', { 'mcp-protocol-version': '2099-01-01' }],
      ['an unsupported protocol version header', { 'mcp-protocol-version': 'not-a-version' }],
      ['an Mcp-Method header that disagrees with the body', { 'mcp-method': 'tools/call' }],
    ] as const) {
      expect((await expectSame(mi, list, keys, headers)).status, label).toBe(400);
    }
    const envelopeless = await both(mi, { ...list, params: { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION } } }, { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'tools/list' }, keys);
    expect(envelopeless.direct).toEqual(envelopeless.sdk);
    expect(envelopeless.raw.status).toBe(400);
    // A tools/call without Mcp-Name, and with one naming another tool.
    const call = inEra('modern', toolCall('get_prices', { assets: ['bitcoin'] }, 4));
    const withoutName = Object.fromEntries(Object.entries(call.headers).filter(([name]) => name !== 'mcp-name'));
    for (const headers of [withoutName, { ...call.headers, 'mcp-name': 'get_ohlcv' }]) {
      const answers = await both(mi, call.body, headers, keys);
      expect(answers.direct).toEqual(answers.sdk);
      expect(answers.raw.status).toBe(400);
    }
    // Row 2: no key, a malformed key (401, WWW-Authenticate naming the resource metadata).
    expect((await expectSame(mi, list, undefined)).status).toBe(401);
    expect((await expectSame(mi, list, { direct: 'cmcp_not_a_key', sdk: 'cmcp_not_a_key' })).status).toBe(401);
    // Row 3: a key scoped to other servers (on the server's path, and a tool of it on the all-in-one endpoint).
    const scoped = await twins({ plan: 'differential', key: { servers: ['kol-analytics'] } });
    expect((await expectSame(mi, list, scoped)).status).toBe(403);
    expect((await expectSame('/mcp', toolCall('get_prices', { assets: ['bitcoin'] }, 5), scoped)).status).toBe(403);
    // Row 7: credits below the cost (402).
    await createUnlimitedPlan(db, 'differential-poor', 0);
    const poor = await twins({ plan: 'differential-poor' });
    expect((await expectSame(mi, toolCall('get_prices', { assets: ['bitcoin'] }, 6), poor)).status).toBe(402);
    // Row 6: the plan's rate (429 with Retry-After) after its burst of one.
    await createUnlimitedPlan(db, 'differential-slow', 1000, { requests_per_minute: 1, burst: 1 });
    const slow = await twins({ plan: 'differential-slow' });
    expect((await expectSame(mi, toolCall('get_prices', { assets: ['bitcoin'] }, 7), slow)).status).toBe(200);
    expect((await expectSame(mi, toolCall('get_prices', { assets: ['bitcoin'] }, 8), slow)).status).toBe(429);
    // A tools/call shape the table leaves to the SDK: arguments null runs the tool, the SDK refuses the request in-band.
    const leftToSdk = await expectSame(mi, { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'get_capabilities', arguments: null } }, keys);
    expect(leftToSdk.body).toMatchObject({ error: { code: -32602 } });
  }, 120_000);
});
