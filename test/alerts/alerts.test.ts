// Alerts end to end on the devnet: whale rules over the real gateway and the MCP SDK client, two
// replicas of the service on one PostgreSQL running the job queue, a real anvil node whose
// transfers fire the rules, and a local receiver that verifies the Standard Webhooks signature.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevnet, type Devnet } from '../../server/devnet/devnet.ts';
import type { RunningService } from '../../server/runtime.ts';
import { WEBHOOK_RETRY_SCHEDULE_MS } from '../../server/alerts/jobs.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { balanceOf, createAccountWithKey, mcpClient, post, startTestService, toolCall } from '../helpers/service.ts';
import { signedInNewAccount } from '../dashboard/helpers.ts';
import { startReceiver, type Receiver } from './receiver.ts';
import { sendToExchange as send, senderIndexOf, writeManifest } from './devnet-transfers.ts';

let devnet: Devnet;
let manifestFile: string;

type Envelope<T> = { success: boolean; data: T; metadata: { credits_used: number } };
type Created = { rule: { id: string; status: string }; webhook: { secret: string | null; created: boolean } | null; limit: number; rules_used: number };

beforeAll(async () => {
  devnet = await startDevnet();
  manifestFile = writeManifest(devnet);
}, 120_000);
afterAll(async () => {
  await devnet?.stop();
});

const senderIndex = () => senderIndexOf(devnet);
const sendToExchange = (eth: string) => send(devnet, eth);

/** The service as the devnet suites run it: EVM on anvil, labels from the manifest, webhooks to loopback allowed, fast evaluation. */
function env(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    ETHEREUM_RPC_URL: devnet.manifest.rpc_url,
    DEVNET_MANIFEST: manifestFile,
    WEBHOOK_ALLOW_PRIVATE: '1',
    ALERT_EVALUATE_INTERVAL_MS: '200',
    JOBS_POLL_INTERVAL_MS: '50',
    WEBHOOK_RETRY_SCHEDULE_MS: '100,100,100',
    ...extra,
  };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function callTool<T>(svc: RunningService, server: string, key: string, name: string, args: Record<string, unknown>) {
  const res = await post(`${svc.url}/mcp/${server}`, toolCall(name, args), { 'x-api-key': key });
  return res as { status: number; body: { result?: { structuredContent: Envelope<T> }; error?: { code: string; message: string; details?: Record<string, unknown> } } };
}

