// Risk measures and the candle helpers they rest on, checked against values worked out by hand
// or computed independently in the test from their textbook definitions.
import { describe, expect, it } from 'vitest';
import { addDays } from '../../server/lib/dates.ts';
import {
  alignByDate,
  assertCandles,
  lastNDays,
  logReturns,
} from '../../server/analytics/candles.ts';
import type { DailyCandle } from '../../server/analytics/candles.ts';
import {
  betaAndCorrelation,
  correlationMatrix,
  distanceFromAllTimeHigh,
  maxDrawdown,
  percentChange,
  logReturnPerformance,
  realisedVolatility,
} from '../../server/analytics/risk.ts';

/** Daily candles on consecutive days from `start`, open = high = low = close. */
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

/** Deterministic uniform numbers in [0, 1) (a 32-bit LCG), so fixtures need no randomness. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Closes from 100 whose daily log returns are exactly `returns`. */
function closesFromLogReturns(returns: readonly number[]): number[] {
  const closes = [100];
  for (const r of returns) closes.push((closes.at(-1) ?? 100) * Math.exp(r));
  return closes;
}

function sampleSd(xs: number[]): number {
  const m = xs.reduce((s, x) => s + x, 0) / xs.length;
  return Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1));
}

describe('candle helpers', () => {
  it('log returns are ln(close_t / close_t−1), dated by the later day', () => {
    const r = logReturns(fromCloses([100, 110, 99]));
    expect(r.map((x) => x.date)).toEqual(['2024-01-02', '2024-01-03']);
    expect(r[0]?.value).toBeCloseTo(Math.log(1.1), 12);
    expect(r[1]?.value).toBeCloseTo(Math.log(0.9), 12);
  });

  it('alignByDate keeps only the dates both series have, in order', () => {
    const a = fromCloses([1, 2, 3, 4, 5]); // Jan 1..5
    const b = fromCloses([10, 20, 30, 40], '2024-01-03'); // Jan 3..6
    expect(alignByDate(a, b).map((p) => [p.date, p.a.close, p.b.close])).toEqual([
      ['2024-01-03', 3, 10],
      ['2024-01-04', 4, 20],
      ['2024-01-05', 5, 30],
    ]);
  });

  it('a window of N days holds the candles of the last N returns', () => {
    const candles = fromCloses([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]); // Jan 1..10
    const w = lastNDays(candles, 3);
    expect(w.map((c) => c.date)).toEqual(['2024-01-07', '2024-01-08', '2024-01-09', '2024-01-10']);
    expect(lastNDays(candles, 30)).toHaveLength(10);
  });

  it('rejects unsorted, duplicate or malformed dates and non-positive or NaN prices', () => {
    const ok = fromCloses([1, 2, 3]);
    const swapped = [ok[1], ok[0], ok[2]].filter((c) => c !== undefined);
    expect(() => assertCandles(swapped, 1)).toThrow(/strictly ascending/);
    expect(() => assertCandles([...ok, { ...ok[0], date: '2024-01-03' } as DailyCandle], 1)).toThrow(
      RangeError,
    );
    expect(() => assertCandles([{ ...ok[0], date: '2024-02-30' } as DailyCandle], 1)).toThrow(
      /invalid date "2024-02-30"/,
    );
    expect(() => assertCandles([{ ...ok[0], close: Number.NaN } as DailyCandle], 1)).toThrow(
      /close on 2024-01-01 must be a positive number, got NaN/,
    );
    expect(() => assertCandles([{ ...ok[0], low: 0 } as DailyCandle], 1)).toThrow(RangeError);
    expect(() => assertCandles([{ ...ok[0], volume_usd: -5 } as DailyCandle], 1)).toThrow(
      /volume_usd/,
    );
  });
});

describe('realisedVolatility', () => {
  it('is the sample standard deviation of daily log returns, annualised with √365', () => {
    const closes = [100, 110, 99, 108.9, 104];
    const returns = closes.slice(1).map((c, i) => Math.log(c / (closes[i] ?? 1)));
    const v = realisedVolatility(fromCloses(closes));
    expect(v.observations).toBe(4);
    expect(v.daily).toBeCloseTo(sampleSd(returns), 12);
    expect(v.annualised).toBeCloseTo(sampleSd(returns) * Math.sqrt(365), 12);
    expect([v.from, v.to]).toEqual(['2024-01-01', '2024-01-05']);
  });

  it('throws RangeError on a series too short to have two returns', () => {
    expect(() => realisedVolatility(fromCloses([100, 101]))).toThrow(
      /need at least 3 daily candles, got 2/,
    );
  });
});

