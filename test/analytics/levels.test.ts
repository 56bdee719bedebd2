// Support/resistance levels on small hand-made series whose pivots, fractals and volume
// profile can be worked out on paper.
import { describe, expect, it } from 'vitest';
import { addDays } from '../../server/lib/dates.ts';
import type { DailyCandle } from '../../server/analytics/candles.ts';
import {
  floorPivots,
  fractals,
  pivotLevels,
  supportResistance,
  touchCount,
  volumeProfile,
} from '../../server/analytics/levels.ts';

/** Candles from [high, low, close] triples on consecutive days (open = previous close). */
function fromHlc(
  rows: readonly (readonly [number, number, number])[],
  start = '2024-01-01',
  volume: number | null = 1000,
): DailyCandle[] {
  return rows.map(([high, low, close], i) => ({
    date: addDays(start, i),
    open: rows[i - 1]?.[2] ?? close,
    high,
    low,
    close,
    volume_usd: volume,
  }));
}

describe('floor pivots', () => {
  it('follows the classic formulas on a hand example (H 110, L 90, C 105)', () => {
    // P = 305 / 3 = 101.667; R1 = 2P − L = 113.333; S1 = 2P − H = 93.333;
    // R2 = P + 20 = 121.667; S2 = P − 20 = 81.667; R3 = H + 2(P − L) = 133.333;
    // S3 = L − 2(H − P) = 73.333.
    const p = floorPivots(110, 90, 105);
    expect(p.p).toBeCloseTo(101.6667, 4);
    expect(p.r1).toBeCloseTo(113.3333, 4);
    expect(p.s1).toBeCloseTo(93.3333, 4);
    expect(p.r2).toBeCloseTo(121.6667, 4);
    expect(p.s2).toBeCloseTo(81.6667, 4);
    expect(p.r3).toBeCloseTo(133.3333, 4);
    expect(p.s3).toBeCloseTo(73.3333, 4);
  });

  it('daily pivots use the last candle', () => {
    const p = pivotLevels(fromHlc([[50, 40, 45], [110, 90, 105]]), 'day');
    expect([p.from, p.to, p.high, p.low, p.close]).toEqual(['2024-01-02', '2024-01-02', 110, 90, 105]);
  });

  it('weekly pivots use the last completed Monday–Sunday week, not the week in progress', () => {
    // 2024-01-01 is a Monday. Week 1: Jan 1–7; Jan 8–9 belong to the unfinished week 2.
    const candles = fromHlc([
      [101, 99, 100],
      [120, 100, 110], // week high
      [111, 95, 100],
      [105, 80, 90], // week low
      [100, 90, 95],
      [99, 91, 96],
      [100, 94, 98], // Sunday close
      [200, 150, 180],
      [190, 170, 175],
    ]);
    const p = pivotLevels(candles, 'week');
    expect([p.from, p.to, p.high, p.low, p.close]).toEqual(['2024-01-01', '2024-01-07', 120, 80, 98]);
    expect(p.p).toBeCloseTo((120 + 80 + 98) / 3, 12);
    // Ending on the Sunday, that week is itself complete.
    expect(pivotLevels(candles.slice(0, 7), 'week').to).toBe('2024-01-07');
  });

  it('rejects a high below the low and NaN inputs', () => {
    expect(() => floorPivots(90, 110, 100)).toThrow(/high 90 is below low 110/);
    expect(() => floorPivots(Number.NaN, 1, 1)).toThrow(RangeError);
  });
});

describe('Williams fractals', () => {
  it('marks a 5-bar spike high and a 5-bar dip low, and not the unconfirmed last two bars', () => {
    const candles = fromHlc([
      [10, 9, 9.5],
      [11, 9, 10],
      [12, 10, 11],
      [15, 11, 14], // index 3: high above the two bars either side
      [13, 10, 12],
      [12, 8, 9], // index 5: low below the two bars either side
      [11, 9, 10],
      [12, 10, 11],
      [20, 11, 19], // index 8: a spike, but only one bar after it
      [18, 12, 17],
    ]);
    expect(fractals(candles)).toEqual([
      { date: '2024-01-04', kind: 'high', price: 15 },
      { date: '2024-01-06', kind: 'low', price: 8 },
    ]);
  });

  it('needs the middle bar strictly beyond its neighbours: a flat top is no fractal', () => {
    const candles = fromHlc([
      [10, 9, 9.5],
      [11, 9, 10],
      [15, 10, 14],
      [15, 10, 14],
      [11, 9, 10],
      [10, 9, 9.5],
    ]);
    expect(fractals(candles).filter((f) => f.kind === 'high')).toEqual([]);
  });
});

