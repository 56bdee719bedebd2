// Risk and return measures on daily candles, for market-intelligence's get_asset_metrics,
// get_correlation_matrix and get_top_movers. Crypto trades every day of the year, so daily
// figures are annualised with 365 days (√365 for volatility), not the 252 trading days of
// equity markets. Returns are close-to-close; ratios are fractions (0.25 means 25 %).

import { addDays, daysBetween } from '../lib/dates.ts';
import {
  alignByDate,
  assertCandles,
  dayToMs,
  logReturns,
  mean,
  sampleStdDev,
} from './candles.ts';
import type { DailyCandle } from './candles.ts';

export const DAYS_PER_YEAR = 365;

export interface PricePoint {
  date: string;
  price: number;
}

export interface RealisedVolatility {
  /** Sample standard deviation of daily log returns. */
  daily: number;
  /** daily × √365. */
  annualised: number;
  /** Number of daily returns used. */
  observations: number;
  from: string;
  to: string;
}

/** Realised volatility of daily log returns, annualised with √365. Needs ≥ 3 candles. */
export function realisedVolatility(candles: readonly DailyCandle[]): RealisedVolatility {
  assertCandles(candles, 3);
  const returns = logReturns(candles).map((r) => r.value);
  const daily = sampleStdDev(returns);
  return {
    daily,
    annualised: daily * Math.sqrt(DAYS_PER_YEAR),
    observations: returns.length,
    from: firstDate(candles),
    to: lastDate(candles),
  };
}

export interface MaxDrawdown {
  /** Deepest fall from a running peak close, as a positive fraction (0.5 = −50 %); 0 if none. */
  depth: number;
  /** The peak close the deepest fall started from (the first candle when there was no fall). */
  peak: PricePoint;
  trough: PricePoint;
  /** First close back at or above the peak after the trough; null if not recovered yet. */
  recovered: PricePoint | null;
}

/** Maximum drawdown of closing prices, with the dates of its peak, trough and recovery. */
export function maxDrawdown(candles: readonly DailyCandle[]): MaxDrawdown {
  assertCandles(candles, 1);
  const first = point(candles[0]);
  let runningPeak = first;
  let best = { depth: 0, peak: first, trough: first };
  for (const c of candles) {
    if (c.close > runningPeak.price) runningPeak = point(c);
    const depth = 1 - c.close / runningPeak.price;
    if (depth > best.depth) best = { depth, peak: runningPeak, trough: point(c) };
  }
  let recovered: PricePoint | null = null;
  if (best.depth > 0) {
    const after = candles.find((c) => c.date > best.trough.date && c.close >= best.peak.price);
    recovered = after ? point(after) : null;
  }
  return { ...best, recovered };
}

export interface LogReturnPerformance {
  /** The one volatility: of daily log returns (realisedVolatility). */
  volatility: RealisedVolatility;
  /** Last close over first close, minus 1. */
  totalReturn: number;
  /** (1 + total)^(365 / days spanned) − 1: the steady yearly rate that compounds to the total. */
  annualisedGeometricReturn: number;
  /** Mean daily log return (= ln(1 + total) / observations). */
  meanDailyLogReturn: number;
  /**
   * (mean daily log return − ln(1 + riskFreeRate) / 365) / daily log volatility × √365; null
   * when the closes did not move. A negative total return gives a negative Sharpe ratio, which
   * an arithmetic mean of simple returns does not guarantee (volatility drag).
   */
  sharpe: number | null;
  riskFreeRate: number;
}

/** What every Sharpe ratio of the service says it is. */
export const SHARPE_METHOD =
  'mean daily log return minus ln(1 + risk_free_rate) / 365, over the volatility of daily log returns, times √365: a negative return gives a negative Sharpe';

/**
 * Return, volatility and Sharpe ratio on one basis, daily log returns: the return annualised
 * geometrically (compounded), never as an arithmetic mean × 365. `riskFreeRate` is an annual
 * rate (0.04 = 4 %). Needs ≥ 3 candles.
 */
