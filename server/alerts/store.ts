// The PostgreSQL AlertStore (tables of migration 0014): rules with their per-plan cap, webhook
// endpoints, and the alert feed read by cursor. types.ts declares what the tools see.
import type pg from 'pg';
import type { Database } from '../db/pool.ts';
import { newWebhookSecret, webhookUrlRefusal } from './webhooks.ts';
import { alertRuleCap, type Alert, type AlertKind, type AlertRule, type AlertStore, type NewRule, type RuleCreateOutcome } from './types.ts';

const RULE_COLUMNS = `r.id, r.account_id, r.kind, r.server, r.params, r.state, r.status, r.note, r.created_at, r.last_evaluated_at,
  r.last_error, r.fired, r.last_fired_at, w.id AS webhook_id, w.url AS webhook_url`;
const RULE_FROM = 'alert_rules r LEFT JOIN webhook_endpoints w ON w.id = r.webhook_id';

type RuleRow = Omit<AlertRule, 'created_at' | 'last_evaluated_at' | 'last_fired_at' | 'webhook'> & {
  created_at: Date;
  last_evaluated_at: Date | null;
  last_fired_at: Date | null;
  webhook_id: string | null;
  webhook_url: string | null;
};

const iso = (d: Date | null) => (d ? d.toISOString() : null);
export const toRule = (r: RuleRow): AlertRule => ({
  id: r.id,
  account_id: r.account_id,
  kind: r.kind,
  server: r.server,
  params: r.params,
  state: r.state,
  status: r.status,
  note: r.note,
  webhook: r.webhook_id && r.webhook_url ? { id: Number(r.webhook_id), url: r.webhook_url } : null,
  created_at: r.created_at.toISOString(),
  last_evaluated_at: iso(r.last_evaluated_at),
  last_error: r.last_error,
  fired: r.fired,
  last_fired_at: iso(r.last_fired_at),
});

type AlertRow = Omit<Alert, 'id' | 'fired_at'> & { id: string; fired_at: Date };
const toAlert = (r: AlertRow): Alert => ({ ...r, id: Number(r.id), fired_at: r.fired_at.toISOString() });

export class SqlAlertStore implements AlertStore {
  readonly #db: Database;
  readonly #allowPrivate: boolean;
  readonly #onPulled: ((lagSeconds: number[]) => void) | undefined;
  constructor(db: Database, opts: { allowPrivateWebhooks: boolean; onPulled?: (lagSeconds: number[]) => void }) {
    this.#db = db;
    this.#allowPrivate = opts.allowPrivateWebhooks;
    this.#onPulled = opts.onPulled;
  }

  async create(accountId: string, rule: NewRule): Promise<RuleCreateOutcome> {
    // DNS is asked before the transaction: nothing is held while it answers.
    if (rule.webhook_url !== undefined) {
      const refusal = await webhookUrlRefusal(rule.webhook_url, { allowPrivate: this.#allowPrivate });
      if (refusal) return { ok: false, code: 'WEBHOOK_REFUSED', reason: refusal };
    }
    return this.#db.transaction(async (client) => {
      // The account row lock serialises one account's creations, so two cannot both pass the cap.
      const account = await client.query<{ plan: string }>('SELECT plan FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
      const plan = account.rows[0]?.plan ?? 'free';
      const limit = alertRuleCap(plan);
      const count = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM alert_rules WHERE account_id = $1', [accountId]);
      if ((count.rows[0]?.n ?? 0) >= limit) return { ok: false, code: 'CAP_REACHED', limit, plan };
      const webhook = rule.webhook_url === undefined ? null : await endpointFor(client, accountId, rule.webhook_url);
      const inserted = await client.query<{ id: string }>(
        'INSERT INTO alert_rules (account_id, kind, server, params, state, note, webhook_id) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id',
        [accountId, rule.kind, rule.server, rule.params, rule.state, rule.note ?? null, webhook?.id ?? null],
      );
      const row = await client.query<RuleRow>(`SELECT ${RULE_COLUMNS} FROM ${RULE_FROM} WHERE r.id = $1`, [inserted.rows[0]!.id]);
      return { ok: true, rule: toRule(row.rows[0]!), webhook, limit };
    });
  }

  async list(accountId: string, kind?: AlertKind): Promise<AlertRule[]> {
    const res = await this.#db.query<RuleRow>(
      `SELECT ${RULE_COLUMNS} FROM ${RULE_FROM} WHERE r.account_id = $1 AND ($2::text IS NULL OR r.kind = $2) ORDER BY r.created_at, r.id`,
      [accountId, kind ?? null],
    );
    return res.rows.map(toRule);
  }

