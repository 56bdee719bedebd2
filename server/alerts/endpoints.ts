// Webhook endpoints and their delivery log as the dashboard shows them: an account's endpoints,
// each delivery with its attempts (status, response code, duration), and secret rotation (the
// previous secret keeps signing beside the new one for a grace period). Redelivery is in jobs.ts.
import type { Database } from '../db/pool.ts';
import { endpointFor } from './store.ts';
import { newWebhookSecret, webhookUrlRefusal } from './webhooks.ts';

export interface EndpointView {
  id: number;
  url: string;
  created_at: string;
  rotated_at: string | null;
  /** Until when deliveries also carry a signature by the previous secret. */
  previous_secret_until: string | null;
  rules: number;
  deliveries: { delivered: number; pending: number; failed: number; unpaid: number };
}

export async function webhookEndpointList(db: Database, accountId: string): Promise<EndpointView[]> {
  const res = await db.query<{ id: string; url: string; created_at: Date; rotated_at: Date | null; previous_until: Date | null; rules: number; counts: Record<string, number> | null }>(
    `SELECT e.id, e.url, e.created_at, e.rotated_at, CASE WHEN e.previous_until > now() THEN e.previous_until END AS previous_until,
            (SELECT count(*)::int FROM alert_rules r WHERE r.webhook_id = e.id) AS rules,
            (SELECT jsonb_object_agg(status, n) FROM (SELECT status, count(*)::int AS n FROM webhook_deliveries d WHERE d.endpoint_id = e.id GROUP BY status) s) AS counts
       FROM webhook_endpoints e WHERE e.account_id = $1 ORDER BY e.created_at, e.id`,
    [accountId],
  );
  return res.rows.map((r) => ({
    id: Number(r.id),
    url: r.url,
    created_at: r.created_at.toISOString(),
    rotated_at: r.rotated_at?.toISOString() ?? null,
    previous_secret_until: r.previous_until?.toISOString() ?? null,
    rules: r.rules,
    deliveries: { delivered: r.counts?.delivered ?? 0, pending: r.counts?.pending ?? 0, failed: r.counts?.failed ?? 0, unpaid: r.counts?.unpaid ?? 0 },
  }));
}

/**
 * Adds an endpoint for the URL (checked as a rule's webhook_url is: https, public addresses),
 * with a new secret shown this once; an endpoint the account has for that URL already is
 * answered with `created: false` and no secret. Rules name it by URL (webhook_url).
 */
export async function webhookEndpointCreate(
  db: Database,
  accountId: string,
  url: string,
  policy: { allowPrivate: boolean },
): Promise<{ ok: true; id: number; url: string; created: boolean; secret: string | null } | { ok: false; reason: string }> {
  const refusal = await webhookUrlRefusal(url, policy);
  if (refusal) return { ok: false, reason: refusal };
  return { ok: true, ...(await db.transaction((client) => endpointFor(client, accountId, url))) };
}

export interface DeliveryView {
  id: number;
  /** What was sent: `alert.<kind>` with alert_id, or `account.<kind>` (a usage or lapse notice) with notice_id. */
  event_type: string;
  alert_id: number | null;
  notice_id: number | null;
  title: string;
  status: string;
  attempts: { attempt: number; started_at: string; duration_ms: number; outcome: string; status_code: number | null; error: string | null }[];
  next_attempt_at: string | null;
  delivered_at: string | null;
  created_at: string;
}

/** An endpoint's deliveries, newest first, paged by `before` (a delivery id); null when the endpoint is not the account's. */
export async function webhookDeliveryList(db: Database, accountId: string, endpointId: number, page: { before?: number; limit: number }): Promise<DeliveryView[] | null> {
  const owned = await db.query('SELECT 1 FROM webhook_endpoints WHERE id = $1 AND account_id = $2', [endpointId, accountId]);
  if (!owned.rowCount) return null;
  const res = await db.query<{ id: string; event_type: string; alert_id: string | null; notice_id: string | null; title: string; status: string; attempts: DeliveryView['attempts'] | null; next_attempt_at: Date | null; delivered_at: Date | null; created_at: Date }>(
    `SELECT d.id, d.alert_id, d.notice_id, coalesce('alert.' || a.kind, 'account.' || n.kind) AS event_type, coalesce(a.title, n.title) AS title,
            d.status, d.next_attempt_at, d.delivered_at, d.created_at,
            (SELECT jsonb_agg(jsonb_build_object('attempt', t.attempt, 'started_at', t.started_at, 'duration_ms', t.duration_ms, 'outcome', t.outcome,
                                                 'status_code', t.status_code, 'error', t.error) ORDER BY t.id)
               FROM webhook_attempts t WHERE t.delivery_id = d.id) AS attempts
       FROM webhook_deliveries d LEFT JOIN alerts a ON a.id = d.alert_id LEFT JOIN account_notices n ON n.id = d.notice_id
      WHERE d.endpoint_id = $1 AND ($2::bigint IS NULL OR d.id < $2)
      ORDER BY d.id DESC LIMIT $3`,
    [endpointId, page.before ?? null, page.limit],
  );
  return res.rows.map((r) => ({
    id: Number(r.id),
    event_type: r.event_type,
    alert_id: r.alert_id === null ? null : Number(r.alert_id),
    notice_id: r.notice_id === null ? null : Number(r.notice_id),
    title: r.title,
    status: r.status,
    attempts: r.attempts ?? [],
    next_attempt_at: r.next_attempt_at?.toISOString() ?? null,
    delivered_at: r.delivered_at?.toISOString() ?? null,
    created_at: r.created_at.toISOString(),
  }));
}

/**
 * A new secret for the endpoint, used for every attempt from now on; the old one keeps signing
 * beside it for graceSeconds, so a receiver can switch without losing a delivery. Null when the
 * endpoint is not the account's.
 */
export async function webhookSecretRotate(db: Database, accountId: string, endpointId: number, graceSeconds: number): Promise<{ secret: string; previous_secret_until: string | null } | null> {
  const res = await db.query<{ secret: string; previous_until: Date | null }>(
    `UPDATE webhook_endpoints SET previous_secret = secret, secret = $3, rotated_at = now(),
            previous_until = CASE WHEN $4 > 0 THEN now() + make_interval(secs => $4) END
      WHERE id = $1 AND account_id = $2 RETURNING secret, previous_until`,
    [endpointId, accountId, newWebhookSecret(), graceSeconds],
  );
  const row = res.rows[0];
  return row ? { secret: row.secret, previous_secret_until: row.previous_until?.toISOString() ?? null } : null;
}
