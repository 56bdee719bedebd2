// Usage that is alive and in money (issue 36, items 1 and 5), over real HTTP with the job runner
// on: GET /api/usage's outlook gives the period's spend in dollars at the plan's price, when the
// balance runs out at the recent rate and the threshold reached; the account's webhook endpoints
// get a signed notice at 80, 90 and 100% of the allowance, each once per period however often the
// task runs; and a paid plan about to lapse to Free is warned about from 7 days before, by the
// outlook and by one webhook. A notice goes through the alerts' webhook sender: retried on its
// schedule, listed in the endpoint's delivery log with its event type, redelivered signed, free.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountSetPlan } from '../../server/accounts/accounts.ts';
import { newWebhookSecret } from '../../server/alerts/webhooks.ts';
import { accountNoticesScan } from '../../server/alerts/notices.ts';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createUnlimitedPlan, post, startTestService, toolCall } from '../helpers/service.ts';
import { eventually } from '../helpers/wait.ts';
import { startReceiver, type Receiver } from '../alerts/receiver.ts';
import { signedInNewAccount } from './helpers.ts';

let db: TestDatabase;
let service: RunningService;
let receiver: Receiver;

beforeAll(async () => {
  db = await createTestDatabase();
  service = await startTestService(db.url, {
    MCP_SERVERS: 'market-intelligence',
    WEBHOOK_ALLOW_PRIVATE: '1',
    ALERT_EVALUATE_INTERVAL_MS: '200',
    JOBS_POLL_INTERVAL_MS: '50',
    WEBHOOK_RETRY_SCHEDULE_MS: '100,100,100',
  });
  receiver = await startReceiver();
});

afterAll(async () => {
  await receiver?.close();
  await service?.close();
  await db?.drop();
});

/** A signed-in account on `plan`, with a key and the receiver as its webhook endpoint. */
async function account(plan: string, to: Receiver = receiver) {
  const { client, accountId } = await signedInNewAccount(service.url);
  await accountSetPlan(db, accountId, plan);
  const key = (await client.post('/api/keys', { name: 'k' })).body.plaintext as string;
  to.secret ??= newWebhookSecret();
  await db.query('INSERT INTO webhook_endpoints (account_id, url, secret) VALUES ($1, $2, $3)', [accountId, to.url, to.secret]);
  const echo = async (n: number) => {
    for (let i = 0; i < n; i++) expect((await post(`${service.url}/mcp/market-intelligence`, toolCall('bench_echo', { message: 'x' }), { 'x-api-key': key })).status).toBe(200);
  };
  return { client, accountId, echo };
}

