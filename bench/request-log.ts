// npm run bench:request-log — the dashboard's request-log and usage queries (the usage breakdown
// by day, key, tool and error code too) for an account with
// 100,000 logged calls (issue 24: answer in under 200 ms), among 20 other accounts' rows, on the
// embedded PostgreSQL. Each query's p50/p99 is printed beside `SELECT 1` (the round trip) measured
// in the same run, as a ratio, since the machines are shared and noisy.
import { randomUUID } from 'node:crypto';
import { migrate } from '../server/db/migrate.ts';
import { requestLogInsertMany, requestLogPage, type RequestLogEntry } from '../server/dashboard/requestLog.ts';
import { parseRange, usageBreakdown, usageDaily } from '../server/dashboard/usage.ts';
import { createBenchAccounts, createBenchPlan } from './support/accounts.ts';
import { openBenchDatabase } from './support/database.ts';
import { timed as timedRuns } from './support/timing.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 100_000);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
const TOOLS = ['get_prices', 'get_market_overview', 'search_assets', 'get_capabilities'];
const SERVERS = ['market-intelligence', 'price-prediction', 'whale-intelligence'];

/** p50/p99 of `fn` after 10 warm-up runs. */
const timed = (fn: () => Promise<unknown>) => timedRuns(fn, { samples: SAMPLES, warmup: 10 });

async function main() {
  const { db, close } = await openBenchDatabase('cmcp-bench-request-log-', 2);
  try {
    await migrate(db.pool);
    await createBenchPlan(db, 'bench-request-log');
    const { accountIds } = await createBenchAccounts(db, { count: 21, plan: 'bench-request-log', walletTag: 'c', keys: false });
    const [target, ...others] = accountIds;
    const keys = [randomUUID(), randomUUID(), randomUUID()];
    const now = Date.now();
    const entry = (account: string, i: number, total: number): RequestLogEntry => {
      const status = i % 50 === 0 ? 429 : i % 20 === 0 ? 400 : 200;
      return {
        account_id: account,
        key_id: keys[i % keys.length]!,
        request_id: randomUUID(),
        server: SERVERS[i % SERVERS.length]!,
        method: 'tools/call',
        tool: TOOLS[i % TOOLS.length]!,
        status,
        error_code: status === 200 ? null : status === 429 ? 'RATE_LIMITED' : 'INVALID_PARAMS',
        credits: status === 200 ? 2 : 0,
        latency_ms: 5 + (i % 40),
        // Spread over the last 30 days, oldest first (the write order).
        created_at: new Date(now - ((total - i) / total) * 30 * 86400_000),
      };
    };
    const load = async (account: string, total: number) => {
      for (let start = 0; start < total; start += 5000) {
        await requestLogInsertMany(db, Array.from({ length: Math.min(5000, total - start) }, (_, j) => entry(account, start + j, total)));
      }
    };
    await load(target!, CALLS);
    for (const other of others) await load(other, CALLS / 10);
    // The usage charts read the credit ledger: the same calls as reservations.
    // (Setup only: one big INSERT, so the pool's statement timeout is lifted for it.)
    await db.transaction(async (client) => {
      await client.query('SET LOCAL statement_timeout = 0');
      await client.query(
        `INSERT INTO credit_ledger (account_id, request_id, kind, delta, balance_after, server, tool, key_id, resolution, resolved_at, created_at)
         SELECT account_id, request_id, 'reserve', -credits, 0, server, tool, key_id, 'charged', created_at, created_at FROM request_log WHERE status = 200`,
      );
    });
    await db.query('ANALYZE');

    console.log(`bench:request-log — ${CALLS.toLocaleString('en-US')} logged calls on one account (+${others.length} accounts with ${(CALLS / 10).toLocaleString('en-US')} each), ${SAMPLES} samples\n`);
    console.log('  query                                          p50 ms   p99 ms   p50 / SELECT 1');
    const base = await timed(() => db.query('SELECT 1'));
    const row = (name: string, r: { p50: number; p99: number }) =>
      console.log(`  ${name.padEnd(46)} ${r.p50.toFixed(2).padStart(7)}  ${r.p99.toFixed(2).padStart(7)}   ${(r.p50 / base.p50).toFixed(1).padStart(8)}x`);
    row('SELECT 1 (the round trip)', base);
    const page = (f: Parameters<typeof requestLogPage>[2]) => () => requestLogPage(db, target!, f);
    row('request log, first page of 50', await timed(page({ limit: 50 })));
    const deep = await requestLogPage(db, target!, { limit: 200 });
    row('request log, a later page (before=)', await timed(page({ limit: 50, before: Number(deep.next) })));
    row('request log, by key', await timed(page({ limit: 50, key_id: keys[1] })));
    row('request log, by server and tool', await timed(page({ limit: 50, server: SERVERS[1], tool: TOOLS[1] })));
    row('request log, 429s only (2% of rows)', await timed(page({ limit: 50, status: 'rate_limited' })));
    row('request log, status 404 (no rows: full scan)', await timed(page({ limit: 50, status: 404 })));
    const month = parseRange({ days: 30 });
    row('usage per day, server and tool, 30 days', await timed(() => usageDaily(db, target!, month)));
    row('usage breakdown (day/key/tool/error), 30 days', await timed(() => usageBreakdown(db, target!, month, { retentionDays: 30 })));
    row('usage breakdown, one key, 30 days', await timed(() => usageBreakdown(db, target!, month, { keyId: keys[1], retentionDays: 30 })));
    row('usage breakdown, 7 days', await timed(() => usageBreakdown(db, target!, parseRange({ days: 7 }), { retentionDays: 30 })));
  } finally {
    await close();
  }
}

await main();
