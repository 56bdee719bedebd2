// The all-in-one endpoint's discovery mode ({base_url}/mcp/discover, issue 32 [reach] item 2), over
// real HTTP with the SDK's own clients of both generations:
// - tools/list holds only find_tools, describe_tool and call_tool, in at most 1,500 o200k tokens;
// - find_tools finds a tool by words and by server, describe_tool gives the schemas the endpoint
//   lists, and call_tool runs the real tool: charged its credits, and logged, metered and counted
//   under its own server and name, exactly as a call of that tool on {base_url}/mcp;
// - a key scoped to some servers finds and describes only their tools, and a call_tool of another
//   server's tool is 403 KEY_SCOPE_FORBIDDEN naming that server, uncharged;
// - a bad argument is the called tool's own INVALID_PARAMS (the same issues as on /mcp), uncharged;
//   a failing tool is refunded.
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../server/runtime.ts';
import type { ServerName } from '../../server/mcp/names.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { balanceOf, createAccountWithKey, inEra, ledgerSum, mcpClient, mcpClientV2, post, startTestService, toolCall } from '../helpers/service.ts';

let db: TestDatabase;
let svc: RunningService;
const META_TOOLS = ['find_tools', 'describe_tool', 'call_tool'];
/** The issue's budget for the discovery listing (o200k tokens). */
const DISCOVERY_TOKEN_BUDGET = 1500;

beforeAll(async () => {
  db = await createTestDatabase();
  svc = await startTestService(db.url, { REQUEST_LOG_FLUSH_MS: '50' });
});
afterAll(async () => {
  await svc?.close();
  await db?.drop();
});

interface Envelope<D> {
  success: true;
  data: D;
  metadata: { credits_used: number; remaining_credits: number; next_cursor?: string };
}
type Found = { tools: { name: string; server: string; summary: string; credits: number }[]; total: number };
type Described = { name: string; server: string; credits: number; input_schema: unknown; output_schema: unknown };

function envelope<D>(result: unknown): Envelope<D> {
  return (result as { structuredContent: Envelope<D> }).structuredContent;
}

async function discoverRaw(key: string, name: string, args: Record<string, unknown>) {
  return post(`${svc.url}/mcp/discover`, toolCall(name, args), { 'x-api-key': key });
}

describe('the discovery listing', () => {
  it.each(['v1', 'v2 auto', 'v2 pinned'] as const)('%s client: lists only the three meta-tools', async (kind) => {
    const { key } = await createAccountWithKey(db);
    const client = kind === 'v1' ? await mcpClient(svc.url, 'discover', key) : await mcpClientV2(svc.url, 'discover', key, kind === 'v2 auto' ? 'auto' : 'pinned');
    const { tools } = await client.listTools();
    await client.close();
    expect(tools.map((t) => t.name)).toEqual(META_TOOLS);
  });

  it(`fits in ${DISCOVERY_TOKEN_BUDGET} o200k tokens (the whole tools/list result)`, async () => {
    const { key } = await createAccountWithKey(db);
    const res = await post(`${svc.url}/mcp/discover`, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }, { 'x-api-key': key });
    expect(res.status).toBe(200);
    const result = (res.body as { result: { tools: unknown[] } }).result;
    const tokens = countTokens(JSON.stringify(result));
    expect(tokens).toBeLessThanOrEqual(DISCOVERY_TOKEN_BUDGET);
    // The full endpoint's listing, for scale: discovery mode is meant to be a small fraction of it.
    const full = await post(`${svc.url}/mcp`, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }, { 'x-api-key': key });
    expect(tokens * 10).toBeLessThan(countTokens(JSON.stringify((full.body as { result: unknown }).result)));
  });

  it('call_tool does not claim a cost of its own: it is charged the called tool’s credits', async () => {
    const { key } = await createAccountWithKey(db);
    const res = await post(`${svc.url}/mcp/discover`, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }, { 'x-api-key': key });
    const tools = (res.body as { result: { tools: { name: string; description: string; _meta?: Record<string, unknown> }[] } }).result.tools;
    const relay = tools.find((t) => t.name === 'call_tool')!;
    expect(relay.description).not.toMatch(/Costs \d+ credit/);
    expect(relay._meta?.['cryptomcp.dev/credits']).toBeUndefined();
    expect(tools.find((t) => t.name === 'find_tools')!.description).toMatch(/Costs 0 credits\.$/);
  });
});

