// The alert jobs (run by server/jobs on one replica each): evaluating the rules that are due, and
// delivering an alert or an account notice (notices.ts) to a webhook endpoint with retries on a
// schedule: the one webhook sender. A fired alert is stored once per (rule, event) by
// alert_insert, which also queues its delivery in the same transaction (a notice likewise by
// accountNoticesRecord); a delivery already made is never made again by a repeated job.
import type { Database } from '../db/pool.ts';
import { jobAdd } from '../jobs/runner.ts';
import { toRule } from './store.ts';
import { ALERT_DELIVERY_CREDITS, type AlertKind, type AlertRule, type RuleEvaluator } from './types.ts';
import { webhookSend, type SendResult, type WebhookPolicy } from './webhooks.ts';

/**
 * Delays before attempts 2, 3, ... of a webhook delivery (the first is immediate): 5 s, 5 min,
 * 30 min, 2 h, 5 h, 10 h, 10 h, the schedule Svix publishes for Standard Webhooks. Eight
 * attempts over 27 h 35 min 5 s: a receiver down for a day still gets the alert.
 */
export const WEBHOOK_RETRY_SCHEDULE_MS: readonly number[] = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

export interface AlertHooks {
  onEvaluated?: (kind: AlertKind, outcome: 'ok' | 'error', rules: number) => void;
  onFired?: (kind: AlertKind) => void;
  onDelivered?: (channel: 'webhook' | 'pull', lagSeconds: number) => void;
  onAttempt?: (outcome: SendResult['outcome']) => void;
  log?: (line: string) => void;
}

export interface EvaluateOptions {
  evaluators: Partial<Record<AlertKind, RuleEvaluator>>;
  /** How long after an evaluation a rule is due again. */
  intervalMs: number;
  /** Most rules one run claims. */
  batch: number;
  hooks: AlertHooks;
}

/**
 * Claims the due rules (moving their next evaluation on, so a run on another replica skips them)
 * and evaluates each kind in one pass; stores what fired and the rules' new state.
 */
export async function alertsEvaluateDue(db: Database, opts: EvaluateOptions, signal: AbortSignal): Promise<number> {
  const kinds = Object.keys(opts.evaluators);
  const claimed = await db.query<Parameters<typeof toRule>[0]>(
    `WITH due AS (
       SELECT id FROM alert_rules WHERE status = 'active' AND next_evaluation_at <= now() AND kind = ANY ($3)
        ORDER BY next_evaluation_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     UPDATE alert_rules r SET next_evaluation_at = now() + make_interval(secs => $1), last_evaluated_at = now()
       FROM due WHERE r.id = due.id
     RETURNING r.id, r.account_id, r.kind, r.server, r.params, r.state, r.status, r.note, r.created_at, r.last_evaluated_at,
               r.last_error, r.fired, r.last_fired_at, NULL::bigint AS webhook_id, NULL::text AS webhook_url`,
    [opts.intervalMs / 1000, opts.batch, kinds],
  );
  const rules = claimed.rows.map(toRule);
  let fired = 0;
  for (const [kind, group] of Map.groupBy(rules, (r) => r.kind)) {
    const evaluate = opts.evaluators[kind]!;
    let outcomes: Awaited<ReturnType<RuleEvaluator>>;
    try {
      outcomes = await evaluate(group, signal);
      opts.hooks.onEvaluated?.(kind, 'ok', group.length);
    } catch (err) {
      opts.hooks.onEvaluated?.(kind, 'error', group.length);
      await ruleErrors(db, group, (err as Error).message);
      continue;
    }
    for (const o of outcomes) {
      if ('error' in o) {
        await ruleErrors(db, group.filter((r) => r.id === o.rule_id), o.error);
        continue;
      }
      for (const e of o.fired) {
        const res = await db.query<{ id: string | null }>('SELECT alert_insert($1, $2, $3, $4) AS id', [o.rule_id, e.event_id, e.title, e.data]);
        if (res.rows[0]?.id) {
          fired++;
          opts.hooks.onFired?.(kind);
        }
      }
      await db.query('UPDATE alert_rules SET state = $2, last_error = NULL WHERE id = $1', [o.rule_id, o.state]);
    }
  }
  return fired;
}

