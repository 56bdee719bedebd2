// Issue 30, "heavy work off the event loop", driven over real HTTP against a real
// `cryptomcp serve` process (so the process's own CPU time can be read):
// - while five backtest_forecast calls compute, /healthz and an unrelated cheap tool keep
//   answering promptly (before the compute pool, each backtest held the event loop for seconds);
// - a client that gives up on a backtest while it computes is charged nothing, and its worker
//   job stops: the pool counts it cancelled and the process stops burning CPU;
// - an account past its own queue of heavy calls gets a coded 429 with Retry-After, charged 0.
// COMPUTE_WORKERS=0 in the environment runs the first two against the tools inline on the event
// loop (the code as it was): both then fail, which is how they were checked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpuSeconds } from '../../bench/support/processes.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { spawnServer, stopServer, type ServerProcess } from '../helpers/process.ts';
import { balanceOf, createAccountWithKey, createUnlimitedPlan, ledgerSum, post, startTestService, toolCall } from '../helpers/service.ts';

const WORKERS = process.env.COMPUTE_WORKERS ?? '2';

let db: TestDatabase;
let server: ServerProcess;

beforeAll(async () => {
  db = await createTestDatabase();
  await createUnlimitedPlan(db, 'heavy', 10_000);
  // One account's five backtests run one at a time (its share of two threads); on a loaded
  // machine the last may wait past the default 30 s tool timeout, which is not what is tested.
  server = await spawnServer(db.url, { COMPUTE_WORKERS: WORKERS, SETTLE_INTERVAL_MS: '50', TOOL_TIMEOUT_MS: '120000' });
}, 60_000);
afterAll(async () => {
  if (server) await stopServer(server.child);
  await db?.drop();
});

const headers = (key: string) => ({ 'x-api-key': key });

