// npm run bench:observability — what metrics and tracing cost the gateway, side by side in one
// run, and what each piece of our own telemetry machinery buys over the library's own.
//
// Layers (BENCH_ONLY=layers): each run adds one layer to the one before it:
//   (d) observability off: METRICS_ENABLED=false and no tracing
//   (a) metrics on, tracing off (the default)
//   (e) as (a), with tracing on but nothing sampled (parentbased_traceidratio 0): the path 99% of
//       requests take as the chart ships tracing (the sampler asked about a fresh trace id, no span)
//   (f) as (a), with 1% of traces sampled, the chart's default (MCPServer spec.tracing), and
//       exported over OTLP/HTTP to a sink process
//   (c) as (f), with 10% of traces sampled
//   (b) as (a), with every trace sampled and exported
// Target (issue 6): metrics and tracing as shipped within 10% of off (f/d >= 0.9).
//
// Pieces (BENCH_ONLY=pieces), all at the chart's 1% sampling: (f) as shipped, against the same
// with one piece swapped for the library's own (CRYPTOMCP_BENCH_PLAIN_TELEMETRY, see
// server/telemetry/config.ts), everything swapped, and a second (f) as an A/A control that shows
// the noise. A piece earns its keep when it buys at least 3% of throughput or of CPU per request
// (issue 25): (f) against (f) without it, paired by round.
//
// Same workload as bench:gateway (tools/call of bench_echo from many accounts, autocannon over
// loopback); rounds interleaved, the order rotated each round. Each round's ratio compares runs
// made back to back, and the median of those ratios is reported with their range, by throughput
// and by the server's CPU time per request. Metering is bypassed by default (BENCH_METERED=1
// keeps it): on a shared machine the PostgreSQL round trip's noise would hide the CPU that
// observability costs, which is what this measures.
import os from 'node:os';
import { migrate } from '../server/db/migrate.ts';
import { createBenchAccounts, createBenchPlan } from './support/accounts.ts';
import { openBenchDatabase } from './support/database.ts';
import { loadGateway, pairedRatio, summarize, type Sample } from './support/load.ts';
import { otlpTracing, sinkBytes, startChild } from './support/processes.ts';
import { spawnServer, stopServer, type ServerProcess } from '../test/helpers/process.ts';

const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 100);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const ONLY = process.env.BENCH_ONLY ?? 'all';
if (!['all', 'layers', 'pieces'].includes(ONLY)) throw new Error(`BENCH_ONLY: all, layers or pieces, not ${ONLY}`);
const METERING: Record<string, string> = process.env.BENCH_METERED === '1' ? {} : { CRYPTOMCP_BENCH_UNMETERED: '1' };

const load = (server: ServerProcess, keys: string[], seconds: number) => loadGateway(server, keys, { connections: CONNECTIONS, seconds });

