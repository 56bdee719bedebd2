// The Usage page's numbers, over a range of UTC days (a preset "last N days" or a custom from/to):
// - daily: successful tools/call counts and credits per day, server and tool, from the credit
//   ledger (the same rows get_usage counts: reservations not refunded);
// - breakdown: every authenticated /mcp request the gateway logged (request_log, counted per day
//   in request_log_daily as it is written), by day, by key, by server/method/tool and by error
//   code, each split into succeeded, failed and rate-limited (429), so a chart can put errors and
//   429s beside the successes. The log is kept for the retention period only: the part of a range
//   before it is reported, not guessed.
import { z } from 'zod';
import type { Database } from '../db/pool.ts';
import { ApiError } from '../errors.ts';
import { addDays, daysBetween, isoDaySchema } from '../lib/dates.ts';
import type { Outcomes, UsageBreakdown } from '../public-types.ts';

export const MAX_RANGE_DAYS = 366;

/** Whole UTC days, both ends included. */
export interface DayRange {
  from: string;
  to: string;
  days: number;
}

const RangeQuery = z.object({
  days: z.coerce.number().int().min(1).max(MAX_RANGE_DAYS).optional(),
  from: isoDaySchema.optional(),
  to: isoDaySchema.optional(),
});

/** `days` (the last N days, today included; default 30) or `from` and `to` (YYYY-MM-DD, UTC). */
export function parseRange(query: unknown, today = new Date().toISOString().slice(0, 10)): DayRange {
  const parsed = RangeQuery.safeParse(query ?? {});
  const invalid = (path: string, message: string): never => {
    throw new ApiError('INVALID_PARAMS', `Choose a range of 1 to ${MAX_RANGE_DAYS} days: ${message}.`, { issues: [{ path, message }] });
  };
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return invalid(issue.path.join('.'), issue.path[0] === 'days' ? `days must be an integer from 1 to ${MAX_RANGE_DAYS}` : issue.message);
  }
  const q = parsed.data;
  if (q.from === undefined && q.to === undefined) {
    const days = q.days ?? 30;
    return { from: addDays(today, 1 - days), to: today, days };
  }
  if (q.from === undefined || q.to === undefined) return invalid(q.from === undefined ? 'from' : 'to', 'give both from and to');
  if (q.days !== undefined) return invalid('days', 'give days or from/to, not both');
  if (q.to < q.from) return invalid('to', 'to is before from');
  const days = daysBetween(q.from, q.to) + 1;
  if (days > MAX_RANGE_DAYS) return invalid('from', `the range spans ${days} days`);
  return { from: q.from, to: q.to, days };
}

/** The range's bounds as timestamps: [from 00:00 UTC, the day after to 00:00 UTC). */
function bounds(range: DayRange): [string, string] {
  return [`${range.from}T00:00:00Z`, `${addDays(range.to, 1)}T00:00:00Z`];
}

export interface DailyUsage {
  day: string;
  server: string;
  tool: string;
  calls: number;
  credits: number;
}

export async function usageDaily(db: Database, accountId: string, range: DayRange): Promise<DailyUsage[]> {
  const res = await db.query<DailyUsage>(
    `SELECT to_char(l.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, l.server, l.tool,
            count(*)::int AS calls, coalesce(-sum(l.delta + coalesce(part.delta, 0)), 0)::int AS credits
       FROM credit_ledger l
       -- A page cut for size was charged part of its reservation: the rest came back as a refund row.
       LEFT JOIN credit_ledger part ON part.request_id = l.request_id AND part.kind = 'refund'
      WHERE l.account_id = $1 AND l.kind = 'reserve' AND l.resolution IS DISTINCT FROM 'refunded'
        AND l.created_at >= $2::timestamptz AND l.created_at < $3::timestamptz
      GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
    [accountId, ...bounds(range)],
  );
  return res.rows;
}

/** RFC 4180 CSV; a field with a comma, quote or line break is quoted (tool names never are). */
export async function usageCsv(db: Database, accountId: string, range: DayRange): Promise<string> {
  const rows = await usageDaily(db, accountId, range);
  const field = (v: string | number) => {
    const s = String(v);
    return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
  };
  const lines = ['day,server,tool,calls,credits', ...rows.map((r) => [r.day, r.server, r.tool, r.calls, r.credits].map(field).join(','))];
  return `${lines.join('\r\n')}\r\n`;
}

export type { Outcomes, UsageBreakdown };

/**
 * Reads the daily counts (request_log_daily: a few rows per day, not every request) grouped four
 * ways at once with GROUPING SETS. `ok` means HTTP < 400 with no error code (a JSON-RPC error
 * answered with 200 is a failure), `rate_limited` HTTP 429, `errors` everything else.
 */
export async function usageBreakdown(
  db: Database,
  accountId: string,
  range: DayRange,
  opts: { keyId?: string; retentionDays: number; today?: string },
): Promise<UsageBreakdown> {
  const values: unknown[] = [accountId, range.from, range.to];
  let keyFilter = '';
  if (opts.keyId !== undefined) {
    values.push(opts.keyId);
    keyFilter = `AND key_id = $${values.length}::uuid`;
  }
  const res = await db.query<{
    g_day: number;
    g_key: number;
    g_tool: number;
    day: string | null;
    key_id: string | null;
    server: string | null;
    method: string | null;
    tool: string | null;
    error_code: string | null;
    status: number | null;
    requests: number;
    ok: number;
    rate_limited: number;
    credits: number;
  }>(
    `SELECT GROUPING(day) AS g_day, GROUPING(key_id) AS g_key, GROUPING(server, method, tool) AS g_tool,
            to_char(day, 'YYYY-MM-DD') AS day, key_id, server, method, tool, error_code, status,
            sum(requests)::int AS requests,
            coalesce(sum(requests) FILTER (WHERE status < 400 AND error_code IS NULL), 0)::int AS ok,
            coalesce(sum(requests) FILTER (WHERE status = 429), 0)::int AS rate_limited,
            sum(credits)::int AS credits
       FROM request_log_daily
      WHERE account_id = $1 AND day BETWEEN $2::date AND $3::date ${keyFilter}
      GROUP BY GROUPING SETS ((day), (key_id), (server, method, tool), (error_code, status))`,
    values,
  );
  const outcomes = (r: { requests: number; ok: number; rate_limited: number; credits: number }): Outcomes => ({
    requests: r.requests,
    ok: r.ok,
    errors: r.requests - r.ok - r.rate_limited,
    rate_limited: r.rate_limited,
    credits: r.credits,
  });
  const out: UsageBreakdown = {
    ...range,
    retained_from: addDays(opts.today ?? new Date().toISOString().slice(0, 10), -opts.retentionDays),
    key: opts.keyId ?? null,
    daily: [],
    by_key: [],
    by_tool: [],
    by_error: [],
  };
  for (const r of res.rows) {
    if (r.g_day === 0) out.daily.push({ day: r.day!, ...outcomes(r) });
    else if (r.g_key === 0) out.by_key.push({ key_id: r.key_id, ...outcomes(r) });
    else if (r.g_tool === 0) out.by_tool.push({ server: r.server!, method: r.method!, tool: r.tool, ...outcomes(r) });
    else if (r.error_code !== null) out.by_error.push({ error_code: r.error_code, status: r.status!, requests: r.requests });
  }
  out.daily.sort((a, b) => a.day.localeCompare(b.day));
  out.by_key.sort((a, b) => b.requests - a.requests);
  out.by_tool.sort((a, b) => b.requests - a.requests || a.server.localeCompare(b.server));
  out.by_error.sort((a, b) => b.requests - a.requests);
  return out;
}
