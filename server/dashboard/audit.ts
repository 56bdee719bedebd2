// The audit log of dashboard actions (migration 0016): who (the account, and the wallet of the
// session that acted), what, on what, when, and the request id to quote. Written in the action's
// own transaction by each route that changes something (audited, withAudit): the action and its
// row commit together or not at all. Read per account by GET /api/audit (routes/audit.ts).
import type { FastifyRequest } from 'fastify';
import { joinTransaction, type Database } from '../db/pool.ts';
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

/**
 * Runs an action and writes its audit row in one transaction: an action that throws writes no
 * row, and a row that cannot be written undoes the action. `run` gets the transaction's Database
 * (the stores' own transactions nest in it as savepoints); `entry` describes what was done from
 * its result (null: nothing to record, e.g. an idempotent replay).
 */
export async function withAudit<T>(db: Database, run: (tx: Database) => Promise<T>, entry: (result: T) => AuditEntry | null): Promise<T> {
  return db.transaction(async (client) => {
    const tx = joinTransaction(db, client);
    const result = await run(tx);
    const e = entry(result);
    if (e) await auditInsert(tx, e);
    return result;
  });
}

export interface AuditedAction {
  action: AuditAction;
  target?: string | null;
  details?: Record<string, unknown>;
}

/** withAudit for an action of the signed-in session behind `request` (its account and wallet). */
export async function audited<T>(db: Database, request: FastifyRequest, run: (tx: Database) => Promise<T>, entry: (result: T) => AuditedAction | null): Promise<T> {
  return withAudit(db, run, (result) => {
    const e = entry(result);
    return e && sessionEntry(request, e);
  });
}

/**
 * Records, after the fact, what the session behind `request` saw happen outside this database's
 * control: a payment verified on chain is credited whether or not a row is written (the periodic
 * re-check credits it with no request at all), so there is nothing to undo. Every change the
 * dashboard makes itself goes through audited instead.
 */
export async function auditObserved(db: Database, request: FastifyRequest, e: AuditedAction): Promise<void> {
  await auditInsert(db, sessionEntry(request, e));
}

function sessionEntry(request: FastifyRequest, e: AuditedAction): AuditEntry {
  const session = sessionOf(request);
  return {
    account_id: session.account_id,
    action: e.action,
    wallet: { family: session.wallet_family, address: session.wallet_address },
    request_id: request.id,
    target: e.target ?? null,
    ...(e.details !== undefined && { details: e.details }),
  };
}
