// The all-in-one endpoint ({base_url}/mcp, issue 32 [reach] item 1): one URL for every server a
// credential may use, through the same gateway stages as the nine per-server URLs. Checked with
// the SDK's own clients of both generations over real HTTP:
// - it lists the data tools of every permitted server, and the three free tools once;
// - a key scoped to two servers sees exactly those two servers' tools; a call to another
//   server's tool is 403 KEY_SCOPE_FORBIDDEN naming that server, and costs nothing;
// - a call is metered, logged and counted under the server the tool belongs to, and refunded
//   when it fails, exactly as on that server's own URL;
// - a missing key is 401 pointing at the endpoint's own protected-resource metadata.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../server/runtime.ts';
import { SERVER_NAMES, type ServerName } from '../../server/mcp/names.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { balanceOf, createAccountWithKey, ledgerSum, mcpClient, mcpClientV2, post, startTestService, toolCall } from '../helpers/service.ts';

let db: TestDatabase;
let svc: RunningService;
// The endpoint's own tools, listed once whatever the key's scope: the free ones, and the alert
// rules' management (an account's rules, from whichever server made them).
const FREE = ['get_capabilities', 'estimate_cost', 'get_usage', 'list_alert_rules', 'pause_alert_rule', 'resume_alert_rule', 'delete_alert_rule', 'get_alerts'];

beforeAll(async () => {
  db = await createTestDatabase();
  svc = await startTestService(db.url, { REQUEST_LOG_FLUSH_MS: '50' });
});
afterAll(async () => {
  await svc?.close();
  await db?.drop();
});

/** Every data tool of the given servers, from their own URLs (the reference the endpoint must match). */
async function dataToolsOf(key: string, servers: readonly string[]): Promise<string[]> {
  const names: string[] = [];
  for (const server of servers) {
    const client = await mcpClient(svc.url, server, key);
    names.push(...(await client.listTools()).tools.map((t) => t.name).filter((n) => !FREE.includes(n)));
    await client.close();
  }
  return names.sort();
}

describe('one URL for every server', () => {
  it.each(['v1', 'v2 auto', 'v2 pinned'] as const)('%s client: lists every data tool of the nine servers and the free tools once', async (kind) => {
    const { key } = await createAccountWithKey(db);
    const client = kind === 'v1' ? await mcpClient(svc.url, '', key) : await mcpClientV2(svc.url, '', key, kind === 'v2 auto' ? 'auto' : 'pinned');
    const names = (await client.listTools()).tools.map((t) => t.name);
    await client.close();
    for (const free of FREE) expect(names.filter((n) => n === free)).toHaveLength(1);
    expect(names.filter((n) => !FREE.includes(n)).sort()).toEqual(await dataToolsOf(key, SERVER_NAMES));
  });

  it('a call is metered, logged and counted under the tool’s own server; a failed one is refunded', async () => {
    const { account, key } = await createAccountWithKey(db);
    const client = await mcpClientV2(svc.url, '', key, 'auto');
    const answer = (await client.callTool({ name: 'get_prices', arguments: { assets: ['bitcoin'] } })) as { structuredContent?: { metadata: { credits_used: number } } };
    expect(answer.structuredContent!.metadata.credits_used).toBe(1);
    const forecast = (await client.callTool({ name: 'forecast_price', arguments: { asset: 'bitcoin', horizon: 7 } })) as { structuredContent?: { metadata: { credits_used: number } } };
    const forecastCost = forecast.structuredContent!.metadata.credits_used;
    expect(forecastCost).toBeGreaterThan(0);
    await client.close();
    const failed = await post(`${svc.url}/mcp`, toolCall('bench_fail'), { 'x-api-key': key });
    expect(failed.status).toBe(502);

    const rows = await db.query<{ server: string; tool: string; resolution: string }>(
      `SELECT server, tool, resolution FROM credit_ledger WHERE account_id = $1 AND kind = 'reserve' ORDER BY id`,
      [account.id],
    );
    await expect.poll(async () => (await db.query(`SELECT 1 FROM credit_ledger WHERE account_id = $1 AND kind = 'reserve' AND resolution IS NULL`, [account.id])).rowCount).toBe(0);
    expect(rows.rows.map((r) => [r.server, r.tool])).toEqual([
      ['market-intelligence', 'get_prices'],
      ['price-prediction', 'forecast_price'],
      ['market-intelligence', 'bench_fail'],
    ]);
    expect(await balanceOf(db, account.id)).toBe(150 - 1 - forecastCost);
    expect(await ledgerSum(db, account.id)).toBe(150 - 1 - forecastCost);
    await expect
      .poll(async () => (await db.query<{ server: string }>(`SELECT server FROM request_log WHERE account_id = $1 AND method = 'tools/call' ORDER BY created_at`, [account.id])).rows.map((r) => r.server))
      .toEqual(['market-intelligence', 'price-prediction', 'market-intelligence']);
    const metrics = await (await fetch(`http://127.0.0.1:${svc.metricsPort}/metrics`)).text();
    expect(metrics).toMatch(/cryptomcp_mcp_requests_total\{server="price-prediction",method="tools\/call",tool="forecast_price",outcome="ok",status="200"\} [1-9]/);
  });
});

