// The indicators come from the `trading-signals` library; these tests pin what our wrappers
// report (which day each value belongs to, when the first value appears) against published
// reference values and against straightforward independent computations written out here.
import { describe, expect, it } from 'vitest';
import { addDays } from '../../server/lib/dates.ts';
import type { DailyCandle } from '../../server/analytics/candles.ts';
import {
  atrSeries,
  bollingerSeries,
  emaSeries,
  macdSeries,
  requiredCandles,
  rsiSeries,
  smaSeries,
  stochasticSeries,
  technicalIndicators,
} from '../../server/analytics/indicators.ts';

function fromCloses(closes: readonly number[], start = '2024-01-01'): DailyCandle[] {
  return closes.map((close, i) => ({
    date: addDays(start, i),
    open: close,
    high: close,
    low: close,
    close,
    volume_usd: null,
  }));
}

/** A seeded random walk with real high/low ranges (a 32-bit LCG: same candles every run). */
function walk(n: number, seed = 3): DailyCandle[] {
  let s = seed >>> 0;
  const rand = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
  let close = 100;
  return Array.from({ length: n }, (_, i) => {
    const open = close;
    close = open * Math.exp((rand() - 0.5) * 0.08);
    return {
      date: addDays('2023-01-01', i),
      open,
      high: Math.max(open, close) * (1 + rand() * 0.02),
      low: Math.min(open, close) * (1 - rand() * 0.02),
      close,
      volume_usd: 1e6,
    };
  });
}

// --- Independent reference computations, from the indicators' definitions ---

function refSma(xs: readonly number[], n: number): (number | null)[] {
  return xs.map((_, i) => (i + 1 < n ? null : xs.slice(i + 1 - n, i + 1).reduce((s, x) => s + x, 0) / n));
}

/** EMA seeded with the first value (the library's convention), k = 2 / (n + 1). */
function refEma(xs: readonly number[], n: number): number[] {
  const k = 2 / (n + 1);
  const out: number[] = [];
  for (const x of xs) out.push(out.length === 0 ? x : x * k + (out.at(-1) ?? x) * (1 - k));
  return out;
}

/** Wilder's smoothing: simple mean of the first n values, then avg += (x − avg) / n. */
function refWilder(xs: readonly number[], n: number): (number | null)[] {
  const out: (number | null)[] = [];
  let avg: number | null = null;
  xs.forEach((x, i) => {
    if (i + 1 === n) avg = xs.slice(0, n).reduce((s, v) => s + v, 0) / n;
    else if (avg !== null) avg += (x - avg) / n;
    out.push(avg);
  });
  return out;
}

function refRsi(closes: readonly number[], n: number): (number | null)[] {
  const gains: number[] = [];
  const losses: number[] = [];
  for (let i = 1; i < closes.length; i++) {
    const d = (closes[i] ?? 0) - (closes[i - 1] ?? 0);
    gains.push(Math.max(d, 0));
    losses.push(Math.max(-d, 0));
  }
  const g = refWilder(gains, n);
  const l = refWilder(losses, n);
  return [null, ...g.map((gi, i) => {
    const li = l[i];
    if (gi === null || li === null || li === undefined) return null;
    return li === 0 ? 100 : 100 - 100 / (1 + gi / li);
  })];
}

const defined = <T>(xs: readonly (T | null)[]): T[] => xs.filter((x): x is T => x !== null);

