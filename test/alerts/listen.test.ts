// subscriptions/listen end to end on the devnet (docs/alerts.md, "Listening"): the v2 MCP SDK's own
// client pinned to 2026-07-28 listens to alerts://feed over real HTTP on one of two replicas of
// the service sharing one PostgreSQL (both evaluate rules), a whale rule fires when a transfer is
// sent on anvil, and the notification arrives carrying the alert — once, charged once.
import { Client as V2Client, StreamableHTTPClientTransport as V2StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevnet, type Devnet } from '../../server/devnet/devnet.ts';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { balanceOf, createAccountWithKey, inEra, ledgerSum, mcpClientV2, MODERN_VERSION, post, startTestService, toolCall } from '../helpers/service.ts';
import { connect } from '../oauth/helpers.ts';
import { MAX_STREAMS_PER_ACCOUNT } from '../../server/gateway/subscriptions.ts';
import { eventually } from '../helpers/wait.ts';
import { sendToExchange as send, writeManifest } from './devnet-transfers.ts';

const ALERT_META = 'dev.cryptomcp/alert';

type Notice = { uri: string; alert: { id: string; cursor: number; type: string; data: Record<string, unknown> }; subscription: unknown };

let devnet: Devnet;
let manifestFile: string;
let db: TestDatabase;
let a: RunningService;
let b: RunningService;

beforeAll(async () => {
  devnet = await startDevnet();
  manifestFile = writeManifest(devnet);
  db = await createTestDatabase();
  const env = { ETHEREUM_RPC_URL: devnet.manifest.rpc_url, DEVNET_MANIFEST: manifestFile, ALERT_EVALUATE_INTERVAL_MS: '200', JOBS_POLL_INTERVAL_MS: '50' };
  [a, b] = await Promise.all([startTestService(db.url, env), startTestService(db.url, env)]);
}, 120_000);
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await db?.drop();
  await devnet?.stop();
});

const sendToExchange = (eth: string) => send(devnet, eth);

/** Waits until the expectations in fn hold. */
const until = (fn: () => unknown, timeoutMs?: number) =>
  eventually(async () => {
    await fn();
    return true;
  }, timeoutMs);

/** A v2 client pinned to 2026-07-28 whose resources/updated notifications are collected. */
async function listener(svc: RunningService, server: string, key: string): Promise<{ client: V2Client; notices: Notice[] }> {
  const client = await mcpClientV2(svc.url, server, key, 'pinned');
  const notices: Notice[] = [];
  client.setNotificationHandler('notifications/resources/updated', (n) => {
    const meta = n.params._meta as Record<string, unknown> | undefined;
    notices.push({ uri: n.params.uri, alert: meta?.[ALERT_META] as Notice['alert'], subscription: meta?.['io.modelcontextprotocol/subscriptionId'] });
  });
  return { client, notices };
}

