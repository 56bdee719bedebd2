// The composite signal, the replay of a rule over the past (its hit rate, with no look-ahead)
// and beta-adjusted scenario targets.
import { describe, expect, it } from 'vitest';
import { addDays } from '../../server/lib/dates.ts';
import type { DailyCandle } from '../../server/analytics/candles.ts';
import {
  ACTION_THRESHOLD,
  compositeRule,
  historicalHitRate,
  scenarioTargets,
} from '../../server/analytics/signals.ts';
import type { SignalRule, TradingSignal } from '../../server/analytics/signals.ts';

function fromCloses(closes: readonly number[], start = '2024-01-01'): DailyCandle[] {
  return closes.map((close, i) => ({
    date: addDays(start, i),
    open: close,
    high: close * 1.005,
    low: close * 0.995,
    close,
    volume_usd: 1e6,
  }));
}

/** n closes drifting by `drift` a day (log), zig-zagging ±1 % around the drift. */
function trending(n: number, drift: number): number[] {
  const closes: number[] = [];
  let p = 100;
  for (let i = 0; i < n; i++) {
    p *= Math.exp(drift + (i % 2 ? 0.01 : -0.01));
    closes.push(p);
  }
  return closes;
}

/** A seeded random walk (32-bit LCG), the same every run. */
function walk(n: number, seed: number): number[] {
  let s = seed >>> 0;
  let p = 100;
  return Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    p *= Math.exp((s / 2 ** 32 - 0.5) * 0.08);
    return p;
  });
}

/** A rule that follows yesterday's move: buy after an up day, sell after a down day. */
const followYesterday: SignalRule = {
  name: 'follow_yesterday',
  description: 'buy after an up close, sell after a down close',
  minCandles: 2,
  evaluate(history) {
    const last = history.at(-1);
    const prev = history.at(-2);
    if (!last || !prev) throw new RangeError('need 2 candles');
    const action = last.close > prev.close ? 'buy' : last.close < prev.close ? 'sell' : 'hold';
    return { asOf: last.date, close: last.close, action, score: 0, confidence: 1, components: [], reasons: [] };
  },
};

describe('compositeRule', () => {
  it('votes buy in a steady uptrend: trend, regime and momentum outvote an overbought RSI', () => {
    const candles = fromCloses(trending(250, 0.004));
    const s = compositeRule.evaluate(candles);
    expect(Object.fromEntries(s.components.map((c) => [c.name, c.score]))).toEqual({
      trend_sma50: 1,
      trend_sma50_sma200: 1,
      rsi: -1,
      macd_histogram: 1,
      bollinger_percent_b: 0,
    });
    expect(s.score).toBeCloseTo(0.4, 12);
    expect(s.action).toBe('buy');
    expect(s.confidence).toBeCloseTo(0.4, 12);
    expect(s.reasons).toHaveLength(5);
    expect(s.reasons[0]).toMatch(/^Close [\d.]+ is above the 50-day SMA [\d.]+ \(uptrend\)\.$/);
    expect(s.reasons[2]).toMatch(/overbought/);
  });

  it('leaves out the SMA200 vote while the history is shorter than 200 days', () => {
    const s = compositeRule.evaluate(fromCloses(trending(120, 0.004)));
    expect(s.components.map((c) => c.name)).not.toContain('trend_sma50_sma200');
    expect(s.score).toBeCloseTo(0.25, 12);
    expect(s.action).toBe('hold');
    expect(s.confidence).toBeCloseTo(1 - 0.25 / ACTION_THRESHOLD, 12);
  });

  it('keeps score, action and confidence consistent with its votes on every day of a walk', () => {
    const candles = fromCloses(walk(260, 5));
    for (let i = 49; i < candles.length; i += 7) {
      const s = compositeRule.evaluate(candles.slice(0, i + 1));
      const votes = s.components.map((c) => c.score);
      expect(votes.every((v) => v === -1 || v === 0 || v === 1)).toBe(true);
      expect(s.score).toBeCloseTo(votes.reduce((a, v) => a + v, 0) / votes.length, 12);
      const expected = s.score >= ACTION_THRESHOLD ? 'buy' : s.score <= -ACTION_THRESHOLD ? 'sell' : 'hold';
      expect(s.action).toBe(expected);
      expect(s.confidence).toBeGreaterThanOrEqual(0);
      expect(s.confidence).toBeLessThanOrEqual(1);
      expect(s.asOf).toBe(candles[i]?.date);
    }
  });

  it('reads only the last 300 candles', () => {
    const candles = fromCloses(walk(400, 9));
    expect(compositeRule.evaluate(candles)).toEqual(compositeRule.evaluate(candles.slice(-300)));
  });

  it('throws RangeError below 50 candles or on NaN prices', () => {
    expect(() => compositeRule.evaluate(fromCloses(walk(49, 1)))).toThrow(
      /need at least 50 daily candles, got 49/,
    );
    const bad = fromCloses(walk(80, 1)).map((c, i) => (i === 70 ? { ...c, close: Number.NaN } : c));
    expect(() => compositeRule.evaluate(bad)).toThrow(RangeError);
  });
});

