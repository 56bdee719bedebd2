// DESIGN.md §3 and §5: credits are charged only for a successful tool result. A call that fails
// after its reservation is refunded with a ledger row; a reservation left behind by a pod that
// died mid-call is refunded by the stale sweep; a refund happens at most once, and never after
// the reservation was settled as charged.
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Meter } from '../../server/metering/meter.ts';
import type { RunningService } from '../../server/runtime.ts';
import { spawnServer, stopServer } from '../helpers/process.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { balanceOf, createAccountWithKey, ledgerSum, post, startTestService, toolCall } from '../helpers/service.ts';

interface LedgerRow {
  kind: string;
  delta: number;
  balance_after: number;
  resolution: string | null;
  resolved_at: Date | null;
  request_id: string;
}

let db: TestDatabase;
let svc: RunningService;
const children: ChildProcess[] = [];

async function spawnTracked(databaseUrl: string, env: Record<string, string> = {}) {
  const server = await spawnServer(databaseUrl, env);
  children.push(server.child);
  return server;
}

beforeAll(async () => {
  db = await createTestDatabase();
  svc = await startTestService(db.url, { KEY_CACHE_TTL_MS: '0' });
});
afterAll(async () => {
  await Promise.all(children.map((c) => stopServer(c)));
  await svc?.close();
  await db?.drop();
});

async function ledgerOf(accountId: string): Promise<LedgerRow[]> {
  const res = await db.query<LedgerRow>(
    'SELECT kind, delta, balance_after, resolution, resolved_at, request_id FROM credit_ledger WHERE account_id = $1 ORDER BY id',
    [accountId],
  );
  return res.rows;
}

/** A Meter on the test database, used directly (as the gateway does) with the database clock. */
function directMeter(): Meter {
  return new Meter(db, { settleIntervalMs: 50, staleAfterMs: 0 });
}

