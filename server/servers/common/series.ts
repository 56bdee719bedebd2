// Price series as every return, volatility, drawdown, correlation, indicator, replay and forecast
// takes them: the last contiguous run of daily candles, so that no "daily" return spans a break in
// the data (AAVE, UNI, XLM and 60 more jump from 2021-12-30 to 2023-11-24), and the note an answer
// carries when a break cut what it would otherwise have used.
import { gapNote, lastContiguous, lastNDays, type Gap } from '../../analytics/candles.ts';
import { addDays } from '../../lib/dates.ts';
import type { Candle, CandleSeries } from '../../providers/market/types.ts';

export interface ContiguousSeries extends CandleSeries {
  /** The last contiguous run only (no missing day between two candles). */
  candles: Candle[];
  /** Every candle the provider has, breaks included (for levels such as the all-time high, never for returns). */
  all: Candle[];
  /** The breaks before the run, oldest first. */
  gaps: Gap[];
  /** How notes name the asset ("AAVE"). */
  label: string;
}

export function contiguous(series: CandleSeries, label: string): ContiguousSeries {
  const { candles, gaps } = lastContiguous(series.candles);
  return { ...series, candles, all: series.candles, gaps, label };
}

/**
 * The note (zero or one) for an answer that rests on `used` candles of the run, when a break cut
 * the history it asked for: `wanted` is the first day it would have reached back to (a day inside
 * or before the last break). A break older than what the answer needs is not mentioned.
 */
export function gapNotes(s: ContiguousSeries, wanted: string, used: readonly { date: string }[]): string[] {
  const runStart = s.candles[0]?.date;
  const first = used[0];
  const last = used.at(-1);
  if (s.gaps.length === 0 || !runStart || !first || !last || wanted >= runStart) return [];
  const note = gapNote(s.label, s.gaps, { from: first.date, to: last.date, days: used.length - 1 });
  return note ? [note] : [];
}

/** The run's last `days` days, and the note when a break cut that window short. */
export function contiguousWindow(s: ContiguousSeries, days: number): { candles: Candle[]; notes: string[] } {
  const candles = lastNDays(s.candles, days);
  return { candles, notes: gapNotes(s, addDays(s.as_of, -days), candles) };
}
