// Support and resistance for price-prediction's get_support_resistance: classic floor-trader
// pivots, Williams fractals and a volume profile, merged into one list of levels each with its
// kind and a strength (how many candles of the window turned near it).

import { assertCandles, dayToMs } from './candles.ts';
import type { DailyCandle } from './candles.ts';

export interface PivotLevels {
  /** First and last day of the period the pivots are computed from. */
  from: string;
  to: string;
  high: number;
  low: number;
  close: number;
  p: number;
  r1: number;
  r2: number;
  r3: number;
  s1: number;
  s2: number;
  s3: number;
}

/**
 * Classic floor-trader pivots from one period's high, low and close:
 * P = (H + L + C) / 3; R1 = 2P − L, S1 = 2P − H; R2 = P + (H − L), S2 = P − (H − L);
 * R3 = H + 2(P − L), S3 = L − 2(H − P).
 */
export function floorPivots(high: number, low: number, close: number): Omit<PivotLevels, 'from' | 'to'> {
  for (const [name, v] of [['high', high], ['low', low], ['close', close]] as const) {
    if (!Number.isFinite(v)) throw new RangeError(`pivot ${name} must be a finite number, got ${v}`);
  }
  if (high < low) throw new RangeError(`pivot high ${high} is below low ${low}`);
  const p = (high + low + close) / 3;
  const range = high - low;
  return {
    high,
    low,
    close,
    p,
    r1: 2 * p - low,
    s1: 2 * p - high,
    r2: p + range,
    s2: p - range,
    r3: high + 2 * (p - low),
    s3: low - 2 * (high - p),
  };
}

export type PivotPeriod = 'day' | 'week';

/**
 * Pivots for the session after the last completed day or week. The last candle is taken as the
 * last completed day: callers drop a still-open day first. For 'week', the period is the latest
 * Monday–Sunday week that ends on or before that day (its H, L and the close of its last candle).
 */
export function pivotLevels(candles: readonly DailyCandle[], period: PivotPeriod = 'day'): PivotLevels {
  assertCandles(candles, 1);
  const last = candles.at(-1);
  if (!last) throw new RangeError('candles: need at least 1 daily candle');
  if (period === 'day') {
    return { from: last.date, to: last.date, ...floorPivots(last.high, last.low, last.close) };
  }
  const lastMs = dayToMs(last.date);
  const weekday = (new Date(lastMs).getUTCDay() + 6) % 7; // Monday 0 … Sunday 6
  const sundayMs = weekday === 6 ? lastMs : lastMs - (weekday + 1) * 86_400_000;
  const mondayMs = sundayMs - 6 * 86_400_000;
  const week = candles.filter((c) => {
    const ms = dayToMs(c.date);
    return ms >= mondayMs && ms <= sundayMs;
  });
  const first = week[0];
  const end = week.at(-1);
  if (!first || !end) {
    throw new RangeError(
      `no candles in the last completed week ${isoDay(mondayMs)}..${isoDay(sundayMs)}`,
    );
  }
  const high = Math.max(...week.map((c) => c.high));
  const low = Math.min(...week.map((c) => c.low));
  return { from: isoDay(mondayMs), to: isoDay(sundayMs), ...floorPivots(high, low, end.close) };
}

export interface Fractal {
  date: string;
  kind: 'high' | 'low';
  price: number;
}

/**
 * Williams fractals over 5 bars: a fractal high is a bar whose high is strictly above the highs
 * of the two bars on each side; a fractal low, one whose low is strictly below theirs. The last
 * two bars cannot be confirmed yet and never carry one. Date order.
 */
