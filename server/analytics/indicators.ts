// Technical indicators for price-prediction's get_technical_indicators, computed with the
// maintained `trading-signals` library rather than hand-rolled formulas. Each *Series function
// streams the candles through one indicator and returns a value for every day on which it is
// defined (each value uses only candles up to its own date), oldest first.
//
// Conventions of the library, stated so readers can compare with other charting tools:
// RSI and ATR use Wilder's smoothing (seeded with a simple average of the first `period`
// values; the first candle's true range is its high − low); an EMA, including MACD's, is seeded
// with the first close (TA-Lib seeds with an SMA, so early values differ slightly) and reported
// from its `period`-th close on; Bollinger bands use the population standard deviation; the
// stochastic %K is slowed with an SMA and %D is an SMA of the slowed %K.

import {
  ATR,
  BollingerBands,
  EMA,
  MACD,
  RSI,
  SMA,
  StochasticOscillator,
} from 'trading-signals';
import { assertCandles } from './candles.ts';
import type { DailyCandle, Dated } from './candles.ts';

export interface MacdValue {
  macd: number;
  signal: number;
  histogram: number;
}

export interface BollingerValue {
  upper: number;
  middle: number;
  lower: number;
  /** (close − lower) / (upper − lower): 0 at the lower band, 1 at the upper; 0.5 if flat. */
  percentB: number;
  /** (upper − lower) / middle. */
  bandwidth: number;
}

export interface StochasticValue {
  /** Slowed %K. */
  k: number;
  /** SMA of the slowed %K. */
  d: number;
}

/** Candles needed before each indicator gives its first value. */
export const requiredCandles = {
  rsi: (period: number) => period + 1,
  macd: (_fast: number, slow: number, signal: number) => slow + signal - 1,
  bollinger: (period: number) => period,
  ema: (period: number) => period,
  sma: (period: number) => period,
  atr: (period: number) => period,
  stochastic: (kPeriod: number, kSlowing: number, dPeriod: number) =>
    kPeriod + kSlowing + dPeriod - 2,
};

export function rsiSeries(candles: readonly DailyCandle[], period = 14): Dated<number>[] {
  checkInput(candles, { period });
  return computeRsi(candles, period);
}

export function macdSeries(
  candles: readonly DailyCandle[],
  fast = 12,
  slow = 26,
  signal = 9,
): Dated<MacdValue>[] {
  checkInput(candles, { fast, slow, signal });
  if (fast >= slow) throw new RangeError(`MACD fast period ${fast} must be below slow ${slow}`);
  return computeMacd(candles, fast, slow, signal);
}

export function bollingerSeries(
  candles: readonly DailyCandle[],
  period = 20,
  deviations = 2,
): Dated<BollingerValue>[] {
  checkInput(candles, { period });
  if (!(Number.isFinite(deviations) && deviations > 0)) {
    throw new RangeError(`Bollinger deviations must be a positive number, got ${deviations}`);
  }
  return computeBollinger(candles, period, deviations);
}

export function emaSeries(candles: readonly DailyCandle[], period: number): Dated<number>[] {
  checkInput(candles, { period });
  return computeEma(candles, period);
}

export function smaSeries(candles: readonly DailyCandle[], period: number): Dated<number>[] {
  checkInput(candles, { period });
  return computeSma(candles, period);
}

export function atrSeries(candles: readonly DailyCandle[], period = 14): Dated<number>[] {
  checkInput(candles, { period });
  return computeAtr(candles, period);
}

export function stochasticSeries(
  candles: readonly DailyCandle[],
  kPeriod = 14,
  kSlowing = 3,
  dPeriod = 3,
): Dated<StochasticValue>[] {
  checkInput(candles, { kPeriod, kSlowing, dPeriod });
  return computeStochastic(candles, kPeriod, kSlowing, dPeriod);
}

export interface IndicatorReading<T> {
  /** Human-readable parameters, e.g. "RSI(14)". */
  name: string;
  requiredCandles: number;
  /** The value on the last candle; null when the series is too short for this indicator. */
  latest: Dated<T> | null;
  /** The last `historyLength` values, oldest first (includes latest). */
  history: Dated<T>[];
}

export interface IndicatorOptions {
  /** How many recent values each history holds; default 10. */
  historyLength?: number;
  /** EMA periods; default [20, 50]. */
  emaPeriods?: readonly number[];
  /** SMA periods; default [50, 200]. */
  smaPeriods?: readonly number[];
}

export interface TechnicalIndicators {
  asOf: string;
  close: number;
  candlesUsed: number;
  rsi: IndicatorReading<number>;
  macd: IndicatorReading<MacdValue>;
  bollinger: IndicatorReading<BollingerValue>;
  ema: IndicatorReading<number>[];
  sma: IndicatorReading<number>[];
  atr: IndicatorReading<number>;
  stochastic: IndicatorReading<StochasticValue>;
}

/**
 * The standard set: RSI(14), MACD(12,26,9), Bollinger(20,2), EMAs and SMAs, ATR(14) and
 * Stochastic(14,3,3), each with its latest value and a short history. An indicator the series
 * is too short for has latest null (see requiredCandles) rather than failing the whole set.
 */
