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
// Pieces (BENCH_ONLY=pieces), all at the chart's 1% sampling: what each piece of our own telemetry
// code buys over the library's own (CRYPTOMCP_BENCH_PLAIN_TELEMETRY swaps it in a server, see
// server/telemetry/config.ts). (f) as shipped, a second (f) as an A/A control, (f) with one piece
// swapped, and (f) with all of them swapped. Run one after the other, rounds of the same code on
// this shared machine differ by up to a third, which hides a 3% difference; so all the servers are
// loaded at the same time, and whatever slows the machine slows them all. Each round loads them at
// a fixed rate (BENCH_PIECE_RATE each, default 250 req/s; CPU per request), then at saturation (8
// connections each; the scheduler shares the cores, so the cheaper server answers more:
// throughput, and CPU per request). Each ratio is divided by the A/A pair's (its bias and noise),
// and a piece earns its keep when that buys at least 3% of throughput or of CPU per request
// (issue 25). BENCH_PIECES_BASE swaps pieces in every server, (f) included.
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
import { gatewayRequests, loadGateway, median, pairedRatio, summarize, type Sample } from './support/load.ts';
import { pacedLoad } from './support/paced.ts';
import { otlpTracing, sinkBytes, startChild } from './support/processes.ts';
import { spawnServer, stopServer, type ServerProcess } from '../test/helpers/process.ts';

const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 100);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const ONLY = process.env.BENCH_ONLY ?? 'all';
if (!['all', 'layers', 'pieces'].includes(ONLY)) throw new Error(`BENCH_ONLY: all, layers or pieces, not ${ONLY}`);
const METERING: Record<string, string> = process.env.BENCH_METERED === '1' ? {} : { CRYPTOMCP_BENCH_UNMETERED: '1' };

/**
 * BENCH_RATE: rounds at that fixed rate (open loop, bench/support/paced.ts) instead of at
 * saturation. Every configuration then does the same work per second with the load generator
 * taking the same share of the cores, so CPU per request compares more steadily; throughput is
 * the rate and says nothing.
 */
const RATE = process.env.BENCH_RATE ? Number(process.env.BENCH_RATE) : undefined;

const load = (server: ServerProcess, keys: string[], seconds: number): Promise<Sample> =>
  RATE
    ? pacedLoad(server, gatewayRequests(keys), { rate: RATE, seconds, connections: CONNECTIONS })
    : loadGateway(server, keys, { connections: CONNECTIONS, seconds });

interface Target {
  label: string;
  name: string;
  server: ServerProcess;
}

async function startTargets(databaseUrl: string, all: ServerProcess[], list: [label: string, name: string, env: Record<string, string>][]): Promise<Target[]> {
  const targets: Target[] = [];
  for (const [label, name, env] of list) {
    const server = await spawnServer(databaseUrl, { ...METERING, ...env });
    all.push(server);
    targets.push({ label, name, server });
  }
  return targets;
}

const describeRun = (what: string) =>
  `bench:observability, ${what}: ${ACCOUNTS} accounts, ${CONNECTIONS} connections, ${SECONDS}s x ${ROUNDS} rounds, ${os.cpus().length} cores, metering ${METERING.CRYPTOMCP_BENCH_UNMETERED ? 'bypassed' : 'on'}`;

/** The layers, one after the other in rotated rounds, each against (d). */
async function measureLayers(databaseUrl: string, keys: string[], sinkPort: number, all: ServerProcess[]): Promise<void> {
  const targets = await startTargets(databaseUrl, all, [
    ['d', 'metrics and tracing off', { METRICS_ENABLED: 'false' }],
    ['a', 'metrics on, tracing off', {}],
    ['e', 'tracing on, nothing sampled', otlpTracing(sinkPort, 0)],
    ['f', 'tracing on, 1% sampled (default)', otlpTracing(sinkPort, 0.01)],
    ['c', 'tracing on, 10% sampled', otlpTracing(sinkPort, 0.1)],
    ['b', 'tracing on, all sampled', otlpTracing(sinkPort, 1)],
  ]);
  console.log(describeRun(`layers${RATE ? ` at ${RATE} req/s` : ' at saturation'}`));
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
}

const PIECE_RATE = Number(process.env.BENCH_PIECE_RATE ?? 250);
const PIECE_CONNECTIONS = 8;

/** The pieces CRYPTOMCP_BENCH_PLAIN_TELEMETRY can swap (server/telemetry/config.ts), and what each one is. */
const PIECES: Record<string, string> = { export: 'span ring and export thread', tallies: 'tallies' };
/**
 * BENCH_PIECES_BASE: pieces swapped in every server, (f) included, to weigh the others on top of
 * that base (once one piece is found not to earn its keep, what the rest buy without it).
 */
const PIECES_BASE = (process.env.BENCH_PIECES_BASE ?? '').split(',').map((s) => s.trim()).filter(Boolean);

