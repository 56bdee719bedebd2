// DESIGN.md §3: every row of the check table gives its status, code and details, with the error
// envelope and request id; success carries the envelope in structuredContent and content[0].text
// with the documented headers; nothing rejected is charged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountSetStatus } from '../../server/accounts/accounts.ts';
import { planUpsert } from '../../server/accounts/plans.ts';
import type { RunningService } from '../../server/runtime.ts';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { SERVER_NAMES } from '../../server/mcp/names.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import {
  balanceOf,
  createAccountWithKey,
  createUnlimitedPlan,
  ERAS,
  inEra,
  mcpClient,
  mcpClientV2,
  post,
  startTestService,
  toolCall,
  type RawResponse,
} from '../helpers/service.ts';

let db: TestDatabase;
let svc: RunningService;
let base: string;

beforeAll(async () => {
  db = await createTestDatabase();
  svc = await startTestService(db.url, { KEY_CACHE_TTL_MS: '0', TOOL_TIMEOUT_MS: '300' });
  base = svc.url;
});
afterAll(async () => {
  await svc?.close();
  await db?.drop();
});


type ErrorBody = { success: false; error: { code: string; message: string; details: Record<string, unknown> } };

function expectError(res: RawResponse, status: number, code: string): ErrorBody['error'] {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  const body = res.body as ErrorBody;
  expect(body.success).toBe(false);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.details.request_id).toBe(res.headers.get('x-request-id'));
  return body.error;
}

const url = (server: string) => `${base}/mcp/${server}`;

