// npm run bench:gateway — what the gateway costs, measured side by side in one run on this machine.
//   (a) the real service, metering on: tools/call of bench_echo (1 credit) from many accounts
//   (b) the same service with metering bypassed (CRYPTOMCP_BENCH_UNMETERED=1)
//   (c) the naive SDK pattern: a new McpServer with its own validator per request
//   (d) a bare Fastify JSON POST route
//   (e) as (b), with observability off: METRICS_ENABLED=false and no tracing
//   (f1) as (b), with metrics on and tracing on as the chart ships it (MCPServer spec.tracing's
//       default): 1% of traces sampled (parentbased_traceidratio), exported over OTLP/HTTP to a
//       sink on loopback
//   (f) as (f1), with 10% of traces sampled: ten times the default, what a sampled share costs
// (b), (e), (f1) and (f) bypass metering so that they are bound by the server's CPU, which is what
// observability costs: with metering on, throughput here swings by ±20% with PostgreSQL (on the
// same two cores, its autovacuum and checkpoints) and hides a 5% difference.
// Each server runs in its own process; autocannon drives it over loopback from this process.
// Rounds of (a)-(d) are interleaved (a b c d a b c d ...) and the median round is reported,
// because the machine is shared and noisy. Then (a) and (b) are driven at half of (a)'s measured
// maximum, paced request by request, to see what metering adds to p99 latency, beside an A/A
// control (b2) and the floor of one database round trip per request ((d) with and without a
// SELECT 1: bench/servers/bare-fastify.ts). Last, (e), (b), (f1) and (f) run in rounds of fresh
// processes, with (e) twice: as an A/A control (e2/e), and as a baseline of two processes, against
// which the others are compared (observabilityRounds).
//   (am), (bm), (cm) as (a), (b), (c), driven with 2026-07-28 messages (per-request _meta, headers)
//   with BENCH_ONLY=protocol, also: (as), (bs) as (am), (bm) in processes answering 2026-07-28
//   through the SDK's createMcpHandler (CRYPTOMCP_BENCH_MODERN_SDK=1: the path before
//   server/gateway/modern.ts, side by side); (bx), (bmx) as (b), (bm) through the all-in-one
//   endpoint /mcp instead of /mcp/market-intelligence (the same process)
// Then the server CPU of one connect under each generation (connectCost).
// Targets (issue 19, for each generation): a/b >= 0.85, b/c >= 3, a/d >= 0.35, a 2026-07-28 connect
// at most half the 2025 handshake's CPU; (issue 32) 2026-07-28 CPU per metered tools/call <= 2025's,
// the all-in-one endpoint within 5% of a per-server path; (issue 2): p99 delta <= 2 ms; (issue 6): f1/e >= 0.9, what
// metrics and tracing together cost as shipped; f/e is printed against the same bar.
// 32 connections by default: with 16, (a) was bound by the PostgreSQL round trip's latency (the
// server idled ~20% of the time) rather than reaching its maximum.
import { execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrate } from '../server/db/migrate.ts';
import { createBenchAccounts, createBenchPlan } from './support/accounts.ts';
import { openBenchDatabase } from './support/database.ts';
import { ALL_IN_ONE_PATH, CONNECT, gatewayRequests, loadGateway, median, pairedRatio, summarize, type Era, type Sample } from './support/load.ts';
import { pacedLoad, type PacedSample } from './support/paced.ts';
import { otlpTracing, sinkBytes, startChild } from './support/processes.ts';
import { spawnServer, stopServer } from '../test/helpers/process.ts';

const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 100);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/** Rounds of the observability comparison, each of fresh processes. */
const OBS_ROUNDS = Number(process.env.BENCH_OBS_ROUNDS ?? 8);
/**
 * BENCH_ONLY=observability: only the observability rounds (issue 6's f1/e and f/e, about 7 minutes here),
 * without the (a)-(d) comparison and the half-load runs (issue 2's targets).
 */
