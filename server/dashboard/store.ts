// SQL for the dashboard's own rows (migration 0005): sign-in nonces, browser sessions and the
// sign-in attempt log. Accounts, wallets and keys go through server/accounts and server/keys.
import { createHash, randomBytes } from 'node:crypto';
import type { Database } from '../db/pool.ts';

export type WalletFamily = 'evm' | 'solana';

export interface Session {
  id: string;
  account_id: string;
  wallet_family: WalletFamily;
  wallet_address: string;
  csrf_token: string;
  created_at: Date;
  expires_at: Date;
}

function sha256(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/** 128 random bits as 32 hex characters (EIP-4361 wants at least 8 alphanumeric characters). */
export function randomToken(bytes = 16): string {
  return randomBytes(bytes).toString('hex');
}

export async function nonceCreate(
  db: Database,
  input: { purpose: 'sign_in' | 'link'; sessionId?: string; ttlSeconds: number },
): Promise<{ nonce: string; expires_at: Date }> {
  const nonce = randomToken();
  const res = await db.query<{ expires_at: Date }>(
    `INSERT INTO dashboard_nonces (nonce, purpose, session_id, expires_at)
     VALUES ($1, $2, $3, now() + make_interval(secs => $4)) RETURNING expires_at`,
    [nonce, input.purpose, input.sessionId ?? null, input.ttlSeconds],
  );
  return { nonce, expires_at: res.rows[0]!.expires_at };
}

export type NonceOutcome = { ok: true; created_at: Date } | { ok: false; reason: 'nonce_unknown' | 'nonce_used' | 'nonce_expired' };

/**
 * Uses a nonce up. One UPDATE claims it, so of two requests carrying the same nonce only one can
 * succeed; a failed claim is then explained (unknown, already used or expired).
 */
export async function nonceConsume(
  db: Database,
  input: { nonce: string; purpose: 'sign_in' | 'link'; sessionId?: string },
): Promise<NonceOutcome> {
  const claimed = await db.query<{ created_at: Date }>(
    `UPDATE dashboard_nonces SET used_at = now()
      WHERE nonce = $1 AND purpose = $2 AND session_id IS NOT DISTINCT FROM $3
        AND used_at IS NULL AND expires_at > now()
      RETURNING created_at`,
    [input.nonce, input.purpose, input.sessionId ?? null],
  );
  if (claimed.rows[0]) return { ok: true, created_at: claimed.rows[0].created_at };
  const row = await db.query<{ used: boolean }>(
    `SELECT used_at IS NOT NULL AS used FROM dashboard_nonces
      WHERE nonce = $1 AND purpose = $2 AND session_id IS NOT DISTINCT FROM $3`,
    [input.nonce, input.purpose, input.sessionId ?? null],
  );
  const found = row.rows[0];
  if (!found) return { ok: false, reason: 'nonce_unknown' };
  return { ok: false, reason: found.used ? 'nonce_used' : 'nonce_expired' };
}

const SESSION_COLUMNS = 'id, account_id, wallet_family, wallet_address, csrf_token, created_at, expires_at';

/** Opens a session; the returned token goes in the cookie and only its hash is stored. */
export async function sessionCreate(
  db: Database,
  input: { accountId: string; family: WalletFamily; address: string; ttlSeconds: number; userAgent?: string },
): Promise<{ session: Session; token: string }> {
  const token = randomBytes(32).toString('base64url');
  const res = await db.query<Session>(
    `INSERT INTO dashboard_sessions (token_hash, account_id, wallet_family, wallet_address, csrf_token, user_agent, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7)) RETURNING ${SESSION_COLUMNS}`,
    [sha256(token), input.accountId, input.family, input.address, randomToken(32), input.userAgent?.slice(0, 512) ?? null, input.ttlSeconds],
  );
  return { session: res.rows[0]!, token };
}

/** The live session for a cookie token, or undefined (unknown, expired or signed out). */
export async function sessionByToken(db: Database, token: string): Promise<Session | undefined> {
  const res = await db.query<Session>(
    `UPDATE dashboard_sessions SET last_seen_at = now()
      WHERE token_hash = $1 AND revoked_at IS NULL AND expires_at > now()
      RETURNING ${SESSION_COLUMNS}`,
    [sha256(token)],
  );
  return res.rows[0];
}

export async function sessionRevoke(db: Database, id: string): Promise<void> {
  await db.query('UPDATE dashboard_sessions SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1', [id]);
}

/** The account's live sessions, newest first (no token, no CSRF token). */
export async function sessionListByAccount(db: Database, accountId: string) {
  const res = await db.query<{ id: string; wallet_family: WalletFamily; wallet_address: string; user_agent: string | null; created_at: Date; last_seen_at: Date; expires_at: Date }>(
    `SELECT id, wallet_family, wallet_address, user_agent, created_at, last_seen_at, expires_at FROM dashboard_sessions
      WHERE account_id = $1 AND revoked_at IS NULL AND expires_at > now() ORDER BY last_seen_at DESC`,
    [accountId],
  );
  return res.rows.map((r) => ({
    id: r.id,
    wallet: { family: r.wallet_family, address: r.wallet_address },
    user_agent: r.user_agent,
    created_at: r.created_at.toISOString(),
    last_seen_at: r.last_seen_at.toISOString(),
    expires_at: r.expires_at.toISOString(),
  }));
}

/** Ends one live session of the account; false if it has none with that id. */
export async function sessionRevokeOfAccount(db: Database, accountId: string, id: string): Promise<boolean> {
  const res = await db.query('UPDATE dashboard_sessions SET revoked_at = now() WHERE id = $1 AND account_id = $2 AND revoked_at IS NULL', [id, accountId]);
  return (res.rowCount ?? 0) > 0;
}

/** Attempts by this client within the window (the sign-in rate limit counts these). */
export async function attemptCountRecent(db: Database, client: string, windowSeconds: number): Promise<{ count: number; oldest: Date | null }> {
  const res = await db.query<{ count: number; oldest: Date | null }>(
    `SELECT count(*) AS count, min(created_at) AS oldest FROM dashboard_sign_in_attempts
      WHERE client = $1 AND created_at > now() - make_interval(secs => $2)`,
    [client, windowSeconds],
  );
  return res.rows[0]!;
}

export async function attemptRecord(
  db: Database,
  input: { client: string; family?: WalletFamily; address?: string; outcome: 'ok' | 'refused' | 'rate_limited'; reason?: string },
): Promise<void> {
  await db.query(
    `INSERT INTO dashboard_sign_in_attempts (client, family, address, outcome, reason) VALUES ($1, $2, $3, $4, $5)`,
    [input.client.slice(0, 64), input.family ?? null, input.address ?? null, input.outcome, input.reason ?? null],
  );
}

/** Drops nonces and sessions long past their expiry and attempts older than a day. */
export async function dashboardSweep(db: Database): Promise<void> {
  await db.query(`DELETE FROM dashboard_nonces WHERE expires_at < now() - interval '1 hour'`);
  await db.query(`DELETE FROM dashboard_sessions WHERE expires_at < now() - interval '1 day'`);
  await db.query(`DELETE FROM dashboard_sign_in_attempts WHERE created_at < now() - interval '1 day'`);
}
