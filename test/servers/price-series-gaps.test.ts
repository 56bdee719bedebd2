// Guarantee (issue 35, item 1): a price series with a break is a series with a break. Every return,
// volatility, drawdown, correlation, indicator, signal replay and forecast is taken on the last
// contiguous run, the answer says so in metadata.notes and reports the days it used; a break older
// than what an answer needs is not mentioned. AAVE's snapshot prices jump from 2021-12-30 to
// 2023-11-24 (693 missing days): one "daily" return across it gave 136.5% volatility over 1460
// days. Over the real gateway and the MCP SDK client, expectations recomputed here from the
// snapshot's closes (the contiguous run found by checking each day follows the one before).
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forecast } from '../../server/analytics/forecast.ts';
import { loadSnapshot } from '../../server/providers/market/snapshot.ts';
import { fixtureCandle, fixtureDays, fixtureHolding, fixtureMarket } from '../helpers/held-market.ts';
import { mcpClient } from '../helpers/service.ts';
import { toolSuite, type Envelope, type ToolSuite } from '../helpers/tools.ts';

type Noted<T> = Envelope<T> & { metadata: { notes?: string[] } };

let suite: ToolSuite;
let clients: Record<string, Client>;

beforeAll(async () => {
  suite = await toolSuite('market-intelligence', 100_000);
  clients = {
    'market-intelligence': suite.client,
    'price-prediction': await mcpClient(suite.svc.url, 'price-prediction', suite.key),
    'project-intelligence': await mcpClient(suite.svc.url, 'project-intelligence', suite.key),
  };
});
afterAll(async () => {
  await clients?.['price-prediction']?.close();
  await clients?.['project-intelligence']?.close();
  await suite?.close();
});

async function call<T>(server: string, name: string, args: Record<string, unknown>): Promise<Noted<T>> {
  const res = await clients[server]!.callTool({ name, arguments: args });
  if (res.isError) throw new Error(`${name}: ${JSON.stringify(res.content)}`);
  const answer = res.structuredContent as Noted<T>;
  // Every snapshot answer is stale, which its first note says (test/mcp/envelope.test.ts); these tests are about breaks.
  const notes = answer.metadata.notes?.filter((n) => !n.startsWith('Stale data:'));
  return { ...answer, metadata: { ...answer.metadata, notes: notes?.length ? notes : undefined } };
}

const snapshot = loadSnapshot();
function closes(id: string) {
  const s = snapshot.series[id]!;
  return s.dates.map((date, i) => ({ date, close: s.close[i]! }));
}
const DAY = 86_400_000;
/** The candles after the last day that does not follow its predecessor by exactly one day. */
function run(id: string) {
  const all = closes(id);
  let start = 0;
  for (let i = 1; i < all.length; i++) if (Date.parse(all[i]!.date) - Date.parse(all[i - 1]!.date) !== DAY) start = i;
  return all.slice(start);
}
const logReturns = (xs: readonly number[]) => xs.slice(1).map((x, i) => Math.log(x / xs[i]!));
const std = (xs: readonly number[]) => {
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  return Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1));
};

const aave = run('aave');
const AAVE_NOTE = /^AAVE has no data from 2021-12-31 to 2023-11-23 \(693 days\); figures use only the contiguous data after it: 2023-11-24 to 2024-11-22, (\d+) days\./;