function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = Object.fromEntries([...(match[2] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(match[3]);
  }
  return 0;
}

const scrape = async () => (await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`)).text();

async function waitFor(what: string, condition: () => Promise<boolean> | boolean, deadlineMs: number): Promise<void> {
  const until = Date.now() + deadlineMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error(`${what}: not within ${deadlineMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function unresolved(accountId: string): Promise<number> {
  const res = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM credit_ledger WHERE account_id = $1 AND kind = 'reserve' AND resolution IS NULL`, [accountId]);
  return res.rows[0]!.n;
}

describe('heavy tools run off the event loop', () => {
  it('five concurrent backtest_forecast calls: /healthz and a cheap tool keep answering, each within half the time the quickest backtest took', async () => {
    const heavy = await createAccountWithKey(db, { plan: 'heavy' });
    const other = await createAccountWithKey(db, { plan: 'heavy' });
    // Each of these backtests holds a core for about two seconds on a quiet machine: inline, any
    // request that arrives meanwhile waits for it, so no probe could answer within half the time
    // the quickest backtest took. The bound scales with the machine's load as the backtests do (a
    // fixed 1 s was missed by 0.23 s on a loaded run, with the tools off the event loop).
    const args = { asset: 'bitcoin', horizon: 7, origins: 40 };
    let done = false;
    const took: number[] = [];
    const backtests = Promise.all(
      Array.from({ length: 5 }, async (_, i) => {
        const t0 = performance.now();
        const res = await post(`${server.url}/mcp/price-prediction`, toolCall('backtest_forecast', args, `bt-${i}`), headers(heavy.key));
        took.push(performance.now() - t0);
        return res;
      }),
    ).finally(() => (done = true));

    const healthz: number[] = [];
    const cheap: number[] = [];
    const probeHealthz = async () => {
      while (!done) {
        const t0 = performance.now();
        const res = await fetch(`${server.url}/healthz`);
        await res.arrayBuffer();
        expect(res.status).toBe(200);
        if (!done) healthz.push(performance.now() - t0);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const probeCheap = async () => {
      while (!done) {
        const t0 = performance.now();
        const res = await post(`${server.url}/mcp/market-intelligence`, toolCall('get_prices', { assets: ['bitcoin'] }), headers(other.key));
        expect(res.status).toBe(200);
        if (!done) cheap.push(performance.now() - t0);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const [answers] = await Promise.all([backtests, probeHealthz(), probeCheap()]);

    for (const a of answers) {
      expect(a.status).toBe(200);
      expect((a.body as { result: { structuredContent: { success: boolean } } }).result.structuredContent.success).toBe(true);
    }
    const bound = Math.min(...took) / 2;
    expect(bound, 'a backtest this quick proves nothing').toBeGreaterThan(500);
    expect(Math.max(...healthz)).toBeLessThan(bound);
    expect(Math.max(...cheap)).toBeLessThan(bound);
    // The probes ran throughout, not just after the work.
    expect(healthz.length).toBeGreaterThanOrEqual(10);
    expect(cheap.length).toBeGreaterThanOrEqual(5);
    expect(sample(await scrape(), 'cryptomcp_compute_jobs_total', { task: 'backtest', outcome: 'completed' })).toBe(5);
  }, 120_000);

  it('a backtest aborted by its client while it computes is charged 0 and its worker job stops', async () => {
    const { account, key } = await createAccountWithKey(db);
    const before = await balanceOf(db, account.id);
    const metricsBefore = await scrape();
    const cancelledBefore = sample(metricsBefore, 'cryptomcp_compute_jobs_total', { task: 'backtest', outcome: 'cancelled' });

    // A backtest of 100 origins takes several seconds of CPU.
    const controller = new AbortController();
    const cpuAtSend = cpuSeconds(server.child.pid);
    const sentAt = performance.now();
    const call = fetch(`${server.url}/mcp/price-prediction`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers(key) },
      body: JSON.stringify(toolCall('backtest_forecast', { asset: 'bitcoin', horizon: 7, origins: 100 })),
      signal: controller.signal,
    }).then(
      () => 'answered',
      (err: unknown) => (err as Error).name,
    );
    // The work has started: the server has spent half a second of CPU on it (inline or not).
    await waitFor('the backtest started computing', () => cpuSeconds(server.child.pid) - cpuAtSend > 0.5, 20_000);
    // CPU seconds per second while it computed: on a loaded machine a thread gets less than a core.
    const computing = (cpuSeconds(server.child.pid) - cpuAtSend) / ((performance.now() - sentAt) / 1000);
    controller.abort();
    expect(await call).toBe('AbortError');

    // Charged nothing: the reservation is refunded and the ledger balances.
    await waitFor('the reservation is resolved', async () => (await unresolved(account.id)) === 0, 20_000);
    expect(await balanceOf(db, account.id)).toBe(before);
    expect(await ledgerSum(db, account.id)).toBe(before);

    // The worker job stopped: the pool counts it cancelled, nothing runs, and the process goes
    // quiet (a backtest still computing would go on burning CPU at the rate it did before).
    await waitFor(
      'the job is counted cancelled',
      async () => sample(await scrape(), 'cryptomcp_compute_jobs_total', { task: 'backtest', outcome: 'cancelled' }) === cancelledBefore + 1,
      5_000,
    );
    const metrics = await scrape();
    expect(sample(metrics, 'cryptomcp_compute_inflight', { state: 'running' })).toBe(0);
    const cpu0 = cpuSeconds(server.child.pid);
    const t0 = performance.now();
    await waitFor('a second passes', () => performance.now() - t0 >= 1000, 5_000);
    const busy = (cpuSeconds(server.child.pid) - cpu0) / ((performance.now() - t0) / 1000);
    expect(busy).toBeLessThan(computing / 3);
  }, 120_000);

  it("past its queue an account's heavy call answers a coded 429 with Retry-After and is charged 0", async () => {
    // One thread, no waiting room per account: the second concurrent backtest of an account is refused.
    const svc = await startTestService(db.url, { COMPUTE_WORKERS: '1', COMPUTE_ACCOUNT_QUEUE: '0', SETTLE_INTERVAL_MS: '50' });
    try {
      const { account, key } = await createAccountWithKey(db);
      const before = await balanceOf(db, account.id);
      const url = `${svc.url}/mcp/price-prediction`;
      const [first, second] = await Promise.all([
        post(url, toolCall('backtest_forecast', { asset: 'bitcoin', origins: 10 }, 'a'), headers(key)),
        post(url, toolCall('backtest_forecast', { asset: 'bitcoin', origins: 10 }, 'b'), headers(key)),
      ]);
      const refused = [first, second].filter((r) => r.status !== 200);
      expect([first, second].filter((r) => r.status === 200)).toHaveLength(1);
      expect(refused).toHaveLength(1);
      expect(refused[0]!.status).toBe(429);
      expect((refused[0]!.body as { error: { code: string } }).error.code).toBe('RATE_LIMITED');
      expect(Number(refused[0]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      await waitFor('the reservations are resolved', async () => (await unresolved(account.id)) === 0, 20_000);
      expect(await balanceOf(db, account.id)).toBe(before - 10);
      expect(await ledgerSum(db, account.id)).toBe(before - 10);
    } finally {
      await svc.close();
    }
  }, 60_000);
});
