// The gateway feeds the account's request log (issue 24): every authenticated /mcp request is
// logged with its request id, server, method, tool, status, error code and the credits it was
// charged in the end, and the dashboard's query finds it by key, tool and status. What a client
// chooses (the JSON-RPC method) is stored clamped and cleaned, and never costs anyone else a row.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestLogPage } from '../../server/dashboard/requestLog.ts';
import type { RunningService } from '../../server/runtime.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { acquireSharedService } from '../helpers/shared-service.ts';
import { balanceOf, createAccountWithKey, ledgerSum, post, toolCall } from '../helpers/service.ts';
import { eventually } from '../helpers/wait.ts';

let db: TestDatabase;
let svc: RunningService;
let release: (() => Promise<void>) | undefined;

beforeAll(async () => {
  // The worker's default service (test/helpers/shared-service.ts): this file works on its own accounts.
  ({ db, svc, release } = await acquireSharedService());
});
afterAll(async () => {
  await release?.();
});

describe('the request log', () => {
  it('records a paid call, a refunded failure and a free listing with their request ids; filters find them', async () => {
    const { account, key, keyId } = await createAccountWithKey(db);
    const url = `${svc.url}/mcp/market-intelligence`;
    const h = { 'x-api-key': key };
    const paid = await post(url, toolCall('bench_echo', { message: 'hi' }), h);
    const failed = await post(url, toolCall('bench_fail'), h);
    const listed = await post(url, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, h);
    // A refusal before authentication has no account to log to.
    await post(url, toolCall('bench_echo'), { 'x-api-key': 'cmcp_nope' });

    const ids = [paid, failed, listed].map((r) => r.headers.get('x-request-id'));
    const rows = await eventually(
      async () => {
        const page = (await requestLogPage(db, account.id, { limit: 10 })).rows;
        return page.length >= 3 ? page : undefined;
      },
      10_000,
      'three request-log rows',
    );
    expect(rows.map((r) => r.request_id).sort()).toEqual([...ids].sort());
    const byId = new Map(rows.map((r) => [r.request_id, r]));
    expect(byId.get(ids[0]!)).toMatchObject({ key_id: keyId, server: 'market-intelligence', method: 'tools/call', tool: 'bench_echo', status: 200, error_code: null, credits: 1 });
    expect(byId.get(ids[1]!)).toMatchObject({ method: 'tools/call', tool: 'bench_fail', status: 502, error_code: 'UPSTREAM_ERROR', credits: 0 });
    expect(byId.get(ids[2]!)).toMatchObject({ method: 'tools/list', tool: null, status: 200, credits: 0 });

    expect((await requestLogPage(db, account.id, { limit: 10, status: 'error' })).rows.map((r) => r.request_id)).toEqual([ids[1]]);
    expect((await requestLogPage(db, account.id, { limit: 10, tool: 'bench_echo', key_id: keyId })).rows.map((r) => r.request_id)).toEqual([ids[0]]);
  });

  it('a 65-character and a NUL method from one key are stored clamped and cleaned, and another account sending in the same second loses no row and no daily count', async () => {
    const bad = await createAccountWithKey(db);
    const good = await createAccountWithKey(db);
    const url = `${svc.url}/mcp/market-intelligence`;
    const long = `x${'y'.repeat(63)}z`; // 65 characters: one over the column's 64
    const badMethods = [long, 'tools/li\u0000st', `\u001b[31m${'\u0000'.repeat(100)}`];
    // All at once, so the bad rows and the good ones are queued for the same batch insert.
    const [badAnswers, goodAnswers] = await Promise.all([
      Promise.all(badMethods.map((method, i) => post(url, { jsonrpc: '2.0', id: i, method }, { 'x-api-key': bad.key }))),
      Promise.all([
        post(url, toolCall('bench_echo', { message: 'a' }, 1), { 'x-api-key': good.key }),
        post(url, toolCall('bench_echo', { message: 'b' }, 2), { 'x-api-key': good.key }),
        post(url, toolCall('bench_fail', {}, 3), { 'x-api-key': good.key }),
        post(url, { jsonrpc: '2.0', id: 4, method: 'tools/list' }, { 'x-api-key': good.key }),
      ]),
    ]);
    // An unknown method, whatever it holds, is the protocol's "method not found", never a 500.
    for (const a of badAnswers) expect(a.body).toMatchObject({ error: { code: -32601 } });

    const rowsOf = (accountId: string, n: number) =>
      eventually(
        async () => {
          const rows = (await requestLogPage(db, accountId, { limit: 20 })).rows;
          return rows.length >= n ? rows : undefined;
        },
        10_000,
        `${n} request-log rows`,
      );
    const goodRows = await rowsOf(good.account.id, 4);
    expect(goodRows.map((r) => r.request_id).sort()).toEqual(goodAnswers.map((a) => a.headers.get('x-request-id')).sort());
    const daily = await db.query<{ method: string; tool: string | null; requests: number; credits: string }>(
      'SELECT method, tool, requests, credits FROM request_log_daily WHERE account_id = $1 ORDER BY method, tool',
      [good.account.id],
    );
    expect(daily.rows.map((r) => ({ ...r, credits: Number(r.credits) }))).toEqual([
      { method: 'tools/call', tool: 'bench_echo', requests: 2, credits: 2 },
      { method: 'tools/call', tool: 'bench_fail', requests: 1, credits: 0 },
      { method: 'tools/list', tool: null, requests: 1, credits: 0 },
    ]);
    expect(await balanceOf(db, good.account.id)).toBe(148);
    expect(await ledgerSum(db, good.account.id)).toBe(148);

    const badRows = await rowsOf(bad.account.id, 3);
    const byId = new Map(badRows.map((r) => [r.request_id, r.method]));
    const stored = badAnswers.map((a) => byId.get(a.headers.get('x-request-id')!));
    expect(stored).toEqual([`x${'y'.repeat(62)}…`, 'tools/li\ufffdst', `\ufffd[31m${'\ufffd'.repeat(58)}…`]);
    for (const m of stored) expect([...m!].length).toBeLessThanOrEqual(64);
    const badDaily = await db.query<{ requests: number }>('SELECT sum(requests)::int AS requests FROM request_log_daily WHERE account_id = $1', [bad.account.id]);
    expect(badDaily.rows[0]!.requests).toBe(3);
  });
});
