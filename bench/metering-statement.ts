// npm run bench:metering — what the metering statement itself costs in PostgreSQL, with nothing
// else running: one client calls meter_reserve_batch (migration 0006) in sequence with batches of
// 1, 8 and 32 calls on random accounts, beside `SELECT 1` (the bare round trip) and a one-row
// UPDATE with a synchronous commit, all on the same embedded server in one run. It bounds what
// bench:gateway's "metering adds at most 2 ms at p99" (issue 2) can reach on a machine: the
// statement's own p99 is a floor under the added latency at any load.
import os from 'node:os';
import { migrate } from '../server/db/migrate.ts';
import { createBenchAccounts, createBenchPlan } from './support/accounts.ts';
import { openBenchDatabase } from './support/database.ts';
import { timed as timedRuns } from './support/timing.ts';

const ACCOUNTS = 100;
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 1000);
const KEY_ID = '00000000-0000-4000-8000-000000000001';

/** p50/p99 of `fn` over `samples` runs after a fifth as many warm-up runs. */
const timed = (samples: number, fn: () => Promise<unknown>) => timedRuns(fn, { samples, warmup: Math.ceil(samples / 5) });

async function main() {
  const { db, close } = await openBenchDatabase('cmcp-bench-metering-', 1);
  try {
    await migrate(db.pool);
    await createBenchPlan(db, 'bench-metering');
    const { accountIds: ids } = await createBenchAccounts(db, { count: ACCOUNTS, plan: 'bench-metering', walletTag: 'a', keys: false });
    let requests = 0;
    const reserve = (size: number) => {
      // Sorted, as the gateway's meter sends them (the statement locks accounts in id order).
      const accounts = Array.from({ length: size }, () => ids[Math.floor(Math.random() * ids.length)]!).sort();
      const column = <T>(value: T) => accounts.map(() => value);
      return db.query('SELECT * FROM meter_reserve_batch($1, $2, $3, $4, $5, $6, $7, $8, make_interval(secs => $9))', [
        accounts,
        accounts.map(() => `bench-metering:${requests++}`),
        column(1),
        column(true),
        column('market-intelligence'),
        column('bench_echo'),
        column(KEY_ID),
        null,
        61,
      ]);
    };

    console.log(`bench:metering — one client, ${SAMPLES} sequential statements each, ${ACCOUNTS} accounts, ${os.cpus().length} cores\n`);
    console.log('  statement                                   p50 ms   p99 ms   per call');
    const row = (name: string, r: { p50: number; p99: number }, calls = 1) =>
      console.log(`  ${name.padEnd(42)} ${r.p50.toFixed(2).padStart(7)}  ${r.p99.toFixed(2).padStart(7)}   ${((r.p50 / calls) * 1000).toFixed(0).padStart(5)} us`);
    const select1 = await timed(SAMPLES, () => db.query('SELECT 1', []));
    row('SELECT 1 (the round trip)', select1);
    let i = 0;
    const update = await timed(Math.min(SAMPLES, 300), () => db.query('UPDATE accounts SET updated_at = now() WHERE id = $1', [ids[i++ % ids.length]]));
    row('UPDATE one row, synchronous commit', update);
    const batches: Record<number, { p50: number; p99: number }> = {};
    for (const size of [1, 8, 32]) {
      batches[size] = await timed(SAMPLES, () => reserve(size));
      row(`meter_reserve_batch, ${size} call${size === 1 ? '' : 's'}`, batches[size], size);
    }
    console.log('\nratios');
    console.log(`  one-call statement / SELECT 1 at p50: ${(batches[1]!.p50 / select1.p50).toFixed(1)}`);
    console.log(`  8-call / one-call statement at p50: ${(batches[8]!.p50 / batches[1]!.p50).toFixed(2)} (what batching under load costs a call in latency)`);
    console.log(`  the one-call statement's p99 beyond the bare round trip's p99: ${(batches[1]!.p99 - select1.p99).toFixed(2)} ms (issue 2 allows metering 2 ms at p99 under load)`);
  } finally {
    await close();
  }
}

await main();