describe('usage alerts and the outlook', () => {
  it('80%, 90%, 100% of the allowance: a banner figure and one signed webhook each, never twice; spend in dollars and the run-out date', async () => {
    await createUnlimitedPlan(db, 'ten', 10, { price_cents: 1000 });
    const a = await account('ten');
    await a.echo(7);
    let usage = (await a.client.get('/api/usage')).body;
    expect(usage.outlook).toMatchObject({ plan_display: 'ten', price_cents: 1000, spend_cents: 700, used_percent: 70, threshold: null, runs_out_first: true });
    expect(usage.outlook.rate_per_day).toBeGreaterThan(0);
    expect(Date.parse(usage.outlook.runs_out_at)).toBeGreaterThan(Date.now());

    await a.echo(1);
    usage = (await a.client.get('/api/usage')).body;
    expect(usage.outlook).toMatchObject({ used_percent: 80, threshold: 80, spend_cents: 800 });
    const first = await eventually(() => receiver.received.find((r) => r.body.type === 'account.usage' && r.body.data.threshold_percent === 80 && r.body.data.used === 8));
    expect(first.body.data).toMatchObject({ kind: 'usage', plan: 'ten', allowance: 10, used: 8 });
    expect(first.id).toMatch(/^notice_\d+$/);

    // Many more runs of the task (every 200 ms, and by hand): still one 80% notice.
    for (let i = 0; i < 3; i++) await accountNoticesScan(db);
    await new Promise((r) => setTimeout(r, 1000));
    const eighty = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM account_notices WHERE account_id = $1 AND (data->>'threshold_percent')::int = 80", [a.accountId]);
    expect(eighty.rows[0]!.n).toBe(1);
    expect(receiver.received.filter((r) => r.body.type === 'account.usage' && r.body.data.event_id === first.body.data.event_id)).toHaveLength(1);

    await a.echo(2);
    await eventually(() => receiver.received.find((r) => r.body.type === 'account.usage' && r.body.data.threshold_percent === 100 && r.body.data.used === 10));
    const sent = await db.query<{ event_id: string }>('SELECT event_id FROM account_notices WHERE account_id = $1 ORDER BY id', [a.accountId]);
    expect(sent.rows.map((r) => r.event_id.split(':').at(-1))).toEqual(['80', '90', '100']);
    usage = (await a.client.get('/api/usage')).body;
    expect(usage.outlook).toMatchObject({ threshold: 100, used_percent: 100 });
  });

  it('a paid plan ending within 7 days: the outlook says it lapses to Free, and one webhook says so', async () => {
    const a = await account('basic');
    const until = new Date(Date.now() + 3 * 86_400_000);
    await db.query('UPDATE accounts SET paid_until = $2, period_end = $2 WHERE id = $1', [a.accountId, until]);
    const usage = (await a.client.get('/api/usage')).body;
    expect(usage.outlook).toMatchObject({ lapses_at: until.toISOString(), lapse_soon: true, next_plan: null });
    const notice = await eventually(() => receiver.received.find((r) => r.body.type === 'account.plan_lapse' && r.body.data.paid_until === until.toISOString()));
    expect(notice.body.data).toMatchObject({ plan: 'basic', falls_back_to: 'free' });
    await accountNoticesScan(db);
    expect(receiver.received.filter((r) => r.body.type === 'account.plan_lapse' && r.body.data.paid_until === until.toISOString())).toHaveLength(1);

    // Eight days out: no warning yet.
    const later = await account('basic');
    await db.query('UPDATE accounts SET paid_until = $2, period_end = $2 WHERE id = $1', [later.accountId, new Date(Date.now() + 8 * 86_400_000)]);
    expect((await later.client.get('/api/usage')).body.outlook).toMatchObject({ lapse_soon: false });
    await accountNoticesScan(db);
    expect((await db.query('SELECT 1 FROM account_notices WHERE account_id = $1', [later.accountId])).rowCount).toBe(0);
  });

  it('a usage notice goes through the one webhook sender: retried on the schedule, in the delivery log as account.usage, redelivered signed and free', async () => {
    await createUnlimitedPlan(db, 'five', 5, { price_cents: 500 });
    const own = await startReceiver({ failFirst: 1 });
    try {
      const a = await account('five', own);
      await a.echo(4);
      const notice = await eventually(() => own.received.find((r) => r.body.type === 'account.usage' && r.body.data.threshold_percent === 80));
      expect(own.attempts.get(notice.id)).toBe(2);

      // The delivery is recorded once the receiver's answer is (just after the receiver saw it).
      const endpoints = await eventually(async () => {
        const list = (await a.client.get('/api/webhooks')).body.webhooks as { id: number; url: string; deliveries: Record<string, number> }[];
        return list[0]?.deliveries.delivered === 1 ? list : undefined;
      });
      expect(endpoints).toHaveLength(1);
      expect(endpoints[0]!.deliveries).toEqual({ delivered: 1, pending: 0, failed: 0, unpaid: 0 });
      const log = (await a.client.get(`/api/webhooks/${endpoints[0]!.id}/deliveries`)).body.deliveries;
      expect(log).toHaveLength(1);
      expect(log[0]).toMatchObject({ event_type: 'account.usage', alert_id: null, notice_id: notice.body.data.notice_id, title: notice.body.data.title, status: 'delivered' });
      expect(log[0].attempts.map((t: { outcome: string; status_code: number }) => [t.outcome, t.status_code])).toEqual([['http_error', 500], ['ok', 204]]);
      expect(notice.id).toBe(`notice_${notice.body.data.notice_id}`);

      const balance = async () => (await db.query<{ balance: number }>('SELECT balance FROM accounts WHERE id = $1', [a.accountId])).rows[0]!.balance;
      expect(await balance()).toBe(1);
      const again = await a.client.post(`/api/webhooks/deliveries/${log[0].id}/redeliver`);
      expect(again.status).toBe(202);
      const [, resent] = await own.waitFor(2);
      expect(resent!.id).toBe(notice.id);
      expect(resent!.body).toEqual(notice.body);
      expect(own.rejected).toBe(0);
      await eventually(async () => (await a.client.get(`/api/webhooks/${endpoints[0]!.id}/deliveries`)).body.deliveries[0]?.status === 'delivered');
      // A notice is free, however often it is sent.
      expect(await balance()).toBe(1);
      expect((await db.query("SELECT 1 FROM credit_ledger WHERE account_id = $1 AND tool = 'alert_delivery'", [a.accountId])).rowCount).toBe(0);
    } finally {
      await own.close();
    }
  });
});
