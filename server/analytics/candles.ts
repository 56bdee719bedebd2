// Daily candles and the series helpers every analytic builds on. Pure functions: no I/O, no
// clock. Bad input (NaN, non-positive prices, unsorted or malformed dates, too little history)
// is a caller fault and throws RangeError with a message naming what is wrong; the provider's
// Candle type is structurally a DailyCandle, so its series can be passed as they are.
import { addDays, daysBetween } from '../lib/dates.ts';

export interface DailyCandle {
  /** UTC day, YYYY-MM-DD. */
  date: string;
  open: number;
  high: number;
  low: number;
  close: number;
  volume_usd: number | null;
}

/** One value of a daily series, dated by the UTC day it is known at the close of. */
export interface Dated<T> {
  date: string;
  value: T;
}

const ISO_DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Milliseconds since the epoch at 00:00 UTC of a YYYY-MM-DD day; RangeError if malformed. */
export function dayToMs(date: string): number {
  const m = ISO_DAY.exec(date);
  const year = Number(m?.[1]);
  const month = Number(m?.[2]);
  const day = Number(m?.[3]);
  if (!m || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) {
    throw new RangeError(`invalid date "${date}": expected a UTC day as YYYY-MM-DD`);
  }
  return Date.UTC(year, month - 1, day);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * Checks a candle series: at least `minLength` candles, dates valid and strictly ascending,
 * prices finite and positive (log returns need them), volume null or finite and non-negative.
 * `what` names the series in the message ("asset candles", "benchmark candles").
 */
export function assertCandles(
  candles: readonly DailyCandle[],
  minLength: number,
  what = 'candles',
): void {
  if (candles.length < minLength) {
    throw new RangeError(
      `${what}: need at least ${minLength} daily candles, got ${candles.length}`,
    );
  }
  let previous = '';
  for (const [i, c] of candles.entries()) {
    dayToMs(c.date);
    // Valid YYYY-MM-DD days order as strings do.
    if (c.date <= previous) {
      throw new RangeError(`${what}: dates must be strictly ascending, ${c.date} at index ${i}`);
    }
    previous = c.date;
    for (const field of ['open', 'high', 'low', 'close'] as const) {
      const v = c[field];
      if (!Number.isFinite(v) || v <= 0) {
        throw new RangeError(`${what}: ${field} on ${c.date} must be a positive number, got ${v}`);
      }
    }
    if (c.volume_usd !== null && !(Number.isFinite(c.volume_usd) && c.volume_usd >= 0)) {
      throw new RangeError(
        `${what}: volume_usd on ${c.date} must be null or a non-negative number, got ${c.volume_usd}`,
      );
    }
  }
}

/** Daily log returns ln(close_t / close_{t-1}), dated by the later day; one fewer than candles. */
export function logReturns(candles: readonly DailyCandle[]): Dated<number>[] {
  const out: Dated<number>[] = [];
  for (let i = 1; i < candles.length; i++) {
    const prev = candles[i - 1];
    const cur = candles[i];
    if (prev && cur) out.push({ date: cur.date, value: Math.log(cur.close / prev.close) });
  }
  return out;
}

/** Daily simple returns close_t / close_{t-1} - 1, dated by the later day. */
export function simpleReturns(candles: readonly DailyCandle[]): Dated<number>[] {
  return logReturns(candles).map((r) => ({ date: r.date, value: Math.expm1(r.value) }));
}

/**
 * Inner join of two date-sorted series on date: the pairs whose dates appear in both, in date
 * order. Align candles before taking returns, so each paired return spans the same two days.
 */
export function alignByDate<A extends { date: string }, B extends { date: string }>(
  a: readonly A[],
  b: readonly B[],
): { date: string; a: A; b: B }[] {
  const byDate = new Map(b.map((x) => [x.date, x]));
  const out: { date: string; a: A; b: B }[] = [];
  for (const x of a) {
    const y = byDate.get(x.date);
    if (y) out.push({ date: x.date, a: x, b: y });
  }
  return out;
}

/**
 * The candles of the last `days` days ending at the last candle: those dated on or after
 * last date − days. A window of N days spans N daily returns, so a gapless series gives N + 1
 * candles. Assumes the series is date-sorted (see assertCandles).
 */
export function lastNDays<C extends { date: string }>(candles: readonly C[], days: number): C[] {
  if (!Number.isInteger(days) || days < 1) {
    throw new RangeError(`window must be a whole number of days ≥ 1, got ${days}`);
  }
  const last = candles.at(-1);
  if (!last) return [];
  const start = addDays(last.date, -days);
  return candles.filter((c) => c.date >= start);
}

/** A break in a daily series: the last day before it, the first day after it, and the days missing. */
export interface Gap {
  /** Last day with a candle before the break. */
  from: string;
  /** First day with a candle after it. */
  to: string;
  /** Calendar days without a candle between the two. */
  missing_days: number;
}

/** Every break in a date-sorted daily series (consecutive candles more than one day apart). */
export function gapsOf<C extends { date: string }>(candles: readonly C[]): Gap[] {
  const gaps: Gap[] = [];
  for (let i = 1; i < candles.length; i++) {
    const from = candles[i - 1]!.date;
    const to = candles[i]!.date;
    const apart = daysBetween(from, to);
    if (apart > 1) gaps.push({ from, to, missing_days: apart - 1 });
  }
  return gaps;
}

/**
 * The last contiguous run of a date-sorted daily series (no missing day), and the breaks it leaves
 * out before it. Crypto trades every day, so a missing day is missing data: a return across a
 * break would span weeks or years and pose as one day's move (AAVE's 2021-12-30 → 2023-11-24).
 * Every return, volatility, indicator and forecast is taken on this run, and answers state the gap.
 */
export function lastContiguous<C extends { date: string }>(candles: readonly C[]): { candles: C[]; gaps: Gap[] } {
  const gaps = gapsOf(candles);
  const last = gaps.at(-1);
  if (!last) return { candles: [...candles], gaps };
  return { candles: candles.filter((c) => c.date >= last.to), gaps };
}

/** The note an answer carries when its series had a break: what was left out and what was used. */
export function gapNote(what: string, gaps: readonly Gap[], used: { from: string; to: string; days: number }): string | undefined {
  const last = gaps.at(-1);
  if (!last) return undefined;
  const more = gaps.length > 1 ? ` (and ${gaps.length - 1} earlier break${gaps.length > 2 ? 's' : ''})` : '';
  return `${what} has no data from ${addDays(last.from, 1)} to ${addDays(last.to, -1)} (${last.missing_days} days)${more}; figures use only the contiguous data after it: ${used.from} to ${used.to}, ${used.days} days.`;
}

/** Arithmetic mean; the caller guarantees a non-empty array. */
export function mean(values: readonly number[]): number {
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

/** Sample standard deviation (n − 1 denominator); the caller guarantees ≥ 2 values. */
export function sampleStdDev(values: readonly number[]): number {
  const m = mean(values);
  let ss = 0;
  for (const v of values) ss += (v - m) ** 2;
  return Math.sqrt(ss / (values.length - 1));
}
