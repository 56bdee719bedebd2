// Trading signals for price-prediction's get_trading_signal and scenario_analysis: a documented
// composite rule, the replay of any rule over an asset's past (its historical hit rate, with no
// look-ahead) and beta-adjusted scenario targets. None of this is advice: the hit rate is there
// so a reader can see how often the very same rule was right on this asset before.

import { addDays, assertCandles } from './candles.ts';
import type { DailyCandle } from './candles.ts';
import { technicalIndicators } from './indicators.ts';

export type SignalAction = 'buy' | 'hold' | 'sell';

export interface SignalComponent {
  name: 'trend_sma50' | 'trend_sma50_sma200' | 'rsi' | 'macd_histogram' | 'bollinger_percent_b';
  /** −1 (bearish) … +1 (bullish). */
  score: number;
  weight: number;
  reason: string;
}

export interface TradingSignal {
  asOf: string;
  close: number;
  action: SignalAction;
  /** Weighted mean of the component scores, in [−1, 1]. */
  score: number;
  /** In [0, 1]; see compositeRule for how it is derived. */
  confidence: number;
  components: SignalComponent[];
  reasons: string[];
}

/** A rule maps the candles known at the close of a day (that day last) to a signal. */
export interface SignalRule {
  name: string;
  description: string;
  /** Fewest candles the rule can decide on; shorter histories are never given to it. */
  minCandles: number;
  evaluate(history: readonly DailyCandle[]): TradingSignal;
}

/** |score| at or above this makes a buy (score > 0) or a sell (score < 0). */
export const ACTION_THRESHOLD = 0.35;
/** The composite rule reads at most this many recent candles: SMA200 plus warm-up. */
const LOOKBACK = 300;

/**
 * The composite rule. Each component scores −1 … +1 with weight 1:
 * - trend_sma50: close above the 50-day SMA +1, below −1;
 * - trend_sma50_sma200: SMA50 above SMA200 +1 (golden cross regime), below −1; left out while
 *   the history is shorter than 200 days;
 * - rsi: RSI(14) ≤ 30 (oversold) +1, ≥ 70 (overbought) −1, otherwise 0;
 * - macd_histogram: MACD(12,26,9) histogram above zero +1, below −1;
 * - bollinger_percent_b: mean reversion within Bollinger(20,2), 1 − 2·%B clamped to [−1, 1]
 *   (+1 at the lower band, 0 mid-band, −1 at the upper band).
 * The score is the weighted mean. score ≥ 0.35 → buy, ≤ −0.35 → sell, otherwise hold.
 * Confidence is |score| for a buy or sell (how far the evidence agrees, net) and
 * 1 − |score| / 0.35 for a hold (how far from either threshold). Uses the last 300 candles.
 */
export const compositeRule: SignalRule = {
  name: 'composite_trend_momentum_meanrev_v1',
  description:
    'Mean of: close vs SMA50, SMA50 vs SMA200, RSI(14) 30/70 extremes, MACD(12,26,9) histogram ' +
    `sign, Bollinger(20,2) %B mean reversion; buy at score ≥ ${ACTION_THRESHOLD}, sell at ≤ −${ACTION_THRESHOLD}.`,
  minCandles: 50,
  evaluate(history) {
    const recent = history.slice(-LOOKBACK);
    assertCandles(recent, 50, 'candles for the composite rule');
    const set = technicalIndicators(recent, { historyLength: 1, emaPeriods: [], smaPeriods: [50, 200] });
    const last = recent.at(-1);
    const sma50 = set.sma[0]?.latest?.value;
    const sma200 = set.sma[1]?.latest?.value;
    const rsi = set.rsi.latest?.value;
    const macd = set.macd.latest?.value;
    const bands = set.bollinger.latest?.value;
    if (!last || sma50 === undefined || rsi === undefined || !macd || !bands) {
      throw new RangeError('composite rule: need at least 50 daily candles');
    }
    const close = last.close;
    const components: SignalComponent[] = [];

    components.push({
      name: 'trend_sma50',
      score: Math.sign(close - sma50),
      weight: 1,
      reason: `Close ${fmt(close)} is ${close >= sma50 ? 'above' : 'below'} the 50-day SMA ${fmt(sma50)} (${close >= sma50 ? 'uptrend' : 'downtrend'}).`,
    });
    if (sma200 !== undefined) {
      components.push({
        name: 'trend_sma50_sma200',
        score: Math.sign(sma50 - sma200),
        weight: 1,
        reason: `50-day SMA ${fmt(sma50)} is ${sma50 >= sma200 ? 'above' : 'below'} the 200-day SMA ${fmt(sma200)} (${sma50 >= sma200 ? 'bullish' : 'bearish'} regime).`,
      });
    }
    components.push({
      name: 'rsi',
      score: rsi <= 30 ? 1 : rsi >= 70 ? -1 : 0,
      weight: 1,
      reason:
        rsi <= 30
          ? `RSI(14) ${fmt(rsi, 3)} is oversold (≤ 30).`
          : rsi >= 70
            ? `RSI(14) ${fmt(rsi, 3)} is overbought (≥ 70).`
            : `RSI(14) ${fmt(rsi, 3)} is neutral (between 30 and 70).`,
    });
    components.push({
      name: 'macd_histogram',
      score: Math.sign(macd.histogram),
      weight: 1,
      reason: `MACD histogram ${fmt(macd.histogram)} is ${macd.histogram >= 0 ? 'positive (momentum up)' : 'negative (momentum down)'}.`,
    });
    const meanReversion = Math.max(-1, Math.min(1, 1 - 2 * bands.percentB));
    components.push({
      name: 'bollinger_percent_b',
      score: meanReversion,
      weight: 1,
      reason: `Bollinger %B ${fmt(bands.percentB, 3)}: close is ${describePercentB(bands.percentB)}.`,
    });

    const totalWeight = components.reduce((s, c) => s + c.weight, 0);
    const score = components.reduce((s, c) => s + c.score * c.weight, 0) / totalWeight;
    const action: SignalAction =
      score >= ACTION_THRESHOLD ? 'buy' : score <= -ACTION_THRESHOLD ? 'sell' : 'hold';
    const confidence = action === 'hold' ? 1 - Math.abs(score) / ACTION_THRESHOLD : Math.abs(score);
    return {
      asOf: last.date,
      close,
      action,
      score,
      confidence: Math.max(0, Math.min(1, confidence)),
      components,
      reasons: components.map((c) => c.reason),
    };
  },
};

