// npm run measure:tool-cpu — how long each offline tool's handler holds the thread on the snapshot
// (no database, no network): the measurement that decides which tools run in the compute pool
// (server/compute/). Each handler runs once to warm up, then BENCH_RUNS (5) times; the median is
// printed, slowest first. Tools that need a chain node or a database are left out: they wait on
// I/O, not the CPU.
import { offlineDeps } from '../scripts/offline-registry.ts';
import { serverModules } from '../server/servers/index.ts';
import { SERVER_NAMES } from '../server/mcp/names.ts';
import type { ServerDeps } from '../server/servers/deps.ts';
import type { ToolContext } from '../server/mcp/tool.ts';

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
  get_correlation_matrix: { assets: ['bitcoin', 'ethereum', 'solana', 'binancecoin', 'ripple', 'cardano', 'dogecoin', 'tron', 'chainlink', 'polkadot'], window_days: 1825 },
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
  get_tvl_history: { project: 'aave' },
  compare_projects: { projects: ['aave', 'lido', 'uniswap', 'makerdao', 'curve-dex'] },
  get_category_overview: {},
  get_chain_overview: { chain: 'Ethereum' },
  due_diligence_report: { project: 'aave' },
};

const deps: ServerDeps = {
  ...offlineDeps(),
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

const rows: { tool: string; ms: number; note: string }[] = [];
for (const [key, raw] of Object.entries(ARGS)) {
  const name = key === 'rank_kols_reddit' ? 'rank_kols' : key;
  const mod = modules.find((m) => m.tools.some((t) => t.name === name));
  const tool = mod?.tools.find((t) => t.name === name);
  if (!mod || !tool) {
    rows.push({ tool: key, ms: NaN, note: 'not found' });
    continue;
  }
  const args = tool.input.parse(raw);
  try {
    await tool.handler(args, ctx(mod.name));
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      await tool.handler(args, ctx(mod.name));
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    rows.push({ tool: key, ms: times[Math.floor(times.length / 2)]!, note: `max ${times[times.length - 1]!.toFixed(1)} ms` });
  } catch (err) {
    rows.push({ tool: key, ms: NaN, note: `failed: ${(err as Error).message}` });
  }
}
rows.sort((a, b) => (Number.isNaN(b.ms) ? -1 : b.ms) - (Number.isNaN(a.ms) ? -1 : a.ms));
console.log(`measure:tool-cpu — median handler time of ${RUNS} warm runs on the snapshot (${process.version})`);
for (const r of rows) console.log(`${r.tool.padEnd(30)} ${Number.isNaN(r.ms) ? '     –' : r.ms.toFixed(1).padStart(8)} ms  ${r.note}`);
