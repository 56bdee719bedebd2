// npm run bench:observability — what metrics and tracing cost the gateway, layer by layer, side by
// side in one run. Each run adds one layer to the one before it:
//   (d) observability off: METRICS_ENABLED=false and no tracing
//   (a) metrics on, tracing off (the default)
//   (e) as (a), with tracing on but nothing sampled (parentbased_traceidratio 0): the path 99% of
//       requests take as the chart ships tracing (the sampler asked about a fresh trace id, no span)
//   (f) as (a), with 1% of traces sampled, the chart's default (MCPServer spec.tracing), and
//       exported over OTLP/HTTP to a sink process
//   (c) as (f), with 10% of traces sampled
//   (b) as (a), with every trace sampled and exported
// Same workload as bench:gateway (tools/call of bench_echo from many accounts, autocannon over
// loopback); rounds interleaved in that order (d a e f c b d a e f c b ...). Each round's ratio
// against (d) compares runs made back to back, and the median of those ratios is reported with
// their range, by throughput and by the server's CPU time per request. The CPU differences give each
// layer's cost in microseconds per request, and (b) - (e) the cost of one sampled request.
// Target (issue 6): metrics and tracing as shipped within 10% of off (f/d >= 0.9); bench:gateway
// prints the same comparison as f1/e beside its other runs. Metering is bypassed in all six by
// default (BENCH_METERED=1 keeps it): on a shared machine the PostgreSQL round trip's noise would
// hide the CPU that observability costs, which is what this measures.
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
    await add('d', 'metrics and tracing off', { METRICS_ENABLED: 'false' });
    await add('a', 'metrics on, tracing off', {});
    await add('e', 'tracing on, nothing sampled', otlpTracing(sink.port, 0));
    await add('f', 'tracing on, 1% sampled (default)', otlpTracing(sink.port, 0.01));
    await add('c', 'tracing on, 10% sampled', otlpTracing(sink.port, 0.1));
    await add('b', 'tracing on, all sampled', otlpTracing(sink.port, 1));

    console.log(`bench:observability — ${ACCOUNTS} accounts, ${CONNECTIONS} connections, ${SECONDS}s x ${ROUNDS} interleaved rounds, ${os.cpus().length} cores, metering ${METERING.CRYPTOMCP_BENCH_UNMETERED ? 'bypassed' : 'on'}`);
    for (const t of targets) await load(t.server, keys, 3); // warm-up: JIT, key cache, pool
    const samples = new Map<string, Sample[]>(targets.map((t) => [t.label, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const t of targets) samples.get(t.label)!.push(await load(t.server, keys, SECONDS));
    }
    const cpu = new Map<string, number>();
    console.log('\n  run                                   req/s   p50 ms   p99 ms   failed   server CPU us/req (median)');
    for (const t of targets) {
      const row = summarize(samples.get(t.label)!);
      cpu.set(t.label, row.cpuUs);
      console.log(
        `  (${t.label}) ${t.name.padEnd(33)} ${row.rps.toFixed(0).padStart(6)}  ${row.p50.toFixed(1).padStart(6)}  ${row.p99.toFixed(1).padStart(7)}  ${String(row.errors + row.non2xx).padStart(6)}   ${row.cpuUs.toFixed(0).padStart(6)}`,
      );
    }
    const paired = (x: string, by: 'throughput' | 'cpu') => pairedRatio(samples.get(x)!, samples.get('d')!, by);
    const verdict = (r: number) => (r >= 0.9 ? 'within 10%' : 'MORE than 10%');
    console.log('\nagainst (d), paired by round: median (range)        by throughput                by CPU per request');
    for (const [x, what] of [
      ['a', 'metrics'],
      ['e', 'metrics, tracing unsampled'],
      ['f', 'metrics, tracing 1% (the target)'],
      ['c', 'metrics, tracing 10%'],
      ['b', 'metrics, tracing 100%'],
    ] as const) {
      const t = paired(x, 'throughput');
      const c = paired(x, 'cpu');
      console.log(`  ${x}/d ${what.padEnd(36)} ${t.text.padEnd(24)} ${c.text}   ${verdict(t.median)}`);
    }
    const us = (x: string, y: string) => (cpu.get(x)! - cpu.get(y)!).toFixed(1);
    console.log('\neach layer by CPU per request (differences of medians, microseconds)');
    console.log(`  metrics                       a - d = ${us('a', 'd')}`);
    console.log(`  tracing, unsampled path       e - a = ${us('e', 'a')}`);
    console.log(`  1% of traces sampled          f - e = ${us('f', 'e')}`);
    console.log(`  10% of traces sampled         c - e = ${us('c', 'e')}`);
    console.log(`  one sampled request           b - e = ${us('b', 'e')}`);
    console.log(`  OTLP bytes received by the sink: ${await sinkBytes(sink.port)}`);
  } finally {
    await Promise.all(servers.map((s) => stopServer(s.child)));
    sink.child.kill('SIGTERM');
    await close();
  }
}

await main();
