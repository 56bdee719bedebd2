// get_usage's view of an account: plan, balance, renewal date, and this period's successful
// tools/call counts and credits by server and tool (refunded calls are not counted).
import type { Database } from '../db/pool.ts';
import { ApiError } from '../errors.ts';
import type { UsageReader, UsageReport } from '../mcp/tool.ts';

interface AccountRow {
  plan: string;
  status: string;
  balance: number;
  renewal: 'one-time' | 'monthly';
  credits: number;
  period_start: Date;
  period_end: Date | null;
}

export class SqlUsageReader implements UsageReader {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  async usage(accountId: string): Promise<UsageReport> {
    const acc = await this.#db.query<AccountRow>(
      `SELECT a.plan, a.status, a.balance, p.renewal, p.credits, a.period_start, a.period_end
         FROM accounts a JOIN plans p ON p.name = a.plan WHERE a.id = $1`,
      [accountId],
    );
    const a = acc.rows[0];
    if (!a) throw new ApiError('NOT_FOUND', 'No such account.', { account: accountId });
    const rows = await this.#db.query<{ server: string; tool: string; calls: number; credits: number }>(
      `SELECT l.server, l.tool, count(*)::int AS calls, coalesce(-sum(l.delta + coalesce(part.delta, 0)), 0)::int AS credits
         FROM credit_ledger l
         -- A page cut for size was charged part of its reservation: the rest came back as a refund row.
         LEFT JOIN credit_ledger part ON part.request_id = l.request_id AND part.kind = 'refund'
        WHERE l.account_id = $1 AND l.kind = 'reserve' AND l.created_at >= $2 AND l.resolution IS DISTINCT FROM 'refunded'
        GROUP BY l.server, l.tool ORDER BY l.server, l.tool`,
      [accountId, a.period_start],
    );
    const byServer = new Map<string, { server: string; calls: number; credits: number }>();
    for (const r of rows.rows) {
      const s = byServer.get(r.server) ?? { server: r.server, calls: 0, credits: 0 };
      s.calls += r.calls;
      s.credits += r.credits;
      byServer.set(r.server, s);
    }
    return {
      plan: a.plan,
      status: a.status,
      balance: a.balance,
      renewal: a.renewal,
      period_start: a.period_start.toISOString(),
      renews_at: a.renewal === 'monthly' && a.period_end ? a.period_end.toISOString() : null,
      allowance: a.credits,
      calls: rows.rows.reduce((n, r) => n + r.calls, 0),
      credits_used: rows.rows.reduce((n, r) => n + r.credits, 0),
      by_server: [...byServer.values()],
      by_tool: rows.rows,
    };
  }
}