  async setStatus(accountId: string, ruleId: string, status: 'active' | 'paused'): Promise<AlertRule | null> {
    // Resuming evaluates at once; marks stay where they were, so what happened while paused is
    // still seen (a whale rule scans from its mark, at most its window per pass).
    const res = await this.#db.query<{ id: string }>(
      `UPDATE alert_rules SET status = $3, next_evaluation_at = CASE WHEN $3 = 'active' THEN now() ELSE next_evaluation_at END
        WHERE account_id = $1 AND id = $2 RETURNING id`,
      [accountId, ruleId, status],
    );
    if (!res.rows[0]) return null;
    const row = await this.#db.query<RuleRow>(`SELECT ${RULE_COLUMNS} FROM ${RULE_FROM} WHERE r.id = $1`, [ruleId]);
    return row.rows[0] ? toRule(row.rows[0]) : null;
  }

  async remove(accountId: string, ruleId: string): Promise<boolean> {
    const res = await this.#db.query('DELETE FROM alert_rules WHERE account_id = $1 AND id = $2', [accountId, ruleId]);
    return (res.rowCount ?? 0) > 0;
  }

  async since(accountId: string, cursor: number, limit: number): Promise<Alert[]> {
    const res = await this.#db.query<AlertRow>(
      'SELECT id, rule_id, kind, event_id, title, data, fired_at FROM alerts WHERE account_id = $1 AND id > $2 ORDER BY id LIMIT $3',
      [accountId, cursor, limit],
    );
    const now = Date.now();
    if (res.rows.length > 0) this.#onPulled?.(res.rows.map((r) => (now - r.fired_at.getTime()) / 1000));
    return res.rows.map(toAlert);
  }

  async usage(accountId: string): Promise<{ rules: number; limit: number; plan: string }> {
    const res = await this.#db.query<{ plan: string; n: number }>(
      'SELECT a.plan, (SELECT count(*)::int FROM alert_rules WHERE account_id = a.id) AS n FROM accounts a WHERE a.id = $1',
      [accountId],
    );
    const plan = res.rows[0]?.plan ?? 'free';
    return { rules: res.rows[0]?.n ?? 0, limit: alertRuleCap(plan), plan };
  }
}

/** The account's endpoint for this URL, made (with a new secret, shown this once) if it has none. */
export async function endpointFor(client: pg.PoolClient, accountId: string, url: string): Promise<{ id: number; url: string; created: boolean; secret: string | null }> {
  const made = await client.query<{ id: string; secret: string }>(
    'INSERT INTO webhook_endpoints (account_id, url, secret) VALUES ($1, $2, $3) ON CONFLICT (account_id, url) DO NOTHING RETURNING id, secret',
    [accountId, url, newWebhookSecret()],
  );
  if (made.rows[0]) return { id: Number(made.rows[0].id), url, created: true, secret: made.rows[0].secret };
  const found = await client.query<{ id: string }>('SELECT id FROM webhook_endpoints WHERE account_id = $1 AND url = $2', [accountId, url]);
  return { id: Number(found.rows[0]!.id), url, created: false, secret: null };
}