describe('market-intelligence on a series with a break', () => {
  it('get_asset_metrics AAVE over 1460 days: volatility, drawdown and Sharpe on the run from 2023-11-24 only, days = returns used, the break in notes', async () => {
    expect(aave[0]!.date).toBe('2023-11-24');
    expect(closes('aave')[0]!.date).toBe('2021-01-01');
    const env = await call<{
      window: { from: string; to: string; days: number };
      realised_volatility: { annualised: number; observations: number; from: string };
      max_drawdown: { peak: { date: string } };
      returns: { observations: number };
      vs_benchmark: { from: string; observations: number };
      all_time_high: { ath: { date: string } };
    }>('market-intelligence', 'get_asset_metrics', { asset: 'aave', window_days: 1460 });
    const returns = logReturns(aave.map((c) => c.close));
    expect(returns).toHaveLength(364);
    expect(env.data.realised_volatility.annualised).toBeCloseTo(std(returns) * Math.sqrt(365), 12);
    // With the one return across the break the figure was 136.5%.
    expect(env.data.realised_volatility.annualised).toBeLessThan(1.2);
    expect(env.data.realised_volatility).toMatchObject({ observations: 364, from: '2023-11-24' });
    expect(env.data.window).toEqual({ from: '2023-11-24', to: '2024-11-22', days: 364 });
    expect(env.data.returns.observations).toBe(364);
    expect(env.data.max_drawdown.peak.date >= '2023-11-24').toBe(true);
    expect(env.data.vs_benchmark.from >= '2023-11-24').toBe(true);
    // The all-time high is a level: over all the data (AAVE's is in 2021), and the note says so.
    expect(env.data.all_time_high.ath.date < '2022-01-01').toBe(true);
    expect(env.metadata.notes).toHaveLength(1);
    expect(env.metadata.notes![0]).toMatch(AAVE_NOTE);
    expect(env.metadata.notes![0]!.match(AAVE_NOTE)![1]).toBe('364');
  });

  it('a break older than the window is not mentioned: ETH (break in 2017) over 365 days has no notes', async () => {
    const env = await call<{ window: { days: number } }>('market-intelligence', 'get_asset_metrics', { asset: 'eth', window_days: 365 });
    expect(env.data.window.days).toBe(365);
    expect(env.metadata.notes ?? []).toEqual([]);
  });

  it('get_correlation_matrix correlates AAVE and BTC on the run only, and refuses a window reaching across the break, naming it', async () => {
    const env = await call<{ matrix: number[][]; overlapping_days: number[][]; window: { from: string } }>('market-intelligence', 'get_correlation_matrix', {
      assets: ['aave', 'btc'],
      window_days: 300,
    });
    expect(env.data.window.from >= '2023-11-24').toBe(true);
    const btc = new Map(closes('bitcoin').map((c) => [c.date, c.close]));
    const days = aave.filter((c) => c.date >= env.data.window.from);
    const a = logReturns(days.map((c) => c.close));
    const b = logReturns(days.map((c) => btc.get(c.date)!));
    const ma = a.reduce((x, y) => x + y, 0) / a.length;
    const mb = b.reduce((x, y) => x + y, 0) / b.length;
    const cov = a.reduce((s, x, i) => s + (x - ma) * (b[i]! - mb), 0);
    const r = cov / Math.sqrt(a.reduce((s, x) => s + (x - ma) ** 2, 0) * b.reduce((s, y) => s + (y - mb) ** 2, 0));
    expect(env.data.matrix[0]![1]).toBeCloseTo(r, 12);
    await expect(call('market-intelligence', 'get_correlation_matrix', { assets: ['aave', 'btc'], window_days: 1000 })).rejects.toThrow(
      'aave (after a break in its prices from 2021-12-30 to 2023-11-24) start later than 2022-02-26',
    );
  });

  it('get_ohlcv over a range with the break says so beside the candles', async () => {
    const env = await call<{ candles: { date: string }[] }>('market-intelligence', 'get_ohlcv', { asset: 'aave', from: '2021-12-25', to: '2023-11-30' });
    expect(env.data.candles.map((c) => c.date)).toContain('2023-11-24');
    expect(env.metadata.notes).toEqual([
      'AAVE has no candles from 2021-12-31 to 2023-11-23 (693 days) in this range.',
      // The run after the break is Binance's AAVE/USDT pair only, before it CoinGecko's aggregate (issue 35 item 7).
      "AAVE's volumes here count different things: from 2021-12-25 snapshot:coingecko, from 2023-11-24 snapshot:binance (volume_sources says what each counts); a step in volume where the source changes is not a change in trading.",
    ]);
  });
});