describe('RSI(14)', () => {
  // Closes of the RSI worked example in StockCharts ChartSchool's "Relative Strength Index"
  // article (its cs-rsi spreadsheet). The values below are the exact-arithmetic Wilder RSI to
  // two decimals; the spreadsheet rounds its intermediate averages and so shows slightly
  // different figures (70.53 for the first).
  const closes = [
    44.34, 44.09, 44.15, 43.61, 44.33, 44.83, 45.1, 45.42, 45.84, 46.08, 45.89, 46.03, 45.61,
    46.28, 46.28, 46.0, 46.03, 46.41, 46.22, 45.64, 46.21, 46.25, 45.71, 46.45, 45.78, 45.35,
    44.03, 44.18, 44.22, 44.57, 43.42, 42.66, 43.13,
  ];
  const expected = [
    70.46, 66.25, 66.48, 69.35, 66.29, 57.92, 62.88, 63.21, 56.01, 62.34, 54.67, 50.39, 40.02,
    41.49, 41.9, 45.5, 37.32, 33.09, 37.79,
  ];

  it('matches the worked example, first value on the 15th close', () => {
    const rsi = rsiSeries(fromCloses(closes), 14);
    expect(rsi.map((r) => Number(r.value.toFixed(2)))).toEqual(expected);
    expect(rsi[0]?.date).toBe(addDays('2024-01-01', 14));
    expect(requiredCandles.rsi(14)).toBe(15);
  });

  it('matches an independent Wilder RSI on a long random walk', () => {
    const candles = walk(300);
    const ref = defined(refRsi(candles.map((c) => c.close), 14));
    const got = rsiSeries(candles, 14).map((r) => r.value);
    expect(got).toHaveLength(ref.length);
    got.forEach((v, i) => expect(v).toBeCloseTo(ref[i] ?? Number.NaN, 8));
  });

  it('is 100 when there has been no loss', () => {
    expect(rsiSeries(fromCloses(Array.from({ length: 20 }, (_, i) => 10 + i))).at(-1)?.value).toBe(100);
  });
});

describe('moving averages', () => {
  const candles = walk(120);
  const closes = candles.map((c) => c.close);

  it('SMA(n) is the mean of the last n closes, from the n-th candle on', () => {
    const got = smaSeries(candles, 10);
    const ref = defined(refSma(closes, 10));
    expect(got[0]?.date).toBe(candles[9]?.date);
    got.forEach((v, i) => expect(v.value).toBeCloseTo(ref[i] ?? Number.NaN, 9));
  });

  it('EMA(n) follows x·k + prev·(1 − k) seeded with the first close, reported from the n-th', () => {
    const got = emaSeries(candles, 20);
    const ref = refEma(closes, 20).slice(19);
    expect(got).toHaveLength(ref.length);
    expect(got[0]?.date).toBe(candles[19]?.date);
    got.forEach((v, i) => expect(v.value).toBeCloseTo(ref[i] ?? Number.NaN, 9));
  });
});

describe('MACD(12,26,9)', () => {
  it('is EMA12 − EMA26 with a 9-EMA signal, reported once the signal has 9 values', () => {
    const candles = walk(200);
    const closes = candles.map((c) => c.close);
    const e12 = refEma(closes, 12);
    const e26 = refEma(closes, 26);
    // The library starts the signal EMA at the 26th close.
    const macdLine = closes.map((_, i) => (e12[i] ?? 0) - (e26[i] ?? 0)).slice(25);
    const signal = refEma(macdLine, 9);
    const got = macdSeries(candles);
    expect(got[0]?.date).toBe(candles[33]?.date);
    expect(requiredCandles.macd(12, 26, 9)).toBe(34);
    got.forEach((v, i) => {
      const k = i + 8;
      expect(v.value.macd).toBeCloseTo(macdLine[k] ?? Number.NaN, 9);
      expect(v.value.signal).toBeCloseTo(signal[k] ?? Number.NaN, 9);
      expect(v.value.histogram).toBeCloseTo(v.value.macd - v.value.signal, 12);
    });
  });

  it('rejects a fast period that is not below the slow one', () => {
    expect(() => macdSeries(walk(50), 26, 12, 9)).toThrow(/fast period 26 must be below slow 12/);
  });
});

describe('Bollinger(20,2)', () => {
  it('is SMA20 ± 2 population standard deviations, with %B and bandwidth', () => {
    const candles = walk(80);
    const got = bollingerSeries(candles, 20, 2);
    expect(got[0]?.date).toBe(candles[19]?.date);
    got.forEach((v, i) => {
      const window = candles.slice(i, i + 20).map((c) => c.close);
      const mean = window.reduce((s, x) => s + x, 0) / 20;
      const sd = Math.sqrt(window.reduce((s, x) => s + (x - mean) ** 2, 0) / 20);
      const close = candles[i + 19]?.close ?? Number.NaN;
      expect(v.value.middle).toBeCloseTo(mean, 9);
      expect(v.value.upper).toBeCloseTo(mean + 2 * sd, 9);
      expect(v.value.lower).toBeCloseTo(mean - 2 * sd, 9);
      expect(v.value.percentB).toBeCloseTo((close - (mean - 2 * sd)) / (4 * sd), 9);
      expect(v.value.bandwidth).toBeCloseTo((4 * sd) / mean, 9);
    });
  });
});