describe('find, describe, call', () => {
  it.each(['v1', 'v2 pinned'] as const)('%s client: finds get_prices by words, describes it as /mcp lists it, and calls it at its price', async (kind) => {
    const { account, key } = await createAccountWithKey(db);
    const client = kind === 'v1' ? await mcpClient(svc.url, 'discover', key) : await mcpClientV2(svc.url, 'discover', key, 'pinned');
    const found = envelope<Found>(await client.callTool({ name: 'find_tools', arguments: { query: 'current prices' } }));
    expect(found.metadata.credits_used).toBe(0);
    const hit = found.data.tools.find((t) => t.name === 'get_prices')!;
    expect(hit).toMatchObject({ server: 'market-intelligence', credits: 1 });
    expect(hit.summary).not.toContain('\n');

    const described = envelope<Described>(await client.callTool({ name: 'describe_tool', arguments: { name: 'get_prices' } }));
    const full = await mcpClient(svc.url, '', key);
    const listed = (await full.listTools()).tools.find((t) => t.name === 'get_prices')!;
    await full.close();
    expect(described.data).toMatchObject({ name: 'get_prices', server: 'market-intelligence', credits: 1 });
    expect(described.data.input_schema).toEqual(listed.inputSchema);
    expect(described.data.output_schema).toEqual(listed.outputSchema);

    const called = envelope<{ prices: unknown[] }>(await client.callTool({ name: 'call_tool', arguments: { name: 'get_prices', arguments: { assets: ['bitcoin'] } } }));
    await client.close();
    expect(called.success).toBe(true);
    expect(called.metadata.credits_used).toBe(1);
    expect(called.metadata.remaining_credits).toBe(149);
    expect(await balanceOf(db, account.id)).toBe(149);
    expect(await ledgerSum(db, account.id)).toBe(149);
    // find_tools and describe_tool are reserved at 0 credits under the endpoint ('all').
    const ledger = await db.query<{ server: string; tool: string }>(
      `SELECT server, tool FROM credit_ledger WHERE account_id = $1 AND kind = 'reserve' AND server <> 'all'`,
      [account.id],
    );
    expect(ledger.rows.map((r) => [r.server, r.tool])).toEqual([['market-intelligence', 'get_prices']]);
    await expect
      .poll(async () => (await db.query<{ server: string; tool: string; credits: number }>(`SELECT server, tool, credits FROM request_log WHERE account_id = $1 AND method = 'tools/call' ORDER BY created_at`, [account.id])).rows, { timeout: 10_000 })
      .toContainEqual({ server: 'market-intelligence', tool: 'get_prices', credits: 1 });
    const metrics = await (await fetch(`http://127.0.0.1:${svc.metricsPort}/metrics`)).text();
    expect(metrics).toMatch(/cryptomcp_mcp_requests_total\{server="market-intelligence",method="tools\/call",tool="get_prices",outcome="ok",status="200"\} [1-9]/);
  });

  it('find_tools narrows by server; every tool of the endpoint is found somewhere', async () => {
    const { key } = await createAccountWithKey(db);
    const byServer = await discoverRaw(key, 'find_tools', { server: 'kol-analytics', limit: 100 });
    const kol = envelope<Found>((byServer.body as { result: unknown }).result).data.tools;
    expect(kol.length).toBeGreaterThan(0);
    expect(new Set(kol.map((t) => t.server))).toEqual(new Set(['kol-analytics']));

    const full = await mcpClient(svc.url, '', key);
    const everyTool = (await full.listTools()).tools.map((t) => t.name).sort();
    await full.close();
    const names: string[] = [];
    let cursor: string | undefined;
    do {
      const res = await discoverRaw(key, 'find_tools', { limit: 40, ...(cursor ? { cursor } : {}) });
      const page = envelope<Found>((res.body as { result: unknown }).result);
      names.push(...page.data.tools.map((t) => t.name));
      expect(page.data.total).toBe(everyTool.length);
      cursor = page.metadata.next_cursor;
    } while (cursor);
    expect(names.sort()).toEqual(everyTool);
  });

  it('a tools/call of a real tool on the discovery URL is served as on /mcp', async () => {
    const { key } = await createAccountWithKey(db);
    const res = await discoverRaw(key, 'get_prices', { assets: ['ethereum'] });
    expect(res.status).toBe(200);
    expect(envelope<unknown>((res.body as { result: unknown }).result).metadata.credits_used).toBe(1);
  });

  it.each(['legacy', 'modern'] as const)('%s protocol: a raw call_tool carries the called tool’s answer', async (era) => {
    const { key } = await createAccountWithKey(db);
    const { body, headers } = inEra(era, toolCall('call_tool', { name: 'get_prices', arguments: { assets: ['bitcoin'] } }));
    const res = await post(`${svc.url}/mcp/discover`, body, { ...headers, 'x-api-key': key });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-credits-used')).toBe('1');
    expect(envelope<unknown>((res.body as { result: unknown }).result).success).toBe(true);
  });
});

