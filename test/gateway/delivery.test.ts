// DESIGN.md §3: credits are charged only for an answer delivered. A reservation is settled once
// its answer is written to the socket; a client that goes away first is refunded, whether the
// tool notices (and stops) or not, alone or fifty at once, and the ledger invariant holds
// (balance = the sum of the account's ledger, grants included; nothing left unresolved).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { abandonFromAnotherProcess } from '../helpers/process.ts';
import { balanceOf, createAccountWithKey, createUnlimitedPlan, ledgerSum, mcpClient, post, startTestService, toolCall } from '../helpers/service.ts';
import { eventually } from '../helpers/wait.ts';

let db: TestDatabase;
let svc: RunningService;
let url: string;

beforeAll(async () => {
  db = await createTestDatabase();
  svc = await startTestService(db.url, { SETTLE_INTERVAL_MS: '50' });
  url = `${svc.url}/mcp/market-intelligence`;
  await createUnlimitedPlan(db, 'roomy', 1000);
});
afterAll(async () => {
  await svc?.close();
  await db?.drop();
});

/**
 * Posts a bench_sleep tools/call per element of `calls` (its arguments) for the account of `key`,
 * and gives up on all of them (aborts the requests) once the service has reserved credits for
 * each: the client leaves while the tool runs, whatever the machine's load, rather than after a
 * guessed number of milliseconds.
 */
async function abandon(key: string, accountId: string, calls: Record<string, unknown>[]): Promise<void> {
  const controller = new AbortController();
  const requests = calls.map((args, i) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': key },
      body: JSON.stringify(toolCall('bench_sleep', args, `gone-${i}`)),
      signal: controller.signal,
    }).then(
      () => {
        throw new Error('the call was answered before the client gave up');
      },
      (err: unknown) => {
        if ((err as Error).name !== 'AbortError') throw err;
      },
    ),
  );
  await eventually(async () => (await unresolved(accountId)) >= calls.length, 10_000, `${calls.length} reservations`);
  controller.abort();
  await Promise.all(requests);
}

async function unresolved(accountId: string): Promise<number> {
  const res = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM credit_ledger WHERE account_id = $1 AND kind = 'reserve' AND resolution IS NULL`,
    [accountId],
  );
  return res.rows[0]!.n;
}

/** Waits until every reservation of the account is resolved (settled or refunded). */
async function settled(accountId: string): Promise<void> {
  await eventually(async () => (await unresolved(accountId)) === 0, 10_000, 'every reservation resolved');
}

/**
 * Waits until `ms` after `since`: the end of a tool that ignores the abort and sleeps that long.
 * Not a guess at how long something takes: the late answer after the refund is the case under
 * test, and the tool's own timer is when it comes.
 */
async function pastToolEnd(since: number, ms: number): Promise<void> {
  const left = since + ms - Date.now();
  if (left > 0) await new Promise((r) => setTimeout(r, left));
  // The service runs in this process: its tool's timer has fired and the late answer been handled
  // (no I/O before the settle queue); whatever that queued for settlement is written now.
  await svc.meter.flushSettled();
}

describe('a client that disconnects before the answer is refunded', () => {
  it('the tool stops when the client goes away; the call is refunded', async () => {
    const { account, key } = await createAccountWithKey(db);
    await abandon(key, account.id, [{ ms: 3000 }]);
    await settled(account.id);
    expect(await balanceOf(db, account.id)).toBe(150);
    expect(await ledgerSum(db, account.id)).toBe(150);
  });

  it('a tool that ignores the abort and finishes later is still refunded, never charged', async () => {
    const { account, key } = await createAccountWithKey(db);
    const started = Date.now();
    await abandon(key, account.id, [{ ms: 1500, ignore_abort: true }]);
    await settled(account.id);
    // Past the tool's end: the late answer must not turn the refund into a charge.
    await pastToolEnd(started, 1500);
    await settled(account.id);
    expect(await balanceOf(db, account.id)).toBe(150);
    expect(await ledgerSum(db, account.id)).toBe(150);
  });

  it('a CPU-bound call given up mid-way is refunded, though the tool held the event loop until it ended', async () => {
    const { account, key } = await createAccountWithKey(db);
    await abandonFromAnotherProcess(url, { 'x-api-key': key }, toolCall('bench_spin', { ms: 1500 }), 400);
    await settled(account.id);
    expect(await balanceOf(db, account.id)).toBe(150);
    expect(await ledgerSum(db, account.id)).toBe(150);
  });

  it('the v1 SDK client giving up on a slow call (its request timeout) is not charged', async () => {
    const { account, key } = await createAccountWithKey(db);
    const client = await mcpClient(svc.url, 'market-intelligence', key);
    const started = Date.now();
    await expect(client.callTool({ name: 'bench_sleep', arguments: { ms: 1500, ignore_abort: true } }, undefined, { timeout: 300 })).rejects.toThrow();
    await client.close();
    await pastToolEnd(started, 1500);
    await settled(account.id);
    expect(await balanceOf(db, account.id)).toBe(150);
  });

  it('50 clients giving up at once beside 20 answered calls: exactly the 20 are charged, the ledger balances', async () => {
    // Two accounts on one plan, so each count is exact: the answered calls' and the abandoned ones'.
    const answering = await createAccountWithKey(db, { plan: 'roomy' });
    const leaving = await createAccountWithKey(db, { plan: 'roomy' });
    const started = Date.now();
    const answered = Array.from({ length: 20 }, (_, i) => post(url, toolCall('bench_sleep', { ms: 100 }, `ok-${i}`), { 'x-api-key': answering.key }));
    // Half the tools stop when the client goes, half ignore it and end later.
    const gaveUp = abandon(leaving.key, leaving.account.id, Array.from({ length: 50 }, (_, i) => ({ ms: 2000, ignore_abort: i % 2 === 0 })));
    const results = await Promise.all(answered);
    await gaveUp;
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    await pastToolEnd(started, 2000);
    for (const { account } of [answering, leaving]) await settled(account.id);
    expect(await balanceOf(db, answering.account.id)).toBe(1000 - 20);
    expect(await ledgerSum(db, answering.account.id)).toBe(1000 - 20);
    expect(await balanceOf(db, leaving.account.id)).toBe(1000);
    expect(await ledgerSum(db, leaving.account.id)).toBe(1000);
  });
});
