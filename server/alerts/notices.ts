// Notices about the account itself (issue 36, migrations 0018 and 0019), POSTed to every webhook
// endpoint of the account (the ones its alert rules deliver to) by the one webhook sender
// (webhookDeliver in jobs.ts: its retry schedule, attempt log and the dashboard's redeliver):
// - usage: the period's plan allowance 80, 90 and 100% spent (once per threshold per period);
// - plan_lapse: a paid plan ends within LAPSE_NOTICE_DAYS with nothing bought after it, and
//   then falls back to Free (it does not renew by itself).
// The recurring task account_notices finds them; each is recorded once (account_notices, unique
// per account and event) with its deliveries queued in the same transaction, so two replicas
// scanning at once send it once. Unlike alerts, a notice costs no credits: it is about the
// account running out, and would otherwise go unsent exactly when it matters.
import type { Database } from '../db/pool.ts';
import { webhookDeliveryQueue } from './jobs.ts';

export const USAGE_THRESHOLDS: readonly number[] = [80, 90, 100];
export const LAPSE_NOTICE_DAYS = 7;

export type NoticeKind = 'usage' | 'plan_lapse';

export interface Notice {
  account_id: string;
  kind: NoticeKind;
  event_id: string;
  title: string;
  data: Record<string, unknown>;
}

/** The highest threshold (of USAGE_THRESHOLDS) that `used` of `allowance` has reached, or null. */
export function usageThreshold(used: number, allowance: number): number | null {
  if (allowance <= 0) return null;
  let reached: number | null = null;
  for (const t of USAGE_THRESHOLDS) if (used * 100 >= t * allowance) reached = t;
  return reached;
}

/** The notices due now: thresholds reached this period, and paid plans about to lapse. */
export async function accountNoticesDue(db: Database): Promise<Notice[]> {
  const notices: Notice[] = [];
  // Cheap first: only accounts whose plan credits left are at most 20% of the allowance; then
  // what they really spent this period (successful calls, from the ledger).
  const usage = await db.query<{ id: string; plan: string; display_name: string; allowance: number; period_start: Date; period_end: Date | null; used: number; balance: number }>(
    `SELECT a.id, a.plan, p.display_name, p.credits AS allowance, a.period_start, a.period_end, a.balance,
            coalesce((SELECT -sum(l.delta) FROM credit_ledger l
                       WHERE l.account_id = a.id AND l.kind = 'reserve' AND l.resolution IS DISTINCT FROM 'refunded'
                         AND l.created_at >= a.period_start), 0)::int AS used
       FROM accounts a JOIN plans p ON p.name = a.plan
      WHERE a.status = 'active' AND p.credits > 0 AND (a.balance - a.topup) * 5 <= p.credits`,
  );
  for (const a of usage.rows) {
    for (const t of USAGE_THRESHOLDS) {
      if (a.used * 100 < t * a.allowance) continue;
      notices.push({
        account_id: a.id,
        kind: 'usage',
        event_id: `usage:${a.period_start.toISOString()}:${t}`,
        title: `${t}% of this period's ${a.display_name} credits used`,
        data: {
          threshold_percent: t,
          plan: a.plan,
          allowance: a.allowance,
          used: a.used,
          balance: a.balance,
          period_start: a.period_start.toISOString(),
          renews_at: a.period_end?.toISOString() ?? null,
        },
      });
    }
  }
  const lapsing = await db.query<{ id: string; plan: string; display_name: string; paid_until: Date }>(
    `SELECT a.id, a.plan, p.display_name, a.paid_until
       FROM accounts a JOIN plans p ON p.name = a.plan
      WHERE a.status = 'active' AND a.paid_until > now() AND a.paid_until <= now() + make_interval(days => $1)
        AND NOT EXISTS (SELECT 1 FROM plan_schedule s WHERE s.account_id = a.id)`,
    [LAPSE_NOTICE_DAYS],
  );
  for (const a of lapsing.rows) {
    notices.push({
      account_id: a.id,
      kind: 'plan_lapse',
      event_id: `lapse:${a.paid_until.toISOString()}`,
      title: `${a.display_name} ends on ${a.paid_until.toISOString().slice(0, 10)} and your account returns to Free`,
      data: { plan: a.plan, paid_until: a.paid_until.toISOString(), falls_back_to: 'free' },
    });
  }
  return notices;
}

/**
 * Records each notice once and queues one delivery per webhook endpoint of its account, in one
 * transaction per notice. Returns how many notices were new.
 */
export async function accountNoticesRecord(db: Database, notices: readonly Notice[]): Promise<number> {
  let recorded = 0;
  for (const n of notices) {
    const isNew = await db.transaction(async (client) => {
      const res = await client.query<{ id: string }>(
        `INSERT INTO account_notices (account_id, kind, event_id, title, data) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (account_id, event_id) DO NOTHING RETURNING id`,
        [n.account_id, n.kind, n.event_id, n.title, n.data],
      );
      const id = res.rows[0]?.id;
      if (id === undefined) return false;
      const deliveries = await client.query<{ id: string }>(
        `INSERT INTO webhook_deliveries (notice_id, endpoint_id, account_id, next_attempt_at)
         SELECT $1, id, account_id, now() FROM webhook_endpoints WHERE account_id = $2 RETURNING id`,
        [id, n.account_id],
      );
      for (const d of deliveries.rows) await webhookDeliveryQueue(client, Number(d.id), 0, 1);
      return true;
    });
    if (isNew) recorded++;
  }
  return recorded;
}

/** The recurring task: find what is due and record it. */
export async function accountNoticesScan(db: Database): Promise<number> {
  return accountNoticesRecord(db, await accountNoticesDue(db));
}