const ONLY_OBSERVABILITY = process.env.BENCH_ONLY === 'observability';
/** BENCH_ONLY=protocol: only the (a)-(d) comparison under both generations and the connect cost (issue 19). */
const ONLY_PROTOCOL = process.env.BENCH_ONLY === 'protocol';
if (process.env.BENCH_ONLY !== undefined && !ONLY_OBSERVABILITY && !ONLY_PROTOCOL) {
  throw new Error(`BENCH_ONLY must be "observability" or "protocol", not "${process.env.BENCH_ONLY}"`);
}
/**
 * BENCH_PIN=1: every server on core 0; this process (the load generator) and the PostgreSQL it
 * starts on the last core. In production PostgreSQL has its own hardware; pinned, it no longer
 * takes CPU from the server under test. Unpinned (the default) everything shares every core.
 */
const PIN = process.env.BENCH_PIN === '1' && os.cpus().length >= 2;
/**
 * BENCH_PG_PRIORITY=1: the embedded PostgreSQL runs at nice -10 (needs root), so its backends
 * never wait behind the servers and the load generator for a core: closer to production, where
 * PostgreSQL has its own hardware, than sharing two cores evenly. Not with DATABASE_URL.
 */
const PG_PRIORITY = process.env.BENCH_PG_PRIORITY === '1';
/**
 * BENCH_PG_SYNC_COMMIT=off: the database commits without waiting for its WAL flush
 * (synchronous_commit = off, set for the bench's database only). A diagnosis, never a production
 * setting (a crash could lose the last charges): it shows how much of metering's latency at half
 * load is this machine's disk flush rather than the statement or CPU. Embedded PostgreSQL only.
 */
const SYNC_COMMIT_OFF = process.env.BENCH_PG_SYNC_COMMIT === 'off';
const SERVER_CORE = '0';
const OTHER_CORE = String(os.cpus().length - 1);
/** What every server under test runs in: taskset to the servers' core when pinned. */
const SERVER_WRAPPER = PIN ? ['taskset', '-c', SERVER_CORE] : [];

interface Target {
  label: string;
  name: string;
  port: number;
  metricsPort?: number;
  child: ChildProcess;
  /** The protocol generation the workload speaks (default: 2025). */
  era?: Era;
  /** The URL path driven (default: bench_echo's server, support/load.ts). */
  path?: string;
}

const children: ChildProcess[] = [];
function cleanup() {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
}
process.on('exit', cleanup);
process.on('SIGINT', () => process.exit(130));

/** Starts a reference server script (on the servers' core when pinned); stopped on exit. */
async function startReference(args: string[]): Promise<{ port: number; child: ChildProcess }> {
  const started = await startChild(args, SERVER_WRAPPER);
  children.push(started.child);
  return started;
}

/** Starts `cryptomcp serve` with `env` (on the servers' core when pinned); stopped on exit. */
async function startService(databaseUrl: string, env: Record<string, string>): Promise<Omit<Target, 'label' | 'name'>> {
  // Up to 2 minutes to start: on a shared machine under load, 30 s was not always enough.
  const { port, metricsPort, child } = await spawnServer(databaseUrl, env, SERVER_WRAPPER, 120_000);
  children.push(child);
  return { port, metricsPort, child };
}

/** One line of a results table: the median round of a run. */
function printRow(label: string, name: string, m: Sample): void {
  console.log(
    `  (${label})${label.length === 1 ? ' ' : ''}${name.padEnd(28)} ${m.rps.toFixed(0).padStart(7)}  ${m.p50.toFixed(1).padStart(7)}  ${m.p99.toFixed(1).padStart(7)}  ${String(m.non2xx).padStart(7)}  ${String(m.errors).padStart(6)}   ${m.cpuUs.toFixed(0).padStart(6)}`,
  );
}

const verdict = (ok: boolean) => (ok ? 'meets target' : 'MISSES target');

