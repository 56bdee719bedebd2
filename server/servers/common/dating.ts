// The date an answer rests on: metadata.data_as_of is the OLDEST date any figure in it rests on,
// and an answer whose figures rest on different days says so in one line (metadata.notes).

export interface DatedFigure {
  /** What the figure is, as the note names it: "ETH price", "market cap". */
  label: string;
  /** YYYY-MM-DD or an ISO timestamp; null for a live figure (now). */
  as_of: string | null;
}

/** The oldest day among the figures (null if none is dated). */
export function oldestDay(dates: readonly (string | null | undefined)[]): string | null {
  let oldest: string | null = null;
  for (const d of dates) {
    if (!d) continue;
    const day = d.slice(0, 10);
    if (oldest === null || day < oldest) oldest = day;
  }
  return oldest;
}

/**
 * data_as_of and, when the figures rest on more than one day, the one-line note saying which
 * figure is as of which day (grouped by day, newest first).
 */
export function datedAnswer(figures: readonly DatedFigure[]): { data_as_of: string | null; notes: string[] } {
  const byDay = new Map<string, string[]>();
  for (const f of figures) {
    if (!f.as_of) continue;
    const day = f.as_of.slice(0, 10);
    byDay.set(day, [...(byDay.get(day) ?? []), f.label]);
  }
  const data_as_of = oldestDay(figures.map((f) => f.as_of));
  if (byDay.size <= 1) return { data_as_of, notes: [] };
  const parts = [...byDay.entries()].sort((a, b) => (a[0] < b[0] ? 1 : -1)).map(([day, labels]) => `${labels.join(', ')} as of ${day}`);
  return { data_as_of, notes: [`Figures rest on different dates: ${parts.join('; ')}. data_as_of is the oldest.`] };
}
