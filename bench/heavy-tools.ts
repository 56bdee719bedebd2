// npm run bench:heavy-tools — what five concurrent backtest_forecast calls do to everything else
// a process serves (issue 30, "heavy work off the event loop"), with the compute pool and inline
// (COMPUTE_WORKERS=0: the same code on the event loop, as before the pool), side by side in one
// run. Each round starts a fresh `cryptomcp serve` per mode (in an order that alternates by round)
// and, while one account's five backtests run, probes it open-loop: GET /healthz every
// BENCH_PROBE_MS (20) and an unrelated cheap tool (get_prices, another account) every 4th tick,
// each probe's latency counted from its due time (a stalled loop delays every probe due during
// the stall, which a closed loop would hide). It prints each mode's p50/p99/max of both probes,
// probes over 1 s (a liveness probe's usual timeout), the backtests' makespan and the ratios
// inline/pool. BENCH_ROUNDS (3), BENCH_ORIGINS (30: backtest_forecast's default),
// BENCH_WORKERS (the pool's thread count; default: the service's own default).
import { migrate } from '../server/db/migrate.ts';
import { createBenchAccounts, createBenchPlan } from './support/accounts.ts';
import { openBenchDatabase } from './support/database.ts';
import { quantile } from './support/timing.ts';
import { spawnServer, stopServer } from '../test/helpers/process.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ORIGINS = Number(process.env.BENCH_ORIGINS ?? 30);
const PROBE_MS = Number(process.env.BENCH_PROBE_MS ?? 20);
const WORKERS = process.env.BENCH_WORKERS;
const CALLS = 5;

type Mode = 'pool' | 'inline';

interface Run {
  healthz: number[];
  cheap: number[];
  failed: { healthz: number; cheap: number };
  makespanMs: number;
  backtestsOk: number;
  /** How the backtests that failed were answered. */
  errors: string[];
  threads: string;
}

const accept = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const call = (name: string, args: Record<string, unknown>, id: string) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

