// SQL for OAuth (migration 0010): the authorization server's artifacts, kept by SHA-256 of their
// ids, and connections — one approved consent per row, the key-like record the gateway meters.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Database } from '../db/pool.ts';
import { ApiError } from '../errors.ts';
import type { KeyGrant } from '../keys/store.ts';

export function sha256(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

export interface ArtifactRow {
  payload: Record<string, unknown>;
  jti_is_id: boolean;
  consumed_at: Date | null;
}

export async function artifactUpsert(
  db: Database,
  row: { model: string; id: string; payload: Record<string, unknown>; jtiIsId: boolean; grantId: string | null; uid: string | null; expiresInSeconds: number | undefined },
): Promise<void> {
  await db.query(
    `INSERT INTO oauth_artifacts (model, id_hash, payload, jti_is_id, grant_id, uid_hash, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $7::int IS NULL THEN NULL ELSE now() + make_interval(secs => $7::int) END)
     ON CONFLICT (model, id_hash) DO UPDATE
       SET payload = EXCLUDED.payload, jti_is_id = EXCLUDED.jti_is_id, grant_id = EXCLUDED.grant_id,
           uid_hash = EXCLUDED.uid_hash, expires_at = EXCLUDED.expires_at`,
    [row.model, sha256(row.id), row.payload, row.jtiIsId, row.grantId, row.uid === null ? null : sha256(row.uid), row.expiresInSeconds ?? null],
  );
}

const LIVE = '(expires_at IS NULL OR expires_at > now())';

export async function artifactFind(db: Database, model: string, id: string): Promise<ArtifactRow | undefined> {
  const res = await db.query<ArtifactRow>(
    `SELECT payload, jti_is_id, consumed_at FROM oauth_artifacts WHERE model = $1 AND id_hash = $2 AND ${LIVE}`,
    [model, sha256(id)],
  );
  return res.rows[0];
}

export async function artifactFindByUid(db: Database, model: string, uid: string): Promise<(ArtifactRow & { id_hash: Buffer }) | undefined> {
  const res = await db.query<ArtifactRow & { id_hash: Buffer }>(
    `SELECT payload, jti_is_id, consumed_at, id_hash FROM oauth_artifacts WHERE model = $1 AND uid_hash = $2 AND ${LIVE}`,
    [model, sha256(uid)],
  );
  return res.rows[0];
}

export async function artifactConsume(db: Database, model: string, id: string): Promise<void> {
  await db.query(`UPDATE oauth_artifacts SET consumed_at = coalesce(consumed_at, now()) WHERE model = $1 AND id_hash = $2`, [model, sha256(id)]);
}

export async function artifactDestroy(db: Database, model: string, id: string): Promise<void> {
  await db.query(`DELETE FROM oauth_artifacts WHERE model = $1 AND id_hash = $2`, [model, sha256(id)]);
}

/**
 * Revokes everything issued under a grant (the library calls this on refresh token reuse, code
 * reuse and refresh token revocation), and ends the connection that grant backs.
 */
export async function grantRevoke(db: Database, grantId: string, reason: 'user' | 'grant_revoked'): Promise<void> {
  await db.transaction(async (client) => {
    await client.query(`DELETE FROM oauth_artifacts WHERE grant_id = $1`, [grantId]);
    await client.query(
      `UPDATE oauth_connections SET revoked_at = now(), revoked_reason = $2 WHERE grant_id = $1 AND revoked_at IS NULL`,
      [grantId, reason],
    );
  });
}

/**
 * A refresh token was issued under this grant: the grant and its connection live at least as long
 * as that token (the sliding lifetime), so a client that keeps refreshing never has to sign in again.
 */
export async function grantExtend(db: Database, grantId: string, expiresInSeconds: number): Promise<void> {
  await db.transaction(async (client) => {
    await client.query(
      `UPDATE oauth_artifacts
          SET expires_at = greatest(expires_at, now() + make_interval(secs => $2)),
              payload = jsonb_set(payload, '{exp}', to_jsonb(greatest((payload->>'exp')::bigint, floor(extract(epoch FROM now()))::bigint + $2)))
        WHERE model = 'Grant' AND grant_id = $1`,
      [grantId, expiresInSeconds],
    );
    await client.query(
      `UPDATE oauth_connections SET expires_at = greatest(expires_at, now() + make_interval(secs => $2))
        WHERE grant_id = $1 AND revoked_at IS NULL`,
      [grantId, expiresInSeconds],
    );
  });
}

export async function artifactSweep(db: Database): Promise<void> {
  await db.query(`DELETE FROM oauth_artifacts WHERE expires_at < now() - interval '1 day'`);
}

export interface Connection {
  id: string;
  grant_id: string;
  account_id: string;
  client_id: string;
  client_name: string | null;
  client_uri: string | null;
  logo_uri: string | null;
  servers: string[];
  created_at: Date;
  last_used_at: Date | null;
  expires_at: Date;
  revoked_at: Date | null;
  revoked_reason: 'user' | 'grant_revoked' | null;
}

const CONNECTION_COLUMNS =
  'id, grant_id, account_id, client_id, client_name, client_uri, logo_uri, servers, created_at, last_used_at, expires_at, revoked_at, revoked_reason';

export async function connectionCreate(
  db: Database,
  c: { grantId: string; accountId: string; clientId: string; clientName?: string; clientUri?: string; logoUri?: string; servers: string[]; lifetimeSeconds: number },
): Promise<Connection> {
  const res = await db.query<Connection>(
    `INSERT INTO oauth_connections (grant_id, account_id, client_id, client_name, client_uri, logo_uri, servers, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8)) RETURNING ${CONNECTION_COLUMNS}`,
    [c.grantId, c.accountId, c.clientId, c.clientName ?? null, c.clientUri ?? null, c.logoUri ?? null, c.servers, c.lifetimeSeconds],
  );
  return res.rows[0]!;
}

export async function connectionListByAccount(db: Database, accountId: string): Promise<Connection[]> {
  const res = await db.query<Connection>(`SELECT ${CONNECTION_COLUMNS} FROM oauth_connections WHERE account_id = $1 ORDER BY created_at DESC`, [accountId]);
  return res.rows;
}

/** Revokes one of the account's connections: its tokens are deleted and the gateway refuses it. */
export async function connectionRevoke(db: Database, accountId: string, connectionId: string): Promise<Connection> {
  if (!z.string().uuid().safeParse(connectionId).success) {
    throw new ApiError('INVALID_PARAMS', 'Connection ids are UUIDs.', { issues: [{ path: 'connection', message: 'expected a UUID' }] });
  }
  const found = await db.query<Connection>(`SELECT ${CONNECTION_COLUMNS} FROM oauth_connections WHERE id = $1 AND account_id = $2`, [connectionId, accountId]);
  const connection = found.rows[0];
  if (!connection) throw new ApiError('NOT_FOUND', 'No connected app with this id on your account.', { connection: connectionId });
  await grantRevoke(db, connection.grant_id, 'user');
  const res = await db.query<Connection>(`SELECT ${CONNECTION_COLUMNS} FROM oauth_connections WHERE id = $1`, [connectionId]);
  return res.rows[0]!;
}

export async function connectionTouchMany(db: Database, used: Map<string, Date>): Promise<void> {
  if (used.size === 0) return;
  await db.query(
    `UPDATE oauth_connections c SET last_used_at = greatest(c.last_used_at, u.at)
       FROM unnest($1::uuid[], $2::timestamptz[]) AS u(id, at) WHERE c.id = u.id`,
    [[...used.keys()], [...used.values()]],
  );
}

/** An access token's grant, shaped as a key grant (key_id is the connection's id). */
export interface TokenGrant extends KeyGrant {
  audience: string | null;
  connection_servers: string[];
}

export async function tokenGrantByHash(db: Database, hash: Buffer): Promise<TokenGrant | undefined> {
  const res = await db.query<TokenGrant>(
    `SELECT c.id AS key_id, c.account_id, c.servers AS connection_servers, c.servers AS key_servers,
            t.expires_at, c.revoked_at, false AS read_only, t.payload->>'aud' AS audience,
            a.status AS account_status, a.plan, p.servers AS plan_servers, p.requests_per_minute, p.burst, a.balance
       FROM oauth_artifacts t
       JOIN oauth_connections c ON c.grant_id = t.grant_id
       JOIN accounts a ON a.id = c.account_id JOIN plans p ON p.name = a.plan
      WHERE t.model = 'AccessToken' AND t.id_hash = $1`,
    [hash],
  );
  return res.rows[0];
}