describe('whale rules on two replicas with webhooks', () => {
  let db: TestDatabase;
  let a: RunningService;
  let b: RunningService;
  let receiver: Receiver;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    [a, b] = await Promise.all([startTestService(db.url, env()), startTestService(db.url, env())]);
    ({ key, account: { id: accountId } } = await createAccountWithKey(db, { plan: 'premium' }));
    receiver = await startReceiver();
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await receiver?.close();
    await db?.drop();
  });

  it('a transfer to an exchange on anvil fires the rule; its webhook arrives once, signed per Standard Webhooks with the endpoint secret, and is charged once', async () => {
    const client = await mcpClient(a.url, 'whale-intelligence', key);
    const created = (await client.callTool({ name: 'create_whale_alert', arguments: { chain: 'ethereum', min_usd: 1000, match: 'exchange', direction: 'to', webhook_url: receiver.url } }))
      .structuredContent as Envelope<Created>;
    await client.close();
    expect(created.success).toBe(true);
    expect(created.data.webhook?.secret).toMatch(/^whsec_/);
    receiver.secret = created.data.webhook!.secret!;
    const before = await balanceOf(db, accountId);

    const hash = await sendToExchange('2');
    const [got] = await receiver.waitFor(1);
    expect(got!.body.type).toBe('alert.whale');
    expect(got!.body.data).toMatchObject({ rule_id: created.data.rule.id, tx_hash: hash, chain: 'ethereum', direction: 'to_exchange', amount: '2' });
    expect(receiver.rejected).toBe(0);

    // Both replicas run the queue; the alert is stored once and its webhook sent once.
    const alerts = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM alerts WHERE rule_id = $1', [created.data.rule.id]);
    expect(alerts.rows[0]!.n).toBe(1);
    expect([...receiver.attempts.values()]).toEqual([1]);
    const charged = await until('the charge', async () => ((await balanceOf(db, accountId)) === before - 1 ? true : undefined));
    expect(charged).toBe(true);

    // The same alert by pull, with its cursor.
    const pulled = await callTool<{ alerts: { cursor: number; data: { tx_hash: string } }[]; next_cursor: number }>(b, 'whale-intelligence', key, 'get_alerts', { cursor: 0 });
    expect(pulled.body.result!.structuredContent.data.alerts.map((x) => x.data.tx_hash)).toEqual([hash]);
    expect(pulled.body.result!.structuredContent.metadata.credits_used).toBe(1);
    // The all-in-one endpoint lists the rule tools once and answers the same feed.
    const allInOne = (await post(`${b.url}/mcp`, toolCall('get_alerts', { cursor: 0 }), { 'x-api-key': key })) as Awaited<ReturnType<typeof callTool<{ alerts: { data: { tx_hash: string } }[] }>>>;
    expect(allInOne.body.result!.structuredContent.data.alerts.map((x) => x.data.tx_hash)).toEqual([hash]);
    const next = pulled.body.result!.structuredContent.data.next_cursor;
    const empty = await callTool<{ alerts: unknown[] }>(b, 'whale-intelligence', key, 'get_alerts', { cursor: next });
    expect(empty.body.result!.structuredContent.data.alerts).toEqual([]);
    expect(empty.body.result!.structuredContent.metadata.credits_used).toBe(0);
  }, 60_000);

  it('ten transfers with both replicas evaluating and delivering: each alert is stored once and its webhook accepted exactly once', async () => {
    const start = receiver.received.length;
    const hashes: string[] = [];
    for (let i = 0; i < 10; i++) hashes.push(await sendToExchange('1'));
    const got = await receiver.waitFor(start + 10);
    const ids = got.slice(start).map((r) => r.id);
    expect(new Set(ids).size).toBe(10);
    expect(new Set(got.slice(start).map((r) => r.body.data.tx_hash))).toEqual(new Set(hashes));
    // No delivery was sent twice, by one replica or the other.
    expect([...receiver.attempts.values()].every((n) => n === 1)).toBe(true);
    const dup = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM (SELECT alert_id FROM webhook_deliveries GROUP BY alert_id HAVING count(*) > 1) d');
    expect(dup.rows[0]!.n).toBe(0);
    // Eleven accepted attempts in the log (each is written once its answer is in).
    await until('eleven ok attempts logged', async () => ((await db.query<{ n: number }>("SELECT count(*)::int AS n FROM webhook_attempts WHERE outcome = 'ok'")).rows[0]!.n === 11 ? true : undefined));
  }, 60_000);

  it('a watched address is a whale rule target: with match "watchlist", a transfer from the address watch_address watches fires the rule', async () => {
    const sender = devnet.manifest.accounts[senderIndex()]!.address;
    const client = await mcpClient(a.url, 'whale-intelligence', key);
    await client.callTool({ name: 'watch_address', arguments: { chain: 'ethereum', address: sender } });
    const created = (await client.callTool({ name: 'create_whale_alert', arguments: { chain: 'ethereum', min_usd: 1000, match: 'watchlist', direction: 'from', webhook_url: receiver.url } }))
      .structuredContent as Envelope<Created>;
    await client.close();
    // The endpoint exists already: its secret is not shown again.
    expect(created.data.webhook).toMatchObject({ created: false, secret: null });
    const start = receiver.received.length;
    const hash = await sendToExchange('1.2');
    // Two rules match this transfer: the exchange rule above and the watchlist rule.
    const got = await receiver.waitFor(start + 2);
    const mine = got.slice(start).filter((r) => r.body.data.rule_id === created.data.rule.id);
    expect(mine.map((r) => r.body.data.tx_hash)).toEqual([hash]);
    expect(mine[0]!.body.data).toMatchObject({ from: sender, direction: 'to_exchange' });
  }, 60_000);
});