export function fractals(candles: readonly DailyCandle[]): Fractal[] {
  assertCandles(candles, 1);
  const out: Fractal[] = [];
  for (let i = 2; i + 2 < candles.length; i++) {
    const mid = candles[i];
    if (!mid) continue;
    const neighbours = [candles[i - 2], candles[i - 1], candles[i + 1], candles[i + 2]].filter(
      (c) => c !== undefined,
    );
    if (neighbours.every((c) => mid.high > c.high)) {
      out.push({ date: mid.date, kind: 'high', price: mid.high });
    }
    if (neighbours.every((c) => mid.low < c.low)) {
      out.push({ date: mid.date, kind: 'low', price: mid.low });
    }
  }
  return out;
}

export interface VolumeProfile {
  /** Price bins from low to high; volume is in USD. */
  bins: { low: number; high: number; volume: number }[];
  /** Midpoint of the bin with the most volume. */
  pointOfControl: number;
  /** Bounds of the bins holding at least `valueAreaShare` of volume around the POC. */
  valueAreaLow: number;
  valueAreaHigh: number;
  valueAreaShare: number;
  totalVolume: number;
  /** Candles left out for having no volume. */
  candlesWithoutVolume: number;
}

/**
 * Volume profile: the window's price range split into `binCount` equal bins, each candle's
 * volume spread evenly over its low–high range (a candle with high = low puts it all in one
 * bin). The value area grows from the point of control one bin at a time toward the side with
 * more volume (both sides on a tie) until it holds `valueAreaShare` (70 %) of the total.
 * Null when no candle of the window has volume.
 */
export function volumeProfile(
  candles: readonly DailyCandle[],
  binCount = 24,
  valueAreaShare = 0.7,
): VolumeProfile | null {
  assertCandles(candles, 1);
  if (!Number.isInteger(binCount) || binCount < 1) {
    throw new RangeError(`binCount must be a whole number ≥ 1, got ${binCount}`);
  }
  if (!(valueAreaShare > 0 && valueAreaShare <= 1)) {
    throw new RangeError(`valueAreaShare must be in (0, 1], got ${valueAreaShare}`);
  }
  const withVolume = candles.filter((c) => c.volume_usd !== null && c.volume_usd > 0);
  if (withVolume.length === 0) return null;
  const lo = Math.min(...withVolume.map((c) => Math.min(c.low, c.high)));
  const hi = Math.max(...withVolume.map((c) => Math.max(c.low, c.high)));
  const width = hi > lo ? (hi - lo) / binCount : 1;
  const volume = new Array<number>(binCount).fill(0);
  const binOf = (price: number) => Math.min(binCount - 1, Math.max(0, Math.floor((price - lo) / width)));
  for (const c of withVolume) {
    const v = c.volume_usd ?? 0;
    const cLow = Math.min(c.low, c.high);
    const cHigh = Math.max(c.low, c.high);
    if (cHigh === cLow) {
      addAt(volume, binOf(cLow), v);
      continue;
    }
    for (let b = binOf(cLow); b <= binOf(cHigh); b++) {
      const overlap = Math.min(cHigh, lo + (b + 1) * width) - Math.max(cLow, lo + b * width);
      if (overlap > 0) addAt(volume, b, (v * overlap) / (cHigh - cLow));
    }
  }
  const total = volume.reduce((s, v) => s + v, 0);
  let poc = 0;
  for (let b = 1; b < binCount; b++) if ((volume[b] ?? 0) > (volume[poc] ?? 0)) poc = b;
  let down = poc;
  let up = poc;
  let inArea = volume[poc] ?? 0;
  while (inArea < valueAreaShare * total - 1e-9 * total && (down > 0 || up < binCount - 1)) {
    const below = down > 0 ? (volume[down - 1] ?? 0) : -1;
    const above = up < binCount - 1 ? (volume[up + 1] ?? 0) : -1;
    if (above >= below) inArea += volume[++up] ?? 0;
    if (below >= above) inArea += volume[--down] ?? 0;
  }
  return {
    bins: volume.map((v, b) => ({ low: lo + b * width, high: lo + (b + 1) * width, volume: v })),
    pointOfControl: lo + (poc + 0.5) * width,
    valueAreaLow: lo + down * width,
    valueAreaHigh: lo + (up + 1) * width,
    valueAreaShare,
    totalVolume: total,
    candlesWithoutVolume: candles.length - withVolume.length,
  };
}

