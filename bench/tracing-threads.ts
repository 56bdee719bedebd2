// npm run bench:tracing-threads — where tracing's CPU goes, by thread, at a fixed request rate,
// side by side in one run (Linux: thread times from /proc/<pid>/task/*/stat).
//   (b)  metrics on, tracing off
//   (s0) as (b), tracing on with nothing sampled (parentbased_traceidratio 0)
//   (s1) as (b), 1% of traces sampled, exported over OTLP/HTTP to a sink process
//   (s10) as (b), 10% sampled
// At a paced rate (open loop, bench/support/paced.ts) every configuration does the same work per
// second, so CPU per request compares directly, and split by thread it says what each part costs:
// the main thread (request path, span records), the span export thread (replay, OTLP encoding,
// HTTP), and V8's helper threads (GC, concurrent compilation) shared by both isolates. At
// saturation (bench:gateway, bench:observability) the same costs show only as a lower
// throughput, with the load generator on the same cores. Rounds are rotated; medians of the
// rounds are printed, then each configuration's difference to (b) by thread and the ratio of
// (b)'s CPU per request to its own (issue 6's "by CPU" ratio, measured at this rate).
// BENCH_RATE (default 6000 req/s; keep it below what the server sustains, or the rate is not
// met and the run says so), BENCH_SECONDS (8), BENCH_ROUNDS (5). Metering is bypassed, as in
// bench:observability.
import fs from 'node:fs';
import os from 'node:os';
import { migrate } from '../server/db/migrate.ts';
import { createBenchAccounts, createBenchPlan } from './support/accounts.ts';
import { openBenchDatabase } from './support/database.ts';
import { gatewayRequests, median } from './support/load.ts';
import { pacedLoad } from './support/paced.ts';
import { otlpTracing, startChild } from './support/processes.ts';
import { spawnServer, stopServer } from '../test/helpers/process.ts';

const RATE = Number(process.env.BENCH_RATE ?? 6000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = 32;
/** Clock ticks per second of /proc's utime and stime (USER_HZ, 100 on Linux). */
const TICKS = 100;

type Group = 'main' | 'export' | 'v8' | 'other';
const GROUPS: Group[] = ['main', 'export', 'v8', 'other'];

/** CPU seconds used so far by each group of the process's threads (user + system). */
function threadSeconds(pid: number): Record<Group, number> {
  const out: Record<Group, number> = { main: 0, export: 0, v8: 0, other: 0 };
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended between the listing and the read
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const seconds = (Number(fields[11]) + Number(fields[12])) / TICKS;
    // The export thread is named by export-thread.ts (Worker name 'otel-span-export', cut to 15 characters).
    const group: Group = Number(tid) === pid ? 'main' : name.startsWith('otel-span-expor') ? 'export' : name.startsWith('V8Worker') ? 'v8' : 'other';
    out[group] += seconds;
  }
  return out;
}

async function main() {
  if (!fs.existsSync('/proc/self/task')) throw new Error('bench:tracing-threads reads thread times from /proc (Linux only)');
  const sink = await startChild(['bench/servers/otlp-sink.ts']);
  const { url: databaseUrl, db, close } = await openBenchDatabase('cmcp-bench-threads-');
  try {
    await migrate(db.pool);
    await createBenchPlan(db, 'bench');
    const { keys } = await createBenchAccounts(db, { count: 100, plan: 'bench', walletTag: 'f', keys: true });
    const requests = gatewayRequests(keys);
    const unmetered = { CRYPTOMCP_BENCH_UNMETERED: '1' };
    const configs = [
      { label: 'b', name: 'metrics on, tracing off', env: unmetered },
      { label: 's0', name: 'tracing on, nothing sampled', env: { ...unmetered, ...otlpTracing(sink.port, 0) } },
      { label: 's1', name: '1% of traces sampled', env: { ...unmetered, ...otlpTracing(sink.port, 0.01) } },
      { label: 's10', name: '10% of traces sampled', env: { ...unmetered, ...otlpTracing(sink.port, 0.1) } },
    ];
    console.log(`bench:tracing-threads — ${RATE} req/s paced, ${SECONDS} s per run, ${ROUNDS} rounds of fresh processes (rotated), ${os.cpus().length} cores`);
    const perRequest = new Map<string, Record<Group, number>[]>(configs.map((c) => [c.label, []]));
    for (let round = 0; round < ROUNDS; round++) {
      const order = configs.map((_, i) => configs[(i + round) % configs.length]!);
      for (const config of order) {
        const server = await spawnServer(databaseUrl, config.env);
        try {
          await pacedLoad(server, requests, { rate: RATE, seconds: 3, connections: CONNECTIONS });
          const before = threadSeconds(server.child.pid!);
          const sample = await pacedLoad(server, requests, { rate: RATE, seconds: SECONDS, connections: CONNECTIONS });
          const after = threadSeconds(server.child.pid!);
          if (sample.errors > 0 || sample.non2xx > 0) throw new Error(`${config.label}: ${sample.errors} errors, ${sample.non2xx} non-2xx answers`);
          if (sample.rps < RATE * 0.97) console.log(`  ! ${config.label} round ${round}: ${sample.rps.toFixed(0)} req/s, below the paced rate; lower BENCH_RATE`);
          const answered = sample.rps * SECONDS;
          const us = Object.fromEntries(GROUPS.map((g) => [g, ((after[g] - before[g]) / answered) * 1e6])) as Record<Group, number>;
          perRequest.get(config.label)!.push(us);
        } finally {
          await stopServer(server.child);
        }
      }
    }

    const med = (label: string, g: Group | 'all') =>
      median(perRequest.get(label)!.map((r) => (g === 'all' ? GROUPS.reduce((sum, k) => sum + r[k], 0) : r[g])));
    const fmt = (v: number) => v.toFixed(1).padStart(7);
    const head = (title: string) => `\n  ${title.padEnd(40)}${['main', 'export', 'v8', 'other', 'all'].map((h) => h.padStart(7)).join('')}`;
    console.log(head('CPU µs per request, median of rounds'));
    for (const c of configs) console.log(`  ${`(${c.label})`.padEnd(6)}${c.name.padEnd(34)}${[...GROUPS, 'all' as const].map((g) => fmt(med(c.label, g))).join('')}`);
    console.log(`${head('against (b), medians')}   b/x by CPU, paired by round`);
    for (const c of configs.slice(1)) {
      const diffs = [...GROUPS, 'all' as const].map((g) => fmt(med(c.label, g) - med('b', g))).join('');
      // Paired per round: each round's (b) against the same round's configuration.
      const ratios = perRequest.get(c.label)!.map((r, i) => {
        const base = perRequest.get('b')![i]!;
        return GROUPS.reduce((s, k) => s + base[k], 0) / GROUPS.reduce((s, k) => s + r[k], 0);
      });
      console.log(`  ${`(${c.label}) - (b)`.padEnd(40)}${diffs}   ${median(ratios).toFixed(2)} (rounds ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)})`);
    }
  } finally {
    sink.child.kill();
    await close();
  }
}

await main();