describe('retries', () => {
  it('a receiver that fails twice gets the alert on the third attempt, and the delivery log shows all three', async () => {
    const db = await createTestDatabase();
    const svc = await startTestService(db.url, env());
    const receiver = await startReceiver({ failFirst: 2 });
    try {
      const { key } = await createAccountWithKey(db, { plan: 'premium' });
      const created = await callTool<Created>(svc, 'whale-intelligence', key, 'create_whale_alert', { chain: 'ethereum', min_usd: 1000, webhook_url: receiver.url });
      receiver.secret = created.body.result!.structuredContent.data.webhook!.secret!;
      await sendToExchange('1.5');
      const [got] = await receiver.waitFor(1);
      expect(receiver.attempts.get(got!.id)).toBe(3);
      await until('the delivery recorded', async () => ((await db.query("SELECT 1 FROM webhook_deliveries WHERE status = 'delivered'")).rowCount ? true : undefined));
      const log = await db.query<{ attempt: number; outcome: string; status_code: number }>('SELECT attempt, outcome, status_code FROM webhook_attempts ORDER BY attempt');
      expect(log.rows).toEqual([
        { attempt: 1, outcome: 'http_error', status_code: 500 },
        { attempt: 2, outcome: 'http_error', status_code: 500 },
        { attempt: 3, outcome: 'ok', status_code: 204 },
      ]);
    } finally {
      await svc.close();
      await receiver.close();
      await db.drop();
    }
  }, 60_000);

  it('by default the retries follow the published schedule (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: about a day), queued as jobs at those times', async () => {
    expect(WEBHOOK_RETRY_SCHEDULE_MS).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    expect(WEBHOOK_RETRY_SCHEDULE_MS.reduce((s, x) => s + x, 0) / 3_600_000).toBeGreaterThan(24);
    const db = await createTestDatabase();
    // The real entry point's settings: no schedule given.
    const svc = await startTestService(db.url, env({ WEBHOOK_RETRY_SCHEDULE_MS: undefined }));
    const receiver = await startReceiver({ failFirst: 100 });
    try {
      const { key } = await createAccountWithKey(db, { plan: 'premium' });
      const created = await callTool<Created>(svc, 'whale-intelligence', key, 'create_whale_alert', { chain: 'ethereum', min_usd: 1000, webhook_url: receiver.url });
      receiver.secret = created.body.result!.structuredContent.data.webhook!.secret!;
      await sendToExchange('1.5');
      const queued = await until('the second attempt queued', async () => {
        const r = await db.query<{ delay_ms: number; job_delay_ms: number }>(
          `SELECT extract(epoch FROM d.next_attempt_at - t.started_at) * 1000 AS delay_ms,
                  extract(epoch FROM j.run_at - t.started_at) * 1000 AS job_delay_ms
             FROM webhook_deliveries d JOIN webhook_attempts t ON t.delivery_id = d.id AND t.attempt = 1
             JOIN graphile_worker.jobs j ON j.key = 'webhook:' || d.id
            WHERE d.attempts = 1`,
        );
        return r.rows[0];
      });
      expect(Math.round(queued.delay_ms)).toBe(5000);
      expect(Math.round(queued.job_delay_ms)).toBe(5000);
    } finally {
      await svc.close();
      await receiver.close();
      await db.drop();
    }
  }, 60_000);
});

