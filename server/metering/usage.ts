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
      `SELECT server, tool, count(*)::int AS calls, coalesce(-sum(delta), 0)::int AS credits
         FROM credit_ledger
        WHERE account_id = $1 AND kind = 'reserve' AND created_at >= $2 AND resolution IS DISTINCT FROM 'refunded'
        GROUP BY server, tool ORDER BY server, tool`,
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