describe('historicalHitRate', () => {
  it('uses no look-ahead: a rule that would be always right with tomorrow’s close is never right', () => {
    // Closes alternate 100, 101, 100, 101, …: an up day is always followed by a down day. A
    // replay that leaked the next close into the rule's history would score 100 %.
    const candles = fromCloses(Array.from({ length: 40 }, (_, i) => (i % 2 ? 101 : 100)));
    const hr = historicalHitRate(candles, followYesterday, 1);
    expect(hr.buy.signals).toBe(19);
    expect(hr.sell.signals).toBe(19);
    expect(hr.all).toMatchObject({ signals: 38, hits: 0, hitRate: 0 });
    expect(hr.baseline).toEqual({ up: 0.5, down: 0.5 });
  });

  it('gives the rule exactly the candles up to the day it scores', () => {
    const candles = fromCloses(walk(30, 2));
    const seen: { lastDate: string | undefined; length: number }[] = [];
    const spy: SignalRule = {
      ...followYesterday,
      evaluate(history): TradingSignal {
        seen.push({ lastDate: history.at(-1)?.date, length: history.length });
        return followYesterday.evaluate(history);
      },
    };
    const hr = historicalHitRate(candles, spy, 3);
    // Days 2..27 (index 1..26) have a close 3 days later.
    expect(seen).toEqual(
      Array.from({ length: 26 }, (_, k) => ({ lastDate: candles[k + 1]?.date, length: k + 2 })),
    );
    expect(hr.daysEvaluated).toBe(26);
    expect([hr.from, hr.to]).toEqual([candles[1]?.date, candles[26]?.date]);
  });

  it('counts a buy as a hit when the close h days later is higher, a sell when lower', () => {
    // 100 → 110 → 105 → 120 → 90: with h = 1, buy on day 2 (110 → 105, miss), sell on day 3
    // (105 → 120, miss), buy on day 4 (120 → 90, miss); with h = 2, buy on day 2 (110 → 120,
    // hit), sell on day 3 (105 → 90, hit).
    const candles = fromCloses([100, 110, 105, 120, 90]);
    expect(historicalHitRate(candles, followYesterday, 1).all).toMatchObject({ signals: 3, hits: 0, hitRate: 0 });
    const h2 = historicalHitRate(candles, followYesterday, 2);
    expect(h2.buy).toMatchObject({ signals: 1, hits: 1, hitRate: 1 });
    expect(h2.sell).toMatchObject({ signals: 1, hits: 1, hitRate: 1 });
  });

  it('skips days whose horizon lands on a missing date, and reports null rates with no signals', () => {
    const candles = fromCloses([100, 110, 105, 120, 90]).filter((c) => c.date !== '2024-01-04');
    // Jan 2 → Jan 4 is missing; only Jan 3 (→ Jan 5) is scored: a sell, 105 → 90, a hit.
    const hr = historicalHitRate(candles, followYesterday, 2);
    expect(hr.daysEvaluated).toBe(1);
    expect(hr.sell).toMatchObject({ signals: 1, hits: 1, hitRate: 1 });
    expect(hr.buy).toMatchObject({ signals: 0, hits: 0, hitRate: null, ci95: null });
    expect(hr.baseline).toEqual({ up: 0, down: 1 });
  });

  it('replays the composite rule exactly as a day-by-day evaluation would', () => {
    const candles = fromCloses(walk(420, 4));
    const h = 5;
    let signals = 0;
    let hits = 0;
    // Only days with the rule's full 300 candles behind them: the rule answered today.
    for (let i = 299; i + h < candles.length; i++) {
      const s = compositeRule.evaluate(candles.slice(0, i + 1));
      const now = candles[i]?.close ?? Number.NaN;
      const later = candles[i + h]?.close ?? Number.NaN;
      if (s.action === 'hold') continue;
      signals++;
      if (s.action === 'buy' ? later > now : later < now) hits++;
    }
    const hr = historicalHitRate(candles, compositeRule, h);
    expect(hr.all.signals).toBe(signals);
    expect(hr.all.hits).toBe(hits);
    expect(hr.all.signals).toBeGreaterThan(0);
    expect(hr.buy.signals + hr.sell.signals).toBe(hr.all.signals);
  });

  it('replays exactly replayDays days, the last ones with an outcome, each with the full history the rule reads', () => {
    const candles = fromCloses(walk(800, 5));
    const lengths: number[] = [];
    const spy: SignalRule = {
      ...followYesterday,
      fullCandles: 300,
      evaluate(history): TradingSignal {
        lengths.push(history.length);
        return followYesterday.evaluate(history);
      },
    };
    const hr = historicalHitRate(candles, spy, 7, { replayDays: 365 });
    expect(hr.daysEvaluated).toBe(365);
    expect(lengths).toHaveLength(365);
    expect(Math.min(...lengths)).toBeGreaterThanOrEqual(300);
    expect(hr.to).toBe(candles[candles.length - 1 - 7]!.date);
    expect(hr.replayDaysRequested).toBe(365);
    // Too short a history: fewer days, said by daysEvaluated < replayDaysRequested.
    expect(historicalHitRate(candles.slice(0, 400), spy, 7, { replayDays: 365 }).daysEvaluated).toBe(400 - 299 - 7);
  });

  it('puts the base rate of the same days beside each hit rate, and a 95% interval widened for overlapping windows', () => {
    // A rule that always buys: its hit rate IS the up base rate, so no edge.
    const alwaysBuy: SignalRule = { ...followYesterday, evaluate: (h) => ({ ...followYesterday.evaluate(h), action: 'buy' }) };
    const candles = fromCloses(walk(600, 6));
    const h1 = historicalHitRate(candles, alwaysBuy, 1);
    expect(h1.buy.baseRate).toBe(h1.baseline.up);
    expect(h1.buy.hitRate).toBe(h1.baseline.up);
    expect(h1.buy.excessOverBase).toBe(0);
    expect(h1.buy.versusBase).toBe('indistinguishable');
    const h7 = historicalHitRate(candles, alwaysBuy, 7);
    const p = h7.buy.hitRate!;
    const binomialHalf = 1.959964 * Math.sqrt((p * (1 - p)) / h7.buy.signals);
    const half = (h7.buy.ci95![1] - h7.buy.ci95![0]) / 2;
    // Consecutive 7-day windows share 6 days: the interval is much wider than independent trials'.
    expect(half).toBeGreaterThan(1.5 * binomialHalf);
    expect(h7.buy.ci95![0]).toBeLessThanOrEqual(p);
    expect(h7.buy.ci95![1]).toBeGreaterThanOrEqual(p);
    expect(h7.sell).toMatchObject({ signals: 0, baseRate: h7.baseline.down, ci95: null });
  });

  it('throws RangeError on a bad horizon or too little history for the rule', () => {
    const candles = fromCloses(walk(60, 3));
    expect(() => historicalHitRate(candles, compositeRule, 0)).toThrow(/horizonDays must be a whole number ≥ 1/);
    expect(() => historicalHitRate(candles, compositeRule, 1.5)).toThrow(RangeError);
    expect(() => historicalHitRate(candles.slice(0, 30), compositeRule, 1)).toThrow(
      /need at least 50 daily candles, got 30/,
    );
  });
});