describe('refusals: nothing is created and nothing charged', () => {
  let db: TestDatabase;
  let svc: RunningService;
  beforeAll(async () => {
    db = await createTestDatabase();
    svc = await startTestService(db.url, env({ WEBHOOK_ALLOW_PRIVATE: undefined }));
  }, 60_000);
  afterAll(async () => {
    await svc?.close();
    await db?.drop();
  });

  it.each([
    ['http://example.com/hook', 'only https'],
    ['https://127.0.0.1/hook', 'not a public address'],
    ['https://[::1]/hook', 'not a public address'],
    ['https://10.1.2.3/hook', 'not a public address'],
    ['https://localhost/hook', 'not a public address'],
    ['https://169.254.169.254/latest/meta-data', 'not a public address'],
  ])('a webhook URL %s is 400 INVALID_PARAMS (%s)', async (url, why) => {
    const { key, account } = await createAccountWithKey(db, { plan: 'basic' });
    const before = await balanceOf(db, account.id);
    const res = await callTool(svc, 'price-prediction', key, 'create_price_alert', { asset: 'bitcoin', condition: 'above', level: 1_000_000, webhook_url: url });
    expect(res.status).toBe(400);
    expect(res.body.error?.code).toBe('INVALID_PARAMS');
    expect(res.body.error?.message).toContain(why);
    const rules = await db.query('SELECT 1 FROM alert_rules WHERE account_id = $1', [account.id]);
    const endpoints = await db.query('SELECT 1 FROM webhook_endpoints WHERE account_id = $1', [account.id]);
    expect([rules.rowCount, endpoints.rowCount]).toEqual([0, 0]);
    expect(await balanceOf(db, account.id)).toBe(before);
  });

  it.each([
    [{ asset: 'no-such-coin-xyz', condition: 'above', level: 100 }, 'asset'],
    [{ asset: 'bitcoin', condition: 'above', level: -5 }, 'level'],
    [{ asset: 'bitcoin', condition: 'move', percent: 0 }, 'percent'],
    [{ asset: 'bitcoin', condition: 'below' }, 'level'],
  ])('create_price_alert %j is 400 INVALID_PARAMS naming %s', async (args, field) => {
    const { key, account } = await createAccountWithKey(db, { plan: 'basic' });
    const before = await balanceOf(db, account.id);
    const res = await callTool(svc, 'price-prediction', key, 'create_price_alert', args);
    expect(res.status).toBe(400);
    expect(res.body.error?.code).toBe('INVALID_PARAMS');
    expect(JSON.stringify(res.body.error?.details)).toContain(field);
    expect((await db.query('SELECT 1 FROM alert_rules WHERE account_id = $1', [account.id])).rowCount).toBe(0);
    expect(await balanceOf(db, account.id)).toBe(before);
  });

  it('whale: a negative min_usd is 400; social: a negative threshold is 400', async () => {
    const { key } = await createAccountWithKey(db, { plan: 'basic' });
    const whale = await callTool(svc, 'whale-intelligence', key, 'create_whale_alert', { chain: 'ethereum', min_usd: -1 });
    const social = await callTool(svc, 'social-intelligence', key, 'create_social_alert', { asset: 'bitcoin', threshold: -2 });
    expect([whale.status, whale.body.error?.code, social.status, social.body.error?.code]).toEqual([400, 'INVALID_PARAMS', 400, 'INVALID_PARAMS']);
  });

  it('a rule over the plan cap (free: 3) is 403 PLAN_FORBIDDEN with the limit; the rules stay 3 and the refused call costs nothing', async () => {
    const { key, account } = await createAccountWithKey(db, { plan: 'free' });
    for (let i = 0; i < 3; i++) {
      const ok = await callTool<Created>(svc, 'price-prediction', key, 'create_price_alert', { asset: 'bitcoin', condition: 'above', level: 200_000 + i });
      expect(ok.status).toBe(200);
      expect(ok.body.result!.structuredContent.data).toMatchObject({ limit: 3, rules_used: i + 1 });
    }
    const before = await balanceOf(db, account.id);
    const over = await callTool(svc, 'social-intelligence', key, 'create_social_alert', { asset: 'bitcoin' });
    expect(over.status).toBe(403);
    expect(over.body.error).toMatchObject({ code: 'PLAN_FORBIDDEN', details: { limit: 3, plan: 'free', reason: 'alert_rule_cap' } });
    expect((await db.query('SELECT 1 FROM alert_rules WHERE account_id = $1', [account.id])).rowCount).toBe(3);
    expect(await balanceOf(db, account.id)).toBe(before);
  });
});