describe('volume profile', () => {
  // Range 100–110 in 10 bins of 1. A spreads 1000 evenly (100 per bin); B puts 500 into
  // 104–105. POC = bin 104–105 (600). The value area (70 % of 1500 = 1050) grows from it:
  // ties on both sides add both bins: 600 → 800 → 1000 → 1200, i.e. bins 101–108.
  const a: DailyCandle = { date: '2024-01-01', open: 100, high: 110, low: 100, close: 105, volume_usd: 1000 };
  const b: DailyCandle = { date: '2024-01-02', open: 104, high: 105, low: 104, close: 104.5, volume_usd: 500 };
  const none: DailyCandle = { date: '2024-01-03', open: 104, high: 200, low: 50, close: 104.5, volume_usd: null };

  it('spreads volume over each candle’s range and finds the POC and 70 % value area', () => {
    const vp = volumeProfile([a, b, none], 10, 0.7);
    expect(vp).not.toBeNull();
    expect(vp?.bins.map((x) => Math.round(x.volume))).toEqual([100, 100, 100, 100, 600, 100, 100, 100, 100, 100]);
    expect(vp?.pointOfControl).toBeCloseTo(104.5, 12);
    expect(vp?.valueAreaLow).toBeCloseTo(101, 12);
    expect(vp?.valueAreaHigh).toBeCloseTo(108, 12);
    expect(vp?.totalVolume).toBeCloseTo(1500, 9);
    // The candle without volume neither adds volume nor widens the price range.
    expect(vp?.candlesWithoutVolume).toBe(1);
  });

  it('is null when no candle has volume', () => {
    expect(volumeProfile([none])).toBeNull();
  });
});

describe('supportResistance', () => {
  const candles = fromHlc([
    [10, 9, 9.5],
    [11, 9, 10],
    [12, 10, 11],
    [15, 11, 14],
    [13, 10, 12],
    [12, 8, 9],
    [11, 9, 10],
    [12, 10, 11],
    [14, 11, 12],
    [13, 11, 12],
  ]);
  const sr = supportResistance(candles, { bins: 7, touchTolerance: 0.005 });

  it('returns pivot, fractal and volume levels sorted by price, each with its kind', () => {
    const prices = sr.levels.map((l) => l.price);
    expect(prices).toEqual([...prices].sort((x, y) => x - y));
    const kinds = new Set(sr.levels.map((l) => l.kind));
    for (const k of ['pivot_p', 'pivot_r1', 'pivot_s3', 'fractal_high', 'fractal_low', 'volume_poc', 'value_area_low', 'value_area_high'] as const) {
      expect(kinds.has(k)).toBe(true);
    }
    expect(sr.levels.find((l) => l.kind === 'fractal_high')).toMatchObject({ price: 15, date: '2024-01-04' });
  });

  it('calls levels below the last close support and the rest resistance', () => {
    for (const l of sr.levels) expect(l.role).toBe(l.price < 12 ? 'support' : 'resistance');
  });

  it('strength counts the candles whose high or low touched the level', () => {
    // Lows of 11 on days 4, 9 and 10 and highs of 11 on days 2 and 7: five touches of 11.
    expect(touchCount(candles, 11, 0)).toBe(5);
    const fractalLow = sr.levels.find((l) => l.kind === 'fractal_low');
    expect(fractalLow).toMatchObject({ price: 8, strength: 1 });
    expect(sr.levels.find((l) => l.kind === 'fractal_high')?.strength).toBe(1);
  });

  it('throws RangeError on bad input', () => {
    const bad = candles.map((c, i) => (i === 4 ? { ...c, high: Number.NaN } : c));
    expect(() => supportResistance(bad)).toThrow(/high on 2024-01-05 must be a positive number/);
    expect(() => supportResistance([])).toThrow(RangeError);
    expect(() => volumeProfile(candles, 0)).toThrow(/binCount/);
  });
});
