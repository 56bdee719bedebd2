// Risk of holding today's quantities over a past window: the portfolio's daily value series is
// Σ quantity × close over the days every measured asset has a close, and the market-intelligence
// risk measures (server/analytics/risk.ts) run on it as on any price series.
import { z } from 'zod';
import { lastContiguous, type DailyCandle } from '../../analytics/candles.ts';
import { betaAndCorrelation, logReturnPerformance, maxDrawdown } from '../../analytics/risk.ts';
import { addDays } from '../../lib/dates.ts';
import type { MarketDataProvider } from '../../providers/market/types.ts';
import type { Holding } from './holdings.ts';

const pricePoint = z.object({ date: z.string(), price: z.number().describe('USD value of the holdings that day.') });

/** Fractions throughout (0.05 = 5%); USD where the name says so. */
export const riskReportShape = z.object({
  window_days: z.number().int(),
  from: z.string(),
  to: z.string(),
  observations: z.number().int().describe('Daily returns measured.'),
  value_usd: z.number(),
  measured: z.array(z.object({ asset_id: z.string(), symbol: z.string(), quantity: z.number(), value_usd: z.number(), weight: z.number() })),
  excluded: z.array(z.object({ asset_id: z.string().nullable(), symbol: z.string(), reason: z.string() })),
  log_return_volatility_daily: z.number(),
  log_return_volatility_annualised: z.number(),
  return_total: z.number(),
  return_annualised_geometric: z.number().describe('Compounded: (1 + return_total)^(365 / days) - 1.'),
  sharpe: z.number().nullable().describe('Mean daily log return over log_return_volatility_daily, × √365 (risk-free 0).'),
  max_drawdown: z.object({ depth: z.number().describe('Positive fraction (0.5 = -50%).'), peak: pricePoint, trough: pricePoint, recovered: pricePoint.nullable() }),
  var_95_1d: z.object({ fraction: z.number(), usd: z.number(), method: z.string() }),
  concentration: z.object({ hhi: z.number().describe('Herfindahl index of weights in percent, 0-10,000.'), top_holding: z.string(), top_holding_share: z.number() }),
  beta_to_btc: z.number().nullable(),
  correlation_to_btc: z.number().nullable(),
});
export type RiskReport = z.infer<typeof riskReportShape>;

const round = (x: number, d = 6) => Math.round(x * 10 ** d) / 10 ** d;

/** The window's last candles of a series (window + 1 closes give window daily returns). */
const lastDays = (candles: readonly DailyCandle[], to: string, windowDays: number) => {
  const end = Date.parse(`${to}T00:00:00Z`);
  const start = end - windowDays * 86_400_000;
  return candles.filter((c) => {
    const t = Date.parse(`${c.date}T00:00:00Z`);
    return t >= start && t <= end;
  });
};