async function runMode(databaseUrl: string, mode: Mode, heavyKey: string, cheapKey: string): Promise<Run> {
  const env: Record<string, string> = { TOOL_TIMEOUT_MS: '300000' };
  if (mode === 'inline') env.COMPUTE_WORKERS = '0';
  else if (WORKERS) env.COMPUTE_WORKERS = WORKERS;
  const server = await spawnServer(databaseUrl, env);
  try {
    const threads = (await (await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`)).text()).match(/^cryptomcp_compute_threads_max (\S+)/m)?.[1] ?? '?';
    // Warm both paths once (JIT, the snapshot's series, a worker thread) so the round measures the stall.
    await fetch(`${server.url}/mcp/price-prediction`, { method: 'POST', headers: { ...accept, 'x-api-key': heavyKey }, body: call('backtest_forecast', { asset: 'bitcoin', origins: 5 }, 'warm') }).then((r) => r.arrayBuffer());
    await fetch(`${server.url}/mcp/market-intelligence`, { method: 'POST', headers: { ...accept, 'x-api-key': cheapKey }, body: call('get_prices', { assets: ['bitcoin'] }, 'warm') }).then((r) => r.arrayBuffer());

    const healthz: number[] = [];
    const cheap: number[] = [];
    // Probes that got no answer at all (the client's 10 s connect timeout): counted at the time they failed.
    const failed = { healthz: 0, cheap: 0 };
    const probes: Promise<void>[] = [];
    let done = false;
    const errors: string[] = [];
    const t0 = performance.now();
    const backtests = Promise.all(
      Array.from({ length: CALLS }, (_, i) =>
        fetch(`${server.url}/mcp/price-prediction`, { method: 'POST', headers: { ...accept, 'x-api-key': heavyKey }, body: call('backtest_forecast', { asset: 'bitcoin', origins: ORIGINS }, `bt-${i}`) }).then(
          async (r) => {
            const body = (await r.json()) as { result?: { structuredContent?: { success?: boolean } }; error?: { code?: string } };
            if (r.status === 200 && body.result?.structuredContent?.success === true) return true;
            errors.push(`${r.status} ${body.error?.code ?? JSON.stringify(body).slice(0, 80)}`);
            return false;
          },
        ),
      ),
    ).finally(() => (done = true));
    let tick = 0;
    const timer = setInterval(() => {
      if (done) return;
      const due = performance.now();
      probes.push(
        fetch(`${server.url}/healthz`)
          .then((r) => r.arrayBuffer())
          .then(
            () => void healthz.push(performance.now() - due),
            () => void (healthz.push(performance.now() - due), failed.healthz++),
          ),
      );
      if (tick++ % 4 === 0) {
        probes.push(
          fetch(`${server.url}/mcp/market-intelligence`, { method: 'POST', headers: { ...accept, 'x-api-key': cheapKey }, body: call('get_prices', { assets: ['bitcoin'] }, `p-${tick}`) })
            .then((r) => r.arrayBuffer())
            .then(
              () => void cheap.push(performance.now() - due),
              () => void (cheap.push(performance.now() - due), failed.cheap++),
            ),
        );
      }
    }, PROBE_MS);
    const ok = await backtests;
    const makespanMs = performance.now() - t0;
    clearInterval(timer);
    await Promise.all(probes);
    return { healthz, cheap, failed, makespanMs, backtestsOk: ok.filter(Boolean).length, errors, threads };
  } finally {
    await stopServer(server.child);
  }
}

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: quantile(s, 0.5), p99: quantile(s, 0.99), max: s[s.length - 1] ?? NaN, over1s: s.filter((x) => x > 1000).length, n: s.length };
};
const ms = (x: number) => `${x.toFixed(x < 10 ? 1 : 0)}`.padStart(6);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const bench = await openBenchDatabase('cryptomcp-heavy-');
try {
  await migrate(bench.db.pool);
  await createBenchPlan(bench.db, 'bench');
  const { keys } = await createBenchAccounts(bench.db, { count: 2, plan: 'bench', walletTag: 'c', keys: true });
  const [heavyKey, cheapKey] = keys as [string, string];
  console.log(
    `bench:heavy-tools — ${CALLS} concurrent backtest_forecast (bitcoin, origins ${ORIGINS}, one account) beside /healthz every ${PROBE_MS} ms and get_prices (another account) every ${PROBE_MS * 4} ms, open loop; ${ROUNDS} rounds; ${process.version}, ${(await import('node:os')).availableParallelism()} cores`,
  );
  console.log('round mode    threads  healthz p50   p99   max  >1s fail   cheap p50   p99   max  >1s fail   backtests makespan');
  const results: Record<Mode, Run[]> = { pool: [], inline: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const order: Mode[] = round % 2 === 0 ? ['inline', 'pool'] : ['pool', 'inline'];
    for (const mode of order) {
      const run = await runMode(bench.url, mode, heavyKey, cheapKey);
      results[mode].push(run);
      const h = stats(run.healthz);
      const c = stats(run.cheap);
      console.log(
        `${String(round + 1).padStart(5)} ${mode.padEnd(7)} ${run.threads.padStart(7)}  ${ms(h.p50)} ${ms(h.p99)} ${ms(h.max)} ${String(h.over1s).padStart(4)}/${h.n} ${String(run.failed.healthz).padStart(3)}   ${ms(c.p50)} ${ms(c.p99)} ${ms(c.max)} ${String(c.over1s).padStart(4)}/${c.n} ${String(run.failed.cheap).padStart(3)}   ${run.backtestsOk}/${CALLS} ok ${(run.makespanMs / 1000).toFixed(1)} s${run.errors.length ? ` (failed: ${run.errors.join(', ')})` : ''}`,
      );
    }
  }
  const med = (mode: Mode, pick: (r: Run) => number) => median(results[mode].map(pick));
  const p99h = (r: Run) => stats(r.healthz).p99;
  const p99c = (r: Run) => stats(r.cheap).p99;
  const maxh = (r: Run) => stats(r.healthz).max;
  console.log('\nmedians over rounds            inline      pool   inline/pool');
  for (const [label, pick] of [
    ['/healthz p99 (ms)', p99h],
    ['/healthz max (ms)', maxh],
    ['get_prices p99 (ms)', p99c],
    ['backtests makespan (ms)', (r: Run) => r.makespanMs],
  ] as const) {
    const a = med('inline', pick);
    const b = med('pool', pick);
    console.log(`${label.padEnd(28)} ${ms(a).padStart(8)} ${ms(b).padStart(9)}   ${(a / b).toFixed(1).padStart(8)}×`);
  }
} finally {
  await bench.close();
}
