// npm run measure:tool-cpu — how long each offline tool's handler holds the thread on the snapshot
// (no database, no network): the measurement that decides which tools run in the compute pool
// (server/compute/). Each handler runs once to warm up, then BENCH_RUNS (5) times; the median of
// its wall time and of the main thread's own CPU time (process.threadCpuUsage) is printed,
// slowest first. By default the compute pool runs inline (all work on this thread, as before the
// pool); MEASURE_POOL=1 gives the tools a real worker pool, and the CPU column then shows what
// stays on the event loop. Tools that need a chain node or a database are left out: they wait on
// I/O, not the CPU.
import { offlineDeps } from '../scripts/offline-registry.ts';
import { serverModules } from '../server/servers/index.ts';
import { SERVER_NAMES } from '../server/mcp/names.ts';
import type { ServerDeps } from '../server/servers/deps.ts';
import type { ToolContext } from '../server/mcp/tool.ts';
import { createComputePool } from '../server/compute/pool.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);

// Typical arguments of each tool (defaults fill the rest); tools absent here are not measured.
const ARGS: Record<string, Record<string, unknown>> = {
  forecast_price: { asset: 'bitcoin' },
  backtest_forecast: { asset: 'bitcoin' },
  get_volatility_forecast: { asset: 'bitcoin' },
  get_prediction_track_record: { asset: 'bitcoin' },
  get_technical_indicators: { asset: 'bitcoin' },
  get_trading_signal: { asset: 'bitcoin' },
  get_support_resistance: { asset: 'bitcoin' },
  scenario_analysis: { asset: 'ethereum' },
  get_prices: { assets: ['bitcoin', 'ethereum', 'solana'] },
  get_ohlcv: { asset: 'bitcoin' },
  get_market_overview: {},
  get_top_movers: {},
  get_asset_metrics: { asset: 'ethereum' },
  get_correlation_matrix: { assets: ['bitcoin', 'ethereum', 'solana', 'binancecoin', 'ripple', 'cardano', 'dogecoin', 'tron', 'chainlink', 'polkadot'] },
  get_social_sentiment: { asset: 'bitcoin', days: 365 },
  get_social_volume: { asset: 'bitcoin', days: 365 },
  get_trending_topics: { days: 30 },
  detect_social_spike: { asset: 'bitcoin', days: 365 },
  get_top_posts: { asset: 'bitcoin', days: 365 },
  get_kol_profile: { handle: 'coindesk' },
  get_kol_calls: { handle: 'coindesk' },
  get_kol_performance: { handle: 'coindesk' },
  rank_kols: {},
  rank_kols_reddit: { platform: 'reddit', min_calls: 1 },
  get_asset_kol_mentions: { asset: 'bitcoin' },
  search_projects: { query: 'a' },
  get_project_profile: { project: 'aave' },
  get_tvl_history: { total: true },
  compare_projects: { projects: ['aave', 'lido', 'uniswap', 'makerdao', 'curve-dex'] },
  get_category_overview: {},
  get_chain_overview: { chain: 'Ethereum' },
  due_diligence_report: { project: 'aave' },
  // The same tools at the costliest arguments their schemas allow.
  'backtest_forecast max': { asset: 'bitcoin', origins: 100, window_days: 730, horizon: 30 },
  'forecast_price max': { asset: 'bitcoin', horizon: 30 },
  'get_trading_signal max': { asset: 'bitcoin', replay_days: 1000, horizon_days: 30 },
  'get_volatility_forecast max': { asset: 'bitcoin', window_days: 3650, horizon: 30 },
  'get_asset_metrics max': { asset: 'ethereum', window_days: 3650 },
  'get_correlation_matrix max': { assets: ['bitcoin', 'ethereum', 'ripple', 'litecoin', 'monero', 'dash'], window_days: 1825 },
  'scenario_analysis max': { asset: 'ethereum', window_days: 1825 },
  'get_trending_topics max': { days: 34, min_mentions: 1 },
  'get_social_sentiment max': { asset: 'bitcoin', days: 3650 },
  'get_social_volume max': { days: 3650 },
  'detect_social_spike max': { days: 3650 },
  'get_top_posts max': { asset: 'bitcoin', days: 3650, kind: 'all' },
};

const POOL = process.env.MEASURE_POOL === '1';
const compute = POOL ? createComputePool({ workers: 1, accountShare: 1, accountQueue: 8, queue: 8 }) : offlineDeps().compute;
const deps: ServerDeps = {
  ...offlineDeps(),
  compute,
  forecasts: { record: async () => {}, matured: async () => [] } as unknown as ServerDeps['forecasts'],
};
const modules = serverModules({ servers: SERVER_NAMES, deps });
const ctx = (server: string): ToolContext => ({
  requestId: 'measure',
  server: server as ToolContext['server'],
  account: { id: 'measure', plan: 'measure' },
  signal: new AbortController().signal,
  usage: { usage: async () => { throw new Error('no usage offline'); } },
  tools: [],
});

const rows: { tool: string; ms: number; cpu: number; note: string }[] = [];
for (const [key, raw] of Object.entries(ARGS)) {
  const name = key === 'rank_kols_reddit' ? 'rank_kols' : key.replace(/ max$/, '');
  const mod = modules.find((m) => m.tools.some((t) => t.name === name));
  const tool = mod?.tools.find((t) => t.name === name);
  if (!mod || !tool) {
    rows.push({ tool: key, ms: NaN, cpu: NaN, note: 'not found' });
    continue;
  }
  const args = tool.input.parse(raw);
  try {
    await tool.handler(args, ctx(mod.name));
    const times: number[] = [];
    const cpus: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      const c0 = process.threadCpuUsage();
      await tool.handler(args, ctx(mod.name));
      const c = process.threadCpuUsage(c0);
      times.push(performance.now() - t0);
      cpus.push((c.user + c.system) / 1000);
    }
    times.sort((a, b) => a - b);
    cpus.sort((a, b) => a - b);
    rows.push({ tool: key, ms: times[Math.floor(times.length / 2)]!, cpu: cpus[Math.floor(cpus.length / 2)]!, note: `max ${times[times.length - 1]!.toFixed(1)} ms` });
  } catch (err) {
    rows.push({ tool: key, ms: NaN, cpu: NaN, note: `failed: ${(err as Error).message}` });
  }
}
rows.sort((a, b) => (Number.isNaN(b.ms) ? -1 : b.ms) - (Number.isNaN(a.ms) ? -1 : a.ms));
console.log(`measure:tool-cpu — median of ${RUNS} warm runs per tool on the snapshot, compute pool ${POOL ? 'on 1 worker thread' : 'inline'} (${process.version})`);
console.log(`${'tool'.padEnd(30)}     wall  main-thread CPU`);
const num = (x: number) => (Number.isNaN(x) ? '–' : x.toFixed(1)).padStart(8);
for (const r of rows) console.log(`${r.tool.padEnd(30)} ${num(r.ms)} ms ${num(r.cpu)} ms  ${r.note}`);
await compute.close();
