// Time windows over a platform's data: defaults relative to the data's own end, and a 400 naming
// the covered range when a window lies outside it.
import { z } from 'zod';
import { ApiError } from '../../errors.ts';
import { addDays, daysBetween, isoDaySchema } from '../../lib/dates.ts';
import type { Coverage } from '../../providers/social/types.ts';

export const isoDay = isoDaySchema;

export const windowFields = {
  from: isoDay.optional().describe("Inclusive; default: `days` before `to`."),
  to: isoDay.optional().describe("Inclusive; default: the data's last day."),
  days: z.number().int().min(1).max(3650).default(30).describe('Window length when `from` is not given.'),
};

export interface Window {
  from: string;
  to: string;
  days: number;
  /** True when the asked window reached past the data and was cut to it. */
  clamped: boolean;
  covered: { from: string; to: string };
  /** One line per kind of item the data lacks for part of the window (e.g. comments ending early). */
  gaps: string[];
}

/** Where a kind of item (comments, posts) starts or ends inside the window, said in one line each. */
export function coverageGaps(cov: Coverage, from: string, to: string): string[] {
  const gaps: string[] = [];
  for (const k of cov.kinds ?? []) {
    if (k.to < to && k.to >= from) {
      gaps.push(`The ${cov.platform} ${k.kind}s in the data end ${k.to}: from ${addDays(k.to, 1)} to ${to} they are missing, so counts there are not comparable with earlier days.`);
    }
    if (k.from > from && k.from <= to) {
      gaps.push(`The ${cov.platform} ${k.kind}s in the data start ${k.from}: from ${from} to ${addDays(k.from, -1)} they are missing.`);
    }
  }
  return gaps;
}

/**
 * The window asked for, cut to the data's range. A window that does not overlap the data at all,
 * or is reversed, is a 400 naming the covered range (nothing is charged).
 */
export function resolveWindow(cov: Coverage, args: { from?: string | undefined; to?: string | undefined; days: number }): Window {
  const to = args.to ?? cov.to;
  const from = args.from ?? addDays(to, -(args.days - 1));
  const covered = { from: cov.from, to: cov.to };
  if (from > to) {
    throw new ApiError('INVALID_PARAMS', '`from` must not be after `to`.', { issues: [{ path: 'from', message: 'after to' }], covered_range: covered });
  }
  if (to < cov.from || from > cov.to) {
    throw new ApiError('INVALID_PARAMS', `The ${cov.platform} data covers ${cov.from} to ${cov.to}; the window ${from} to ${to} lies outside it.`, {
      issues: [{ path: args.from ? 'from' : 'to', message: `outside the covered range ${cov.from}..${cov.to}` }],
      covered_range: covered,
    });
  }
  const f = from < cov.from ? cov.from : from;
  const t = to > cov.to ? cov.to : to;
  return { from: f, to: t, days: daysBetween(f, t) + 1, clamped: f !== from || t !== to, covered, gaps: coverageGaps(cov, f, t) };
}