describe('maxDrawdown', () => {
  it('finds the deepest peak-to-trough fall of a hand-made series, with its dates', () => {
    // Peaks 120 (Jan 2) → trough 60 (Jan 5): −50 %, deeper than 120 → 90 (−25 %); back above
    // 120 on Jan 6.
    const dd = maxDrawdown(fromCloses([100, 120, 90, 110, 60, 130, 125]));
    expect(dd.depth).toBeCloseTo(0.5, 12);
    expect(dd.peak).toEqual({ date: '2024-01-02', price: 120 });
    expect(dd.trough).toEqual({ date: '2024-01-05', price: 60 });
    expect(dd.recovered).toEqual({ date: '2024-01-06', price: 130 });
  });

  it('a later, deeper fall from a new peak wins and may be unrecovered', () => {
    const dd = maxDrawdown(fromCloses([100, 80, 200, 100, 150]));
    expect(dd.depth).toBeCloseTo(0.5, 12);
    expect(dd.peak.date).toBe('2024-01-03');
    expect(dd.trough.date).toBe('2024-01-04');
    expect(dd.recovered).toBeNull();
  });

  it('is 0 for a series that never falls', () => {
    const dd = maxDrawdown(fromCloses([1, 2, 3]));
    expect(dd.depth).toBe(0);
    expect(dd.recovered).toBeNull();
  });
});

describe('logReturnPerformance', () => {
  it('is the mean daily excess log return over the sd of the same log returns, × √365', () => {
    const closes = [100, 102, 101, 104, 103, 107];
    const logs = closes.slice(1).map((c, i) => Math.log(c / (closes[i] ?? 1)));
    const mean = logs.reduce((s, x) => s + x, 0) / logs.length;
    const p0 = logReturnPerformance(fromCloses(closes));
    expect(p0.sharpe).toBeCloseTo((mean / sampleSd(logs)) * Math.sqrt(365), 10);
    expect(p0.volatility.daily).toBeCloseTo(sampleSd(logs), 12);

    const p5 = logReturnPerformance(fromCloses(closes), 0.05);
    expect(p5.sharpe).toBeCloseTo(((mean - Math.log(1.05) / 365) / sampleSd(logs)) * Math.sqrt(365), 10);
    expect(p5.riskFreeRate).toBe(0.05);
  });

  it('annualises the return geometrically: a series that falls has a negative return and Sharpe ratio, though its mean simple return is positive', () => {
    // +20% then -18%, ten times: each pair multiplies by 0.984, the mean simple return is +1% a day.
    const closes = [100];
    for (let i = 0; i < 20; i++) closes.push(closes.at(-1)! * (i % 2 === 0 ? 1.2 : 0.82));
    const simple = closes.slice(1).map((c, i) => c / closes[i]! - 1);
    expect(simple.reduce((a, b) => a + b, 0) / simple.length).toBeGreaterThan(0);
    const p = logReturnPerformance(fromCloses(closes));
    expect(p.totalReturn).toBeCloseTo(0.984 ** 10 - 1, 12);
    expect(p.annualisedGeometricReturn).toBeCloseTo(0.984 ** (10 * 365 / 20) - 1, 12);
    expect(p.annualisedGeometricReturn).toBeLessThan(0);
    expect(p.sharpe).toBeLessThan(0);
  });

  it('is null for a series with no variance', () => {
    expect(logReturnPerformance(fromCloses([5, 5, 5, 5])).sharpe).toBeNull();
  });
});

describe('betaAndCorrelation', () => {
  const rand = seeded(7);
  const benchReturns = Array.from({ length: 120 }, () => (rand() - 0.5) * 0.08);

  it('an asset whose log returns are 2 × the benchmark’s has beta 2 and correlation 1', () => {
    const bench = fromCloses(closesFromLogReturns(benchReturns));
    const asset = fromCloses(closesFromLogReturns(benchReturns.map((r) => 2 * r)));
    const b = betaAndCorrelation(asset, bench);
    expect(b.beta).toBeCloseTo(2, 10);
    expect(b.correlation).toBeCloseTo(1, 10);
    expect(b.overlappingDays).toBe(121);
    expect(b.observations).toBe(120);
  });

  it('pairs returns over the same two days when one series has extra or missing dates', () => {
    const bench = fromCloses(closesFromLogReturns(benchReturns));
    const double = fromCloses(closesFromLogReturns(benchReturns.map((r) => 2 * r)));
    // Drop every 5th day from the asset and add days the benchmark does not have: after the
    // inner join, each asset return still spans the same days as the benchmark's.
    const asset = [
      ...double.filter((_, i) => i % 5 !== 3),
      ...fromCloses([1, 2, 3], addDays(double.at(-1)?.date ?? '2024-01-01', 1)),
    ];
    const b = betaAndCorrelation(asset, bench);
    expect(b.beta).toBeCloseTo(2, 10);
    expect(b.correlation).toBeCloseTo(1, 10);
    expect(b.overlappingDays).toBe(121 - 24);
  });

  it('a negatively scaled asset has beta −0.5 and correlation −1', () => {
    const bench = fromCloses(closesFromLogReturns(benchReturns));
    const asset = fromCloses(closesFromLogReturns(benchReturns.map((r) => -0.5 * r)));
    const b = betaAndCorrelation(asset, bench);
    expect(b.beta).toBeCloseTo(-0.5, 10);
    expect(b.correlation).toBeCloseTo(-1, 10);
  });

  it('throws RangeError when the series share fewer than 3 dates', () => {
    expect(() =>
      betaAndCorrelation(fromCloses([1, 2, 3]), fromCloses([1, 2, 3], '2025-01-01')),
    ).toThrow(/share 0 dates; need at least 3/);
  });
});

