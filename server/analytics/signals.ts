// Trading signals for price-prediction's get_trading_signal and scenario_analysis: a documented
// composite rule, the replay of any rule over an asset's past (its historical hit rate, with no
// look-ahead) and beta-adjusted scenario targets. None of this is advice: the hit rate is there
// so a reader can see how often the very same rule was right on this asset before.

import { addDays } from '../lib/dates.ts';
import { assertCandles } from './candles.ts';
import type { DailyCandle } from './candles.ts';
import { technicalIndicators } from './indicators.ts';

export type SignalAction = 'buy' | 'hold' | 'sell';

export interface SignalComponent {
  /** The composite rule's are trend_sma50, trend_sma50_sma200, rsi, macd_histogram, bollinger_percent_b. */
  name: string;
  /** The component's vote: +1 bullish, −1 bearish, 0 neither. */
  score: number;
  reason: string;
}

export interface TradingSignal {
  asOf: string;
  close: number;
  action: SignalAction;
  /** Mean of the component votes, in [−1, 1]. */
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
  /**
   * Candles the rule reads in full (every component present and warmed up). A replay scores only
   * days with this much history, so the rule replayed is the rule answered today. Default minCandles.
   */
  fullCandles?: number;
  evaluate(history: readonly DailyCandle[]): TradingSignal;
}

/** |score| at or above this makes a buy (score > 0) or a sell (score < 0): net two votes. */
export const ACTION_THRESHOLD = 0.35;
/** The composite rule reads at most this many recent candles: SMA200 plus warm-up. */
const LOOKBACK = 300;

/**
 * The composite rule: each component votes +1 (bullish), −1 (bearish) or 0.
 * - trend_sma50: close above the 50-day SMA +1, below −1;
 * - trend_sma50_sma200: SMA50 above SMA200 +1 (bullish regime), below −1; left out while the
 *   history is shorter than 200 days;
 * - rsi: RSI(14) ≤ 30 (oversold) +1, ≥ 70 (overbought) −1, otherwise 0;
 * - macd_histogram: MACD(12,26,9) histogram above zero +1, below −1;
 * - bollinger_percent_b: mean reversion at the Bollinger(20,2) bands: a close below the lower
 *   band (%B < 0) +1, above the upper band (%B > 1) −1, otherwise 0.
 * The score is the mean vote, in [−1, 1]. With 4 or 5 components, score ≥ 0.35 (at least two
 * more bullish votes than bearish) → buy, ≤ −0.35 → sell, otherwise hold. Confidence is |score|
 * for a buy or sell (the net share of agreeing votes) and 1 − |score| / 0.35 for a hold (how far
 * the score sits from either threshold). Reads only the last 300 candles.
 */