export function logReturnPerformance(candles: readonly DailyCandle[], riskFreeRate = 0): LogReturnPerformance {
  if (!Number.isFinite(riskFreeRate) || riskFreeRate <= -1) {
    throw new RangeError(`riskFreeRate must be an annual rate above −1, got ${riskFreeRate}`);
  }
  const volatility = realisedVolatility(candles);
  const first = candles[0]!;
  const last = candles.at(-1)!;
  const totalReturn = last.close / first.close - 1;
  const meanDailyLogReturn = Math.log(last.close / first.close) / volatility.observations;
  const spanned = Math.max(1, daysBetween(first.date, last.date));
  const dailyRiskFree = Math.log(1 + riskFreeRate) / DAYS_PER_YEAR;
  return {
    volatility,
    totalReturn,
    annualisedGeometricReturn: (1 + totalReturn) ** (DAYS_PER_YEAR / spanned) - 1,
    meanDailyLogReturn,
    sharpe: volatility.daily > 0 ? ((meanDailyLogReturn - dailyRiskFree) / volatility.daily) * Math.sqrt(DAYS_PER_YEAR) : null,
    riskFreeRate,
  };
}

export interface BetaAndCorrelation {
  /** cov(asset, benchmark) / var(benchmark); null when the benchmark did not move. */
  beta: number | null;
  /** Pearson correlation; null when either series did not move. */
  correlation: number | null;
  /** Dates present in both series. */
  overlappingDays: number;
  /** Paired daily log returns used (overlappingDays − 1). */
  observations: number;
  from: string;
  to: string;
}

/**
 * Beta and correlation of an asset to a benchmark (BTC) on daily log returns. The candles are
 * inner-joined on date first, so each paired return spans the same two days. Needs ≥ 3
 * overlapping days.
 */
export function betaAndCorrelation(
  asset: readonly DailyCandle[],
  benchmark: readonly DailyCandle[],
): BetaAndCorrelation {
  assertCandles(asset, 1, 'asset candles');
  assertCandles(benchmark, 1, 'benchmark candles');
  const pairs = alignByDate(asset, benchmark);
  if (pairs.length < 3) {
    throw new RangeError(
      `asset and benchmark share ${pairs.length} dates; need at least 3 to measure beta`,
    );
  }
  const x = logReturns(pairs.map((p) => p.a)).map((r) => r.value);
  const y = logReturns(pairs.map((p) => p.b)).map((r) => r.value);
  const { covariance, varianceX, varianceY } = moments(x, y);
  return {
    beta: varianceY > 0 ? covariance / varianceY : null,
    correlation: pearson(covariance, varianceX, varianceY),
    overlappingDays: pairs.length,
    observations: x.length,
    from: pairs[0]?.date ?? '',
    to: pairs.at(-1)?.date ?? '',
  };
}

export interface DistanceFromAllTimeHigh {
  /** Highest intraday high in the series (the series' all-time high, as far as it reaches). */
  ath: PricePoint;
  last: PricePoint;
  /** last close / ATH − 1: 0 at the high, −0.4 when 40 % below it. */
  distance: number;
  daysSinceAth: number;
}

/** How far the last close is below the highest high of the series, and when that high was. */
export function distanceFromAllTimeHigh(candles: readonly DailyCandle[]): DistanceFromAllTimeHigh {
  assertCandles(candles, 1);
  let ath: PricePoint = { date: firstDate(candles), price: Number.NEGATIVE_INFINITY };
  for (const c of candles) if (c.high > ath.price) ath = { date: c.date, price: c.high };
  const last = point(candles.at(-1));
  return {
    ath,
    last,
    distance: last.price / ath.price - 1,
    daysSinceAth: Math.round((dayToMs(last.date) - dayToMs(ath.date)) / 86_400_000),
  };
}

export interface CorrelationSeries {
  id: string;
  candles: readonly DailyCandle[];
}

export interface CorrelationMatrix {
  ids: string[];
  /** Pearson correlation of daily log returns; null when a pair overlaps < 3 days or is flat. */
  matrix: (number | null)[][];
  /** Dates each pair has in common (the diagonal: each series' own length). */
  overlappingDays: number[][];
}