describe('distanceFromAllTimeHigh', () => {
  it('measures the last close against the highest high and dates it', () => {
    const candles = fromCloses([100, 150, 120, 90]);
    const spike = candles[1];
    if (spike) spike.high = 160;
    const d = distanceFromAllTimeHigh(candles);
    expect(d.ath).toEqual({ date: '2024-01-02', price: 160 });
    expect(d.last).toEqual({ date: '2024-01-04', price: 90 });
    expect(d.distance).toBeCloseTo(90 / 160 - 1, 12);
    expect(d.daysSinceAth).toBe(2);
  });
});

describe('correlationMatrix', () => {
  const rand = seeded(11);
  const base = Array.from({ length: 60 }, () => (rand() - 0.5) * 0.1);
  const other = Array.from({ length: 60 }, () => (rand() - 0.5) * 0.1);
  const series = [
    { id: 'a', candles: fromCloses(closesFromLogReturns(base)) },
    { id: 'b', candles: fromCloses(closesFromLogReturns(base.map((r) => 3 * r))) },
    { id: 'c', candles: fromCloses(closesFromLogReturns(base.map((r) => -r))) },
    { id: 'd', candles: fromCloses(closesFromLogReturns(other)) },
    // Listed later: only its last 21 days overlap the others.
    { id: 'e', candles: fromCloses(closesFromLogReturns(other.slice(40)), '2024-02-10') },
  ];
  const m = correlationMatrix(series);

  it('is symmetric with a unit diagonal', () => {
    for (let i = 0; i < series.length; i++) {
      expect(m.matrix[i]?.[i]).toBe(1);
      for (let j = 0; j < series.length; j++) {
        expect(m.matrix[i]?.[j]).toBe(m.matrix[j]?.[i]);
        expect(m.overlappingDays[i]?.[j]).toBe(m.overlappingDays[j]?.[i]);
      }
    }
  });

  it('gives ±1 for scaled copies and the Pearson value otherwise', () => {
    expect(m.matrix[0]?.[1]).toBeCloseTo(1, 10);
    expect(m.matrix[0]?.[2]).toBeCloseTo(-1, 10);
    const mx = base.reduce((s, x) => s + x, 0) / base.length;
    const my = other.reduce((s, x) => s + x, 0) / other.length;
    let sxy = 0;
    let sxx = 0;
    let syy = 0;
    base.forEach((x, k) => {
      const y = other[k] ?? 0;
      sxy += (x - mx) * (y - my);
      sxx += (x - mx) ** 2;
      syy += (y - my) ** 2;
    });
    expect(m.matrix[0]?.[3]).toBeCloseTo(sxy / Math.sqrt(sxx * syy), 10);
  });

  it('reports how many days each pair has in common', () => {
    expect(m.ids).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(m.overlappingDays[0]?.[1]).toBe(61);
    expect(m.overlappingDays[0]?.[4]).toBe(21);
    expect(m.overlappingDays[4]?.[4]).toBe(21);
    // On its 21 common days, e's returns are exactly d's last 20.
    expect(m.matrix[3]?.[4]).toBeCloseTo(1, 10);
  });

  it('rejects duplicate ids', () => {
    expect(() => correlationMatrix([series[0], series[0]].filter((s) => s !== undefined))).toThrow(
      /duplicate series ids/,
    );
  });
});

describe('percentChange', () => {
  it('compares the last close with the close N calendar days earlier', () => {
    const c = percentChange(fromCloses([100, 101, 102, 103, 104, 105, 106, 120]), 7);
    expect(c.from).toEqual({ date: '2024-01-01', price: 100 });
    expect(c.to).toEqual({ date: '2024-01-08', price: 120 });
    expect(c.change).toBeCloseTo(0.2, 12);
  });

  it('falls back to the last close before a missing day, and refuses a too-short series', () => {
    const candles = fromCloses([100, 101, 102, 103, 104]).filter((x) => x.date !== '2024-01-03');
    expect(percentChange(candles, 2).from.date).toBe('2024-01-02');
    expect(() => percentChange(candles, 30)).toThrow(/need a close on or before 2023-12-06/);
  });
});