async function ruleErrors(db: Database, rules: readonly AlertRule[], message: string): Promise<void> {
  await db.query('UPDATE alert_rules SET last_error = $2 WHERE id = ANY ($1)', [rules.map((r) => r.id), message.slice(0, 500)]);
}

interface DeliveryRow {
  id: string;
  status: string;
  attempts: number;
  round: number;
  account_id: string;
  /** One of alert_id and notice_id is set (the delivery's event). */
  alert_id: string | null;
  notice_id: string | null;
  rule_id: string | null;
  kind: string;
  event_id: string;
  title: string;
  data: Record<string, unknown>;
  fired_at: Date;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_valid: boolean;
  balance: number;
  server: string | null;
}

export interface DeliverOptions {
  policy: WebhookPolicy;
  /** Delays before the 2nd, 3rd, ... attempt (WEBHOOK_RETRY_SCHEDULE_MS unless a test injects one). */
  retryScheduleMs: readonly number[];
  hooks: AlertHooks;
}

/** The body POSTed for an alert: what an agent needs to act on it without another call. */
export function alertMessage(d: Pick<DeliveryRow, 'rule_id' | 'kind' | 'event_id' | 'title' | 'data' | 'fired_at'> & { alert_id: string }) {
  return {
    type: `alert.${d.kind}`,
    timestamp: d.fired_at.toISOString(),
    data: { alert_id: Number(d.alert_id), cursor: Number(d.alert_id), rule_id: d.rule_id, kind: d.kind, event_id: d.event_id, title: d.title, fired_at: d.fired_at.toISOString(), ...d.data },
  };
}

/** The body POSTed for an account notice (notices.ts), in the same Standard Webhooks envelope. */
export function noticeMessage(n: { id: string; kind: string; event_id: string; title: string; data: Record<string, unknown>; created_at: Date }) {
  return {
    type: `account.${n.kind}`,
    timestamp: n.created_at.toISOString(),
    data: { notice_id: Number(n.id), kind: n.kind, event_id: n.event_id, title: n.title, ...n.data },
  };
}

/** The webhook-id header and body of a delivery's event: its alert's or its notice's. */
function deliveryMessage(d: DeliveryRow): { id: string; body: string } {
  if (d.notice_id !== null) {
    return { id: `notice_${d.notice_id}`, body: JSON.stringify(noticeMessage({ ...d, id: d.notice_id, created_at: d.fired_at })) };
  }
  return { id: `alert_${d.alert_id}`, body: JSON.stringify(alertMessage({ ...d, alert_id: d.alert_id! })) };
}

/** Queues an attempt of a delivery (jobKey per delivery: a redelivery replaces a queued retry). */
export async function webhookDeliveryQueue(client: Parameters<typeof jobAdd>[0], deliveryId: number, round: number, attempt: number, runAt?: Date): Promise<void> {
  await jobAdd(client, 'webhook_deliver', { delivery: deliveryId, round, attempt }, { jobKey: `webhook:${deliveryId}`, runAt, maxAttempts: 3 });
}

/**
 * One attempt of one delivery. A 2xx delivers it (and charges the account once for an alert; a
 * notice is free); anything else queues the next attempt after the schedule's delay, until the
 * schedule is spent (failed). An account without the credits for an alert is not sent to
 * (unpaid).
 */