describe('price-prediction on a series with a break', () => {
  it('forecast_price AAVE 30 days is the model on the run (not on the series with the break), with the note', async () => {
    const env = await call<{ base_date: string; forecast: { p80: [number, number]; point: number }[] }>('price-prediction', 'forecast_price', { asset: 'aave', horizon: 30 });
    const onRun = forecast(aave.map((c) => c.close), { horizon: 30, model: 'auto' }).steps.at(-1)!;
    const last = env.data.forecast.at(-1)!;
    expect(last.point).toBeCloseTo(onRun.point, 9);
    expect(last.p80[0]).toBeCloseTo(onRun.intervals[80]![0], 9);
    expect(last.p80[1]).toBeCloseTo(onRun.intervals[80]![1], 9);
    // With the break in the fit the 80% band was [85.9, 329.1] around 168.
    expect(last.p80[1] / last.p80[0]).toBeLessThan(329.1 / 85.9);
    expect(env.metadata.notes).toHaveLength(1);
    expect(env.metadata.notes![0]).toMatch(AAVE_NOTE);
  });

  it('get_trading_signal AAVE replaying 1000 days replays only days with 300 days of the run behind them, and says so', async () => {
    const env = await call<{ historical_hit_rate: { from: string; to: string; days_evaluated: number }; signal: { as_of: string } }>('price-prediction', 'get_trading_signal', {
      asset: 'aave',
      replay_days: 1000,
      horizon_days: 7,
    });
    const hr = env.data.historical_hit_rate;
    // The first replayed day has the rule's 300 days of history inside the run (itself included):
    // none of its SMA200 reaches into 2021.
    expect(hr.from).toBe(aave[299]!.date);
    expect(hr.days_evaluated).toBe(aave.length - 300 - 7 + 1);
    expect(env.metadata.notes![0]).toMatch(AAVE_NOTE);
  });

  it('get_technical_indicators AAVE uses the 365 candles of the run, not 600 reaching into 2021', async () => {
    const env = await call<{ indicators: { candles_used: number } }>('price-prediction', 'get_technical_indicators', { asset: 'aave' });
    expect(env.data.indicators.candles_used).toBe(aave.length);
    expect(env.metadata.notes![0]).toMatch(AAVE_NOTE);
  });

  it('get_volatility_forecast AAVE over 1000 days fits the 364 returns of the run', async () => {
    const env = await call<{ returns_used: number }>('price-prediction', 'get_volatility_forecast', { asset: 'aave', window_days: 1000 });
    expect(env.data.returns_used).toBe(364);
    expect(env.metadata.notes![0]!.match(AAVE_NOTE)![1]).toBe('364');
  });

  it('scenario_analysis AAVE over 1000 days estimates beta on the run only', async () => {
    const env = await call<{ beta: { from: string; observations: number } }>('price-prediction', 'scenario_analysis', { asset: 'aave', window_days: 1000 });
    expect(env.data.beta.from).toBe('2023-11-24');
    expect(env.data.beta.observations).toBe(364);
    expect(env.metadata.notes![0]).toMatch(AAVE_NOTE);
  });

  it('get_support_resistance over a window inside the run has no note; one reaching into the break has it', async () => {
    const inside = await call<unknown>('price-prediction', 'get_support_resistance', { asset: 'aave', window_days: 300 });
    expect(inside.metadata.notes ?? []).toEqual([]);
    const across = await call<unknown>('price-prediction', 'get_support_resistance', { asset: 'aave', window_days: 365 });
    expect(across.metadata.notes![0]).toMatch(AAVE_NOTE);
  });
});

describe('project-intelligence on a token with a break', () => {
  it("due_diligence_report's token flag names the break, since the high may lie inside it", async () => {
    const env = await call<{ flags: { topic: string; finding: string; data: { price_gaps?: unknown[] } }[] }>('project-intelligence', 'due_diligence_report', { project: 'aave v3' });
    const token = env.data.flags.find((f) => f.topic === 'token')!;
    expect(token.finding).toContain('the last from 2021-12-30 to 2023-11-24');
    expect(token.data.price_gaps).toHaveLength(1);
  });
});

describe('portfolio-analytics risk on holdings whose prices have a break', () => {
  // The risk report is reached over HTTP only through a chain scan; here holdingsRisk runs on a
  // small market provider whose series are written out below (90 days to 2025-01-31, one asset
  // missing five days near the start), which is what a chain scan would hand it.
  const days = fixtureDays('2024-11-01', 91);
  const missing = new Set(days.slice(3, 8));
  // A 50% jump across the break: a return that spans it would dominate every figure.
  const series = {
    gappy: days.filter((d) => !missing.has(d)).map((d, i) => fixtureCandle(d, (d > days[7]! ? 150 : 100) * (1 + 0.01 * Math.sin(i)))),
    bitcoin: days.map((d, i) => fixtureCandle(d, 50_000 * (1 + 0.02 * Math.cos(i)))),
  };
  const market = fixtureMarket(series);
  const holding = (asset_id: string) => fixtureHolding(asset_id, days.at(-1)!);

  it('measures only the days after the break: no return spans the missing days', async () => {
    const { holdingsRisk } = await import('../../server/servers/portfolio-analytics/risk.ts');
    const report = (await holdingsRisk(market, [holding('gappy')], 90, new AbortController().signal))!;
    expect(report.from).toBe(days[8]);
    expect(report.observations).toBe(days.length - 9);
    const closesAfter = series.gappy!.filter((c) => c.date >= days[8]!).map((c) => c.close);
    const r = closesAfter.slice(1).map((x, i) => x / closesAfter[i]! - 1);
    expect(Math.max(...r.map(Math.abs))).toBeLessThan(0.05);
    expect(report.log_return_volatility_daily).toBeCloseTo(std(logReturns(closesAfter)), 6);
  });
});