describe.each(ERAS)('the HTTP contract over the %s protocol', (era) => {
  const send = (server: string, body: unknown, headers: Record<string, string> = {}) => {
    const m = inEra(era, body, headers);
    return post(url(server), m.body, m.headers);
  };

  describe('row 1: path', () => {
    it('404 SERVER_NOT_FOUND with the nine names, before any key check', async () => {
      const err = expectError(await send('no-such-server', toolCall('get_usage')), 404, 'SERVER_NOT_FOUND');
      expect(err.details.available).toEqual([...SERVER_NAMES]);
    });
  });

  describe('row 2: key', () => {
    it('401 MISSING_API_KEY without a key', async () => {
      expectError(await send('kol-analytics', toolCall('get_usage')), 401, 'MISSING_API_KEY');
    });
    it('401 INVALID_API_KEY for a malformed key and for a well-formed unknown key', async () => {
      expectError(await send('kol-analytics', toolCall('get_usage'), { 'x-api-key': 'cmcp_nope' }), 401, 'INVALID_API_KEY');
      const { generateKey } = await import('../../server/keys/format.ts');
      expectError(
        await send('kol-analytics', toolCall('get_usage'), { 'x-api-key': generateKey().plaintext }),
        401,
        'INVALID_API_KEY',
      );
    });
    it('401 API_KEY_EXPIRED with expired_at', async () => {
      const { keyId, key } = await createAccountWithKey(db);
      await db.query(`UPDATE api_keys SET expires_at = now() - interval '1 minute' WHERE id = $1`, [keyId]);
      const err = expectError(await send('kol-analytics', toolCall('get_usage'), { 'x-api-key': key }), 401, 'API_KEY_EXPIRED');
      expect(new Date(err.details.expired_at as string).toISOString()).toBe(err.details.expired_at);
    });
    it('401 API_KEY_REVOKED', async () => {
      const { keyId, key } = await createAccountWithKey(db);
      await db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [keyId]);
      expectError(await send('kol-analytics', toolCall('get_usage'), { 'x-api-key': key }), 401, 'API_KEY_REVOKED');
    });
    it('accepts Authorization: Bearer and case-insensitive header names', async () => {
      const { key } = await createAccountWithKey(db);
      expect((await send('kol-analytics', toolCall('get_usage'), { Authorization: `Bearer ${key}` })).status).toBe(200);
      expect((await send('kol-analytics', toolCall('get_usage'), { 'X-API-KEY': key })).status).toBe(200);
    });
  });

  describe('row 3: scope, plan, suspension', () => {
    it('403 KEY_SCOPE_FORBIDDEN with server and allowed_servers', async () => {
      const { key } = await createAccountWithKey(db, { key: { servers: ['kol-analytics'] } });
      const err = expectError(await send('whale-intelligence', toolCall('get_usage'), { 'x-api-key': key }), 403, 'KEY_SCOPE_FORBIDDEN');
      expect(err.details).toMatchObject({ server: 'whale-intelligence', allowed_servers: ['kol-analytics'] });
      expect((await send('kol-analytics', toolCall('get_usage'), { 'x-api-key': key })).status).toBe(200);
    });
    it('403 PLAN_FORBIDDEN with server and plan', async () => {
      await planUpsert(db, {
        name: 'narrow',
        display_name: 'Narrow',
        credits: 10,
        renewal: 'one-time',
        requests_per_minute: 60,
        burst: 10,
        servers: ['market-intelligence'],
        max_keys: 2,
      });
      const { key } = await createAccountWithKey(db, { plan: 'narrow' });
      const err = expectError(await send('kol-analytics', toolCall('get_usage'), { 'x-api-key': key }), 403, 'PLAN_FORBIDDEN');
      expect(err.details).toMatchObject({ server: 'kol-analytics', plan: 'narrow' });
    });
    it('403 ACCOUNT_SUSPENDED', async () => {
      const { account, key } = await createAccountWithKey(db);
      await accountSetStatus(db, account.id, 'suspended');
      expectError(await send('kol-analytics', toolCall('get_usage'), { 'x-api-key': key }), 403, 'ACCOUNT_SUSPENDED');
    });
    it('a key check failure wins over a method or body problem (check order)', async () => {
      const res = await fetch(url('kol-analytics'), { method: 'GET' });
      expect(res.status).toBe(401);
    });
  });

  describe('row 4: method', () => {
    it('405 METHOD_NOT_ALLOWED with Allow: POST for GET and DELETE, after auth', async () => {
      const { key } = await createAccountWithKey(db);
      for (const method of ['GET', 'DELETE']) {
        const res = await fetch(url('kol-analytics'), { method, headers: { 'x-api-key': key } });
        expect(res.status).toBe(405);
        expect(res.headers.get('allow')).toBe('POST');
        expect(((await res.json()) as ErrorBody).error.code).toBe('METHOD_NOT_ALLOWED');
      }
    });
    it('answers a CORS preflight without a key', async () => {
      const res = await fetch(url('kol-analytics'), {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key,content-type,mcp-protocol-version' },
      });
      expect(res.status).toBeLessThan(300);
      const allowed = res.headers.get('access-control-allow-headers') ?? '';
      for (const h of ['x-api-key', 'authorization', 'content-type', 'mcp-protocol-version']) expect(allowed).toContain(h);
    });
  });

  describe('row 5: body, tool, arguments (never charged)', () => {
    it('413 PAYLOAD_TOO_LARGE with limit_bytes for a body over 1 MiB', async () => {
      const { account, key } = await createAccountWithKey(db);
      const big = toolCall('bench_echo', { message: 'x'.repeat(1024 * 1024) });
      const err = expectError(await send('market-intelligence', big, { 'x-api-key': key }), 413, 'PAYLOAD_TOO_LARGE');
      expect(err.details.limit_bytes).toBe(1024 * 1024);
      expect(await balanceOf(db, account.id)).toBe(150);
    });
    it('400 INVALID_REQUEST for a body that is not JSON, not JSON-RPC, or a batch', async () => {
      const { account, key } = await createAccountWithKey(db);
      const h = { 'x-api-key': key };
      expectError(await send('market-intelligence', '{not json', h), 400, 'INVALID_REQUEST');
      expectError(await send('market-intelligence', { hello: 'world' }, h), 400, 'INVALID_REQUEST');
      expectError(await send('market-intelligence', [toolCall('bench_echo')], h), 400, 'INVALID_REQUEST');
      expectError(await send('market-intelligence', { ...toolCall('bench_echo'), jsonrpc: '1.0' }, h), 400, 'INVALID_REQUEST');
      expectError(await send('market-intelligence', { ...toolCall('bench_echo'), id: { x: 1 } }, h), 400, 'INVALID_REQUEST');
      expectError(await send('market-intelligence', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: ['bench_echo'] }, h), 400, 'INVALID_REQUEST');
      expectError(await send('market-intelligence', { jsonrpc: '2.0', method: 'tools/call', params: { name: 'bench_echo' } }, h), 400, 'INVALID_REQUEST');
      expectError(await send('market-intelligence', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: {} }, h), 400, 'INVALID_REQUEST');
      expectError(await send('market-intelligence', 'plain text', { ...h, 'content-type': 'text/plain' }), 400, 'INVALID_REQUEST');
      expect(await balanceOf(db, account.id)).toBe(150);
    });
    it('400 UNKNOWN_TOOL with tool and available', async () => {
      const { key } = await createAccountWithKey(db);
      const err = expectError(await send('kol-analytics', toolCall('get_prices'), { 'x-api-key': key }), 400, 'UNKNOWN_TOOL');
      expect(err.details.tool).toBe('get_prices');
      expect(err.details.available).toEqual([
        'get_kol_profile',
        'get_kol_calls',
        'get_kol_performance',
        'rank_kols',
        'get_asset_kol_mentions',
        'get_capabilities',
        'estimate_cost',
        'get_usage',
      ]);
    });
    it('400 INVALID_PARAMS with issues[] of path and message', async () => {
      const { account, key } = await createAccountWithKey(db);
      const err = expectError(
        await send('market-intelligence', toolCall('bench_echo', { message: 42 }), { 'x-api-key': key }),
        400,
        'INVALID_PARAMS',
      );
      const issues = err.details.issues as { path: string; message: string }[];
      expect(issues[0]).toMatchObject({ path: 'message' });
      expect(typeof issues[0]!.message).toBe('string');
      expect(await balanceOf(db, account.id)).toBe(150);
    });
  });

  describe('row 6: rate limit', () => {
    it('429 RATE_LIMITED with limit_per_minute, retry_after_seconds and Retry-After once the burst of tools/call is spent', async () => {
      const { key } = await createAccountWithKey(db); // free: 30/min, burst 10
      const h = { 'x-api-key': key };
      const statuses: number[] = [];
      let limited: RawResponse | undefined;
      for (let i = 0; i < 12 && !limited; i++) {
        const res = await send('market-intelligence', toolCall('bench_echo', { message: 'x' }, i), h);
        statuses.push(res.status);
        if (res.status === 429) limited = res;
      }
      expect(statuses.slice(0, 10).every((s) => s === 200)).toBe(true);
      const err = expectError(limited!, 429, 'RATE_LIMITED');
      expect(err.details.limit_per_minute).toBe(30);
      expect(err.details.retry_after_seconds).toBeGreaterThanOrEqual(1);
      expect(limited!.headers.get('retry-after')).toBe(String(err.details.retry_after_seconds));
      expect(limited!.headers.get('ratelimit')).toMatch(/^"free";r=0;t=\d+$/);
      // Connecting never counts against the plan: the free methods still answer.
      const listed = await send('market-intelligence', { jsonrpc: '2.0', id: 99, method: 'tools/list' }, h);
      expect(listed.status).toBe(200);
      expect(listed.headers.get('ratelimit')).toMatch(/^"connect";r=\d+;t=\d+$/);
    });
  });

  describe('row 7: credits', () => {
    it('402 INSUFFICIENT_CREDITS with required and available', async () => {
      await createUnlimitedPlan(db, 'tiny', 1);
      const { account, key } = await createAccountWithKey(db, { plan: 'tiny' });
      const h = { 'x-api-key': key };
      expect((await send('market-intelligence', toolCall('bench_echo'), h)).status).toBe(200);
      const err = expectError(await send('market-intelligence', toolCall('bench_echo'), h), 402, 'INSUFFICIENT_CREDITS');
      expect(err.details).toMatchObject({ required: 1, available: 0 });
      expect(await balanceOf(db, account.id)).toBe(0);
    });
  });

  describe('row 8: tool errors are refunded', () => {
    it('502 UPSTREAM_ERROR with provider; the balance is unchanged', async () => {
      const { account, key } = await createAccountWithKey(db);
      const res = await send('market-intelligence', toolCall('bench_fail'), { 'x-api-key': key });
      const err = expectError(res, 502, 'UPSTREAM_ERROR');
      expect(err.details.provider).toBe('bench');
      expect(res.headers.get('x-credits-used')).toBe('0');
      expect(res.headers.get('x-credits-remaining')).toBe('150');
      expect(await balanceOf(db, account.id)).toBe(150);
    });
    it('504 UPSTREAM_TIMEOUT when a tool outlives TOOL_TIMEOUT_MS; refunded', async () => {
      const { account, key } = await createAccountWithKey(db);
      const res = await send('market-intelligence', toolCall('bench_sleep', { ms: 5000 }), { 'x-api-key': key });
      expectError(res, 504, 'UPSTREAM_TIMEOUT');
      expect(await balanceOf(db, account.id)).toBe(150);
    });
    it('404 NOT_FOUND from a tool (estimate_cost of an unknown tool)', async () => {
      const { key } = await createAccountWithKey(db);
      const err = expectError(
        await send('kol-analytics', toolCall('estimate_cost', { tool: 'nope' }), { 'x-api-key': key }),
        404,
        'NOT_FOUND',
      );
      expect(err.details.tool).toBe('nope');
    });
  });

  describe('success', () => {
    it('tools/call carries the envelope in structuredContent and content[0].text, with the headers', async () => {
      const { key } = await createAccountWithKey(db);
      const res = await send('market-intelligence', toolCall('bench_echo', { message: 'hi' }), { 'x-api-key': key });
      expect(res.status).toBe(200);
      const result = (res.body as { result: { structuredContent: Record<string, unknown>; content: { type: string; text: string }[] } }).result;
      const env = result.structuredContent as { success: boolean; data: unknown; metadata: Record<string, unknown> };
      expect(JSON.parse(result.content[0]!.text)).toEqual(env);
      expect(env.success).toBe(true);
      expect(env.data).toEqual({ echo: 'hi' });
      expect(env.metadata.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(env.metadata.credits_used).toBe(1);
      expect(env.metadata.remaining_credits).toBe(149);
      expect(Number.isInteger(env.metadata.credits_used) && Number.isInteger(env.metadata.remaining_credits)).toBe(true);
      expect(env.metadata.request_id).toBe(res.headers.get('x-request-id'));
      expect(res.headers.get('x-credits-used')).toBe('1');
      expect(res.headers.get('x-credits-remaining')).toBe('149');
      expect(res.headers.get('ratelimit-policy')).toBe('"free";q=30;w=60');
      expect(res.headers.get('ratelimit')).toMatch(/^"free";r=\d+;t=\d+$/);
      expect(res.headers.get('mcp-session-id')).toBeNull();
    });
  });
});