describe('scopes and refusals', () => {
  it('a key scoped to two servers finds and describes only their tools; call_tool of another server’s tool is 403 and free', async () => {
    const scoped: ServerName[] = ['market-intelligence', 'kol-analytics'];
    const { account, key } = await createAccountWithKey(db, { key: { servers: scoped } });
    const all = await discoverRaw(key, 'find_tools', { limit: 100 });
    const found = envelope<Found>((all.body as { result: unknown }).result).data.tools;
    expect(new Set(found.map((t) => t.server))).toEqual(new Set([...scoped, 'all']));
    const forecast = await discoverRaw(key, 'find_tools', { query: 'forecast' });
    expect(envelope<Found>((forecast.body as { result: unknown }).result).data.tools.map((t) => t.name)).not.toContain('forecast_price');
    const otherServer = await discoverRaw(key, 'find_tools', { server: 'price-prediction' });
    expect((otherServer.body as { error: { code: string } }).error.code).toBe('INVALID_PARAMS');

    const described = await discoverRaw(key, 'describe_tool', { name: 'forecast_price' });
    expect(described.status).toBe(404);
    expect((described.body as { error: { code: string } }).error.code).toBe('NOT_FOUND');

    const refused = await discoverRaw(key, 'call_tool', { name: 'forecast_price', arguments: { asset: 'bitcoin', horizon: 7 } });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ success: false, error: { code: 'KEY_SCOPE_FORBIDDEN', details: { server: 'price-prediction', allowed_servers: scoped } } });
    expect(refused.headers.get('x-credits-used')).toBe('0');
    expect(await balanceOf(db, account.id)).toBe(150);
  });

  it('a bad argument is the called tool’s own INVALID_PARAMS, as on /mcp, and costs nothing', async () => {
    const { account, key } = await createAccountWithKey(db);
    const bad = { assets: 'bitcoin' };
    const relayed = await discoverRaw(key, 'call_tool', { name: 'get_prices', arguments: bad });
    const direct = await post(`${svc.url}/mcp`, toolCall('get_prices', bad), { 'x-api-key': key });
    expect(relayed.status).toBe(400);
    expect(direct.status).toBe(400);
    const details = (r: typeof direct) => (r.body as { error: { code: string; details: { issues: unknown } } }).error;
    expect(details(relayed).code).toBe('INVALID_PARAMS');
    expect(details(relayed).details.issues).toEqual(details(direct).details.issues);
    expect(relayed.headers.get('x-credits-used')).toBe('0');

    const unknown = await discoverRaw(key, 'call_tool', { name: 'no_such_tool' });
    expect((unknown.body as { error: { code: string } }).error.code).toBe('UNKNOWN_TOOL');
    // call_tool's own arguments are checked as its own.
    const noName = await discoverRaw(key, 'call_tool', { arguments: {} });
    expect(details(noName).code).toBe('INVALID_PARAMS');

    expect(await balanceOf(db, account.id)).toBe(150);
    expect((await db.query(`SELECT 1 FROM credit_ledger WHERE account_id = $1 AND kind = 'reserve'`, [account.id])).rowCount).toBe(0);
  });

  it('a relayed tool that fails is refunded, and logged under its server', async () => {
    const { account, key } = await createAccountWithKey(db);
    const failed = await discoverRaw(key, 'call_tool', { name: 'bench_fail', arguments: {} });
    expect(failed.status).toBe(502);
    await expect.poll(async () => (await db.query(`SELECT 1 FROM credit_ledger WHERE account_id = $1 AND kind = 'reserve' AND resolution IS NULL`, [account.id])).rowCount).toBe(0);
    expect(await balanceOf(db, account.id)).toBe(150);
    expect(await ledgerSum(db, account.id)).toBe(150);
    const rows = await db.query<{ server: string; tool: string }>(`SELECT server, tool FROM credit_ledger WHERE account_id = $1 AND kind = 'reserve'`, [account.id]);
    expect(rows.rows).toEqual([{ server: 'market-intelligence', tool: 'bench_fail' }]);
  });

  it('without a credential: 401 pointing at the all-in-one endpoint’s protected-resource metadata', async () => {
    const res = await post(`${svc.url}/mcp/discover`, toolCall('find_tools'));
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('/.well-known/oauth-protected-resource/mcp"');
  });
});