async function main() {
  const servers: ServerProcess[] = [];
  // The OTLP endpoint, in its own process as a collector would be (it counts the bytes it takes).
  const sink = await startChild(['bench/servers/otlp-sink.ts']);

  const { url: databaseUrl, db, close } = await openBenchDatabase('cmcp-bench-obs-');
  try {
    await migrate(db.pool);
    await createBenchPlan(db, 'bench');
    const { keys } = await createBenchAccounts(db, { count: ACCOUNTS, plan: 'bench', walletTag: 'c', keys: true });

    const targets: { label: string; name: string; server: ServerProcess }[] = [];
    const add = async (label: string, name: string, env: Record<string, string>) => {
      const server = await spawnServer(databaseUrl, { ...METERING, ...env });
      servers.push(server);
      targets.push({ label, name, server });
    };
    const layers = ONLY !== 'pieces';
    const pieces = ONLY !== 'layers';
    const at1 = otlpTracing(sink.port, 0.01);
    const plain = (names: string) => ({ ...at1, CRYPTOMCP_BENCH_PLAIN_TELEMETRY: names });
    if (layers) {
      await add('d', 'metrics and tracing off', { METRICS_ENABLED: 'false' });
      await add('a', 'metrics on, tracing off', {});
      await add('e', 'tracing on, nothing sampled', otlpTracing(sink.port, 0));
    }
    await add('f', 'tracing on, 1% sampled (default)', at1);
    if (layers) {
      await add('c', 'tracing on, 10% sampled', otlpTracing(sink.port, 0.1));
      await add('b', 'tracing on, all sampled', otlpTracing(sink.port, 1));
    }
    if (pieces) {
      await add('f2', '(f) again: A/A control', at1);
      await add('fx', '(f), SDK batch processor on main', plain('export'));
      await add('fs', '(f), SDK spans', plain('spans'));
      await add('ft', '(f), prom-client inc/observe', plain('tallies'));
      await add('fp', '(f), all three the library\'s', plain('export,spans,tallies'));
    }

    console.log(`bench:observability — ${ACCOUNTS} accounts, ${CONNECTIONS} connections, ${SECONDS}s x ${ROUNDS} interleaved rounds, ${os.cpus().length} cores, metering ${METERING.CRYPTOMCP_BENCH_UNMETERED ? 'bypassed' : 'on'}`);
    for (const t of targets) await load(t.server, keys, 3); // warm-up: JIT, key cache, pool
    const samples = new Map<string, Sample[]>(targets.map((t) => [t.label, []]));
    for (let round = 0; round < ROUNDS; round++) {
      // Rotated, so that no configuration always follows the same one.
      for (let i = 0; i < targets.length; i++) {
        const t = targets[(i + round) % targets.length]!;
        samples.get(t.label)!.push(await load(t.server, keys, SECONDS));
      }
    }
    const cpu = new Map<string, number>();
    console.log('\n  run                                       req/s   p50 ms   p99 ms   failed   server CPU us/req (median)');
    for (const t of targets) {
      const row = summarize(samples.get(t.label)!);
      cpu.set(t.label, row.cpuUs);
      console.log(
        `  (${t.label})${' '.repeat(3 - t.label.length)} ${t.name.padEnd(34)} ${row.rps.toFixed(0).padStart(6)}  ${row.p50.toFixed(1).padStart(6)}  ${row.p99.toFixed(1).padStart(7)}  ${String(row.errors + row.non2xx).padStart(6)}   ${row.cpuUs.toFixed(0).padStart(6)}`,
      );
    }
    const paired = (x: string, base: string, by: 'throughput' | 'cpu') => pairedRatio(samples.get(x)!, samples.get(base)!, by);
    if (layers) {
      const verdict = (r: number) => (r >= 0.9 ? 'within 10%' : 'MORE than 10%');
      console.log('\nagainst (d), paired by round: median (range)        by throughput                by CPU per request');
      for (const [x, what] of [
        ['a', 'metrics'],
        ['e', 'metrics, tracing unsampled'],
        ['f', 'metrics, tracing 1% (the target)'],
        ['c', 'metrics, tracing 10%'],
        ['b', 'metrics, tracing 100%'],
      ] as const) {
        const t = paired(x, 'd', 'throughput');
        const c = paired(x, 'd', 'cpu');
        console.log(`  ${x}/d ${what.padEnd(36)} ${t.text.padEnd(24)} ${c.text}   ${verdict(t.median)}`);
      }
      const us = (x: string, y: string) => (cpu.get(x)! - cpu.get(y)!).toFixed(1);
      console.log('\neach layer by CPU per request (differences of medians, microseconds)');
      console.log(`  metrics                       a - d = ${us('a', 'd')}`);
      console.log(`  tracing, unsampled path       e - a = ${us('e', 'a')}`);
      console.log(`  1% of traces sampled          f - e = ${us('f', 'e')}`);
      console.log(`  10% of traces sampled         c - e = ${us('c', 'e')}`);
      console.log(`  one sampled request           b - e = ${us('b', 'e')}`);
    }
    if (pieces) {
      // What (f) gains over (f) with the piece swapped: (f)'s throughput over the other's, and the
      // other's CPU per request over (f)'s. Kept at 1.03 or more by either measure.
      const verdict = (t: number, c: number) => (Math.max(t, c) >= 1.03 ? 'earns its keep' : 'below 3%');
      console.log('\nwhat each piece buys at 1% sampled: (f) over (f) with it swapped, paired by round: median (range)');
      console.log('                                            by throughput                by CPU per request');
      for (const [x, what] of [
        ['f2', 'nothing (A/A control)'],
        ['fx', 'span ring and export thread'],
        ['fs', 'recording spans'],
        ['ft', 'tallies'],
        ['fp', 'all three'],
      ] as const) {
        const t = paired('f', x, 'throughput');
        const c = paired('f', x, 'cpu');
        console.log(`  f/${x.padEnd(3)} ${what.padEnd(30)} ${t.text.padEnd(28)} ${c.text}   ${x === 'f2' ? '' : verdict(t.median, c.median)}`);
      }
      const us = (x: string) => (cpu.get(x)! - cpu.get('f')!).toFixed(1);
      console.log(`\n  CPU per request saved (differences of medians, us): ring/thread ${us('fx')}, recording spans ${us('fs')}, tallies ${us('ft')}, all ${us('fp')}, A/A ${us('f2')}`);
    }
    console.log(`  OTLP bytes received by the sink: ${await sinkBytes(sink.port)}`);
  } finally {
    await Promise.all(servers.map((s) => stopServer(s.child)));
    sink.child.kill('SIGTERM');
    await close();
  }
}

await main();
