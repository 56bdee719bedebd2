// API key rows: create (with the plan's key cap), list, revoke, look up by hash, touch last_used_at.
import { z } from 'zod';
import type { PoolClient } from 'pg';
import type { Database } from '../db/pool.ts';
import { ApiError } from '../errors.ts';
import { SERVER_NAMES } from '../mcp/names.ts';
import { AccountIdSchema } from '../accounts/accounts.ts';
import { generateKey } from './format.ts';

export interface ApiKey {
  id: string;
  account_id: string;
  prefix: string;
  name: string;
  description: string | null;
  /** null: every server the plan allows. */
  servers: string[] | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
  /** The key this one replaced by rotation, if any. */
  rotated_from: string | null;
  /** Paused keys are refused by the metering statement (403 KEY_PAUSED) until resumed. */
  paused_at: Date | null;
  /** Only tools that change nothing (403 KEY_SCOPE_FORBIDDEN on a write tool). */
  read_only: boolean;
  /** Most credits the key may spend per cap_period (UTC day or month); null: no cap. */
  credit_cap: number | null;
  cap_period: 'day' | 'month';
  /** Credits spent in the period starting at cap_window (counted while a cap is set). */
  cap_spent: number;
  cap_window: Date | null;
  /** The key's own rate limit on tools/call, beside the plan's; null: only the plan's. */
  rate_limit_per_minute: number | null;
}

const KEY_COLUMNS =
  'id, account_id, prefix, name, description, servers, expires_at, revoked_at, last_used_at, created_at, rotated_from, ' +
  'paused_at, read_only, credit_cap, cap_period, cap_spent, cap_window, rate_limit_per_minute';

/** The controls a key can be given at creation or by an edit (enforced in meter_reserve_batch, migration 0016). */
const CONTROLS = {
  read_only: z.boolean(),
  credit_cap: z.number().int().min(1).max(1_000_000_000),
  cap_period: z.enum(['day', 'month']),
  rate_limit_per_minute: z.number().int().min(1).max(100_000),
};

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** Rejects dates that do not exist (Feb 30, hour 25), which Date would silently roll over. */
function isCalendarDate(s: string): boolean {
  const [y, mo, d, h = 0, mi = 0, sec = 0] = (s.match(/\d+/g) ?? []).map(Number);
  if (y === undefined || mo === undefined || d === undefined) return false;
  const daysInMonth = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  return mo >= 1 && mo <= 12 && d >= 1 && d <= daysInMonth && h <= 23 && mi <= 59 && sec <= 60;
}

export const KeySettingsSchema = z.object({
  name: z.string().trim().min(1).max(64),
  description: z.string().max(500).optional(),
  expires_at: z
    .string()
    .refine((s) => (ISO_DATE.test(s) || ISO_DATE_TIME.test(s)) && isCalendarDate(s), 'expected a real ISO 8601 date or date-time')
    .transform((s) => new Date(ISO_DATE.test(s) ? `${s}T00:00:00Z` : s))
    .optional(),
  servers: z
    .array(z.enum(SERVER_NAMES))
    .min(1)
    .transform((s) => [...new Set(s)])
    .optional(),
  read_only: CONTROLS.read_only.optional(),
  credit_cap: CONTROLS.credit_cap.optional(),
  cap_period: CONTROLS.cap_period.optional(),
  rate_limit_per_minute: CONTROLS.rate_limit_per_minute.optional(),
});
export type KeySettings = z.input<typeof KeySettingsSchema>;

