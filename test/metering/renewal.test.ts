// DESIGN.md §5, monthly renewal: the balance is reset to the plan's allowance (no rollover) at the
// anniversary of the period start, one calendar month later and clamped to the month's last day;
// it is applied lazily by the metering statement and by the periodic sweep, exactly once, with a
// 'renewal' ledger row so the balance still equals the ledger. One-time plans never renew, and
// changing plan starts a new period with the new allowance. Clocks are injected: the Meter's and
// the service's `now`, which the SQL functions receive as p_now.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountCreate, accountSetPlan, type Account } from '../../server/accounts/accounts.ts';
import { Meter, type MeterDecision } from '../../server/metering/meter.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createAccountWithKey, ledgerSum, nextWallet, post, startTestService, toolCall } from '../helpers/service.ts';

let db: TestDatabase;
/** The clock of `meter`; each test sets it. */
let now = new Date(0);
let meter: Meter;
const KEY_ID = '00000000-0000-4000-8000-000000000001';

beforeAll(async () => {
  db = await createTestDatabase();
  meter = new Meter(db, { now: () => now, settleIntervalMs: 50, staleAfterMs: 60_000 });
});
afterAll(async () => {
  await db?.drop();
});

const at = (iso: string) => new Date(iso);

async function create(plan: string, iso: string): Promise<Account> {
  return accountCreate(db, { wallet: nextWallet(), chain: 'ethereum', plan, now: at(iso) });
}

/** A metered request at the meter's clock: cost > 0 is a paid tools/call, cost 0 a free method. */
async function request(accountId: string, iso: string, cost: number): Promise<MeterDecision> {
  now = at(iso);
  return meter.reserve({
    accountId,
    requestId: `req:${accountId}:${iso}:${cost}:${Math.random()}`,
    cost,
    record: cost > 0,
    server: 'market-intelligence',
    tool: cost > 0 ? 'bench_echo' : null,
    keyId: KEY_ID,
  });
}

/** The periodic sweep at the given time. */
async function sweep(iso: string): Promise<number> {
  now = at(iso);
  return meter.renewDue();
}

async function state(accountId: string): Promise<{ balance: number; period_start: string; period_end: string | null }> {
  const res = await db.query<{ balance: number; period_start: Date; period_end: Date | null }>(
    'SELECT balance, period_start, period_end FROM accounts WHERE id = $1',
    [accountId],
  );
  const row = res.rows[0]!;
  return { balance: row.balance, period_start: row.period_start.toISOString(), period_end: row.period_end?.toISOString() ?? null };
}

async function renewals(accountId: string): Promise<{ delta: number; balance_after: number; created_at: string }[]> {
  const res = await db.query<{ delta: number; balance_after: number; created_at: Date }>(
    `SELECT delta, balance_after, created_at FROM credit_ledger WHERE account_id = $1 AND kind = 'renewal' ORDER BY id`,
    [accountId],
  );
  return res.rows.map((r) => ({ delta: r.delta, balance_after: r.balance_after, created_at: r.created_at.toISOString() }));
}

async function dueCount(iso: string): Promise<number> {
  const res = await db.query<{ n: number }>(
    `SELECT count(*) AS n FROM accounts a JOIN plans p ON p.name = a.plan WHERE p.renewal = 'monthly' AND a.period_end <= $1`,
    [at(iso)],
  );
  return res.rows[0]!.n;
}

async function expectLedgerBalanced(accountId: string): Promise<void> {
  expect(await ledgerSum(db, accountId)).toBe((await state(accountId)).balance);
}

