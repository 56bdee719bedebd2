// clearOfMidnight keeps a test that reads "today" on both sides of a call off the day's end.
import { describe, expect, it } from 'vitest';
import { midnightWait } from './wait.ts';

const at = (iso: string) => Date.parse(iso);

describe('midnightWait', () => {
  it('waits into the next UTC day only within the margin before midnight', () => {
    expect(midnightWait(at('2026-11-27T23:59:30Z'), 60_000)).toBe(31_000);
    expect(midnightWait(at('2026-11-27T23:59:59.999Z'), 60_000)).toBe(1001);
    expect(midnightWait(at('2026-11-27T23:58:59.999Z'), 60_000)).toBe(0);
    expect(midnightWait(at('2026-11-27T12:00:00Z'), 60_000)).toBe(0);
    expect(midnightWait(at('2026-11-28T00:00:00Z'), 60_000)).toBe(0);
  });
});
