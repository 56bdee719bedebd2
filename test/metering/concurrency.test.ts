// DESIGN.md §5: no overspend under concurrency, across pods. Two real server processes (the CLI's
// `serve --json`) share one database; 200 simultaneous paid calls against an account holding 50
// credits are split between them. Exactly 50 succeed, each seeing a distinct remaining balance,
// the balance ends at 0 (never negative), and the ledger agrees row by row once settled.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { spawnServer, stopServer, type ServerProcess } from '../helpers/process.ts';
import { balanceOf, createAccountWithKey, createUnlimitedPlan, ledgerSum, post, toolCall, type RawResponse } from '../helpers/service.ts';

let db: TestDatabase;
const servers: ServerProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  const started = await Promise.allSettled([spawnServer(db.url), spawnServer(db.url)]);
  for (const s of started) if (s.status === 'fulfilled') servers.push(s.value);
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) throw failed.reason;
});
afterAll(async () => {
  await Promise.all(servers.map((s) => stopServer(s.child)));
  await db?.drop();
});

describe('no overspend under concurrency (DESIGN §5)', () => {
  it('200 concurrent paid calls across two server processes against 50 credits: exactly 50 succeed, the balance ends at 0, and the ledger agrees', async () => {
    expect(servers).toHaveLength(2);
    expect(servers[0]!.port).not.toBe(servers[1]!.port);
    await createUnlimitedPlan(db, 'load50', 50);
    const { account, key } = await createAccountWithKey(db, { plan: 'load50' });
    // Warm both processes (key cache, first connections) with a free call, so neither starts late.
    for (const s of servers) {
      expect((await post(`${s.url}/mcp/market-intelligence`, { jsonrpc: '2.0', id: 0, method: 'tools/list' }, { 'x-api-key': key })).status).toBe(200);
    }

    const responses: RawResponse[] = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        post(`${servers[i % 2]!.url}/mcp/market-intelligence`, toolCall('bench_echo', { message: `m${i}` }, i), { 'x-api-key': key }),
      ),
    );

    const byStatus = new Map<number, number>();
    for (const r of responses) byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
    const ok = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status !== 200);
    expect(ok.length, `statuses: ${JSON.stringify([...byStatus])}`).toBe(50);
    for (const r of refused) {
      expect([402, 429], JSON.stringify(r.body)).toContain(r.status);
      const code = (r.body as { error: { code: string } }).error.code;
      expect(code).toBe(r.status === 402 ? 'INSUFFICIENT_CREDITS' : 'RATE_LIMITED');
      expect(r.headers.get('x-credits-used')).toBe('0');
    }
    // Both processes answered successes: the guarantee is checked across pods, not within one.
    const okPerServer = servers.map((s, idx) => responses.filter((r, i) => i % 2 === idx && r.status === 200).length);
    expect(okPerServer.every((n) => n > 0), `successes per process: ${okPerServer.join(', ')}`).toBe(true);

    // Every success reserved from a distinct balance: remaining_credits are 49, 48, ..., 0.
    const remaining = ok
      .map((r) => (r.body as { result: { structuredContent: { metadata: { credits_used: number; remaining_credits: number } } } }).result)
      .map((res) => {
        expect(res.structuredContent.metadata.credits_used).toBe(1);
        return res.structuredContent.metadata.remaining_credits;
      })
      .sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 50 }, (_, i) => i));

    expect(await balanceOf(db, account.id)).toBe(0);
    expect(await ledgerSum(db, account.id)).toBe(0);

    // Settlement is batched (SETTLE_INTERVAL_MS): poll until every reservation is marked charged.
    await expect
      .poll(
        async () =>
          (
            await db.query<{ n: number }>(
              `SELECT count(*) AS n FROM credit_ledger WHERE account_id = $1 AND kind = 'reserve' AND resolution = 'charged'`,
              [account.id],
            )
          ).rows[0]!.n,
        { timeout: 10_000, interval: 100 },
      )
      .toBe(50);
    const rows = await db.query<{ kind: string; delta: number; resolution: string | null; request_id: string }>(
      'SELECT kind, delta, resolution, request_id FROM credit_ledger WHERE account_id = $1 ORDER BY id',
      [account.id],
    );
    const reserves = rows.rows.filter((r) => r.kind === 'reserve');
    expect(reserves).toHaveLength(50);
    expect(reserves.every((r) => r.delta === -1 && r.resolution === 'charged')).toBe(true);
    expect(rows.rows.filter((r) => r.kind !== 'reserve').map((r) => [r.kind, r.delta])).toEqual([['grant', 50]]);
    // The reserve rows are exactly the successful requests.
    const okIds = ok.map((r) => r.headers.get('x-request-id')).sort();
    expect(reserves.map((r) => r.request_id).sort()).toEqual(okIds);
    expect(await ledgerSum(db, account.id)).toBe(await balanceOf(db, account.id));
  });
});