describe('SSRF at send time', () => {
  it('a rule whose webhook was accepted where private targets are allowed is refused at send time by a replica that does not allow them: nothing reaches the receiver', async () => {
    const db = await createTestDatabase();
    // A creates the rule (private targets allowed, runs no jobs); B, the strict replica, delivers.
    const a = await startTestService(db.url, env({ JOBS_CONCURRENCY: '0' }));
    const b = await startTestService(db.url, env({ WEBHOOK_ALLOW_PRIVATE: undefined }));
    const receiver = await startReceiver();
    try {
      const { key } = await createAccountWithKey(db, { plan: 'premium' });
      const created = await callTool<Created>(a, 'whale-intelligence', key, 'create_whale_alert', { chain: 'ethereum', min_usd: 1000, webhook_url: receiver.url });
      expect(created.status).toBe(200);
      await sendToExchange('1.5');
      const failed = await until('the refused delivery', async () => {
        const r = await db.query<{ status: string; outcome: string; error: string }>(
          "SELECT d.status, t.outcome, t.error FROM webhook_deliveries d JOIN webhook_attempts t ON t.delivery_id = d.id WHERE d.status <> 'pending'",
        );
        return r.rows[0];
      });
      expect(failed).toMatchObject({ status: 'failed', outcome: 'refused_address' });
      expect(receiver.attempts.size).toBe(0);
    } finally {
      await Promise.all([a.close(), b.close()]);
      await receiver.close();
      await db.drop();
    }
  }, 60_000);
});

describe('the dashboard: delivery log, redeliver, secret rotation', () => {
  it('a failed delivery is in the log with each attempt; after a rotation both secrets verify during the grace period; redeliver sends it again; with no grace only the new secret verifies', async () => {
    const db = await createTestDatabase();
    const svc = await startTestService(db.url, env({ WEBHOOK_RETRY_SCHEDULE_MS: '100' }));
    const receiver = await startReceiver({ failFirst: 1000 });
    try {
      const { client } = await signedInNewAccount(svc.url);
      const made = await client.post('/api/keys', { name: 'alerts' });
      const key = made.body.plaintext as string;
      const created = await callTool<Created>(svc, 'whale-intelligence', key, 'create_whale_alert', { chain: 'ethereum', min_usd: 1000, webhook_url: receiver.url });
      const oldSecret = created.body.result!.structuredContent.data.webhook!.secret!;
      receiver.secret = oldSecret;
      await sendToExchange('1.5');

      const endpoint = await until('the failed delivery', async () => {
        const list = await client.get('/api/webhooks');
        const e = list.body.webhooks[0];
        return e?.deliveries.failed === 1 ? (e as { id: number; url: string }) : undefined;
      });
      expect(endpoint.url).toBe(receiver.url);
      const log = await client.get(`/api/webhooks/${endpoint.id}/deliveries`);
      const delivery = log.body.deliveries[0];
      expect(delivery.status).toBe('failed');
      expect(delivery.attempts.map((t: { attempt: number; outcome: string; status_code: number }) => [t.attempt, t.outcome, t.status_code])).toEqual([
        [1, 'http_error', 500],
        [2, 'http_error', 500],
      ]);
      expect(delivery.attempts.every((t: { duration_ms: number }) => t.duration_ms >= 0)).toBe(true);

      // Rotate with a grace period: a receiver still on the old secret verifies the redelivery.
      const rotated = await client.post(`/api/webhooks/${endpoint.id}/rotate`, { grace_seconds: 3600 });
      expect(rotated.status).toBe(200);
      expect(rotated.body.secret).toMatch(/^whsec_/);
      expect(rotated.body.secret).not.toBe(oldSecret);
      receiver.failFirst = 0;
      expect((await client.post(`/api/webhooks/deliveries/${delivery.id}/redeliver`)).status).toBe(202);
      await receiver.waitFor(1);
      // ... and one on the new secret too.
      receiver.secret = rotated.body.secret;
      await client.post(`/api/webhooks/deliveries/${delivery.id}/redeliver`);
      await receiver.waitFor(2);
      expect(receiver.rejected).toBe(0);

      // Without grace, the old secret no longer verifies.
      await client.post(`/api/webhooks/${endpoint.id}/rotate`, { grace_seconds: 0 });
      receiver.secret = oldSecret;
      await client.post(`/api/webhooks/deliveries/${delivery.id}/redeliver`);
      await until('the rejected delivery', async () => (receiver.rejected > 0 ? true : undefined));
      // Another account cannot see or redeliver it.
      const other = await signedInNewAccount(svc.url);
      expect((await other.client.get(`/api/webhooks/${endpoint.id}/deliveries`)).status).toBe(404);
      expect((await other.client.post(`/api/webhooks/deliveries/${delivery.id}/redeliver`)).status).toBe(404);
    } finally {
      await svc.close();
      await receiver.close();
      await db.drop();
    }
  }, 60_000);
});