export const compositeRule: SignalRule = {
  name: 'composite_trend_momentum_meanrev_v1',
  description:
    'Mean of ±1 votes: close vs SMA50, SMA50 vs SMA200, RSI(14) beyond 30/70, MACD(12,26,9) ' +
    'histogram sign, close outside Bollinger(20,2); buy at ≥ 0.35, sell at ≤ −0.35, else hold.',
  minCandles: 50,
  fullCandles: LOOKBACK,
  evaluate(history) {
    if (history.length < 50) {
      throw new RangeError(
        `candles for the composite rule: need at least 50 daily candles, got ${history.length}`,
      );
    }
    const recent = history.slice(-LOOKBACK);
    const set = technicalIndicators(recent, {
      historyLength: 1,
      emaPeriods: [],
      smaPeriods: [50, 200],
    });
    const last = recent.at(-1);
    const sma50 = set.sma[0]?.latest?.value;
    const sma200 = set.sma[1]?.latest?.value;
    const rsi = set.rsi.latest?.value;
    const macd = set.macd.latest?.value;
    const bands = set.bollinger.latest?.value;
    if (!last || sma50 === undefined || rsi === undefined || !macd || !bands) {
      throw new RangeError('candles for the composite rule: need at least 50 daily candles');
    }
    const close = last.close;
    const components: SignalComponent[] = [];
    const position = ['below', 'at', 'above'] as const;

    const closeVsSma = Math.sign(close - sma50);
    components.push({
      name: 'trend_sma50',
      score: closeVsSma,
      reason:
        `Close ${fmt(close)} is ${position[closeVsSma + 1]} the 50-day SMA ${fmt(sma50)}` +
        (closeVsSma > 0 ? ' (uptrend).' : closeVsSma < 0 ? ' (downtrend).' : '.'),
    });
    if (sma200 !== undefined) {
      const regime = Math.sign(sma50 - sma200);
      components.push({
        name: 'trend_sma50_sma200',
        score: regime,
        reason:
          `50-day SMA ${fmt(sma50)} is ${position[regime + 1]} the 200-day SMA ${fmt(sma200)}` +
          (regime > 0 ? ' (bullish regime).' : regime < 0 ? ' (bearish regime).' : '.'),
      });
    }
    components.push({
      name: 'rsi',
      score: rsi <= 30 ? 1 : rsi >= 70 ? -1 : 0,
      reason:
        rsi <= 30
          ? `RSI(14) ${fmt(rsi, 3)} is oversold (≤ 30).`
          : rsi >= 70
            ? `RSI(14) ${fmt(rsi, 3)} is overbought (≥ 70).`
            : `RSI(14) ${fmt(rsi, 3)} is neutral (between 30 and 70).`,
    });
    const momentum = Math.sign(macd.histogram);
    components.push({
      name: 'macd_histogram',
      score: momentum,
      reason:
        `MACD histogram ${fmt(macd.histogram)} is ` +
        (momentum > 0 ? 'positive (momentum up).' : momentum < 0 ? 'negative (momentum down).' : 'zero.'),
    });
    const b = bands.percentB;
    components.push({
      name: 'bollinger_percent_b',
      score: b < 0 ? 1 : b > 1 ? -1 : 0,
      reason: `Bollinger %B ${fmt(b, 3)}: close is ${describePercentB(b)}.`,
    });

    const score = components.reduce((sum, c) => sum + c.score, 0) / components.length;
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
  /**
   * 95% interval of the hit rate. Windows of consecutive signal days overlap (a 7-day horizon
   * shares 6 days with the next), so hits are correlated: the variance is a Newey-West (Bartlett)
   * estimate over signal days less than a horizon apart, never below the independent-trials one.
   */
  ci95: [number, number] | null;
  /** What saying the same every replayed day would have scored: the up share for buys, the down share for sells. */
  baseRate: number | null;
  /** hitRate − baseRate. */
  excessOverBase: number | null;
  /** 'above' / 'below' when ci95 excludes baseRate, else 'indistinguishable'. */
  versusBase: 'above' | 'below' | 'indistinguishable' | null;
}

export interface HistoricalHitRate {
  rule: string;
  horizonDays: number;
  buy: HitCount;
  sell: HitCount;
  /** Buys and sells together. */
  all: HitCount;
  /**
   * Share of the replayed days on which the close rose (up) or fell (down) over the horizon,
   * whatever the rule said: the rates a buy or sell hit rate has to beat to add anything.
   */
  baseline: { up: number | null; down: number | null };
  /** Days the rule was replayed on (those with a close `horizonDays` later and the rule's full history). */
  daysEvaluated: number;
  /** The replay window asked for (days); daysEvaluated is less only when the history is too short. */
  replayDaysRequested: number | null;
  /** First and last replayed day; null if none. */
  from: string | null;
  to: string | null;
}

/**
 * Replays `rule` on past days that have a close exactly `horizonDays` calendar days later and the
 * rule's full history (fullCandles) behind them, the last `replayDays` of them when given, giving
 * it only the candles up to and including that day (no look-ahead). A buy is a hit when the later
 * close is higher, a sell when it is lower; holds are not scored. Each hit rate comes with the
 * base rate of the same days and a 95% interval that allows for overlapping horizons.
 */
export function historicalHitRate(
  candles: readonly DailyCandle[],
  rule: SignalRule,
  horizonDays: number,
  opts: { replayDays?: number } = {},
): HistoricalHitRate {
  if (!Number.isInteger(horizonDays) || horizonDays < 1) {
    throw new RangeError(`horizonDays must be a whole number ≥ 1, got ${horizonDays}`);
  }
  assertCandles(candles, rule.minCandles, `candles for rule ${rule.name}`);
  const closeOn = new Map(candles.map((c) => [c.date, c.close]));
  // Days with the rule's full history and a close h days later; the replay is the last replayDays of them.
  const candidates: number[] = [];
  for (let i = (rule.fullCandles ?? rule.minCandles) - 1; i < candles.length; i++) {
    const day = candles[i];
    if (day && closeOn.has(addDays(day.date, horizonDays))) candidates.push(i);
  }
  const replayed = opts.replayDays !== undefined ? candidates.slice(-opts.replayDays) : candidates;
  const buy: Outcome[] = [];
  const sell: Outcome[] = [];
  let upDays = 0;
  let downDays = 0;
  for (const i of replayed) {
    const day = candles[i]!;
    const later = closeOn.get(addDays(day.date, horizonDays))!;
    const signal = rule.evaluate(candles.slice(0, i + 1));
    if (later > day.close) upDays++;
    if (later < day.close) downDays++;
    const t = Date.parse(`${day.date}T00:00:00Z`) / 86_400_000;
    if (signal.action === 'buy') buy.push({ t, hit: later > day.close });
    else if (signal.action === 'sell') sell.push({ t, hit: later < day.close });
  }
  const n = replayed.length;
  const up = n > 0 ? upDays / n : null;
  const down = n > 0 ? downDays / n : null;
  const all = [...buy, ...sell].sort((a, b) => a.t - b.t);
  return {
    rule: rule.name,
    horizonDays,
    buy: count(buy, horizonDays, up),
    sell: count(sell, horizonDays, down),
    // Buys and sells together have no single base rate.
    all: count(all, horizonDays, null),
    baseline: { up, down },
    daysEvaluated: n,
    replayDaysRequested: opts.replayDays ?? null,
    from: n > 0 ? candles[replayed[0]!]!.date : null,
    to: n > 0 ? candles[replayed[n - 1]!]!.date : null,
  };
}

interface Outcome {
  /** The signal's day, in days since the epoch. */
  t: number;
  hit: boolean;
}

const Z95 = 1.959964;

function count(outcomes: readonly Outcome[], horizonDays: number, baseRate: number | null): HitCount {
  const n = outcomes.length;
  const hits = outcomes.filter((o) => o.hit).length;
  if (n === 0) return { signals: 0, hits: 0, hitRate: null, ci95: null, baseRate, excessOverBase: null, versusBase: null };
  const p = hits / n;
  // Newey-West with Bartlett weights on the calendar distance between signal days (outcomes are in day order).
  let s = 0;
  for (let i = 0; i < n; i++) {
    const xi = (outcomes[i]!.hit ? 1 : 0) - p;
    s += xi * xi;
    for (let j = i + 1; j < n && outcomes[j]!.t - outcomes[i]!.t < horizonDays; j++) {
      const w = 1 - (outcomes[j]!.t - outcomes[i]!.t) / horizonDays;
      s += 2 * w * xi * ((outcomes[j]!.hit ? 1 : 0) - p);
    }
  }
  const variance = Math.max(s / (n * n), (p * (1 - p)) / n);
  const half = Z95 * Math.sqrt(variance);
  const ci95: [number, number] = [Math.max(0, p - half), Math.min(1, p + half)];
  return {
    signals: n,
    hits,
    hitRate: p,
    ci95,
    baseRate,
    excessOverBase: baseRate === null ? null : p - baseRate,
    versusBase: baseRate === null ? null : ci95[0] > baseRate ? 'above' : ci95[1] < baseRate ? 'below' : 'indistinguishable',
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
  if (b > 1) return 'above the upper band (stretched up, may revert)';
  if (b < 0) return 'below the lower band (stretched down, may revert)';
  if (b >= 0.8) return 'near the upper band';
  if (b <= 0.2) return 'near the lower band';
  return 'inside the bands';
}

function fmt(x: number, digits = 6): string {
  return String(Number(x.toPrecision(digits)));
}