export function parseKeySettings(input: KeySettings, now: Date) {
  const parsed = KeySettingsSchema.safeParse(input);
  if (!parsed.success) {
    throw new ApiError('INVALID_PARAMS', undefined, {
      issues: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
  if (parsed.data.expires_at && parsed.data.expires_at.getTime() <= now.getTime()) {
    throw new ApiError('INVALID_PARAMS', 'expires_at must be in the future.', {
      issues: [{ path: 'expires_at', message: 'must be in the future' }],
    });
  }
  return parsed.data;
}

/** Creates a key; the plaintext is returned here once and never stored. */
export async function keyCreate(
  db: Database,
  accountId: string,
  settings: KeySettings,
  now = new Date(),
): Promise<{ key: ApiKey; plaintext: string }> {
  return db.transaction((client) => keyCreateIn(client, accountId, settings, now));
}

/** keyCreate inside the caller's transaction (the dashboard records an idempotency key beside it). */
export async function keyCreateIn(
  client: PoolClient,
  accountId: string,
  settings: KeySettings,
  now = new Date(),
): Promise<{ key: ApiKey; plaintext: string }> {
  assertUuid(accountId, 'account');
  const s = parseKeySettings(settings, now);
  await lockAccountUnderCap(client, accountId, now, null);
  return insertKey(client, accountId, { ...s, rotated_from: null });
}

/**
 * Rotation: a new key with the same description, servers and expiry, named apart from the old one
 * (rotatedKeyName), and the old key's end brought forward to `graceSeconds` from now (0 revokes it
 * at once), in one transaction. The old key does not count toward the cap, so an account at its
 * plan's cap can still rotate.
 */
export async function keyRotate(
  db: Database,
  accountId: string,
  keyId: string,
  graceSeconds: number,
  now = new Date(),
): Promise<{ key: ApiKey; plaintext: string; replaced: ApiKey }> {
  assertUuid(accountId, 'account');
  assertUuid(keyId, 'key');
  return db.transaction(async (client) => {
    await lockAccountUnderCap(client, accountId, now, keyId);
    const old = await client.query<ApiKey>(
      `SELECT ${KEY_COLUMNS} FROM api_keys
        WHERE id = $1 AND account_id = $2 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $3)`,
      [keyId, accountId, now],
    );
    const o = old.rows[0];
    if (!o) throw new ApiError('NOT_FOUND', 'No active key with this id on the account.', { key: keyId });
    const taken = await client.query<{ name: string }>('SELECT name FROM api_keys WHERE account_id = $1', [accountId]);
    const created = await insertKey(client, accountId, {
      name: rotatedKeyName(o.name, now, new Set(taken.rows.map((r) => r.name))),
      description: o.description ?? undefined,
      servers: o.servers ?? undefined,
      expires_at: o.expires_at ?? undefined,
      read_only: o.read_only,
      credit_cap: o.credit_cap ?? undefined,
      cap_period: o.cap_period,
      rate_limit_per_minute: o.rate_limit_per_minute ?? undefined,
      rotated_from: o.id,
    });
    const replaced = await client.query<ApiKey>(
      graceSeconds <= 0
        ? `UPDATE api_keys SET revoked_at = $2 WHERE id = $1 RETURNING ${KEY_COLUMNS}`
        : `UPDATE api_keys SET expires_at = least(coalesce(expires_at, 'infinity'), $2::timestamptz + make_interval(secs => $3))
            WHERE id = $1 RETURNING ${KEY_COLUMNS}`,
      graceSeconds <= 0 ? [o.id, now] : [o.id, now, graceSeconds],
    );
    return { ...created, replaced: replaced.rows[0]! };
  });
}

const ROTATED_SUFFIX = / \(rotated \d{4}-\d{2}-\d{2}(, \d+)?\)$/;

/**
 * The name of a rotation's new key: the old name with "(rotated YYYY-MM-DD)" (UTC day) in place of
 * any earlier such suffix, numbered when the account already has that name, and within 64
 * characters, so the old and new rows never read the same.
 */
export function rotatedKeyName(oldName: string, now: Date, taken: ReadonlySet<string>): string {
  const base = oldName.replace(ROTATED_SUFFIX, '');
  const day = now.toISOString().slice(0, 10);
  for (let n = 1; ; n++) {
    const suffix = n === 1 ? ` (rotated ${day})` : ` (rotated ${day}, ${n})`;
    const name = `${base.slice(0, 64 - suffix.length).trimEnd()}${suffix}`;
    if (!taken.has(name)) return name;
  }
}

function assertUuid(id: string, what: 'account' | 'key'): void {
  if (!z.string().uuid().safeParse(id).success) {
    const label = what === 'account' ? 'Account' : 'Key';
    throw new ApiError('INVALID_PARAMS', `${label} ids are UUIDs.`, { issues: [{ path: what, message: 'expected a UUID' }] });
  }
}

/** Locks the account row (serialising key creations, so the cap cannot be overshot) and checks the cap. */
async function lockAccountUnderCap(client: PoolClient, accountId: string, now: Date, excludingKey: string | null): Promise<void> {
  const acc = await client.query<{ max_keys: number }>(
    `SELECT p.max_keys FROM accounts a JOIN plans p ON p.name = a.plan WHERE a.id = $1 FOR UPDATE OF a`,
    [accountId],
  );
  const maxKeys = acc.rows[0]?.max_keys;
  if (maxKeys === undefined) throw new ApiError('NOT_FOUND', `No account ${accountId}.`, { account: accountId });
  const active = await client.query<{ n: number }>(
    `SELECT count(*) AS n FROM api_keys
      WHERE account_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2) AND id IS DISTINCT FROM $3`,
    [accountId, now, excludingKey],
  );
  if (active.rows[0]!.n >= maxKeys) {
    throw new ApiError('KEY_LIMIT_REACHED', undefined, { max_keys: maxKeys });
  }
}

async function insertKey(
  client: PoolClient,
  accountId: string,
  s: {
    name: string;
    description?: string;
    servers?: string[];
    expires_at?: Date;
    read_only?: boolean;
    credit_cap?: number;
    cap_period?: 'day' | 'month';
    rate_limit_per_minute?: number;
    rotated_from: string | null;
  },
): Promise<{ key: ApiKey; plaintext: string }> {
  const generated = generateKey();
  const inserted = await client.query<ApiKey>(
    `INSERT INTO api_keys (account_id, hash, prefix, name, description, servers, expires_at, rotated_from,
                           read_only, credit_cap, cap_period, cap_window, rate_limit_per_minute)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, CASE WHEN $10::int IS NULL THEN NULL ELSE key_cap_window($11, now()) END, $12)
     RETURNING ${KEY_COLUMNS}`,
    [
      accountId,
      generated.hash,
      generated.prefix,
      s.name,
      s.description ?? null,
      s.servers ?? null,
      s.expires_at ?? null,
      s.rotated_from,
      s.read_only ?? false,
      s.credit_cap ?? null,
      s.cap_period ?? 'month',
      s.rate_limit_per_minute ?? null,
    ],
  );
  return { key: inserted.rows[0]!, plaintext: generated.plaintext };
}

/** One key by id, with every column the views need (inside a caller's transaction). */
export async function keyById(client: Pick<PoolClient, 'query'>, keyId: string): Promise<ApiKey | undefined> {
  const res = await client.query<ApiKey>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1`, [keyId]);
  return res.rows[0];
}

export async function keyListByAccount(db: Database, accountId: string): Promise<ApiKey[]> {
  if (!AccountIdSchema.safeParse(accountId).success) {
    throw new ApiError('INVALID_PARAMS', 'Account ids are UUIDs.', { issues: [{ path: 'account', message: 'expected a UUID' }] });
  }
  const res = await db.query<ApiKey>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = $1 ORDER BY created_at`, [accountId]);
  return res.rows;
}

const shape = KeySettingsSchema.shape;
/** An edit of an active key: any of its settings; null clears description, servers (all) or expiry (never). */
export const KeyEditSchema = z
  .object({
    name: shape.name.optional(),
    description: shape.description.unwrap().nullable().optional(),
    servers: shape.servers.unwrap().nullable().optional(),
    expires_at: shape.expires_at.unwrap().nullable().optional(),
    read_only: CONTROLS.read_only.optional(),
    credit_cap: CONTROLS.credit_cap.nullable().optional(),
    cap_period: CONTROLS.cap_period.optional(),
    rate_limit_per_minute: CONTROLS.rate_limit_per_minute.nullable().optional(),
  })
  .strict();
export type KeyEdit = z.input<typeof KeyEditSchema>;

/**
 * Changes an active key's name, description, servers, expiry or controls; absent fields stay as they
 * are. A new cap (or period) starts from what the key spent in the period so far, read from the
 * ledger under the account's lock, the lock every reservation of the key takes.
 */
export async function keyUpdate(db: Database, accountId: string, keyId: string, edit: KeyEdit, now = new Date()): Promise<ApiKey> {
  assertUuid(accountId, 'account');
  assertUuid(keyId, 'key');
  const parsed = KeyEditSchema.safeParse(edit ?? {});
  if (!parsed.success) {
    throw new ApiError('INVALID_PARAMS', undefined, {
      issues: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
  const e = parsed.data;
  if (e.expires_at && e.expires_at.getTime() <= now.getTime()) {
    throw new ApiError('INVALID_PARAMS', 'expires_at must be in the future.', { issues: [{ path: 'expires_at', message: 'must be in the future' }] });
  }
  const capChanged = e.credit_cap !== undefined || e.cap_period !== undefined;
  const res = await db.transaction(async (client) => {
    if (capChanged) await client.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
    return client.query<ApiKey>(
    `UPDATE api_keys SET
        name = coalesce($3, name),
        description = CASE WHEN $4 THEN $5 ELSE description END,
        servers = CASE WHEN $6 THEN $7::text[] ELSE servers END,
        expires_at = CASE WHEN $8 THEN $9::timestamptz ELSE expires_at END,
        read_only = coalesce($11, read_only),
        credit_cap = CASE WHEN $12 THEN $13::int ELSE credit_cap END,
        cap_period = coalesce($14, cap_period),
        rate_limit_per_minute = CASE WHEN $15 THEN $16::int ELSE rate_limit_per_minute END,
        cap_window = CASE WHEN $17 THEN key_cap_window(coalesce($14, cap_period), now()) ELSE cap_window END,
        cap_spent = CASE WHEN $17 THEN
            (SELECT greatest(0, -coalesce(sum(l.delta), 0))::int FROM credit_ledger l
              WHERE l.account_id = $2 AND l.key_id = $1 AND l.kind IN ('reserve', 'refund')
                AND l.created_at >= key_cap_window(coalesce($14, cap_period), now()))
          ELSE cap_spent END
      WHERE id = $1 AND account_id = $2 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $10)
      RETURNING ${KEY_COLUMNS}`,
    [
      keyId,
      accountId,
      e.name ?? null,
      e.description !== undefined,
      e.description ?? null,
      e.servers !== undefined,
      e.servers ?? null,
      e.expires_at !== undefined,
      e.expires_at ?? null,
      now,
      e.read_only ?? null,
      e.credit_cap !== undefined,
      e.credit_cap ?? null,
      e.cap_period ?? null,
      e.rate_limit_per_minute !== undefined,
      e.rate_limit_per_minute ?? null,
      capChanged,
    ],
    );
  });
  const key = res.rows[0];
  if (!key) throw new ApiError('NOT_FOUND', 'No active key with this id on the account.', { key: keyId });
  return key;
}

/** Revokes a key (idempotent: the first revocation time is kept). */
export async function keyRevoke(db: Database, keyId: string): Promise<ApiKey> {
  if (!z.string().uuid().safeParse(keyId).success) {
    throw new ApiError('INVALID_PARAMS', 'Key ids are UUIDs.', { issues: [{ path: 'key', message: 'expected a UUID' }] });
  }
  const res = await db.query<ApiKey>(
    `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 RETURNING ${KEY_COLUMNS}`,
    [keyId],
  );
  const key = res.rows[0];
  if (!key) throw new ApiError('NOT_FOUND', `No key ${keyId}.`, { key: keyId });
  return key;
}

/** What the gateway needs to authorise a request, read in one query by key hash. */
export interface KeyGrant {
  key_id: string;
  account_id: string;
  key_servers: string[] | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  account_status: 'active' | 'suspended';
  /** The key may call only tools that change nothing (no write annotations). */
  read_only: boolean;
  plan: string;
  plan_servers: string[];
  requests_per_minute: number;
  burst: number;
  balance: number;
}

export async function keyGrantByHash(db: Database, hash: Buffer): Promise<KeyGrant | undefined> {
  const res = await db.query<KeyGrant>(
    `SELECT k.id AS key_id, k.account_id, k.servers AS key_servers, k.expires_at, k.revoked_at, k.read_only,
            a.status AS account_status, a.plan, p.servers AS plan_servers, p.requests_per_minute, p.burst, a.balance
       FROM api_keys k JOIN accounts a ON a.id = k.account_id JOIN plans p ON p.name = a.plan
      WHERE k.hash = $1`,
    [hash],
  );
  return res.rows[0];
}

/**
 * Pauses or resumes an active key (idempotent: a pause keeps its first time). The metering
 * statement reads paused_at under the account's lock, so the next call on any replica is refused.
 */
export async function keySetPaused(db: Database, accountId: string, keyId: string, paused: boolean, now = new Date()): Promise<ApiKey> {
  assertUuid(accountId, 'account');
  assertUuid(keyId, 'key');
  const res = await db.query<ApiKey>(
    `UPDATE api_keys SET paused_at = CASE WHEN $3 THEN coalesce(paused_at, $4) ELSE NULL END
      WHERE id = $1 AND account_id = $2 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $4)
      RETURNING ${KEY_COLUMNS}`,
    [keyId, accountId, paused, now],
  );
  const key = res.rows[0];
  if (!key) throw new ApiError('NOT_FOUND', 'No active key with this id on the account.', { key: keyId });
  return key;
}

/**
 * Records last use for many keys in one statement (called off the hot path, batched). The rows are
 * locked in id order, the order meter_reserve_batch locks the keys it controls, so the two never deadlock.
 */
export async function keyTouchMany(db: Database, used: Map<string, Date>): Promise<void> {
  if (used.size === 0) return;
  await db.query(
    `UPDATE api_keys k SET last_used_at = greatest(k.last_used_at, u.at)
       FROM unnest($1::uuid[], $2::timestamptz[]) AS u(id, at)
      WHERE k.id = u.id AND k.id IN (SELECT id FROM api_keys WHERE id = ANY ($1::uuid[]) ORDER BY id FOR UPDATE)`,
    [[...used.keys()], [...used.values()]],
  );
}