/** Cumulative bucket counts of a Prometheus histogram, by upper bound (seconds). */
async function histogram(metricsPort: number, name: string): Promise<Map<number, number>> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const buckets = new Map<number, number>();
  for (const line of text.split('\n')) {
    const m = new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} (\\d+)`).exec(line);
    if (m) buckets.set(m[1] === '+Inf' ? Infinity : Number(m[1]), Number(m[2]));
  }
  return buckets;
}

/** The q-quantile of the observations between two scrapes, as the upper bound of its bucket. */
function quantile(before: Map<number, number>, after: Map<number, number>, q: number): number {
  const bounds = [...after.keys()].sort((x, y) => x - y);
  const total = (after.get(Infinity) ?? 0) - (before.get(Infinity) ?? 0);
  for (const le of bounds) {
    if ((after.get(le) ?? 0) - (before.get(le) ?? 0) >= q * total) return le;
  }
  return Infinity;
}

const load = (target: Pick<Target, 'port' | 'child' | 'era' | 'path'>, keys: string[], opts: { seconds: number; rate?: number }) =>
  loadGateway(target, keys, { connections: CONNECTIONS, ...(target.era ? { era: target.era } : {}), ...(target.path ? { path: target.path } : {}), ...opts });

/**
 * The server CPU of one connect under each generation (issue 19: 2026-07-28 at most half the 2025
 * handshake): a client's whole connect sequence (CONNECT in support/load.ts), over and over, on
 * one unmetered process whose connect bucket is out of the way; CPU per request times the
 * sequence's length, interleaved by round.
 */
async function connectCost(databaseUrl: string, keys: string[], withSdk: boolean): Promise<void> {
  const unlimited = { ...UNMETERED, CONNECT_REQUESTS_PER_MINUTE: '100000000', CONNECT_BURST: '1000000' };
  const server = await startService(databaseUrl, unlimited);
  // The 2026-07-28 connect as the SDK's createMcpHandler answers it (before modern.ts), in its own process.
  const sdk = withSdk ? await startService(databaseUrl, { ...unlimited, CRYPTOMCP_BENCH_MODERN_SDK: '1' }) : undefined;
  type Series = 'legacy' | 'modern' | 'modern-sdk';
  const series: Series[] = sdk ? ['legacy', 'modern', 'modern-sdk'] : ['legacy', 'modern'];
  const perConnect = new Map<Series, number[]>(series.map((e) => [e, []]));
  const run = (s: Series, seconds: number) => {
    const era: Era = s === 'legacy' ? 'legacy' : 'modern';
    return loadGateway(s === 'modern-sdk' ? sdk! : server, keys, { connections: CONNECTIONS, seconds, era, messages: CONNECT[era] });
  };
  for (const s of series) await run(s, 3);
  for (let round = 0; round < ROUNDS; round++) {
    for (const s of series.map((_, i) => series[(i + round) % series.length]!)) {
      const sample = await run(s, SECONDS);
      if (sample.non2xx + sample.errors > 0) console.log(`  WARNING: ${sample.non2xx + sample.errors} failed requests in the ${s} connect run`);
      perConnect.get(s)!.push(sample.cpuUs * CONNECT[s === 'legacy' ? 'legacy' : 'modern'].length);
    }
  }
  await stopServer(server.child);
  if (sdk) await stopServer(sdk.child);
  const legacy = perConnect.get('legacy')!;
  const ratioText = (s: Series) => {
    const ratios = perConnect.get(s)!.map((m, i) => m / legacy[i]!).sort((x, y) => x - y);
    return { median: median(ratios), text: `${median(ratios).toFixed(2)} (rounds ${ratios[0]!.toFixed(2)}-${ratios.at(-1)!.toFixed(2)})` };
  };
  console.log(`
server CPU of one connect (unmetered, ${ROUNDS} rounds in a rotated order, median):`);
  console.log(`  2025 (initialize, notifications/initialized, tools/list):  ${median(legacy).toFixed(0)} us`);
  console.log(`  2026-07-28 (server/discover, tools/list):                  ${median(perConnect.get('modern')!).toFixed(0)} us`);
  if (sdk) console.log(`  2026-07-28 through the SDK's createMcpHandler (before):    ${median(perConnect.get('modern-sdk')!).toFixed(0)} us (another process)`);
  const modern = ratioText('modern');
  console.log(`  2026-07-28 / 2025 = ${modern.text}   (target <= 0.5: ${verdict(modern.median <= 0.5)})`);
  if (sdk) console.log(`  before: 2026-07-28 through the SDK / 2025 = ${ratioText('modern-sdk').text}   (processes differ: compare with care)`);
}

