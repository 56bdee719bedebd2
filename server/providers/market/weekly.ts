// Weekly candles from daily ones, the same way for every provider: weeks run Monday to Sunday
// and are dated by their Monday; open of the first day, close of the last, extreme high and low,
// summed volume (unknown if any day's volume is unknown), and every source the week drew on.
import { addDays } from '../../lib/dates.ts';
import type { Candle } from './types.ts';

/** The Monday starting the ISO week of a UTC day. */
export function weekStart(date: string): string {
  const day = new Date(`${date}T00:00:00Z`).getUTCDay(); // 0 = Sunday
  return addDays(date, -((day + 6) % 7));
}

export function toWeekly(daily: readonly Candle[]): Candle[] {
  const weeks: Candle[] = [];
  for (const c of daily) {
    const start = weekStart(c.date);
    const last = weeks[weeks.length - 1];
    if (last && last.date === start) {
      last.high = Math.max(last.high, c.high);
      last.low = Math.min(last.low, c.low);
      last.close = c.close;
      last.volume_usd = last.volume_usd === null || c.volume_usd === null ? null : last.volume_usd + c.volume_usd;
      if (!last.source.split('+').includes(c.source)) last.source = `${last.source}+${c.source}`;
    } else {
      weeks.push({ ...c, date: start });
    }
  }
  return weeks;
}

