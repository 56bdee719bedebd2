// Statistics of a TVL series (daily points, oldest first): growth, volatility, drawdown,
// concentration. Pure functions; callers say which data they ran on.
import { addDays } from '../lib/dates.ts';

export interface Point {
  date: string;
  tvl_usd: number;
}

/** The last point on or before `date`, or undefined. */
export function pointAtOrBefore(points: readonly Point[], date: string): Point | undefined {
  let lo = 0;
  let hi = points.length - 1;
  let found: Point | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (points[mid]!.date <= date) {
      found = points[mid];
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/**
 * Fractional change from `days` before the last point to the last point (0.1 = +10%); null when
 * the series does not reach that far back or started from zero.
 */
export function growth(points: readonly Point[], days: number): number | null {
  const last = points[points.length - 1];
  if (!last) return null;
  const start = pointAtOrBefore(points, addDays(last.date, -days));
  if (!start || start.tvl_usd <= 0) return null;
  return last.tvl_usd / start.tvl_usd - 1;
}

/** Annualised standard deviation of daily log changes over the last `days` (sample, 365 days a year). */
export function tvlVolatility(points: readonly Point[], days: number): number | null {
  const last = points[points.length - 1];
  if (!last) return null;
  const from = addDays(last.date, -days);
  const window = points.filter((p) => p.date >= from && p.tvl_usd > 0);
  const changes: number[] = [];
  for (let i = 1; i < window.length; i++) changes.push(Math.log(window[i]!.tvl_usd / window[i - 1]!.tvl_usd));
  if (changes.length < 2) return null;
  const m = changes.reduce((a, b) => a + b, 0) / changes.length;
  const v = changes.reduce((s, c) => s + (c - m) ** 2, 0) / (changes.length - 1);
  return Math.sqrt(v) * Math.sqrt(365);
}

export interface Drawdown {
  /** Deepest fall from a running peak, as a negative fraction (-0.6 = -60%). */
  max_drawdown: number;
  peak: Point;
  trough: Point;
  all_time_high: Point;
  /** Last value against the all-time high (-0.2 = 20% below it). */
  from_all_time_high: number;
}

export function tvlDrawdown(points: readonly Point[]): Drawdown | null {
  if (points.length === 0) return null;
  let peak = points[0]!;
  let best = { dd: 0, peak, trough: points[0]! };
  for (const p of points) {
    if (p.tvl_usd > peak.tvl_usd) peak = p;
    const dd = peak.tvl_usd > 0 ? p.tvl_usd / peak.tvl_usd - 1 : 0;
    if (dd < best.dd) best = { dd, peak, trough: p };
  }
  const last = points[points.length - 1]!;
  return {
    max_drawdown: best.dd,
    peak: best.peak,
    trough: best.trough,
    all_time_high: peak,
    from_all_time_high: peak.tvl_usd > 0 ? last.tvl_usd / peak.tvl_usd - 1 : 0,
  };
}

/** Herfindahl-Hirschman index of shares (0..1) and the share of the largest `top`. */
export function concentration(values: readonly number[], top = 3): { hhi: number; top_share: number } {
  const total = values.reduce((a, b) => a + b, 0);
  if (total <= 0) return { hhi: 0, top_share: 0 };
  const shares = values.map((v) => v / total).sort((a, b) => b - a);
  return { hhi: shares.reduce((s, x) => s + x * x, 0), top_share: shares.slice(0, top).reduce((a, b) => a + b, 0) };
}