export function technicalIndicators(
  candles: readonly DailyCandle[],
  options: IndicatorOptions = {},
): TechnicalIndicators {
  assertCandles(candles, 1);
  const historyLength = options.historyLength ?? 10;
  const emaPeriods = options.emaPeriods ?? [20, 50];
  const smaPeriods = options.smaPeriods ?? [50, 200];
  checkPeriods({ historyLength });
  for (const period of [...emaPeriods, ...smaPeriods]) checkPeriods({ period });
  const last = candles.at(-1);
  if (!last) throw new RangeError('candles: need at least 1 daily candle');
  const reading = <T>(name: string, required: number, series: Dated<T>[]) => ({
    name,
    requiredCandles: required,
    latest: series.at(-1)?.date === last.date ? (series.at(-1) ?? null) : null,
    history: series.slice(-historyLength),
  });
  return {
    asOf: last.date,
    close: last.close,
    candlesUsed: candles.length,
    rsi: reading('RSI(14)', requiredCandles.rsi(14), computeRsi(candles, 14)),
    macd: reading('MACD(12,26,9)', requiredCandles.macd(12, 26, 9), computeMacd(candles, 12, 26, 9)),
    bollinger: reading(
      'Bollinger(20,2)',
      requiredCandles.bollinger(20),
      computeBollinger(candles, 20, 2),
    ),
    ema: emaPeriods.map((p) =>
      reading(`EMA(${p})`, requiredCandles.ema(p), computeEma(candles, p)),
    ),
    sma: smaPeriods.map((p) =>
      reading(`SMA(${p})`, requiredCandles.sma(p), computeSma(candles, p)),
    ),
    atr: reading('ATR(14)', requiredCandles.atr(14), computeAtr(candles, 14)),
    stochastic: reading(
      'Stochastic(14,3,3)',
      requiredCandles.stochastic(14, 3, 3),
      computeStochastic(candles, 14, 3, 3),
    ),
  };
}

// The compute* functions assume validated input: the exported functions check it once.

function computeRsi(candles: readonly DailyCandle[], period: number): Dated<number>[] {
  const rsi = new RSI(period);
  return collect(candles, (c) => rsi.add(c.close));
}

function computeMacd(
  candles: readonly DailyCandle[],
  fast: number,
  slow: number,
  signal: number,
): Dated<MacdValue>[] {
  const macd = new MACD(new EMA(fast), new EMA(slow), new EMA(signal));
  let emitted = 0;
  return collect(candles, (c) => {
    const r = macd.add(c.close);
    // The library emits from the slow EMA's period on, while its signal EMA is still warming
    // up; report only once the signal line has seen `signal` MACD values.
    if (!r || ++emitted < signal) return null;
    return { macd: r.macd, signal: r.signal, histogram: r.histogram };
  });
}

function computeBollinger(
  candles: readonly DailyCandle[],
  period: number,
  deviations: number,
): Dated<BollingerValue>[] {
  const bands = new BollingerBands(period, deviations);
  return collect(candles, (c) => {
    const r = bands.add(c.close);
    if (!r) return null;
    const width = r.upper - r.lower;
    return {
      upper: r.upper,
      middle: r.middle,
      lower: r.lower,
      percentB: width > 0 ? (c.close - r.lower) / width : 0.5,
      bandwidth: width / r.middle,
    };
  });
}

function computeEma(candles: readonly DailyCandle[], period: number): Dated<number>[] {
  const ema = new EMA(period);
  let seen = 0;
  return collect(candles, (c) => {
    const value = ema.add(c.close);
    return ++seen >= period ? value : null;
  });
}

function computeSma(candles: readonly DailyCandle[], period: number): Dated<number>[] {
  const sma = new SMA(period);
  return collect(candles, (c) => sma.add(c.close));
}

function computeAtr(candles: readonly DailyCandle[], period: number): Dated<number>[] {
  const atr = new ATR(period);
  return collect(candles, (c) => atr.add({ high: c.high, low: c.low, close: c.close }));
}

function computeStochastic(
  candles: readonly DailyCandle[],
  kPeriod: number,
  kSlowing: number,
  dPeriod: number,
): Dated<StochasticValue>[] {
  const stoch = new StochasticOscillator({ kPeriod, kSlowingPeriod: kSlowing, dPeriod });
  return collect(candles, (c) => {
    const r = stoch.add({ high: c.high, low: c.low, close: c.close });
    return r ? { k: r.stochK, d: r.stochD } : null;
  });
}

function collect<T>(
  candles: readonly DailyCandle[],
  step: (c: DailyCandle) => T | null,
): Dated<T>[] {
  const out: Dated<T>[] = [];
  for (const c of candles) {
    const value = step(c);
    if (value !== null) out.push({ date: c.date, value });
  }
  return out;
}

function checkInput(candles: readonly DailyCandle[], periods: Record<string, number>): void {
  checkPeriods(periods);
  assertCandles(candles, 1);
}

function checkPeriods(periods: Record<string, number>): void {
  for (const [name, value] of Object.entries(periods)) {
    if (!Number.isInteger(value) || value < 1) {
      throw new RangeError(`${name} must be a whole number ≥ 1, got ${value}`);
    }
  }
}