/** Null when nothing held has a price. */
export async function holdingsRisk(market: MarketDataProvider, holdings: Holding[], windowDays: number, signal: AbortSignal): Promise<RiskReport | null> {
  const excluded: RiskReport['excluded'] = [];
  const qty = new Map<string, { symbol: string; quantity: number; value_usd: number }>();
  for (const h of holdings) {
    if (h.value_usd === null || !h.asset_id) {
      excluded.push({ asset_id: h.asset_id, symbol: h.symbol, reason: 'no price' });
      continue;
    }
    const q = qty.get(h.asset_id) ?? { symbol: h.symbol, quantity: 0, value_usd: 0 };
    q.quantity += Number(h.balance);
    q.value_usd += h.value_usd;
    qty.set(h.asset_id, q);
  }
  if (qty.size === 0) return null;

  const ids = [...qty.keys()];
  const series = await Promise.all([...ids, 'bitcoin'].map((id) => market.candles(id, { interval: 'daily' }, signal).catch(() => null)));
  const btc = series.pop() ?? null;
  // The common end: the earliest last day among the measured assets.
  const ends = series.filter((s) => s && s.candles.length > 0).map((s) => s!.candles.at(-1)!.date);
  if (ends.length === 0) return null;
  const to = ends.sort()[0]!;
  const windows = new Map<string, DailyCandle[]>();
  ids.forEach((id, i) => {
    const s = series[i];
    // Only the last contiguous run of each series: no daily return may span a break in its data.
    const run = s ? lastContiguous(s.candles.filter((c) => c.date <= to)) : null;
    const w = run ? lastDays(run.candles, to, windowDays) : [];
    // An asset must cover most of the window, or its short history would shrink everyone's.
    if (w.length < Math.floor(windowDays * 0.9)) {
      const gap = run?.gaps.at(-1);
      const cut = gap && w[0] && w[0].date === gap.to ? ` (its data has no prices from ${addDays(gap.from, 1)} to ${addDays(gap.to, -1)})` : '';
      excluded.push({ asset_id: id, symbol: qty.get(id)!.symbol, reason: `price history covers ${w.length} of the ${windowDays + 1} days${cut}` });
      qty.delete(id);
    } else windows.set(id, w);
  });
  if (qty.size === 0) return null;

  // Days every measured asset has a close on.
  const byDate = new Map<string, number>();
  const counts = new Map<string, number>();
  for (const [id, w] of windows) {
    const q = qty.get(id)!.quantity;
    for (const c of w) {
      byDate.set(c.date, (byDate.get(c.date) ?? 0) + q * c.close);
      counts.set(c.date, (counts.get(c.date) ?? 0) + 1);
    }
  }
  // Days all of them share can still miss one (an asset without a close that day): the last
  // contiguous run of the shared days, so no return spans a missing day.
  const { candles } = lastContiguous<DailyCandle>(
    [...byDate.entries()]
      .filter(([d]) => counts.get(d) === windows.size)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([date, v]) => ({ date, open: v, high: v, low: v, close: v, volume_usd: null })),
  );
  if (candles.length < 3) return null;

  const performance = logReturnPerformance(candles);
  const returns = candles.slice(1).map((c, i) => c.close / candles[i]!.close - 1).sort((a, b) => a - b);
  // Historical VaR: the loss at the 5th percentile of daily returns (nearest rank).
  const p5 = returns[Math.max(0, Math.ceil(0.05 * returns.length) - 1)]!;
  const total = [...qty.values()].reduce((a, q) => a + q.value_usd, 0);
  const measured = [...qty.entries()]
    .map(([asset_id, q]) => ({ asset_id, symbol: q.symbol, quantity: q.quantity, value_usd: Math.round(q.value_usd * 100) / 100, weight: round(q.value_usd / total) }))
    .sort((a, b) => b.value_usd - a.value_usd);
  const hhi = measured.reduce((a, m) => a + (m.weight * 100) ** 2, 0);
  let beta: number | null = null;
  let corr: number | null = null;
  if (btc && btc.candles.length > 0) {
    try {
      const b = betaAndCorrelation(candles, lastDays(lastContiguous(btc.candles).candles, to, windowDays));
      beta = b.beta === null ? null : round(b.beta);
      corr = b.correlation === null ? null : round(b.correlation);
    } catch {
      // Fewer than three shared days with BTC: beta is not measured.
    }
  }
  return {
    window_days: windowDays,
    from: candles[0]!.date,
    to: candles.at(-1)!.date,
    observations: candles.length - 1,
    value_usd: Math.round(total * 100) / 100,
    measured,
    excluded,
    log_return_volatility_daily: round(performance.volatility.daily),
    log_return_volatility_annualised: round(performance.volatility.annualised),
    return_total: round(performance.totalReturn),
    return_annualised_geometric: round(performance.annualisedGeometricReturn),
    sharpe: performance.sharpe === null ? null : round(performance.sharpe),
    max_drawdown: maxDrawdown(candles),
    var_95_1d: { fraction: round(Math.max(0, -p5)), usd: Math.round(Math.max(0, -p5) * total * 100) / 100, method: 'historical: the 5th-percentile daily simple return of today\'s holdings over the window' },
    concentration: { hhi: Math.round(hhi * 100) / 100, top_holding: measured[0]!.symbol, top_holding_share: measured[0]!.weight },
    beta_to_btc: beta,
    correlation_to_btc: corr,
  };
}