describe('refunds (DESIGN §3: charged only for a successful tool result)', () => {
  it('a tool failing after its reservation leaves the balance unchanged: reserve row resolved "refunded" plus a refund row of +cost', async () => {
    const { account, key } = await createAccountWithKey(db);
    const res = await post(`${svc.url}/mcp/market-intelligence`, toolCall('bench_fail'), { 'x-api-key': key });
    expect(res.status).toBe(502);
    expect((res.body as { error: { code: string } }).error.code).toBe('UPSTREAM_ERROR');
    expect(res.headers.get('x-credits-used')).toBe('0');
    expect(res.headers.get('x-credits-remaining')).toBe('150');
    const requestId = res.headers.get('x-request-id')!;

    // The refund is written before the error answer leaves the server: no polling needed.
    expect(await balanceOf(db, account.id)).toBe(150);
    const rows = await ledgerOf(account.id);
    expect(rows.map((r) => [r.kind, r.delta, r.balance_after, r.resolution])).toEqual([
      ['grant', 150, 150, null],
      ['reserve', -1, 149, 'refunded'],
      ['refund', 1, 150, null],
    ]);
    expect(rows[1]!.request_id).toBe(requestId);
    expect(rows[2]!.request_id).toBe(requestId);
    expect(rows[1]!.resolved_at).toBeInstanceOf(Date);
    expect(await ledgerSum(db, account.id)).toBe(150);
  });

  it('crash safety: a reservation left unresolved by a SIGKILLed server process is given back by refundStale()', async () => {
    const { account, key } = await createAccountWithKey(db);
    // A 5 s tool timeout: the reservation's deadline is 2 * 5 s + the settle interval + 1 s.
    const server = await spawnTracked(db.url, { TOOL_TIMEOUT_MS: '5000' });
    // The call never gets an answer: the process is killed while the tool sleeps.
    const inFlight = post(`${server.url}/mcp/market-intelligence`, toolCall('bench_sleep', { ms: 10_000 }), { 'x-api-key': key }).then(
      (r) => r,
      (err: unknown) => err as Error,
    );
    await expect
      .poll(async () => (await ledgerOf(account.id)).filter((r) => r.kind === 'reserve').length, { timeout: 10_000, interval: 25 })
      .toBe(1);
    server.child.kill('SIGKILL');
    await new Promise<void>((resolve) => (server.child.exitCode !== null || server.child.signalCode !== null ? resolve() : server.child.once('exit', () => resolve())));
    expect(server.child.signalCode).toBe('SIGKILL');
    const outcome = await inFlight;
    expect(outcome, 'the client must not have received an answer').toBeInstanceOf(Error);

    // The dead process never resolved its reservation: the credit is held.
    const before = await ledgerOf(account.id);
    const reserve = before.find((r) => r.kind === 'reserve')!;
    expect(reserve).toMatchObject({ delta: -1, resolution: null, resolved_at: null });
    expect(await balanceOf(db, account.id)).toBe(149);
    expect(await ledgerSum(db, account.id)).toBe(149);

    // The sweep gives it back once its own deadline has passed, not before (this meter's own
    // threshold is 0: the deadline is the dead pod's).
    const meter = directMeter();
    const { rows: deadline } = await db.query<{ due: boolean }>(
      "SELECT stale_at > clock_timestamp() AS due FROM credit_ledger WHERE request_id = $1 AND kind = 'reserve'",
      [reserve.request_id],
    );
    if (deadline[0]!.due) expect(await meter.refundStale()).toBe(0);
    await expect.poll(() => meter.refundStale(), { timeout: 30_000, interval: 250 }).toBe(1);
    expect(await balanceOf(db, account.id)).toBe(150);
    const after = await ledgerOf(account.id);
    expect(after.map((r) => [r.kind, r.delta, r.resolution])).toEqual([
      ['grant', 150, null],
      ['reserve', -1, 'refunded'],
      ['refund', 1, null],
    ]);
    expect(after[2]!.request_id).toBe(reserve.request_id);
    expect(await ledgerSum(db, account.id)).toBe(150);
    // A second sweep finds nothing more to give back for this account.
    await meter.refundStale();
    expect(await balanceOf(db, account.id)).toBe(150);
    expect((await ledgerOf(account.id)).filter((r) => r.kind === 'refund')).toHaveLength(1);
  }, 90_000);

  it('meter_refund is idempotent: refunding the same reservation twice, or five times at once, gives the credits back once', async () => {
    const { account, keyId } = await createAccountWithKey(db);
    const meter = directMeter();
    const reserve = (requestId: string, cost: number) =>
      meter.reserve({ accountId: account.id, requestId, cost, record: true, server: 'market-intelligence', tool: 'bench_echo', keyId });

    expect((await reserve('idem-1', 7)).outcome).toBe('ok');
    expect(await balanceOf(db, account.id)).toBe(143);
    expect(await meter.refund('idem-1', 'first')).toBe(150);
    expect(await meter.refund('idem-1', 'second')).toBeNull();
    expect(await balanceOf(db, account.id)).toBe(150);

    expect((await reserve('idem-2', 5)).outcome).toBe('ok');
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => meter.refund('idem-2', `concurrent ${i}`)));
    expect(results.filter((r) => r !== null)).toEqual([150]);
    expect(await balanceOf(db, account.id)).toBe(150);

    const rows = await ledgerOf(account.id);
    expect(rows.filter((r) => r.kind === 'refund').map((r) => [r.request_id, r.delta])).toEqual([
      ['idem-1', 7],
      ['idem-2', 5],
    ]);
    expect(await ledgerSum(db, account.id)).toBe(150);
  });

  it('a refund never double-counts with settlement: settled then refunded gives nothing back; refunded then settled stays refunded', async () => {
    const { account, keyId } = await createAccountWithKey(db);
    const meter = directMeter();
    const reserve = (requestId: string) =>
      meter.reserve({ accountId: account.id, requestId, cost: 1, record: true, server: 'market-intelligence', tool: 'bench_echo', keyId });

    // Settle, then refund: the call was answered, so it stays charged.
    expect((await reserve('settled-first')).outcome).toBe('ok');
    meter.settle('settled-first');
    expect(await meter.flushSettled()).toBe(1);
    expect(await meter.refund('settled-first', 'late failure')).toBeNull();
    expect(await balanceOf(db, account.id)).toBe(149);

    // Refund, then settle: the refund stands and the settle marks nothing.
    expect((await reserve('refunded-first')).outcome).toBe('ok');
    expect(await meter.refund('refunded-first', 'failed')).toBe(149);
    meter.settle('refunded-first');
    expect(await meter.flushSettled()).toBe(0);
    expect(await balanceOf(db, account.id)).toBe(149);

    // Neither is picked up by the stale sweep afterwards.
    await meter.refundStale();
    expect(await balanceOf(db, account.id)).toBe(149);

    const rows = await ledgerOf(account.id);
    expect(rows.map((r) => [r.kind, r.request_id.startsWith('open:') ? 'open' : r.request_id, r.delta, r.resolution])).toEqual([
      ['grant', 'open', 150, null],
      ['reserve', 'settled-first', -1, 'charged'],
      ['reserve', 'refunded-first', -1, 'refunded'],
      ['refund', 'refunded-first', 1, null],
    ]);
    expect(await ledgerSum(db, account.id)).toBe(149);
  });
  it('the stale sweep honours each reservation\'s own deadline: a replica with a short tool timeout does not refund a call in flight on a replica with a long one', async () => {
    const { account, keyId } = await createAccountWithKey(db);
    // Two pods of one database: a gateway with a 1 h tool timeout, a server with a 0 s one. The
    // sweep is one job, run by whichever replica takes it.
    const slow = new Meter(db, { settleIntervalMs: 50, staleAfterMs: 3_600_000 });
    const fast = new Meter(db, { settleIntervalMs: 50, staleAfterMs: 0 });
    const reserve = (meter: Meter, requestId: string) =>
      meter.reserve({ accountId: account.id, requestId, cost: 1, record: true, server: 'market-intelligence', tool: 'bench_echo', keyId });
    expect((await reserve(slow, 'slow-call')).outcome).toBe('ok');
    expect((await reserve(fast, 'fast-call')).outcome).toBe('ok');
    expect(await balanceOf(db, account.id)).toBe(148);

    // The fast replica sweeps: its own reservation is past its deadline, the slow one's is not.
    expect(await fast.refundStale()).toBe(1);
    // The slow replica sweeps with its 1 h threshold: the fast reservation is already refunded,
    // and its own is still within its deadline.
    expect(await slow.refundStale()).toBe(0);
    const rows = await ledgerOf(account.id);
    expect(rows.filter((r) => r.kind === 'reserve').map((r) => [r.request_id, r.resolution])).toEqual([
      ['slow-call', null],
      ['fast-call', 'refunded'],
    ]);
    // The call in flight on the slow replica is answered and charged.
    slow.settle('slow-call');
    expect(await slow.flushSettled()).toBe(1);
    expect(await balanceOf(db, account.id)).toBe(149);
    expect(await ledgerSum(db, account.id)).toBe(149);
  });
});
