// The audit log of dashboard actions (migration 0016): who (the account, and the wallet of the
// session that acted), what, on what, when, and the request id to quote. Written beside the action
// by each route that changes something; read per account by GET /api/audit (routes/audit.ts).
import type { FastifyRequest } from 'fastify';
import type { Database } from '../db/pool.ts';
import { sessionOf } from './session.ts';

export type AuditAction =
  | 'sign_in'
  | 'sign_out'
  | 'session_revoke'
  | 'key_create'
  | 'key_update'
  | 'key_revoke'
  | 'key_rotate'
  | 'key_pause'
  | 'key_resume'
  | 'wallet_link'
  | 'wallet_unlink'
  | 'account_merge'
  | 'plan_purchase'
  | 'connection_revoke';

export interface AuditEntry {
  account_id: string;
  action: AuditAction;
  /** The wallet that acted (the session's), as family:address. */
  wallet: { family: string; address: string } | null;
  request_id: string;
  /** What the action was on: a key id, a wallet, a session id, an order id. */
  target?: string | null;
  details?: Record<string, unknown>;
}

export async function auditInsert(db: Database, e: AuditEntry): Promise<void> {
  await db.query(
    `INSERT INTO audit_log (account_id, action, wallet, chain, request_id, target, details) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [e.account_id, e.action, e.wallet?.address ?? null, e.wallet?.family ?? null, e.request_id, e.target ?? null, e.details ?? {}],
  );
}

/** Records an action of the signed-in session behind `request`. */
export async function audit(
  db: Database,
  request: FastifyRequest,
  action: AuditAction,
  target?: string | null,
  details?: Record<string, unknown>,
): Promise<void> {
  const session = sessionOf(request);
  await auditInsert(db, {
    account_id: session.account_id,
    action,
    wallet: { family: session.wallet_family, address: session.wallet_address },
    request_id: request.id,
    target: target ?? null,
    ...(details !== undefined && { details }),
  });
}