const UNMETERED = { CRYPTOMCP_BENCH_UNMETERED: '1' };

/** Issue 19's three throughput ratios, for each protocol generation; issue 32's, when those runs were made. */
function printProtocolRatios(summary: Map<string, Sample>, samples: Map<string, Sample[]>): void {
  const d = summary.get('d')!;
  const dq = summary.get('dq');
  if (dq) console.log(`  control: bare route + one PostgreSQL round trip / bare route = ${(dq.rps / d.rps).toFixed(2)}`);
  console.log('  issue 19, for each generation: metered/unmetered >= 0.85, unmetered/naive v2 SDK >= 3, metered/bare Fastify >= 0.35');
  for (const [era, suffix] of [
    ['2025', ''],
    ['2026-07-28', 'm'],
  ] as const) {
    const [x, y, z] = ['a', 'b', 'c'].map((l) => summary.get(l + suffix)!) as [Sample, Sample, Sample];
    console.log(
      `  ${era.padEnd(10)}  metered/unmetered ${(x.rps / y.rps).toFixed(2)} (${verdict(x.rps / y.rps >= 0.85)})   unmetered/naive ${(y.rps / z.rps).toFixed(2)} (${verdict(y.rps / z.rps >= 3)})   metered/bare ${(x.rps / d.rps).toFixed(2)} (${verdict(x.rps / d.rps >= 0.35)})`,
    );
  }
  const before = summary.get('as');
  const beforeUnmetered = summary.get('bs');
  if (before && beforeUnmetered) {
    const [x, y, z] = [before, beforeUnmetered, summary.get('cm')!];
    console.log(
      `  before: 2026-07-28 via the SDK  metered/unmetered ${(x.rps / y.rps).toFixed(2)}   unmetered/naive ${(y.rps / z.rps).toFixed(2)}   metered/bare ${(x.rps / d.rps).toFixed(2)}`,
    );
  }
  const a = summary.get('a')!;
  const am = summary.get('am')!;
  // CPU per metered tools/call, paired by round (the two run in one process, one after the other):
  // pairedRatio's 'cpu' is base's CPU over x's, here 2026-07-28's over 2025's.
  const cpu = pairedRatio(samples.get('a')!, samples.get('am')!, 'cpu');
  console.log(
    `  issue 32: server CPU per metered tools/call, 2026-07-28 ${am.cpuUs.toFixed(0)} us, 2025 ${a.cpuUs.toFixed(0)} us; 2026-07-28/2025 by round ${cpu.text}   (target <= 1: ${verdict(cpu.median <= 1)})`,
  );
  if (before) console.log(`    before (via the SDK, another process): ${before.cpuUs.toFixed(0)} us per metered tools/call; unmetered ${beforeUnmetered!.cpuUs.toFixed(0)} us (after: ${summary.get('bm')!.cpuUs.toFixed(0)} us)`);
  for (const [x, base, era] of [
    ['bx', 'b', '2025'],
    ['bmx', 'bm', '2026-07-28'],
  ] as const) {
    if (!samples.has(x)) continue;
    const throughput = pairedRatio(samples.get(x)!, samples.get(base)!, 'throughput');
    const byCpu = pairedRatio(samples.get(x)!, samples.get(base)!, 'cpu');
    console.log(`  issue 32: all-in-one / per-server, ${era.padEnd(10)} ${throughput.text}; by CPU per request ${byCpu.text}   (target >= 0.95: ${verdict(throughput.median >= 0.95)})`);
  }
}