describe('monthly renewal (DESIGN §5)', () => {
  it('lazy renewal by the metering statement resets to exactly 5000 (no rollover) at the clamped anniversary: Jan 31 10:00 → Feb 28 10:00 → Mar 31 10:00, not a moment before', async () => {
    const account = await create('basic', '2025-01-31T10:00:00.000Z');
    expect(account.balance).toBe(5000);
    expect(account.period_start.toISOString()).toBe('2025-01-31T10:00:00.000Z');
    expect(account.period_end?.toISOString()).toBe('2025-02-28T10:00:00.000Z');

    expect(await request(account.id, '2025-02-10T00:00:00.000Z', 1234)).toMatchObject({ outcome: 'ok', balance: 3766 });
    // One millisecond before the anniversary: no renewal.
    expect(await request(account.id, '2025-02-28T09:59:59.999Z', 0)).toMatchObject({ outcome: 'ok', balance: 3766 });
    expect(await renewals(account.id)).toEqual([]);

    // At the anniversary (Jan 31 + 1 month, clamped to Feb 28): reset to the allowance, no rollover.
    expect(await request(account.id, '2025-02-28T10:00:00.000Z', 0)).toMatchObject({ outcome: 'ok', balance: 5000 });
    expect(await state(account.id)).toEqual({
      balance: 5000,
      period_start: '2025-02-28T10:00:00.000Z',
      period_end: '2025-03-31T10:00:00.000Z',
    });
    expect(await renewals(account.id)).toEqual([{ delta: 1234, balance_after: 5000, created_at: '2025-02-28T10:00:00.000Z' }]);
    await expectLedgerBalanced(account.id);

    // The next anniversary is the anchor's day (Mar 31), not Feb 28 + 1 month (Mar 28).
    expect(await request(account.id, '2025-03-28T10:00:00.000Z', 100)).toMatchObject({ outcome: 'ok', balance: 4900 });
    expect(await request(account.id, '2025-03-31T09:59:59.999Z', 0)).toMatchObject({ balance: 4900 });
    // A paid call at the anniversary renews first, then is charged from the fresh allowance.
    expect(await request(account.id, '2025-03-31T10:00:00.000Z', 1)).toMatchObject({ outcome: 'ok', balance: 4999 });
    expect(await state(account.id)).toEqual({
      balance: 4999,
      period_start: '2025-03-31T10:00:00.000Z',
      period_end: '2025-04-30T10:00:00.000Z',
    });
    expect(await renewals(account.id)).toHaveLength(2);
    expect((await renewals(account.id))[1]).toEqual({ delta: 100, balance_after: 5000, created_at: '2025-03-31T10:00:00.000Z' });
    await expectLedgerBalanced(account.id);
  });

  it('lazy renewals are reported to the pod that applied them, once per account even when one batch carries several of its calls', async () => {
    const counted: number[] = [];
    const counting = new Meter(db, { now: () => now, settleIntervalMs: 50, staleAfterMs: 60_000, onRenewals: (n) => counted.push(n) });
    const a = await create('basic', '2025-05-01T00:00:00.000Z');
    const b = await create('basic', '2025-05-01T00:00:00.000Z');
    now = at('2025-06-01T00:00:00.000Z');
    const call = (accountId: string, i: number) =>
      counting.reserve({ accountId, requestId: `batch:${accountId}:${i}`, cost: 1, record: true, server: 'market-intelligence', tool: 'bench_echo', keyId: KEY_ID });
    // Issued in one event-loop turn: they share one metering statement.
    const decisions = await Promise.all([call(a.id, 1), call(a.id, 2), call(b.id, 3)]);
    expect(decisions.map((d) => d.outcome)).toEqual(['ok', 'ok', 'ok']);
    expect(counted).toEqual([2]);
    expect(await renewals(a.id)).toHaveLength(1);
    expect(await renewals(b.id)).toHaveLength(1);
    // Nothing left for the sweep to renew on these two, and calls after the renewal report none.
    await sweep('2025-06-01T00:00:01.000Z');
    expect(await renewals(a.id)).toHaveLength(1);
    expect(await renewals(b.id)).toHaveLength(1);
    now = at('2025-06-01T00:00:02.000Z');
    await call(a.id, 4);
    expect(counted).toEqual([2]);
  });

  it('meter_reserve_many, which pods of the previous version call during a rolling upgrade, still answers with its old columns and renews', async () => {
    const account = await create('basic', '2025-08-01T00:00:00.000Z');
    const res = await db.query<Record<string, unknown>>('SELECT * FROM meter_reserve_many($1, $2, $3, $4, $5, $6, $7, $8)', [
      [account.id],
      [`old-pod:${account.id}`],
      [7],
      [true],
      ['market-intelligence'],
      ['bench_echo'],
      [KEY_ID],
      at('2025-09-01T00:00:00.000Z'),
    ]);
    expect(Object.keys(res.rows[0]!).sort()).toEqual(['balance', 'burst', 'idx', 'outcome', 'plan', 'requests_per_minute', 'retry_after_seconds', 'rl_remaining', 'rl_reset_seconds']);
    expect(res.rows[0]).toMatchObject({ idx: 1, outcome: 'ok', balance: 4993 });
    expect(await renewals(account.id)).toHaveLength(1);
    await expectLedgerBalanced(account.id);
  });

  it('after idle months, renewal happens once, into the period that contains now (anniversaries stay on the anchor day)', async () => {
    const account = await create('basic', '2025-01-31T10:00:00.000Z');
    expect(await request(account.id, '2025-01-31T11:00:00.000Z', 4000)).toMatchObject({ balance: 1000 });
    expect(await request(account.id, '2025-07-15T00:00:00.000Z', 0)).toMatchObject({ balance: 5000 });
    expect(await state(account.id)).toEqual({
      balance: 5000,
      period_start: '2025-06-30T10:00:00.000Z',
      period_end: '2025-07-31T10:00:00.000Z',
    });
    expect(await renewals(account.id)).toEqual([{ delta: 4000, balance_after: 5000, created_at: '2025-07-15T00:00:00.000Z' }]);
    await expectLedgerBalanced(account.id);
  });

  it('the periodic sweep (Meter.renewDue / accounts_renew_due) renews every due account at its anniversary, once, and none before', async () => {
    const account = await create('basic', '2025-01-31T10:00:00.000Z');
    expect(await request(account.id, '2025-02-01T00:00:00.000Z', 500)).toMatchObject({ balance: 4500 });

    await sweep('2025-02-28T09:59:59.999Z');
    expect((await state(account.id)).balance).toBe(4500);
    expect(await renewals(account.id)).toEqual([]);

    const due = await dueCount('2025-02-28T10:00:00.000Z');
    expect(due).toBeGreaterThanOrEqual(1);
    expect(await sweep('2025-02-28T10:00:00.000Z')).toBe(due);
    expect(await state(account.id)).toEqual({
      balance: 5000,
      period_start: '2025-02-28T10:00:00.000Z',
      period_end: '2025-03-31T10:00:00.000Z',
    });
    expect(await dueCount('2025-02-28T10:00:00.000Z')).toBe(0);
    // Sweeping again at the same time finds nothing to do.
    expect(await sweep('2025-02-28T10:00:00.000Z')).toBe(0);
    expect(await renewals(account.id)).toEqual([{ delta: 500, balance_after: 5000, created_at: '2025-02-28T10:00:00.000Z' }]);
    await expectLedgerBalanced(account.id);

    // The SQL function itself, with p_now, as a pod's sweep timer calls it.
    expect(await request(account.id, '2025-03-01T00:00:00.000Z', 42)).toMatchObject({ balance: 4958 });
    const expected = await dueCount('2025-03-31T10:00:00.000Z');
    const res = await db.query<{ n: number }>('SELECT accounts_renew_due($1) AS n', [at('2025-03-31T10:00:00.000Z')]);
    expect(res.rows[0]!.n).toBe(expected);
    expect(await state(account.id)).toEqual({
      balance: 5000,
      period_start: '2025-03-31T10:00:00.000Z',
      period_end: '2025-04-30T10:00:00.000Z',
    });
    expect(await renewals(account.id)).toHaveLength(2);
    await expectLedgerBalanced(account.id);
  });

  it('a metered request racing the sweep renews exactly once: one renewal row, then every charge from the fresh allowance', async () => {
    const account = await create('basic', '2026-01-15T00:00:00.000Z');
    expect(await request(account.id, '2026-01-20T00:00:00.000Z', 3000)).toMatchObject({ balance: 2000 });
    now = at('2026-02-15T00:00:01.000Z');
    const calls = Array.from({ length: 10 }, (_, i) =>
      meter.reserve({
        accountId: account.id,
        requestId: `race:${account.id}:${i}`,
        cost: 1,
        record: true,
        server: 'market-intelligence',
        tool: 'bench_echo',
        keyId: KEY_ID,
      }),
    );
    const sweeps = Array.from({ length: 3 }, () => meter.renewDue());
    const [decisions] = await Promise.all([Promise.all(calls), Promise.all(sweeps)]);
    expect(decisions.every((d) => d.outcome === 'ok')).toBe(true);
    expect(decisions.map((d) => d.balance).sort((a, b) => a - b)).toEqual(Array.from({ length: 10 }, (_, i) => 4990 + i));
    expect(await renewals(account.id)).toEqual([{ delta: 3000, balance_after: 5000, created_at: '2026-02-15T00:00:01.000Z' }]);
    expect(await state(account.id)).toEqual({
      balance: 4990,
      period_start: '2026-02-15T00:00:00.000Z',
      period_end: '2026-03-15T00:00:00.000Z',
    });
    await expectLedgerBalanced(account.id);
  });

  it('the free plan (one-time) never renews, by the sweep or by metering, even ten years later', async () => {
    const account = await create('free', '2025-01-31T10:00:00.000Z');
    expect(account.period_end).toBeNull();
    expect(await request(account.id, '2025-02-01T00:00:00.000Z', 50)).toMatchObject({ outcome: 'ok', balance: 100 });
    await sweep('2035-01-31T10:00:00.000Z');
    await db.query('SELECT accounts_renew_due($1)', [at('2036-06-30T00:00:00.000Z')]);
    expect(await request(account.id, '2036-07-01T00:00:00.000Z', 0)).toMatchObject({ outcome: 'ok', balance: 100 });
    expect(await state(account.id)).toEqual({ balance: 100, period_start: '2025-01-31T10:00:00.000Z', period_end: null });
    expect(await renewals(account.id)).toEqual([]);
    // Spending the rest leaves it at 0 for good.
    expect(await request(account.id, '2036-07-01T00:01:00.000Z', 100)).toMatchObject({ outcome: 'ok', balance: 0 });
    expect(await request(account.id, '2040-01-01T00:00:00.000Z', 1)).toMatchObject({ outcome: 'insufficient_credits', balance: 0 });
    await expectLedgerBalanced(account.id);
  });

  it('account_set_plan starts a new period at the change with the new allowance; the old anniversary no longer renews', async () => {
    const account = await create('basic', '2025-01-31T10:00:00.000Z');
    expect(await request(account.id, '2025-02-05T00:00:00.000Z', 1000)).toMatchObject({ balance: 4000 });

    const pro = await accountSetPlan(db, account.id, 'pro', at('2025-02-15T12:00:00.000Z'));
    expect(pro).toMatchObject({ plan: 'pro', balance: 15000 });
    expect(await state(account.id)).toEqual({
      balance: 15000,
      period_start: '2025-02-15T12:00:00.000Z',
      period_end: '2025-03-15T12:00:00.000Z',
    });
    const change = await db.query<{ delta: number; balance_after: number }>(
      `SELECT delta, balance_after FROM credit_ledger WHERE account_id = $1 AND kind = 'plan_change'`,
      [account.id],
    );
    expect(change.rows).toEqual([{ delta: 11000, balance_after: 15000 }]);
    await expectLedgerBalanced(account.id);

    expect(await request(account.id, '2025-02-20T00:00:00.000Z', 500)).toMatchObject({ balance: 14500 });
    // The basic plan's anniversary (Feb 28 10:00) is no longer a renewal date.
    expect(await request(account.id, '2025-02-28T10:00:00.000Z', 0)).toMatchObject({ balance: 14500 });
    await sweep('2025-03-15T11:59:59.999Z');
    expect((await state(account.id)).balance).toBe(14500);
    // The new period's anniversary renews to the new plan's allowance.
    expect(await request(account.id, '2025-03-15T12:00:00.000Z', 0)).toMatchObject({ balance: 15000 });
    expect(await renewals(account.id)).toEqual([{ delta: 500, balance_after: 15000, created_at: '2025-03-15T12:00:00.000Z' }]);

    // Down to the one-time free plan: its allowance, no period end, never renewed again.
    const free = await accountSetPlan(db, account.id, 'free', at('2025-03-20T00:00:00.000Z'));
    expect(free).toMatchObject({ plan: 'free', balance: 150, period_end: null });
    await sweep('2026-03-20T00:00:00.000Z');
    expect(await request(account.id, '2026-03-21T00:00:00.000Z', 0)).toMatchObject({ balance: 150 });
    expect(await renewals(account.id)).toHaveLength(1);
    await expectLedgerBalanced(account.id);
  });

  it('through the gateway: a tools/call at the anniversary is answered with remaining_credits from the renewed allowance', async () => {
    let clock = at('2025-05-31T00:00:00.000Z');
    const svc = await startTestService(db.url, { KEY_CACHE_TTL_MS: '0' }, { now: () => clock });
    try {
      const { account, key } = await createAccountWithKey(db, { plan: 'basic', now: clock });
      const call = async (iso: string) => {
        clock = at(iso);
        const res = await post(`${svc.url}/mcp/market-intelligence`, toolCall('bench_echo'), { 'x-api-key': key });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        return (res.body as { result: { structuredContent: { metadata: { remaining_credits: number } } } }).result.structuredContent.metadata
          .remaining_credits;
      };
      expect(await call('2025-06-01T00:00:00.000Z')).toBe(4999);
      await db.query('SELECT account_grant($1, -2000, $2)', [account.id, `spend:${account.id}`]);
      // May 31 + 1 month is clamped to June 30.
      expect(await call('2025-06-29T23:59:59.999Z')).toBe(2998);
      expect(await call('2025-06-30T00:00:00.000Z')).toBe(4999);
      expect(await state(account.id)).toMatchObject({ period_start: '2025-06-30T00:00:00.000Z', period_end: '2025-07-31T00:00:00.000Z' });
      expect(await renewals(account.id)).toEqual([{ delta: 2002, balance_after: 5000, created_at: '2025-06-30T00:00:00.000Z' }]);
      await expectLedgerBalanced(account.id);
    } finally {
      await svc.close();
    }
  });
});