describe('scenarioTargets', () => {
  it('maps a BTC move m to price · (1 + m)^beta', () => {
    expect(scenarioTargets(100, 2, [-0.1, 0, 0.1]).map((t) => t.targetPrice)).toEqual([
      expect.closeTo(81, 10),
      100,
      expect.closeTo(121, 10),
    ]);
    const one = scenarioTargets(50, 1, [-0.2]);
    expect(one[0]?.assetMove).toBeCloseTo(-0.2, 12);
    expect(one[0]?.targetPrice).toBeCloseTo(40, 12);
    expect(scenarioTargets(50, 0, [0.5])[0]?.targetPrice).toBe(50);
  });

  it('keeps targets positive for a large fall with high beta', () => {
    const [t] = scenarioTargets(10, 3, [-0.5]);
    expect(t?.targetPrice).toBeCloseTo(1.25, 12);
  });

  it('throws RangeError on a move of −100 % or worse, a non-positive price or NaN beta', () => {
    expect(() => scenarioTargets(100, 1, [-1])).toThrow(/above −1/);
    expect(() => scenarioTargets(0, 1, [0.1])).toThrow(/price must be a positive number/);
    expect(() => scenarioTargets(100, Number.NaN, [0.1])).toThrow(/beta must be a finite number/);
  });
});