/**
 * Pairwise Pearson correlations of daily log returns. Each pair is inner-joined on date on its
 * own, so a recently listed asset does not shorten every other pair's history; the overlap of
 * each pair is reported alongside. Symmetric, with 1 on the diagonal for any series that moved.
 */
export function correlationMatrix(series: readonly CorrelationSeries[]): CorrelationMatrix {
  if (series.length < 1) throw new RangeError('correlationMatrix: need at least one series');
  const ids = series.map((s) => s.id);
  if (new Set(ids).size !== ids.length) {
    throw new RangeError(`correlationMatrix: duplicate series ids in ${ids.join(', ')}`);
  }
  for (const s of series) assertCandles(s.candles, 1, `candles of ${s.id}`);
  const n = series.length;
  const matrix: (number | null)[][] = Array.from({ length: n }, () => Array<number | null>(n));
  const overlap: number[][] = Array.from({ length: n }, () => Array<number>(n));
  for (let i = 0; i < n; i++) {
    for (let j = i; j < n; j++) {
      const a = series[i]?.candles ?? [];
      const b = series[j]?.candles ?? [];
      const pairs = alignByDate(a, b);
      let r: number | null = null;
      if (pairs.length >= 3) {
        const x = logReturns(pairs.map((p) => p.a)).map((v) => v.value);
        const y = logReturns(pairs.map((p) => p.b)).map((v) => v.value);
        const m = moments(x, y);
        r = i === j && m.varianceX > 0 ? 1 : pearson(m.covariance, m.varianceX, m.varianceY);
      }
      setCell(matrix, i, j, r);
      setCell(overlap, i, j, pairs.length);
    }
  }
  return { ids, matrix, overlappingDays: overlap };
}

export interface PercentChange {
  from: PricePoint;
  to: PricePoint;
  /** to / from − 1. */
  change: number;
}

/**
 * Change of the close over the last `days` days: from the last candle on or before
 * (last date − days) to the last candle. RangeError if the series does not reach that far back.
 */
export function percentChange(candles: readonly DailyCandle[], days: number): PercentChange {
  assertCandles(candles, 2);
  if (!Number.isInteger(days) || days < 1) {
    throw new RangeError(`days must be a whole number ≥ 1, got ${days}`);
  }
  const to = point(candles.at(-1));
  const start = addDays(to.date, -days);
  const base = candles.findLast((c) => c.date <= start);
  if (!base) {
    throw new RangeError(
      `need a close on or before ${start} for a ${days}-day change; series starts ${firstDate(candles)}`,
    );
  }
  const from = point(base);
  return { from, to, change: to.price / from.price - 1 };
}

function moments(x: readonly number[], y: readonly number[]) {
  const mx = mean(x);
  const my = mean(y);
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let k = 0; k < x.length; k++) {
    const dx = (x[k] ?? 0) - mx;
    const dy = (y[k] ?? 0) - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  const d = x.length - 1;
  return { covariance: sxy / d, varianceX: sxx / d, varianceY: syy / d };
}

function pearson(covariance: number, varianceX: number, varianceY: number): number | null {
  if (!(varianceX > 0 && varianceY > 0)) return null;
  // Rounding can push |r| a hair past 1 for perfectly collinear series.
  return Math.max(-1, Math.min(1, covariance / Math.sqrt(varianceX * varianceY)));
}

function setCell<T>(m: T[][], i: number, j: number, v: T): void {
  const rowI = m[i];
  const rowJ = m[j];
  if (rowI) rowI[j] = v;
  if (rowJ) rowJ[i] = v;
}

function point(c: DailyCandle | undefined): PricePoint {
  if (!c) throw new RangeError('empty candle series');
  return { date: c.date, price: c.close };
}

function firstDate(candles: readonly DailyCandle[]): string {
  return candles[0]?.date ?? '';
}

function lastDate(candles: readonly DailyCandle[]): string {
  return candles.at(-1)?.date ?? '';
}