const WRITE_TOOLS: Record<string, { idempotentHint: boolean; destructiveHint: boolean }> = {
  watch_address: { idempotentHint: true, destructiveHint: false },
  unwatch_address: { idempotentHint: true, destructiveHint: true },
  create_price_alert: { idempotentHint: false, destructiveHint: false },
  create_whale_alert: { idempotentHint: false, destructiveHint: false },
  create_social_alert: { idempotentHint: false, destructiveHint: false },
  pause_alert_rule: { idempotentHint: true, destructiveHint: false },
  resume_alert_rule: { idempotentHint: true, destructiveHint: false },
  delete_alert_rule: { idempotentHint: true, destructiveHint: true },
};

describe('clients', () => {
  it.each(['v1', 'v2 auto', 'v2 pinned to 2026-07-28'] as const)(
    '%s client: every server names itself with an icon, lists every tool with title, cost, annotations and output schema, and calls the free tools',
    async (kind) => {
      await createUnlimitedPlan(db, 'roomy', 1000);
      const { key } = await createAccountWithKey(db, { plan: 'roomy' });
      for (const server of SERVER_NAMES) {
        const client =
          kind === 'v1' ? await mcpClient(base, server, key) : await mcpClientV2(base, server, key, kind === 'v2 auto' ? 'auto' : 'pinned');
        if (kind !== 'v1') expect((client as Awaited<ReturnType<typeof mcpClientV2>>).getProtocolEra()).toBe('modern');
        const info = client.getServerVersion();
        expect(info?.name).toBe(`cryptomcp-${server}`);
        expect(info?.icons?.[0]?.src).toMatch(/^data:image\/svg\+xml;base64,/);
        const { tools } = await client.listTools();
        for (const t of tools) {
          const credits = t._meta?.['cryptomcp.dev/credits'];
          expect(typeof credits).toBe('number');
          expect(t.description).toMatch(new RegExp(`Costs ${credits} credits?\\.$`));
          expect(t.title, t.name).toMatch(/^[A-Z]/);
          // The envelope part as small as the spec allows: its data, typed; published without required arrays.
          expect(Object.keys(t.outputSchema?.properties ?? {})).toEqual(['data']);
          expect(t.outputSchema?.required).toBeUndefined();
          const write = WRITE_TOOLS[t.name];
          if (write) expect(t.annotations).toMatchObject({ readOnlyHint: false, ...write });
          else expect(t.annotations?.readOnlyHint, t.name).toBe(true);
          // Only what the listing does not already say: the title once (the tool's own), openWorldHint only when false (the spec's default is true).
          expect(t.annotations?.title, t.name).toBeUndefined();
          expect(t.annotations?.openWorldHint, t.name).not.toBe(true);
          if (t.name === 'get_capabilities') expect(t.annotations?.openWorldHint).toBe(false);
        }
        // The client checks structuredContent against the tool's outputSchema itself.
        const caps = await client.callTool({ name: 'get_capabilities', arguments: {} });
        const data = (caps.structuredContent as { data: { server: string; tools: { name: string }[] } }).data;
        expect(data.server).toBe(server);
        expect(data.tools.map((t) => t.name)).toEqual(tools.map((t) => t.name));
        await client.close();
      }
    },
  );

  it('estimate_cost prices a tool and checks arguments without charging', async () => {
    const { account, key } = await createAccountWithKey(db);
    const client = await mcpClient(base, 'market-intelligence', key);
    const ok = await client.callTool({ name: 'estimate_cost', arguments: { tool: 'bench_echo', arguments: { message: 'x' } } });
    expect((ok.structuredContent as { data: unknown }).data).toMatchObject({ tool: 'bench_echo', credits: 1, arguments_valid: true });
    const bad = await client.callTool({ name: 'estimate_cost', arguments: { tool: 'bench_echo', arguments: { message: 5 } } });
    expect((bad.structuredContent as { data: { arguments_valid: boolean; issues: unknown[] } }).data.arguments_valid).toBe(false);
    await client.close();
    expect(await balanceOf(db, account.id)).toBe(150);
  });

  it('GET /v1/catalog lists servers with tool costs and schemas, and the plans, keyless', async () => {
    const res = await fetch(`${base}/v1/catalog`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      servers: { name: string; tools: { name: string; credits: number; input_schema: { type: string } }[] }[];
      plans: { name: string; credits: number; renewal: string; requests_per_minute: number; burst: number; servers: string[]; max_keys: number }[];
      rate_limits: { connect: { counted_against_plan: boolean; credits: number; requests_per_minute: number; burst: number } };
    };
    // The connect rule, with the defaults the service runs with.
    expect(body.rate_limits.connect).toMatchObject({ counted_against_plan: false, credits: 0, requests_per_minute: 300, burst: 60 });
    expect(body.servers.map((s) => s.name)).toEqual([...SERVER_NAMES]);
    for (const s of body.servers) for (const t of s.tools) expect(t.input_schema.type).toBe('object');
    const free = body.plans.find((p) => p.name === 'free');
    expect(free).toEqual({ name: 'free', credits: 150, renewal: 'one-time', requests_per_minute: 30, burst: 10, servers: [...SERVER_NAMES], max_keys: 3, price_cents: null });
    expect(body.plans.find((p) => p.name === 'premium')).toMatchObject({ credits: 35000, renewal: 'monthly', requests_per_minute: 600, burst: 100, max_keys: 50, price_cents: 19900 });
  });

  it('healthz and readyz answer', async () => {
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { database: true, migrations: true } });
  });

  it('serves Prometheus metrics on the metrics port', async () => {
    const res = await fetch(`http://127.0.0.1:${svc.metricsPort}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('cryptomcp_mcp_requests_total');
  });
});

describe('the SDK protocol layer behind the gateway', () => {
  const legacyPost = (server: string, body: unknown, headers: Record<string, string> = {}) => post(url(server), body, headers);
  it('2025: initialize negotiates a supported older version, falls back to the latest for an unknown one, and names the server', async () => {
    const { key } = await createAccountWithKey(db);
    const h = { 'x-api-key': key };
    const init = (id: number, protocolVersion: string) =>
      legacyPost('whale-intelligence', { jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 't', version: '1' } } }, h);
    const older = SUPPORTED_PROTOCOL_VERSIONS.at(-1)!;
    expect(older).not.toBe(LATEST_PROTOCOL_VERSION);
    const a = await init(7, older);
    expect(a.status).toBe(200);
    expect(a.headers.get('content-type')).toMatch(/^application\/json/);
    expect(a.body).toMatchObject({ jsonrpc: '2.0', id: 7, result: { protocolVersion: older, serverInfo: { name: 'cryptomcp-whale-intelligence' }, capabilities: { tools: {} } } });
    const b = await init(8, '1999-01-01');
    expect((b.body as { result: { protocolVersion: string } }).result.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
  });

  it.each(ERAS)('%s: a notification gets 202 with no body; an unknown method gets JSON-RPC -32601 (2025: in-band, with its id; 2026-07-28: the SDK refuses it with HTTP 400, sent as the envelope); neither is charged', async (era) => {
    const { account, key } = await createAccountWithKey(db);
    const h = { 'x-api-key': key };
    const note = inEra(era, { jsonrpc: '2.0', method: 'notifications/initialized' }, h);
    const noted = await post(url('market-intelligence'), note.body, note.headers);
    expect(noted.status).toBe(202);
    expect(noted.body).toBeUndefined();
    const ask = inEra(era, { jsonrpc: '2.0', id: 'abc', method: 'resources/list' }, h);
    const unknown = await post(url('market-intelligence'), ask.body, ask.headers);
    if (era === 'legacy') {
      expect(unknown.status).toBe(200);
      expect(unknown.body).toMatchObject({ jsonrpc: '2.0', id: 'abc', error: { code: -32601 } });
    } else {
      const err = expectError(unknown, 400, 'INVALID_REQUEST');
      expect(err.details.jsonrpc_error).toMatchObject({ code: -32601 });
    }
    expect(unknown.headers.get('x-credits-used')).toBe('0');
    expect(await balanceOf(db, account.id)).toBe(150);
  });

  it.each(ERAS)('%s: a message the SDK schema refuses (a member JSON-RPC does not define) gets the error envelope with request_id and is not charged', async (era) => {
    const { account, key } = await createAccountWithKey(db);
    const m = inEra(era, { ...toolCall('bench_echo', { message: 'x' }), extra: true }, { 'x-api-key': key });
    const res = await post(url('market-intelligence'), m.body, m.headers);
    const err = expectError(res, 400, 'INVALID_REQUEST');
    expect(err.details.jsonrpc_code).toBe(-32600);
    expect(await balanceOf(db, account.id)).toBe(150);
  });
});
