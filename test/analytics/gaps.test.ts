// Guarantee: a daily series with missing days is split at its breaks, and analytics get only the
// last contiguous run, so no "daily" return spans a break (AAVE's 694 days from 2021-12-30).
import { describe, expect, it } from 'vitest';
import { gapNote, gapsOf, lastContiguous, logReturns } from '../../server/analytics/candles.ts';
import { daysBetween } from '../../server/lib/dates.ts';
import { loadSnapshot } from '../../server/providers/market/snapshot.ts';

const day = (date: string) => ({ date, open: 1, high: 1, low: 1, close: 1, volume_usd: null });

describe('gaps in daily series', () => {
  it('finds each break with the days missing, and none in a gapless series', () => {
    const s = ['2024-01-01', '2024-01-02', '2024-01-05', '2024-01-06', '2024-03-01'].map(day);
    expect(gapsOf(s)).toEqual([
      { from: '2024-01-02', to: '2024-01-05', missing_days: 2 },
      { from: '2024-01-06', to: '2024-03-01', missing_days: 54 },
    ]);
    expect(gapsOf(s.slice(0, 2))).toEqual([]);
    expect(lastContiguous(s.slice(0, 2)).candles).toHaveLength(2);
  });

  it("AAVE's snapshot series: the last contiguous run starts 2023-11-24 and no return in it spans more than a day", () => {
    const ser = loadSnapshot().series.aave!;
    const candles = ser.dates.map((date, i) => ({ ...day(date), close: ser.close[i]! }));
    const { candles: run, gaps } = lastContiguous(candles);
    expect(gaps.at(-1)).toEqual({ from: '2021-12-30', to: '2023-11-24', missing_days: 693 });
    expect(run[0]!.date).toBe('2023-11-24');
    const returns = logReturns(run);
    expect(returns.length).toBe(run.length - 1);
    for (let i = 1; i < run.length; i++) expect(daysBetween(run[i - 1]!.date, run[i]!.date)).toBe(1);
    expect(gapNote('AAVE', gaps, { from: run[0]!.date, to: run.at(-1)!.date, days: returns.length })).toMatch(
      /^AAVE has no data from 2021-12-31 to 2023-11-23 \(693 days\).*contiguous data after it: 2023-11-24 to/,
    );
  });

  it('says nothing when there is no break', () => {
    expect(gapNote('X', [], { from: 'a', to: 'b', days: 1 })).toBeUndefined();
  });
});