export async function webhookDeliver(db: Database, job: { delivery: number; round?: number }, opts: DeliverOptions): Promise<void> {
  const deliveryId = job.delivery;
  const round = job.round ?? 0;
  const res = await db.query<DeliveryRow>(
    `SELECT d.id, d.status, d.attempts, d.round, d.account_id, d.alert_id, d.notice_id, a.rule_id,
            coalesce(a.kind, n.kind) AS kind, coalesce(a.event_id, n.event_id) AS event_id, coalesce(a.title, n.title) AS title,
            coalesce(a.data, n.data) AS data, coalesce(a.fired_at, n.created_at) AS fired_at,
            e.url, e.secret, e.previous_secret, coalesce(e.previous_until > now(), false) AS previous_valid, acc.balance, r.server
       FROM webhook_deliveries d LEFT JOIN alerts a ON a.id = d.alert_id LEFT JOIN account_notices n ON n.id = d.notice_id
       JOIN webhook_endpoints e ON e.id = d.endpoint_id JOIN accounts acc ON acc.id = d.account_id LEFT JOIN alert_rules r ON r.id = a.rule_id
      WHERE d.id = $1`,
    [deliveryId],
  );
  const d = res.rows[0];
  if (!d || d.status !== 'pending' || d.round !== round) return;
  const charged = d.alert_id !== null;
  if (charged && d.balance < ALERT_DELIVERY_CREDITS) {
    await db.query("UPDATE webhook_deliveries SET status = 'unpaid', next_attempt_at = NULL WHERE id = $1 AND round = $2", [deliveryId, round]);
    return;
  }
  const attempt = d.attempts + 1;
  const startedAt = new Date();
  const secrets = d.previous_secret && d.previous_valid ? [d.secret, d.previous_secret] : [d.secret];
  const result = await webhookSend(opts.policy, { url: d.url, secrets }, { ...deliveryMessage(d), at: startedAt });
  opts.hooks.onAttempt?.(result.outcome);
  await db.query(
    'INSERT INTO webhook_attempts (delivery_id, attempt, started_at, duration_ms, outcome, status_code, error) VALUES ($1, $2, $3, $4, $5, $6, $7)',
    [deliveryId, attempt, startedAt, result.ms, result.outcome, result.status, 'error' in result ? result.error.slice(0, 500) : null],
  );
  if (result.outcome === 'ok') {
    await db.transaction(async (client) => {
      await client.query("UPDATE webhook_deliveries SET status = 'delivered', attempts = $2, delivered_at = now(), next_attempt_at = NULL WHERE id = $1 AND round = $3", [deliveryId, attempt, round]);
      if (charged) await client.query('SELECT alert_delivery_charge($1, $2, $3, $4)', [d.account_id, `alert-delivery:${deliveryId}`, ALERT_DELIVERY_CREDITS, d.server ?? 'alerts']);
    });
    if (charged) opts.hooks.onDelivered?.('webhook', (Date.now() - d.fired_at.getTime()) / 1000);
    return;
  }
  // A refused address is not retried: the URL will resolve the same way for the next attempt too.
  const delay = result.outcome === 'refused_address' ? undefined : opts.retryScheduleMs[attempt - 1];
  if (delay === undefined) {
    await db.query("UPDATE webhook_deliveries SET status = 'failed', attempts = $2, next_attempt_at = NULL WHERE id = $1 AND round = $3", [deliveryId, attempt, round]);
    return;
  }
  const next = new Date(startedAt.getTime() + delay);
  await db.transaction(async (client) => {
    const still = await client.query('UPDATE webhook_deliveries SET attempts = $2, next_attempt_at = $3 WHERE id = $1 AND round = $4', [deliveryId, attempt, next, round]);
    if (still.rowCount) await webhookDeliveryQueue(client, deliveryId, round, attempt + 1, next);
  });
}

/**
 * Sends a delivery again now (the dashboard's redeliver), an alert's or a notice's: a failed or
 * unpaid one starts a new round of the schedule; a delivered one is sent once more and not
 * charged again. A new round
 * supersedes an attempt still under way, which then records its outcome but not the delivery's.
 */
export async function webhookRedeliver(db: Database, accountId: string, deliveryId: number): Promise<boolean> {
  return db.transaction(async (client) => {
    const res = await client.query<{ round: number }>(
      "UPDATE webhook_deliveries SET status = 'pending', attempts = 0, round = round + 1, next_attempt_at = now() WHERE id = $1 AND account_id = $2 RETURNING round",
      [deliveryId, accountId],
    );
    if (!res.rows[0]) return false;
    await webhookDeliveryQueue(client, deliveryId, res.rows[0].round, 1);
    return true;
  });
}