describe('ATR(14)', () => {
  it('is Wilder’s smoothing of the true range (the first candle’s TR is high − low)', () => {
    const candles = walk(100);
    const tr = candles.map((c, i) => {
      const prev = candles[i - 1];
      if (!prev) return c.high - c.low;
      return Math.max(c.high - c.low, Math.abs(c.high - prev.close), Math.abs(c.low - prev.close));
    });
    const ref = defined(refWilder(tr, 14));
    const got = atrSeries(candles, 14);
    expect(got[0]?.date).toBe(candles[13]?.date);
    expect(got).toHaveLength(ref.length);
    got.forEach((v, i) => expect(v.value).toBeCloseTo(ref[i] ?? Number.NaN, 9));
  });
});

describe('Stochastic(14,3,3)', () => {
  it('%K is the 3-day SMA of (close − low14) / (high14 − low14) · 100 and %D its 3-day SMA', () => {
    const candles = walk(90);
    const fastK = candles.map((c, i) => {
      if (i < 13) return null;
      const w = candles.slice(i - 13, i + 1);
      const hi = Math.max(...w.map((x) => x.high));
      const lo = Math.min(...w.map((x) => x.low));
      return ((c.close - lo) / (hi - lo)) * 100;
    });
    const slowK = refSma(defined(fastK), 3);
    const d = refSma(defined(slowK), 3);
    const got = stochasticSeries(candles, 14, 3, 3);
    expect(got[0]?.date).toBe(candles[17]?.date);
    expect(requiredCandles.stochastic(14, 3, 3)).toBe(18);
    got.forEach((v, i) => {
      expect(v.value.k).toBeCloseTo(defined(slowK)[i + 2] ?? Number.NaN, 9);
      expect(v.value.d).toBeCloseTo(defined(d)[i] ?? Number.NaN, 9);
    });
  });
});

describe('technicalIndicators', () => {
  it('gives each indicator its latest value and a short history ending on the last candle', () => {
    const candles = walk(260);
    const set = technicalIndicators(candles, { historyLength: 5, emaPeriods: [9], smaPeriods: [50, 200] });
    const last = candles.at(-1);
    expect(set.asOf).toBe(last?.date);
    expect(set.close).toBe(last?.close);
    for (const r of [set.rsi, set.macd, set.bollinger, set.atr, set.stochastic, ...set.ema, ...set.sma]) {
      expect(r.latest?.date).toBe(last?.date);
      expect(r.history).toHaveLength(5);
      expect(r.history.at(-1)).toEqual(r.latest);
    }
    expect(set.sma.map((s) => s.name)).toEqual(['SMA(50)', 'SMA(200)']);
    expect(set.sma[1]?.latest?.value).toBeCloseTo(
      candles.slice(-200).reduce((s, c) => s + c.close, 0) / 200,
      9,
    );
  });

  it('leaves latest null for an indicator the history is too short for', () => {
    const set = technicalIndicators(walk(60));
    expect(set.sma.find((s) => s.name === 'SMA(200)')?.latest).toBeNull();
    expect(set.sma.find((s) => s.name === 'SMA(200)')?.requiredCandles).toBe(200);
    expect(set.rsi.latest).not.toBeNull();
  });

  it('throws RangeError on NaN prices and on invalid periods', () => {
    const candles = walk(40);
    const bad = candles.map((c, i) => (i === 30 ? { ...c, close: Number.NaN } : c));
    expect(() => technicalIndicators(bad)).toThrow(/close on 2023-01-31 must be a positive number/);
    expect(() => rsiSeries(candles, 0)).toThrow(/period must be a whole number ≥ 1, got 0/);
    expect(() => technicalIndicators(candles, { emaPeriods: [2.5] })).toThrow(RangeError);
    expect(() => technicalIndicators([])).toThrow(/need at least 1 daily candles, got 0/);
  });
});