async function observabilityRounds(databaseUrl: string, keys: string[], sinkPort: number): Promise<void> {
  const configs: { label: string; name: string; env: Record<string, string> }[] = [
    { label: 'e', name: 'as (b), observability off', env: { ...UNMETERED, METRICS_ENABLED: 'false' } },
    { label: 'e2', name: 'as (e): an A/A control', env: { ...UNMETERED, METRICS_ENABLED: 'false' } },
    { label: 'b', name: 'as (b): metrics on', env: UNMETERED },
    { label: 'f1', name: 'as (b), tracing 1% (default)', env: { ...UNMETERED, ...otlpTracing(sinkPort, 0.01) } },
    { label: 'f', name: 'as (f1), 10% sampled', env: { ...UNMETERED, ...otlpTracing(sinkPort, 0.1) } },
  ];
  const samples = new Map<string, Sample[]>(configs.map((c) => [c.label, []]));
  console.log(`\nobservability: ${OBS_ROUNDS} rounds, each of fresh processes (e, e2, b, f1, f), warmed up 3 s, driven ${SECONDS} s each in a rotated order`);
  for (let round = 0; round < OBS_ROUNDS; round++) {
    const started: (Pick<Target, 'port' | 'child'> & { label: string })[] = [];
    try {
      for (const c of configs) started.push({ label: c.label, ...(await startService(databaseUrl, c.env)) });
      for (const t of started) await load(t, keys, { seconds: 3 });
      const order = started.map((_, i) => started[(i + round) % started.length]!);
      for (const t of order) samples.get(t.label)!.push(await load(t, keys, { seconds: SECONDS }));
    } finally {
      for (const t of started) await stopServer(t.child);
    }
  }
  console.log('  run                              req/s     p50 ms   p99 ms   non-2xx  errors   server CPU us/req   (median of rounds)');
  for (const c of configs) printRow(c.label, c.name, summarize(samples.get(c.label)!));
  // The A/A control: (e) against its second process, whose spread is what one process's luck
  // (where its memory and threads landed) does to a ratio.
  const aa = (by: 'throughput' | 'cpu') => pairedRatio(samples.get('e2')!, samples.get('e')!, by).text;
  console.log(`  e2/e = ${aa('throughput')}; by CPU per request ${aa('cpu')}   (A/A control: the same configuration twice)`);
  // Every other run against both (e) processes of its round (their geometric mean): a baseline
  // that rests on two processes instead of one, so a slow or fast (e) moves the ratios half as much.
  const baseline = samples.get('e')!.map((e, i) => {
    const e2 = samples.get('e2')![i]!;
    return { ...e, rps: Math.sqrt(e.rps * e2.rps), cpuUs: Math.sqrt(e.cpuUs * e2.cpuUs) };
  });
  const paired = (x: string, by: 'throughput' | 'cpu') => pairedRatio(samples.get(x)!, baseline, by);
  console.log('  against (e) and (e2) together (each round: the geometric mean of the two), paired by round:');
  console.log(`  b/e = ${paired('b', 'throughput').text}; by CPU per request ${paired('b', 'cpu').text}   (metrics on vs off, tracing off)`);
  for (const [x, what] of [
    ['f1', 'metrics and tracing on vs off, tracing as the chart ships it: 1% sampled'],
    ['f', 'as f1/e, 10% of traces sampled'],
  ] as const) {
    const throughput = paired(x, 'throughput');
    const cpu = paired(x, 'cpu');
    console.log(`  ${x}/e = ${throughput.text}   (${what}; target >= 0.9: ${verdict(throughput.median >= 0.9)})`);
    console.log(`        by CPU per request ${cpu.text} (${verdict(cpu.median >= 0.9)})`);
  }
  console.log(`  OTLP bytes exported by the (f) and (f1) processes: ${await sinkBytes(sinkPort)}`);
}

