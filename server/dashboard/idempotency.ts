// Key creation under an Idempotency-Key (migration 0008): the key and the record of the header
// that asked for it are written in one transaction, under the account's row lock, so a retried or
// doubled request with the same header answers the key the first one made, never a second key.
import { createHash } from 'node:crypto';
import type { Database } from '../db/pool.ts';
import { ApiError } from '../errors.ts';
import { keyById, keyCreateIn, type ApiKey, type KeySettings } from '../keys/store.ts';

/** How long an Idempotency-Key is remembered. */
export const IDEMPOTENCY_WINDOW_HOURS = 24;
const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;

export type IdempotentKeyCreation = { replayed: false; key: ApiKey; plaintext: string } | { replayed: true; key: ApiKey };

/** Parses the header: printable ASCII without spaces, 1–255 characters (a UUID is typical). */
export function parseIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== 'string' || !KEY_FORMAT.test(header)) {
    throw new ApiError('INVALID_PARAMS', 'The Idempotency-Key header must be 1 to 255 printable characters without spaces.', {
      issues: [{ path: 'Idempotency-Key', message: 'expected 1 to 255 printable ASCII characters' }],
    });
  }
  return header;
}

export async function keyCreateIdempotent(
  db: Database,
  accountId: string,
  idempotencyKey: string,
  settings: KeySettings,
  now = new Date(),
): Promise<IdempotentKeyCreation> {
  const requestHash = createHash('sha256').update(`POST /keys\n${JSON.stringify(settings ?? {})}`).digest();
  return db.transaction(async (client) => {
    // The account's row lock serialises this account's key creations: a concurrent request with
    // the same header waits here and then finds the first one's record.
    await client.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
    const seen = await client.query<{ request_hash: Buffer; key_id: string }>(
      `SELECT request_hash, key_id FROM dashboard_idempotency
        WHERE account_id = $1 AND idempotency_key = $2 AND created_at > $3::timestamptz - make_interval(hours => $4)`,
      [accountId, idempotencyKey, now, IDEMPOTENCY_WINDOW_HOURS],
    );
    const first = seen.rows[0];
    if (first) {
      if (!first.request_hash.equals(requestHash)) {
        throw new ApiError('INVALID_PARAMS', 'This Idempotency-Key was already used for a different request; send a new one.', {
          issues: [{ path: 'Idempotency-Key', message: 'already used with another request body' }],
        });
      }
      return { replayed: true, key: (await keyById(client, first.key_id))! };
    }
    const created = await keyCreateIn(client, accountId, settings, now);
    await client.query(
      `INSERT INTO dashboard_idempotency (account_id, idempotency_key, request_hash, key_id, created_at)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (account_id, idempotency_key) DO UPDATE
         SET request_hash = EXCLUDED.request_hash, key_id = EXCLUDED.key_id, created_at = EXCLUDED.created_at`,
      [accountId, idempotencyKey, requestHash, created.key.id, now],
    );
    return { replayed: false, ...created };
  });
}

/** Forgets Idempotency-Keys past their window (run by the dashboard's periodic sweep). */
export async function idempotencySweep(db: Database): Promise<void> {
  await db.query(`DELETE FROM dashboard_idempotency WHERE created_at < now() - make_interval(hours => $1)`, [IDEMPOTENCY_WINDOW_HOURS]);
}
