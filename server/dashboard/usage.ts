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
import { csvLine } from '../lib/csv.ts';
import { addDays, daysBetween, isoDaySchema } from '../lib/dates.ts';
import { LAPSE_NOTICE_DAYS, usageThreshold } from '../alerts/notices.ts';
import type { UsageReport } from '../mcp/tool.ts';
import type { Outcomes, UsageBreakdown, UsageOutlookJson } from '../public-types.ts';

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
  return [csvLine(['day', 'server', 'tool', 'calls', 'credits']), ...rows.map((r) => csvLine([r.day, r.server, r.tool, r.calls, r.credits]))].join('');
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

const DAY_MS = 86_400_000;
/** How far back the spending rate looks (less when the period began later). */
const RATE_WINDOW_DAYS = 7;

/** The Usage page's outlook (UsageOutlookJson) from get_usage's report and the account's plan time. */
export async function usageOutlook(db: Database, accountId: string, report: UsageReport, now: Date): Promise<UsageOutlookJson> {
  const acc = await db.query<{ display_name: string; price_cents: number | null; topup: number; paid_until: Date | null }>(
    'SELECT p.display_name, p.price_cents, a.topup, a.paid_until FROM accounts a JOIN plans p ON p.name = a.plan WHERE a.id = $1',
    [accountId],
  );
  const a = acc.rows[0];
  if (!a) throw new ApiError('SESSION_REQUIRED');
  const next = await db.query<{ display_name: string; starts_at: Date }>(
    'SELECT p.display_name, s.starts_at FROM plan_schedule s JOIN plans p ON p.name = s.plan WHERE s.account_id = $1 ORDER BY s.starts_at LIMIT 1',
    [accountId],
  );
  const periodStart = new Date(report.period_start);
  const windowStart = new Date(Math.max(periodStart.getTime(), now.getTime() - RATE_WINDOW_DAYS * DAY_MS));
  const spent = await db.query<{ credits: number }>(
    `SELECT coalesce(-sum(delta), 0)::int AS credits FROM credit_ledger
      WHERE account_id = $1 AND kind = 'reserve' AND resolution IS DISTINCT FROM 'refunded' AND created_at >= $2 AND created_at <= $3`,
    [accountId, windowStart, now],
  );
  // At least an hour of window, so the first calls of a period do not project a rate of millions.
  const windowDays = Math.max(now.getTime() - windowStart.getTime(), 3_600_000) / DAY_MS;
  const rate = spent.rows[0]!.credits / windowDays;
  const runsOut = rate > 0 ? new Date(now.getTime() + (report.balance / rate) * DAY_MS) : null;
  const paidUntil = a.paid_until && a.paid_until > now ? a.paid_until : null;
  const nextPlan = next.rows[0];
  const lapsesAt = paidUntil && !nextPlan ? paidUntil : null;
  // The balance is reset at renewal, and replaced at a lapse: whichever comes first bounds the run.
  const resetAt = [report.renews_at ? new Date(report.renews_at) : null, lapsesAt].filter((d): d is Date => d !== null).sort((x, y) => x.getTime() - y.getTime())[0];
  const price = a.price_cents !== null && a.price_cents > 0 ? a.price_cents : null;
  return {
    plan_display: a.display_name,
    price_cents: price,
    spend_cents: price !== null && report.allowance > 0 ? Math.round((report.credits_used * price) / report.allowance) : null,
    topup: a.topup,
    paid_until: paidUntil?.toISOString() ?? null,
    lapses_at: lapsesAt?.toISOString() ?? null,
    lapse_soon: lapsesAt !== null && lapsesAt.getTime() - now.getTime() <= LAPSE_NOTICE_DAYS * DAY_MS,
    next_plan: nextPlan ? { plan_display: nextPlan.display_name, starts_at: nextPlan.starts_at.toISOString() } : null,
    rate_per_day: Math.round(rate * 10) / 10,
    runs_out_at: runsOut?.toISOString() ?? null,
    runs_out_first: runsOut !== null && (resetAt === undefined || runsOut < resetAt),
    used_percent: report.allowance > 0 ? Math.floor((report.credits_used * 100) / report.allowance) : 0,
    threshold: usageThreshold(report.credits_used, report.allowance),
    as_of: now.toISOString(),
  };
}