describe('subscriptions/listen on alerts://feed', () => {
  it('a whale rule fires on anvil and the notification arrives on the listen stream of one replica once, with the alert in it, charged once', async () => {
    const { key, account } = await createAccountWithKey(db, { plan: 'premium' });
    const { client, notices } = await listener(a, 'whale-intelligence', key);
    const sub = await client.listen({ resourceSubscriptions: ['alerts://feed'], toolsListChanged: true });
    // Only the feed is honored: the tools never change here.
    expect(sub.honoredFilter).toEqual({ resourceSubscriptions: ['alerts://feed'] });

    const created = (await client.callTool({ name: 'create_whale_alert', arguments: { chain: 'ethereum', min_usd: 1000, match: 'exchange', direction: 'to' } })).structuredContent as {
      data: { rule: { id: string } };
    };
    const ruleId = created.data.rule.id;
    const before = await balanceOf(db, account.id);

    const first = await sendToExchange('2');
    await until(() => expect(notices.length).toBe(1), 30_000);
    const n = notices[0]!;
    expect(n.uri).toBe('alerts://feed');
    expect(typeof n.subscription).toBe('string');
    expect(n.alert).toMatchObject({ type: 'alert.whale', data: { rule_id: ruleId, tx_hash: first, chain: 'ethereum', direction: 'to_exchange', amount: '2' } });
    expect(n.alert.id).toBe(`alert_${n.alert.cursor}`);
    expect(n.alert.data.alert_id).toBe(n.alert.cursor);

    // A second alert comes after the first, and nothing was sent twice (both replicas evaluate,
    // both LISTEN; the stream is on one and reads the feed by cursor).
    const second = await sendToExchange('3');
    await until(() => expect(notices.length).toBe(2), 30_000);
    expect(notices.map((x) => x.alert.data.tx_hash)).toEqual([first, second]);
    expect(new Set(notices.map((x) => x.alert.id)).size).toBe(2);

    // One credit per alert written to the stream, in the ledger under the alert's cursor.
    await until(async () => expect(await balanceOf(db, account.id)).toBe(before - 2));
    const rows = await db.query<{ request_id: string }>("SELECT request_id FROM credit_ledger WHERE account_id = $1 AND tool = 'alert_delivery' ORDER BY id", [account.id]);
    expect(rows.rows.map((r) => r.request_id)).toEqual(notices.map((x) => `alert-listen:${x.alert.cursor}`));
    expect(await ledgerSum(db, account.id)).toBe(await balanceOf(db, account.id));

    await sub.close();
    expect(await sub.closed).toBe('local');
    await client.close();
  }, 90_000);

  it('alerts fired while nobody listened are sent first to a listen with alerts://feed?after=<last cursor> (at least once across reconnects), and not charged twice', async () => {
    const { key, account } = await createAccountWithKey(db, { plan: 'premium' });
    const first = await listener(b, 'whale-intelligence', key);
    const sub = await first.client.listen({ resourceSubscriptions: ['alerts://feed'] });
    await first.client.callTool({ name: 'create_whale_alert', arguments: { chain: 'ethereum', min_usd: 1000 } });
    await sendToExchange('1.1');
    await until(() => expect(first.notices.length).toBe(1), 30_000);
    const seen = first.notices[0]!.alert.cursor;
    await sub.close();
    await first.client.close();

    // Fired with no stream open.
    const missed = await sendToExchange('1.2');
    await until(async () => expect((await db.query('SELECT 1 FROM alerts WHERE account_id = $1', [account.id])).rowCount).toBe(2), 30_000);

    // Reconnect on the other replica with the cursor; a cursor one lower also re-sends the first.
    const again = await listener(a, 'whale-intelligence', key);
    const resumed = await again.client.listen({ resourceSubscriptions: [`alerts://feed?after=${seen - 1}`] });
    expect(resumed.honoredFilter).toEqual({ resourceSubscriptions: [`alerts://feed?after=${seen - 1}`] });
    await until(() => expect(again.notices.length).toBe(2), 30_000);
    expect(again.notices[0]!.alert.cursor).toBe(seen);
    expect(again.notices[1]!.alert.cursor).toBeGreaterThan(seen);
    expect(again.notices[1]!.alert.data.tx_hash).toBe(missed);
    expect(again.notices.every((x) => x.uri === `alerts://feed?after=${seen - 1}`)).toBe(true);
    // The alert sent twice (once per stream) is charged once.
    await until(async () =>
      expect((await db.query("SELECT 1 FROM credit_ledger WHERE account_id = $1 AND tool = 'alert_delivery'", [account.id])).rowCount).toBe(2),
    );
    await resumed.close();
    await again.client.close();
  }, 90_000);

  it('an alert the account has no credit for is not sent (nor given away free): it waits in the feed and goes out, charged, once there is credit', async () => {
    const { key, account } = await createAccountWithKey(db, { plan: 'premium' });
    await post(`${b.url}/mcp/whale-intelligence`, toolCall('create_whale_alert', { chain: 'ethereum', min_usd: 1000 }), { 'x-api-key': key });
    const hashes = [await sendToExchange('1.4'), await sendToExchange('1.5')];
    await until(async () => expect((await db.query('SELECT 1 FROM alerts WHERE account_id = $1', [account.id])).rowCount).toBe(2), 30_000);
    // Credit for one alert (set here directly: the test is about the stream, not how it got there).
    await db.query('UPDATE accounts SET balance = 1, topup = 0 WHERE id = $1', [account.id]);
    const { client, notices } = await listener(a, 'whale-intelligence', key);
    const sub = await client.listen({ resourceSubscriptions: ['alerts://feed?after=0'] });
    const deltas = async () => (await db.query<{ delta: number }>("SELECT delta FROM credit_ledger WHERE account_id = $1 AND tool = 'alert_delivery' ORDER BY id", [account.id])).rows.map((r) => r.delta);
    // The first goes out and takes the last credit; the second stays in the feed.
    await until(async () => expect(await deltas()).toEqual([-1]), 30_000);
    expect(notices.map((x) => x.alert.data.tx_hash)).toEqual([hashes[0]]);
    // Credit comes back; the feed's announcement wakes the stream, which sends the second.
    await db.query('UPDATE accounts SET balance = 5 WHERE id = $1', [account.id]);
    await db.query("SELECT pg_notify('alerts', $1)", [`${account.id}:0`]);
    await until(() => expect(notices.map((x) => x.alert.data.tx_hash)).toEqual(hashes), 30_000);
    await until(async () => expect(await deltas()).toEqual([-1, -1]));
    expect(await balanceOf(db, account.id)).toBe(4);
    await sub.close();
    await client.close();
  }, 90_000);

  it('the stream survives the loss of the LISTEN connection: it reconnects and an alert fired after is still delivered', async () => {
    const { key } = await createAccountWithKey(db, { plan: 'premium' });
    const { client, notices } = await listener(a, 'whale-intelligence', key);
    const sub = await client.listen({ resourceSubscriptions: ['alerts://feed'] });
    await client.callTool({ name: 'create_whale_alert', arguments: { chain: 'ethereum', min_usd: 1000 } });
    // Cut every process's LISTEN connection, as a database restart would.
    const cut = await db.query<{ pid: number }>("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'LISTEN alerts' AND datname = current_database()");
    expect(cut.rowCount).toBeGreaterThanOrEqual(1);
    const hash = await sendToExchange('1.3');
    await until(() => expect(notices.map((x) => x.alert.data.tx_hash)).toEqual([hash]), 30_000);
    await sub.close();
    await client.close();
  }, 90_000);

  it('a replica shutting down ends its streams with the graceful close (the empty listen result), so the client knows to listen again', async () => {
    const c = await startTestService(db.url, { ETHEREUM_RPC_URL: devnet.manifest.rpc_url, DEVNET_MANIFEST: manifestFile });
    const { key } = await createAccountWithKey(db);
    const { client } = await listener(c, 'whale-intelligence', key);
    const sub = await client.listen({ resourceSubscriptions: ['alerts://feed'] });
    await c.close();
    expect(await sub.closed).toBe('graceful');
    await client.close();
  }, 60_000);

  it(`an account holds at most ${MAX_STREAMS_PER_ACCOUNT} open streams on a replica: one more is refused with the SDK router's "Subscription limit reached", and a closed one frees its place`, async () => {
    const { key } = await createAccountWithKey(db);
    const { client } = await listener(a, 'whale-intelligence', key);
    const subs = [];
    for (let i = 0; i < MAX_STREAMS_PER_ACCOUNT; i++) subs.push(await client.listen({ resourceSubscriptions: ['alerts://feed'] }));
    await expect(client.listen({ resourceSubscriptions: ['alerts://feed'] })).rejects.toThrow(/Subscription limit reached/);
    await subs.pop()!.close();
    await until(async () => expect((await client.listen({ resourceSubscriptions: ['alerts://feed'] })).honoredFilter).toEqual({ resourceSubscriptions: ['alerts://feed'] }));
    await client.close();
  }, 60_000);

  it('an OAuth access token listens like a key; a token approved for other servers gets the same 403 on listen as on a call', async () => {
    const base = a.url;
    const granted = await connect(base, privateKeyToAccount(generatePrivateKey()), { scope: 'whale-intelligence' });
    const client = new V2Client({ name: 'listen-oauth', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN_VERSION } } });
    await client.connect(new V2StreamableHTTPClientTransport(new URL(`${base}/mcp/whale-intelligence`), { requestInit: { headers: { authorization: `Bearer ${granted.access_token}` } } }));
    const sub = await client.listen({ resourceSubscriptions: ['alerts://feed'] });
    expect(sub.honoredFilter).toEqual({ resourceSubscriptions: ['alerts://feed'] });
    await sub.close();
    await client.close();

    const other = await connect(base, privateKeyToAccount(generatePrivateKey()), { scope: 'market-intelligence' });
    const headers = { authorization: `Bearer ${other.access_token}` };
    const listen = inEra('modern', { jsonrpc: '2.0', id: 'listen:0', method: 'subscriptions/listen', params: { notifications: { resourceSubscriptions: ['alerts://feed'] } } }, headers);
    const call = inEra('modern', toolCall('get_alerts'), headers);
    const [l, c] = await Promise.all([post(`${base}/mcp/whale-intelligence`, listen.body, listen.headers), post(`${base}/mcp/whale-intelligence`, call.body, call.headers)]);
    expect([l.status, c.status]).toEqual([403, 403]);
    expect((l.body as { error: { code: string } }).error.code).toBe((c.body as { error: { code: string } }).error.code);
  }, 60_000);

  it('the all-in-one endpoint /mcp honors the feed too (it lists get_alerts)', async () => {
    const { key } = await createAccountWithKey(db);
    const client = await mcpClientV2(a.url, '', key, 'pinned');
    const sub = await client.listen({ resourceSubscriptions: ['alerts://feed'] });
    expect(sub.honoredFilter).toEqual({ resourceSubscriptions: ['alerts://feed'] });
    await sub.close();
    await client.close();
  });

  it('a server without alerts honors nothing: the listen is acknowledged empty and closed gracefully', async () => {
    const { key } = await createAccountWithKey(db);
    const client = await mcpClientV2(a.url, 'blockchain-explorer', key, 'pinned');
    const sub = await client.listen({ resourceSubscriptions: ['alerts://feed'] });
    expect(sub.honoredFilter).toEqual({});
    expect(await sub.closed).toBe('graceful');
    await client.close();
  });

  it('a key without access to the alert server gets the same 403 on listen as on a call; listen is not a 2025 method', async () => {
    const { key } = await createAccountWithKey(db, { key: { servers: ['kol-analytics'] } });
    const listen = inEra('modern', { jsonrpc: '2.0', id: 'listen:0', method: 'subscriptions/listen', params: { notifications: { resourceSubscriptions: ['alerts://feed'] } } }, { 'x-api-key': key });
    const call = inEra('modern', toolCall('get_alerts'), { 'x-api-key': key });
    const [l, c] = await Promise.all([post(`${a.url}/mcp/whale-intelligence`, listen.body, listen.headers), post(`${a.url}/mcp/whale-intelligence`, call.body, call.headers)]);
    expect(l.status).toBe(403);
    expect(c.status).toBe(403);
    const errorOf = (r: typeof l) => {
      const details = { ...(r.body as { error: { details: Record<string, unknown> } }).error.details };
      delete details.request_id;
      return { code: (r.body as { error: { code: string } }).error.code, details };
    };
    expect(errorOf(l)).toEqual(errorOf(c));
    expect(errorOf(l).code).toBe('KEY_SCOPE_FORBIDDEN');

    const legacy = inEra('legacy', { jsonrpc: '2.0', id: 1, method: 'subscriptions/listen', params: { notifications: {} } }, { 'x-api-key': (await createAccountWithKey(db)).key });
    const res = await post(`${a.url}/mcp/whale-intelligence`, legacy.body, legacy.headers);
    expect(res.status).toBe(400);
    expect((res.body as { error: { code: string } }).error.code).toBe('INVALID_REQUEST');
  });
});
