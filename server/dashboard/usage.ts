// The Usage page's series: successful tools/call counts and credits per UTC day, server and tool,
// from the credit ledger (the same rows get_usage counts: reservations not refunded).
import type { Database } from '../db/pool.ts';

export interface DailyUsage {
  day: string;
  server: string;
  tool: string;
  calls: number;
  credits: number;
}

export async function usageDaily(db: Database, accountId: string, days: number): Promise<DailyUsage[]> {
  const res = await db.query<DailyUsage>(
    `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, server, tool,
            count(*)::int AS calls, coalesce(-sum(delta), 0)::int AS credits
       FROM credit_ledger
      WHERE account_id = $1 AND kind = 'reserve' AND resolution IS DISTINCT FROM 'refunded'
        AND created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - make_interval(days => $2 - 1)
      GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
    [accountId, days],
  );
  return res.rows;
}

/** RFC 4180 CSV; a field with a comma, quote or line break is quoted (tool names never are). */
export async function usageCsv(db: Database, accountId: string, days: number): Promise<string> {
  const rows = await usageDaily(db, accountId, days);
  const field = (v: string | number) => {
    const s = String(v);
    return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
  };
  const lines = ['day,server,tool,calls,credits', ...rows.map((r) => [r.day, r.server, r.tool, r.calls, r.credits].map(field).join(','))];
  return `${lines.join('\r\n')}\r\n`;
}