async function main() {
  if (PIN) execFileSync('taskset', ['-p', '-c', OTHER_CORE, String(process.pid)], { stdio: 'ignore' });
  const { url: databaseUrl, db, root, embedded: pg, close } = await openBenchDatabase('cmcp-bench-');
  if (PG_PRIORITY && pg) {
    // The postmaster's pid is the first line of postmaster.pid; backends forked after this inherit it.
    const postmaster = fs.readFileSync(path.join(root, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]!.trim();
    execFileSync('renice', ['-n', '-10', '-p', postmaster], { stdio: 'ignore' });
  }
  try {
    // The OTLP endpoint for (f), in its own process (on the servers' core when pinned).
    const sink = await startReference(['bench/servers/otlp-sink.ts']);
    await migrate(db.pool);
    if (SYNC_COMMIT_OFF) {
      // Never on a server given by DATABASE_URL: the setting would outlive the bench there.
      if (!pg) throw new Error('BENCH_PG_SYNC_COMMIT=off works only with the embedded PostgreSQL (no DATABASE_URL)');
      // Per database, so sessions opened after this (the servers' pools) take it.
      const { rows } = await db.pool.query<{ db: string }>('SELECT current_database() AS db');
      await db.pool.query(`ALTER DATABASE "${rows[0]!.db}" SET synchronous_commit = off`);
    }
    await createBenchPlan(db, 'bench');
    const { keys } = await createBenchAccounts(db, { count: ACCOUNTS, plan: 'bench', walletTag: 'b', keys: true });
    if (ONLY_OBSERVABILITY) {
      console.log(`bench:gateway, observability rounds only (BENCH_ONLY=observability) — ${ACCOUNTS} accounts, ${CONNECTIONS} connections, ${os.cpus().length} cores`);
      await observabilityRounds(databaseUrl, keys, sink.port);
      return;
    }

    const targets: Target[] = [];
    const addService = async (label: string, name: string, env: Record<string, string> = {}) => {
      targets.push({ label, name, ...(await startService(databaseUrl, env)) });
    };
    const addReference = async (label: string, name: string, script: string) => {
      const { port, child } = await startReference([script]);
      targets.push({ label, name, port, child });
    };
    await addService('a', 'service, metering on');
    await addService('b', 'service, metering bypassed', UNMETERED);
    await addReference('c', 'naive v2 SDK per request', 'bench/servers/naive-sdk.ts');
    await addReference('d', 'bare Fastify JSON route', 'bench/servers/bare-fastify.ts');
    if (ONLY_PROTOCOL) {
      // The control for metered/bare: the bare route with one PostgreSQL round trip per request.
      const { port, child } = await startReference(['bench/servers/bare-fastify.ts', '--database', databaseUrl]);
      targets.push({ label: 'dq', name: 'bare route + SELECT 1', port, child });
    }
    // The same three processes, driven with 2026-07-28 messages.
    for (const [label, of, name] of [
      ['am', 'a', 'as (a), 2026-07-28'],
      ['bm', 'b', 'as (b), 2026-07-28'],
      ['cm', 'c', 'as (c), 2026-07-28'],
    ] as const) {
      const same = targets.find((t) => t.label === of)!;
      targets.push({ ...same, label, name, era: 'modern' });
    }
    if (ONLY_PROTOCOL) {
      // Before and after side by side: 2026-07-28 through the SDK's createMcpHandler, as on main before modern.ts.
      targets.push({ label: 'as', name: 'as (am), via the SDK (before)', era: 'modern', ...(await startService(databaseUrl, { CRYPTOMCP_BENCH_MODERN_SDK: '1' })) });
      targets.push({ label: 'bs', name: 'as (bm), via the SDK (before)', era: 'modern', ...(await startService(databaseUrl, { ...UNMETERED, CRYPTOMCP_BENCH_MODERN_SDK: '1' })) });
      // The all-in-one endpoint, in (b)'s own process: the same tool, the same checks, another URL.
      const b = targets.find((t) => t.label === 'b')!;
      targets.push({ ...b, label: 'bx', name: 'as (b), all-in-one /mcp', path: ALL_IN_ONE_PATH });
      targets.push({ ...b, label: 'bmx', name: 'as (bm), all-in-one /mcp', era: 'modern', path: ALL_IN_ONE_PATH });
    }

    console.log(`bench:gateway — ${ACCOUNTS} accounts, ${CONNECTIONS} connections, ${SECONDS}s x ${ROUNDS} interleaved rounds, ${os.cpus().length} cores`);
    if (PG_PRIORITY) console.log('PostgreSQL at nice -10 (BENCH_PG_PRIORITY=1): it does not wait for a core');
    if (SYNC_COMMIT_OFF) console.log('synchronous_commit = off (BENCH_PG_SYNC_COMMIT=off): commits do not wait for the WAL flush; a diagnosis only');
    console.log(PIN ? `pinned: servers on core ${SERVER_CORE}; PostgreSQL and the load generator on core ${OTHER_CORE}` : 'unpinned: servers, PostgreSQL and the load generator share every core (BENCH_PIN=1 separates them)');
    for (const t of targets) await load(t, keys, { seconds: 3 }); // warm-up: JIT, key cache, pool
    const samples = new Map<string, Sample[]>(targets.map((t) => [t.label, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const t of targets) samples.get(t.label)!.push(await load(t, keys, { seconds: SECONDS }));
    }
    const summary = new Map<string, Sample>();
    console.log('\nmaximum load (median of rounds)');
    console.log('  run                              req/s     p50 ms   p99 ms   non-2xx  errors   server CPU us/req');
    for (const t of targets) {
      const m = summarize(samples.get(t.label)!);
      summary.set(t.label, m);
      printRow(t.label, t.name, m);
    }
    const a = summary.get('a')!;
    const b = summary.get('b')!;
    const c = summary.get('c')!;
    if (ONLY_PROTOCOL) {
      console.log('\nratios');
      printProtocolRatios(summary, samples);
      for (const t of targets) if (t.child.exitCode === null) await stopServer(t.child);
      await connectCost(databaseUrl, keys, true);
      return;
    }

    // Half load is paced request by request (bench/support/paced.ts): autocannon's overallRate
    // sends each second's quota back to back and then idles, so its "half load" p99 was the
    // saturated p99. Beside (a) and (b) run two controls at the same rate, each round:
    //   (b2) a second process of (b): the A/A control, what a p99 difference here can resolve;
    //   (d+db) the bare route of (d) with one PostgreSQL round trip per request (SELECT 1): the
    //   floor under what any per-request check in the database adds to p99 on this machine, which
    //   DESIGN.md's metering (one statement per request) cannot go below.
    const half = Math.max(1, Math.floor(a.rps / 2));
    const b2: Target = { label: 'b2', name: 'as (b): an A/A control', ...(await startService(databaseUrl, UNMETERED)) };
    const dbFloor: Target = { label: 'd+db', name: 'bare route + SELECT 1', ...(await startReference(['bench/servers/bare-fastify.ts', '--database', databaseUrl])) };
    for (const t of [b2, dbFloor]) await load(t, keys, { seconds: 3 });
    const halfRuns: Target[] = [targets[0]!, targets[1]!, b2, targets[3]!, dbFloor];
    const halfSamples = new Map<Target, PacedSample[]>(halfRuns.map((t) => [t, []]));
    const METRIC = 'cryptomcp_metering_reserve_duration_seconds';
    const BATCH = 'cryptomcp_metering_batch_duration_seconds';
    const CALLS = 'cryptomcp_metering_batch_calls';
    const before = await histogram(targets[0]!.metricsPort!, METRIC);
    const batchBefore = await histogram(targets[0]!.metricsPort!, BATCH);
    const callsBefore = await histogram(targets[0]!.metricsPort!, CALLS);
    const paced = gatewayRequests(keys);
    for (let round = 0; round < ROUNDS; round++) {
      // In an order rotated by round, as the observability rounds are.
      const order = halfRuns.map((_, i) => halfRuns[(i + round) % halfRuns.length]!);
      for (const t of order) halfSamples.get(t)!.push(await pacedLoad(t, paced, { rate: half, seconds: SECONDS, connections: CONNECTIONS * 2 }));
    }
    const after = await histogram(targets[0]!.metricsPort!, METRIC);
    const batchAfter = await histogram(targets[0]!.metricsPort!, BATCH);
    const callsAfter = await histogram(targets[0]!.metricsPort!, CALLS);
    // Paired by round, like the throughput ratios: the median of each round's p99 difference.
    const p99Delta = (x: Target, y: Target) => {
      const ys = halfSamples.get(y)!;
      const deltas = halfSamples.get(x)!.map((s, i) => s.p99 - ys[i]!.p99).sort((p, q) => p - q);
      return { median: median(deltas), text: `${median(deltas).toFixed(1)} ms (rounds ${deltas[0]!.toFixed(1)} to ${deltas[deltas.length - 1]!.toFixed(1)})` };
    };
    const row = (t: Target, xs: PacedSample[]) =>
      `  ${`(${t.label}) ${t.name}`.padEnd(35)} p50 ${median(xs.map((x) => x.p50)).toFixed(1)} ms  p99 ${median(xs.map((x) => x.p99)).toFixed(1)} ms (rounds ${Math.min(...xs.map((x) => x.p99)).toFixed(1)}-${Math.max(...xs.map((x) => x.p99)).toFixed(1)})  p99.9 ${median(xs.map((x) => x.p999)).toFixed(1)} ms  server CPU ${median(xs.map((x) => x.cpuUs)).toFixed(0)} us/req  load generator late by <= ${median(xs.map((x) => x.sendLagP99)).toFixed(1)} ms at p99  failed ${xs.reduce((n, x) => n + x.errors + x.non2xx, 0)}`;
    console.log(`\nat half of (a)'s maximum: ${half} req/s, paced (open loop; latency counted from each request's due time), ${ROUNDS} rounds`);
    for (const t of halfRuns) console.log(row(t, halfSamples.get(t)!));
    const serverP50 = quantile(before, after, 0.5) * 1000;
    const serverP99 = quantile(before, after, 0.99) * 1000;
    console.log(`  time in metering, measured in (a) itself (${METRIC}): p50 <= ${serverP50} ms, p99 <= ${serverP99} ms`);
    console.log(
      `    of which the PostgreSQL round trip (${BATCH}): p50 <= ${quantile(batchBefore, batchAfter, 0.5) * 1000} ms, p99 <= ${quantile(batchBefore, batchAfter, 0.99) * 1000} ms; calls per round trip p50 <= ${quantile(callsBefore, callsAfter, 0.5)}`,
    );

    console.log('\nratios');
    printProtocolRatios(summary, samples);
    const metering = p99Delta(targets[0]!, targets[1]!);
    console.log(`  metering p99 cost at half load, end to end (a - b) = ${metering.text}   (target <= 2 ms: ${verdict(metering.median <= 2)})`);
    console.log(`    A/A control (b2 - b) = ${p99Delta(b2, targets[1]!).text}   (what a p99 difference resolves on this machine)`);
    console.log(`    one PostgreSQL round trip per request (d+db - d) = ${p99Delta(dbFloor, targets[3]!).text}   (the floor under metering's cost)`);
    console.log(`  metering p99 cost at half load, in the server     <= ${serverP99} ms   (target <= 2 ms: ${verdict(serverP99 <= 2)})`);
    console.log(`  a/b by CPU per request ${(b.cpuUs / a.cpuUs).toFixed(2)}; b/c by CPU per request ${(c.cpuUs / b.cpuUs).toFixed(2)}`);
    if ([...summary.values()].some((x) => x.non2xx + x.errors > 0)) console.log('  WARNING: some requests failed; see the non-2xx and errors columns');

    // Observability's cost (issue 6), in rounds of fresh processes: two processes of one build
    // and configuration differ by several percent for the whole of their lives (measured: four
    // identical processes, paired over 6 rounds, medians 0.92-1.00 and single rounds 0.87-1.09),
    // so one process per configuration would measure that luck as much as the configuration.
    // Each round starts one process of each configuration, warms them up, drives them in an
    // order rotated by round and stops them. (e2) is (e) again, an A/A control: its ratio to (e)
    // is what this measurement resolves.
    for (const t of [...targets, b2, dbFloor]) if (t.child.exitCode === null) await stopServer(t.child);
    await connectCost(databaseUrl, keys, false);
    await observabilityRounds(databaseUrl, keys, sink.port);
  } finally {
    cleanup();
    await close();
  }
}

await main();