/** Each piece swapped, loaded at the same time as (f), the base. */
async function measurePieces(databaseUrl: string, keys: string[], sinkPort: number, all: ServerProcess[]): Promise<void> {
  const at1 = otlpTracing(sinkPort, 0.01);
  const plain = (names: string[]) => {
    const swapped = [...new Set([...PIECES_BASE, ...names])];
    return swapped.length ? { ...at1, CRYPTOMCP_BENCH_PLAIN_TELEMETRY: swapped.join(',') } : at1;
  };
  const weighed = Object.keys(PIECES).filter((p) => !PIECES_BASE.includes(p));
  const base = PIECES_BASE.length ? `with ${PIECES_BASE.map((p) => PIECES[p] ?? p).join(', ')} swapped` : 'as shipped';
  const [f, ...others] = await startTargets(databaseUrl, all, [
    ['f', `${base}, 1% sampled`, plain([])],
    ['f2', 'nothing: (f) again, the A/A control', plain([])],
    ...weighed.map((p): [string, string, Record<string, string>] => [`f${p[0]}`, PIECES[p]!, plain([p])]),
    ...(weighed.length > 1 ? [['fp', `all ${weighed.length}`, plain(weighed)] as [string, string, Record<string, string>]] : []),
  ]);
  console.log(`\n${describeRun(`pieces, all ${others.length + 1} servers loaded at once at ${PIECE_RATE} req/s each, then all at saturation`)}`);
  const requests = gatewayRequests(keys);
  const everyone = [f!, ...others];
  const paced = (t: Target) => pacedLoad(t.server, requests, { rate: PIECE_RATE, seconds: SECONDS, connections: PIECE_CONNECTIONS });
  const saturated = (t: Target) => loadGateway(t.server, keys, { connections: PIECE_CONNECTIONS, seconds: SECONDS });
  await Promise.all(everyone.map(saturated)); // warm-up
  // Per other configuration, each round's ratios: (f) over it by throughput at saturation, and its
  // CPU per request over (f)'s at the fixed rate and at saturation.
  const ratios = new Map(others.map((t) => [t.label, { rps: [] as number[], cpuPaced: [] as number[], cpuSaturated: [] as number[] }]));
  let lateRounds = 0;
  // The loads start in a rotated order: the one started first has the generator to itself for a moment.
  const rotated = <T>(round: number, load: (t: Target) => Promise<T>): Promise<T[]> => {
    const order = everyone.map((_, i) => (i + round) % everyone.length);
    const started: Promise<T>[] = [];
    for (const i of order) started[i] = load(everyone[i]!);
    return Promise.all(started);
  };
  for (let round = 0; round < ROUNDS; round++) {
    const p = await rotated(round, paced);
    if (p.some((x) => x.rps < PIECE_RATE * 0.97)) lateRounds++;
    const sat = await rotated(round, saturated);
    others.forEach((x, i) => {
      const r = ratios.get(x.label)!;
      r.cpuPaced.push(p[i + 1]!.cpuUs / p[0]!.cpuUs);
      r.rps.push(sat[0]!.rps / sat[i + 1]!.rps);
      r.cpuSaturated.push(sat[i + 1]!.cpuUs / sat[0]!.cpuUs);
    });
  }
  const text = (xs: number[]) => `${median(xs).toFixed(3)} (${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)})`;
  console.log(`\nwhat each piece buys at 1% sampled: (f, ${base}) over (f) with it swapped too, loaded at the same time; median of rounds (range)`);
  console.log(`  ${'swapped'.padEnd(40)} ${'throughput'.padEnd(20)} ${'CPU/req, saturated'.padEnd(20)} ${'CPU/req, paced'.padEnd(20)}`);
  for (const x of others) {
    const r = ratios.get(x.label)!;
    console.log(`  (${x.label}) ${x.name.padEnd(35)} ${text(r.rps).padEnd(20)} ${text(r.cpuSaturated).padEnd(20)} ${text(r.cpuPaced).padEnd(20)}`);
  }
  // The A/A pair's medians are the bias and noise of the method itself (two identical servers
  // differed by up to 5% here): each piece is judged by its ratio over the A/A's.
  const aa = ratios.get('f2')!;
  const net = (xs: number[], control: number[]) => median(xs) / median(control);
  console.log(`\n  ${'net of the A/A control'.padEnd(40)} ${'throughput'.padEnd(20)} ${'CPU/req, saturated'.padEnd(20)} ${'CPU/req, paced'.padEnd(20)}`);
  for (const x of others.filter((t) => t.label !== 'f2')) {
    const r = ratios.get(x.label)!;
    const n = [net(r.rps, aa.rps), net(r.cpuSaturated, aa.cpuSaturated), net(r.cpuPaced, aa.cpuPaced)];
    const verdict = Math.max(...n) >= 1.03 ? 'earns its keep (3% or more by one measure)' : 'below 3% by every measure';
    console.log(`  (${x.label}) ${x.name.padEnd(35)} ${n.map((v) => v.toFixed(3).padEnd(20)).join(' ')} ${verdict}`);
  }
  if (lateRounds) console.log(`  ! in ${lateRounds} paced rounds a server fell below the rate: lower BENCH_PIECE_RATE`);
}

async function main() {
  const servers: ServerProcess[] = [];
  // The OTLP endpoint, in its own process as a collector would be (it counts the bytes it takes).
  const sink = await startChild(['bench/servers/otlp-sink.ts']);

  const { url: databaseUrl, db, close } = await openBenchDatabase('cmcp-bench-obs-');
  try {
    await migrate(db.pool);
    await createBenchPlan(db, 'bench');
    const { keys } = await createBenchAccounts(db, { count: ACCOUNTS, plan: 'bench', walletTag: 'c', keys: true });

    if (ONLY !== 'pieces') await measureLayers(databaseUrl, keys, sink.port, servers);
    if (ONLY !== 'layers') await measurePieces(databaseUrl, keys, sink.port, servers);
    console.log(`\n  OTLP bytes received by the sink: ${await sinkBytes(sink.port)}`);
  } finally {
    await Promise.all(servers.map((s) => stopServer(s.child)));
    sink.child.kill('SIGTERM');
    await close();
  }
}

await main();