export type LevelKind =
  | 'pivot_p'
  | 'pivot_r1'
  | 'pivot_r2'
  | 'pivot_r3'
  | 'pivot_s1'
  | 'pivot_s2'
  | 'pivot_s3'
  | 'fractal_high'
  | 'fractal_low'
  | 'volume_poc'
  | 'value_area_high'
  | 'value_area_low';

export interface Level {
  price: number;
  kind: LevelKind;
  /** Below the last close: support; at or above it: resistance. */
  role: 'support' | 'resistance';
  /** Candles of the window whose high or low came within the touch tolerance of the level. */
  strength: number;
  /** For fractals, the day of the fractal bar. */
  date?: string;
}

export interface SupportResistanceOptions {
  pivotPeriod?: PivotPeriod;
  /** Volume-profile bins; default 24. */
  bins?: number;
  /** A high or low within this fraction of a level touches it; default 0.005 (0.5 %). */
  touchTolerance?: number;
}

export interface SupportResistance {
  asOf: string;
  close: number;
  pivots: PivotLevels;
  fractals: Fractal[];
  volumeProfile: VolumeProfile | null;
  /** Every level, sorted by price ascending. */
  levels: Level[];
}

/** Pivot, fractal and volume-profile levels of the window the candles cover, merged and sorted. */
export function supportResistance(
  candles: readonly DailyCandle[],
  options: SupportResistanceOptions = {},
): SupportResistance {
  assertCandles(candles, 1);
  const tolerance = options.touchTolerance ?? 0.005;
  if (!(tolerance >= 0 && tolerance < 1)) {
    throw new RangeError(`touchTolerance must be in [0, 1), got ${tolerance}`);
  }
  const last = candles.at(-1);
  if (!last) throw new RangeError('candles: need at least 1 daily candle');
  const pivots = pivotLevels(candles, options.pivotPeriod ?? 'day');
  const found = fractals(candles);
  const profile = volumeProfile(candles, options.bins ?? 24);

  const raw: Omit<Level, 'role' | 'strength'>[] = [
    { kind: 'pivot_p', price: pivots.p },
    { kind: 'pivot_r1', price: pivots.r1 },
    { kind: 'pivot_r2', price: pivots.r2 },
    { kind: 'pivot_r3', price: pivots.r3 },
    { kind: 'pivot_s1', price: pivots.s1 },
    { kind: 'pivot_s2', price: pivots.s2 },
    { kind: 'pivot_s3', price: pivots.s3 },
    ...found.map((f) => ({
      kind: f.kind === 'high' ? ('fractal_high' as const) : ('fractal_low' as const),
      price: f.price,
      date: f.date,
    })),
  ];
  if (profile) {
    raw.push(
      { kind: 'volume_poc', price: profile.pointOfControl },
      { kind: 'value_area_high', price: profile.valueAreaHigh },
      { kind: 'value_area_low', price: profile.valueAreaLow },
    );
  }
  const levels = raw
    .map((l) => ({
      ...l,
      role: l.price < last.close ? ('support' as const) : ('resistance' as const),
      strength: touchCount(candles, l.price, tolerance),
    }))
    .sort((a, b) => a.price - b.price);
  return { asOf: last.date, close: last.close, pivots, fractals: found, volumeProfile: profile, levels };
}

/** Candles whose high or low lies within `tolerance` (a fraction) of `price`. */
export function touchCount(candles: readonly DailyCandle[], price: number, tolerance: number): number {
  const band = Math.abs(price) * tolerance;
  return candles.filter(
    (c) => Math.abs(c.high - price) <= band || Math.abs(c.low - price) <= band,
  ).length;
}

function addAt(values: number[], index: number, amount: number): void {
  values[index] = (values[index] ?? 0) + amount;
}

function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