describe('scopes', () => {
  it('a key scoped to two servers sees those two; another server’s tool is 403 KEY_SCOPE_FORBIDDEN and costs nothing', async () => {
    const scoped: ServerName[] = ['market-intelligence', 'kol-analytics'];
    const { account, key } = await createAccountWithKey(db, { key: { servers: scoped } });
    const client = await mcpClient(svc.url, '', key);
    const names = (await client.listTools()).tools.map((t) => t.name);
    await client.close();
    expect(names.filter((n) => !FREE.includes(n)).sort()).toEqual(await dataToolsOf(key, scoped));
    expect(names).not.toContain('forecast_price');

    const refused = await post(`${svc.url}/mcp`, toolCall('forecast_price', { asset: 'bitcoin', horizon: 7 }), { 'x-api-key': key });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ success: false, error: { code: 'KEY_SCOPE_FORBIDDEN', details: { server: 'price-prediction', allowed_servers: scoped } } });
    expect(refused.headers.get('x-credits-used')).toBe('0');
    // The same call on its own server's URL is refused the same way.
    const direct = await post(`${svc.url}/mcp/price-prediction`, toolCall('forecast_price', { asset: 'bitcoin', horizon: 7 }), { 'x-api-key': key });
    expect((direct.body as { error: { code: string } }).error.code).toBe('KEY_SCOPE_FORBIDDEN');
    expect(await balanceOf(db, account.id)).toBe(150);
  });

  it('get_capabilities on the endpoint describes exactly the tools the key may call', async () => {
    const { key } = await createAccountWithKey(db, { key: { servers: ['kol-analytics'] } });
    const res = await post(`${svc.url}/mcp`, toolCall('get_capabilities'), { 'x-api-key': key });
    expect(res.status).toBe(200);
    const data = (res.body as { result: { structuredContent: { data: { tools: { name: string }[] } } } }).result.structuredContent.data;
    expect(data.tools.map((t) => t.name).sort()).toEqual([...(await dataToolsOf(key, ['kol-analytics'])), ...FREE].sort());
  });

  it('an unknown tool is 404 UNKNOWN_TOOL, uncharged', async () => {
    const { account, key } = await createAccountWithKey(db);
    const res = await post(`${svc.url}/mcp`, toolCall('no_such_tool'), { 'x-api-key': key });
    expect((res.body as { error: { code: string } }).error.code).toBe('UNKNOWN_TOOL');
    expect(await balanceOf(db, account.id)).toBe(150);
  });
});

describe('without a credential', () => {
  it('is 401 with the endpoint’s own protected-resource metadata, which exists', async () => {
    for (const path of ['/mcp', '/mcp/']) {
      const res = await post(`${svc.url}${path}`, toolCall('get_prices', { assets: ['bitcoin'] }));
      expect(res.status).toBe(401);
      const header = res.headers.get('www-authenticate')!;
      const metadata = /resource_metadata="([^"]+)"/.exec(header)![1]!;
      expect(new URL(metadata).pathname).toBe('/.well-known/oauth-protected-resource/mcp');
      const doc = (await (await fetch(new URL(new URL(metadata).pathname, svc.url))).json()) as { resource: string };
      expect(new URL(doc.resource).pathname).toBe('/mcp');
    }
  });
});