export interface HitCount {
  /** Days the rule said this. */
  signals: number;
  /** Of those, how many the price then moved the called way over the horizon. */
  hits: number;
  /** hits / signals; null with no signals. */
  hitRate: number | null;
}

export interface HistoricalHitRate {
  rule: string;
  horizonDays: number;
  buy: HitCount;
  sell: HitCount;
  /** Buys and sells together. */
  all: HitCount;
  /** Days the rule was replayed on (those with a close `horizonDays` later). */
  daysEvaluated: number;
  /** First and last replayed day; null if none. */
  from: string | null;
  to: string | null;
}

/**
 * Replays `rule` on every past day that has a close exactly `horizonDays` calendar days later,
 * giving it only the candles up to and including that day (no look-ahead). A buy is a hit when
 * the later close is higher, a sell when it is lower; holds are not scored.
 */
export function historicalHitRate(
  candles: readonly DailyCandle[],
  rule: SignalRule,
  horizonDays: number,
): HistoricalHitRate {
  if (!Number.isInteger(horizonDays) || horizonDays < 1) {
    throw new RangeError(`horizonDays must be a whole number ≥ 1, got ${horizonDays}`);
  }
  assertCandles(candles, rule.minCandles, `candles for rule ${rule.name}`);
  const closeOn = new Map(candles.map((c) => [c.date, c.close]));
  const buy = { signals: 0, hits: 0 };
  const sell = { signals: 0, hits: 0 };
  let daysEvaluated = 0;
  let from: string | null = null;
  let to: string | null = null;
  for (let i = rule.minCandles - 1; i < candles.length; i++) {
    const day = candles[i];
    if (!day) continue;
    const later = closeOn.get(addDays(day.date, horizonDays));
    if (later === undefined) continue;
    const signal = rule.evaluate(candles.slice(0, i + 1));
    daysEvaluated++;
    from ??= day.date;
    to = day.date;
    if (signal.action === 'buy') {
      buy.signals++;
      if (later > day.close) buy.hits++;
    } else if (signal.action === 'sell') {
      sell.signals++;
      if (later < day.close) sell.hits++;
    }
  }
  const count = (c: { signals: number; hits: number }): HitCount => ({
    ...c,
    hitRate: c.signals > 0 ? c.hits / c.signals : null,
  });
  return {
    rule: rule.name,
    horizonDays,
    buy: count(buy),
    sell: count(sell),
    all: count({ signals: buy.signals + sell.signals, hits: buy.hits + sell.hits }),
    daysEvaluated,
    from,
    to,
  };
}

export interface ScenarioTarget {
  /** The BTC move assumed, as a fraction (−0.2 = −20 %). */
  btcMove: number;
  /** (1 + btcMove)^beta − 1. */
  assetMove: number;
  targetPrice: number;
}

/**
 * Beta-adjusted targets for given BTC moves. Beta is measured on log returns, so a BTC move m
 * maps to an asset log move of beta · ln(1 + m): target = price · (1 + m)^beta, which stays
 * positive for any move above −100 %.
 */
export function scenarioTargets(
  price: number,
  beta: number,
  btcMoves: readonly number[],
): ScenarioTarget[] {
  if (!(Number.isFinite(price) && price > 0)) {
    throw new RangeError(`price must be a positive number, got ${price}`);
  }
  if (!Number.isFinite(beta)) throw new RangeError(`beta must be a finite number, got ${beta}`);
  return btcMoves.map((m) => {
    if (!(Number.isFinite(m) && m > -1)) {
      throw new RangeError(`a BTC move must be a fraction above −1 (−100 %), got ${m}`);
    }
    const assetMove = (1 + m) ** beta - 1;
    return { btcMove: m, assetMove, targetPrice: price * (1 + assetMove) };
  });
}

function describePercentB(b: number): string {
  if (b > 1) return 'above the upper band (stretched up)';
  if (b < 0) return 'below the lower band (stretched down)';
  if (b >= 0.8) return 'near the upper band';
  if (b <= 0.2) return 'near the lower band';
  return 'inside the bands';
}

function fmt(x: number, digits = 6): string {
  return String(Number(x.toPrecision(digits)));
}
