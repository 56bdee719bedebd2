// DESIGN.md §3 row 2-3 and §5 "API key", against the real service on a database of its own:
// expiry, revocation and suspension take effect (within the key cache TTL where the design
// allows one), key settings are validated, the plan's key cap holds under concurrency, only
// the hash and display prefix are stored, and last_used_at is recorded. The key cache and expiry
// run on a clock the test advances (the service's keyClock), so "within the TTL" and "from the
// expiry instant" are checked at those instants, not by waiting and hoping the machine kept up.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountCreate, accountSetPlan, accountSetStatus } from '../../server/accounts/accounts.ts';
import { ApiError } from '../../server/errors.ts';
import { keyCreate, keyListByAccount, keyRevoke, type KeySettings } from '../../server/keys/store.ts';
import type { RunningService } from '../../server/runtime.ts';
import { SERVER_NAMES } from '../../server/mcp/names.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import {
  createAccountWithKey,
  createUnlimitedPlan,
  nextWallet,
  post,
  startTestService,
  type RawResponse,
} from '../helpers/service.ts';
import { eventually } from '../helpers/wait.ts';

const TTL_MS = 500;

/** The key cache's clock: it stands still but for advance() (never behind real time: catchUp()). */
let clockMs = Date.now();
const keyClock = () => clockMs;
const advance = (ms: number) => void (clockMs += ms);
const catchUp = () => void (clockMs = Math.max(clockMs, Date.now()));

let db: TestDatabase;
let svc: RunningService;

beforeAll(async () => {
  db = await createTestDatabase();
  svc = await startTestService(db.url, { KEY_CACHE_TTL_MS: String(TTL_MS) }, { keyClock });
  // Polling sends many requests per account: keep those accounts clear of the free plan's rate limit.
  await createUnlimitedPlan(db, 'roomy', 1000);
});
afterAll(async () => {
  await svc?.close();
  await db?.drop();
});

type ErrorBody = { success: false; error: { code: string; message: string; details: Record<string, unknown> } };

/** One authenticated MCP request (ping: free, but it passes the whole gateway). */
function ping(key: string, server = 'market-intelligence'): Promise<RawResponse> {
  return post(`${svc.url}/mcp/${server}`, { jsonrpc: '2.0', id: 1, method: 'ping' }, { 'x-api-key': key });
}

function codeOf(res: RawResponse): string | undefined {
  return (res.body as Partial<ErrorBody> | undefined)?.error?.code;
}

/**
 * The key cache TTL passes (the clock moves TTL_MS past now, so every entry cached up to now has
 * expired), and `key` gets `status`/`code`: a change is seen within the TTL.
 */
async function expectRejectedAfterTtl(key: string, status: number, code: string): Promise<void> {
  advance(TTL_MS);
  const res = await ping(key);
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(codeOf(res)).toBe(code);
}

/** `key` keeps getting `status`/`code` over several TTLs (no stale cache flip-back). */
async function expectStaysRejected(key: string, status: number, code: string): Promise<void> {
  for (let i = 0; i < 6; i++) {
    advance(TTL_MS / 2);
    const res = await ping(key);
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(codeOf(res)).toBe(code);
  }
}

/** The ApiError keyCreate throws for these settings (fails if it does not throw one). */
async function createError(accountId: string, settings: KeySettings): Promise<ApiError> {
  try {
    await keyCreate(db, accountId, settings);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error(`keyCreate accepted ${JSON.stringify(settings)}`);
}

function issuePaths(err: ApiError): string[] {
  const issues = err.details.issues as { path: string; message: string }[];
  expect(Array.isArray(issues) && issues.length > 0, JSON.stringify(err.details)).toBe(true);
  for (const i of issues) expect(typeof i.message === 'string' && i.message.length > 0).toBe(true);
  return issues.map((i) => i.path);
}

async function keyCount(accountId: string): Promise<number> {
  const res = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys WHERE account_id = $1', [accountId]);
  return res.rows[0]!.n;
}

async function freeAccount(): Promise<string> {
  return (await accountCreate(db, { wallet: nextWallet(), chain: 'ethereum', plan: 'free' })).id;
}

describe('expiry', () => {
  it('a key works until its expires_at and gets 401 API_KEY_EXPIRED with expired_at from that instant on', async () => {
    const expiresAt = new Date(Date.now() + 60_000);
    const { key } = await createAccountWithKey(db, { plan: 'roomy', key: { expires_at: expiresAt.toISOString() } });
    catchUp();
    expect((await ping(key)).status).toBe(200);
    advance(expiresAt.getTime() - 1 - keyClock());
    expect((await ping(key)).status).toBe(200);
    advance(1);
    const res = await ping(key);
    expect(res.status, JSON.stringify(res.body)).toBe(401);
    const err = (res.body as ErrorBody).error;
    expect(err.code).toBe('API_KEY_EXPIRED');
    expect(err.details.expired_at).toBe(expiresAt.toISOString());
  });

  it('expiry is enforced at the expiry instant even while the key is cached (a long TTL does not extend a key)', async () => {
    const longTtl = await startTestService(db.url, { KEY_CACHE_TTL_MS: '3600000' }, { keyClock });
    try {
      const expiresAt = new Date(Date.now() + 60_000);
      const { key } = await createAccountWithKey(db, { plan: 'roomy', key: { expires_at: expiresAt.toISOString() } });
      catchUp();
      const call = () => post(`${longTtl.url}/mcp/kol-analytics`, { jsonrpc: '2.0', id: 1, method: 'ping' }, { 'x-api-key': key });
      expect((await call()).status).toBe(200); // now cached for an hour
      advance(expiresAt.getTime() - keyClock());
      const res = await call();
      expect(res.status).toBe(401);
      expect(codeOf(res)).toBe('API_KEY_EXPIRED');
    } finally {
      await longTtl.close();
    }
  });

  it('an expired key stays rejected after the key cache TTL has passed', async () => {
    const { key, keyId } = await createAccountWithKey(db, { plan: 'roomy' });
    await db.query('UPDATE api_keys SET expires_at = $2 WHERE id = $1', [keyId, new Date(keyClock() - 1000)]);
    await expectRejectedAfterTtl(key, 401, 'API_KEY_EXPIRED');
    await expectStaysRejected(key, 401, 'API_KEY_EXPIRED');
  });
});

describe('revocation', () => {
  it('a revoked key gets 401 API_KEY_REVOKED within the key cache TTL and stays revoked', async () => {
    const { key, keyId } = await createAccountWithKey(db, { plan: 'roomy' });
    expect((await ping(key)).status).toBe(200); // the grant is now in the resolver's cache
    const revoked = await keyRevoke(db, keyId);
    expect(revoked.revoked_at).toBeInstanceOf(Date);
    await expectRejectedAfterTtl(key, 401, 'API_KEY_REVOKED');
    await expectStaysRejected(key, 401, 'API_KEY_REVOKED');
  });

  it("revoking one key leaves the account's other keys working", async () => {
    const { account, key, keyId } = await createAccountWithKey(db, { plan: 'roomy' });
    const other = await keyCreate(db, account.id, { name: 'other' });
    await keyRevoke(db, keyId);
    await expectRejectedAfterTtl(key, 401, 'API_KEY_REVOKED');
    expect((await ping(other.plaintext)).status).toBe(200);
  });

  it('revocation is idempotent: revoking twice keeps the first revoked_at', async () => {
    const { keyId } = await createAccountWithKey(db, { plan: 'roomy' });
    // To the microsecond, as stored: a second revocation (a later transaction's now()) would differ.
    const revokedAt = async () => (await db.query<{ at: string }>('SELECT revoked_at::text AS at FROM api_keys WHERE id = $1', [keyId])).rows[0]!.at;
    await keyRevoke(db, keyId);
    const first = await revokedAt();
    await keyRevoke(db, keyId);
    expect(await revokedAt()).toBe(first);
  });
});

describe('suspension', () => {
  it('suspending an account makes every one of its keys get 403 ACCOUNT_SUSPENDED within the TTL; reactivation restores them within it', async () => {
    const { account, key } = await createAccountWithKey(db, { plan: 'roomy' });
    const second = (await keyCreate(db, account.id, { name: 'second' })).plaintext;
    expect((await ping(key)).status).toBe(200);
    expect((await ping(second)).status).toBe(200);

    await accountSetStatus(db, account.id, 'suspended');
    await expectRejectedAfterTtl(key, 403, 'ACCOUNT_SUSPENDED');
    expect(codeOf(await ping(second))).toBe('ACCOUNT_SUSPENDED');
    await expectStaysRejected(key, 403, 'ACCOUNT_SUSPENDED');

    await accountSetStatus(db, account.id, 'active');
    advance(TTL_MS);
    expect((await ping(key)).status).toBe(200);
    expect((await ping(second)).status).toBe(200);
  });
});

describe('key settings validation (INVALID_PARAMS with issues)', () => {
  let accountId: string;
  beforeAll(async () => {
    accountId = (await accountCreate(db, { wallet: nextWallet(), chain: 'ethereum', plan: 'roomy' })).id;
  });

  it('name is required, 1-64 characters (whitespace-only is empty)', async () => {
    for (const name of ['', '   ', 'x'.repeat(65)]) {
      const err = await createError(accountId, { name });
      expect(err.code).toBe('INVALID_PARAMS');
      expect(issuePaths(err)).toEqual(['name']);
    }
    const missing = await createError(accountId, {} as KeySettings);
    expect(missing.code).toBe('INVALID_PARAMS');
    expect(issuePaths(missing)).toEqual(['name']);
    const one = await keyCreate(db, accountId, { name: 'a' });
    const max = await keyCreate(db, accountId, { name: 'n'.repeat(64) });
    expect(one.key.name).toBe('a');
    expect(max.key.name).toBe('n'.repeat(64));
    await keyRevoke(db, one.key.id);
    await keyRevoke(db, max.key.id);
  });

  it('description is at most 500 characters', async () => {
    const err = await createError(accountId, { name: 'd', description: 'x'.repeat(501) });
    expect(err.code).toBe('INVALID_PARAMS');
    expect(issuePaths(err)).toEqual(['description']);
    const ok = await keyCreate(db, accountId, { name: 'd', description: 'y'.repeat(500) });
    expect(ok.key.description).toBe('y'.repeat(500));
    await keyRevoke(db, ok.key.id);
  });

  it('expires_at must be an ISO 8601 date or date-time, and in the future', async () => {
    const now = Date.now();
    for (const expires_at of ['tomorrow', '01/02/2099', '2099-13-01', '2099-01-01T25:00:00Z', String(now + 86_400_000)]) {
      const err = await createError(accountId, { name: 'e', expires_at });
      expect(err.code, expires_at).toBe('INVALID_PARAMS');
      expect(issuePaths(err), expires_at).toEqual(['expires_at']);
    }
    for (const expires_at of ['2020-01-01', new Date(now - 1000).toISOString(), new Date(now - 60_000).toISOString().replace('Z', '+00:00')]) {
      const err = await createError(accountId, { name: 'e', expires_at });
      expect(err.code, expires_at).toBe('INVALID_PARAMS');
      expect(issuePaths(err), expires_at).toEqual(['expires_at']);
    }
    const date = await keyCreate(db, accountId, { name: 'e', expires_at: '2099-06-30' });
    expect(date.key.expires_at!.toISOString()).toBe('2099-06-30T00:00:00.000Z');
    const withOffset = await keyCreate(db, accountId, { name: 'e', expires_at: '2099-06-30T12:00:00+02:00' });
    expect(withOffset.key.expires_at!.toISOString()).toBe('2099-06-30T10:00:00.000Z');
    await keyRevoke(db, date.key.id);
    await keyRevoke(db, withOffset.key.id);
  });

  it('expires_at rejects calendar dates that do not exist (2099-02-30 is not silently read as March 2)', async () => {
    const before = await keyCount(accountId);
    let created: string | undefined;
    try {
      const res = await keyCreate(db, accountId, { name: 'e', expires_at: '2099-02-30' });
      created = res.key.expires_at?.toISOString();
      await keyRevoke(db, res.key.id);
    } catch (err) {
      expect((err as ApiError).code).toBe('INVALID_PARAMS');
      expect(issuePaths(err as ApiError)).toEqual(['expires_at']);
    }
    expect(
      created,
      `PRODUCT BUG (server/keys/store.ts KeySettingsSchema.expires_at): '2099-02-30' was accepted and stored as ${created}; ` +
        'new Date() rolls impossible days over, so the "not a real date" refine never fires',
    ).toBeUndefined();
    expect(await keyCount(accountId)).toBe(before);
  });

  it('servers must be a non-empty subset of the nine; duplicates collapse; omitted means every server', async () => {
    const unknown = await createError(accountId, { name: 's', servers: ['kol-analytics', 'no-such-server'] as never });
    expect(unknown.code).toBe('INVALID_PARAMS');
    expect(issuePaths(unknown)).toEqual(['servers.1']);
    const empty = await createError(accountId, { name: 's', servers: [] });
    expect(empty.code).toBe('INVALID_PARAMS');
    expect(issuePaths(empty)).toEqual(['servers']);

    const scoped = await keyCreate(db, accountId, { name: 's', servers: ['kol-analytics', 'whale-intelligence', 'kol-analytics'] });
    expect(scoped.key.servers).toEqual(['kol-analytics', 'whale-intelligence']);
    const all = await keyCreate(db, accountId, { name: 's', servers: [...SERVER_NAMES] });
    expect(all.key.servers).toEqual([...SERVER_NAMES]);
    const unscoped = await keyCreate(db, accountId, { name: 's' });
    expect(unscoped.key.servers).toBeNull();
    for (const k of [scoped, all, unscoped]) await keyRevoke(db, k.key.id);
  });

  it('a rejected setting creates no key row', async () => {
    const before = await keyCount(accountId);
    await createError(accountId, { name: '' });
    await createError(accountId, { name: 'x', description: 'x'.repeat(501) });
    await createError(accountId, { name: 'x', expires_at: '2000-01-01' });
    await createError(accountId, { name: 'x', servers: ['nope'] as never });
    expect(await keyCount(accountId)).toBe(before);
  });
});

describe('per-plan key cap', () => {
  it('a free account holds at most 3 active keys: the 4th is KEY_LIMIT_REACHED with max_keys 3', async () => {
    const accountId = await freeAccount();
    for (let i = 1; i <= 3; i++) await keyCreate(db, accountId, { name: `k${i}` });
    const err = await createError(accountId, { name: 'k4' });
    expect(err.code).toBe('KEY_LIMIT_REACHED');
    expect(err.status).toBe(409);
    expect(err.details.max_keys).toBe(3);
    expect(await keyCount(accountId)).toBe(3);
  });

  it('revoking a key frees a slot, and only one', async () => {
    const accountId = await freeAccount();
    const keys = [];
    for (let i = 1; i <= 3; i++) keys.push(await keyCreate(db, accountId, { name: `k${i}` }));
    await keyRevoke(db, keys[0]!.key.id);
    const replacement = await keyCreate(db, accountId, { name: 'k4' });
    expect(replacement.plaintext).toMatch(/^cmcp_[0-9A-Za-z]{38}$/);
    expect((await createError(accountId, { name: 'k5' })).code).toBe('KEY_LIMIT_REACHED');
    const listed = await keyListByAccount(db, accountId);
    expect(listed.filter((k) => k.revoked_at === null)).toHaveLength(3);
    expect(listed).toHaveLength(4);
  });

  it('10 concurrent keyCreate calls on a fresh free account create exactly 3 keys (the cap is never overshot)', async () => {
    const accountId = await freeAccount();
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => keyCreate(db, accountId, { name: `c${i}` })));
    const created = results.filter((r) => r.status === 'fulfilled');
    const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(created).toHaveLength(3);
    expect(rejected).toHaveLength(7);
    for (const r of rejected) expect((r.reason as ApiError).code).toBe('KEY_LIMIT_REACHED');
    expect(await keyCount(accountId)).toBe(3);
  });

  it("the cap follows the account's plan: moving to basic allows 10", async () => {
    const accountId = await freeAccount();
    for (let i = 0; i < 3; i++) await keyCreate(db, accountId, { name: `f${i}` });
    await accountSetPlan(db, accountId, 'basic');
    for (let i = 3; i < 10; i++) await keyCreate(db, accountId, { name: `b${i}` });
    const err = await createError(accountId, { name: 'b10' });
    expect(err.code).toBe('KEY_LIMIT_REACHED');
    expect(err.details.max_keys).toBe(10);
  });
});

describe('storage', () => {
  it('only the SHA-256 hash and the display prefix are stored: the plaintext is in no column of api_keys nor any other table', async () => {
    const { key, keyId } = await createAccountWithKey(db, { plan: 'roomy', key: { description: 'storage check' } });
    const secret = key.slice('cmcp_'.length + 6); // everything past the display prefix
    const row = (await db.query<Record<string, unknown>>('SELECT * FROM api_keys WHERE id = $1', [keyId])).rows[0]!;
    expect((row.hash as Buffer).equals(createHash('sha256').update(key).digest())).toBe(true);
    expect(row.prefix).toBe(key.slice(0, 11));
    for (const [column, value] of Object.entries(row)) {
      const renderings = Buffer.isBuffer(value)
        ? [value.toString('hex'), value.toString('base64'), value.toString('latin1'), value.toString('utf8')]
        : [JSON.stringify(value) ?? ''];
      for (const text of renderings) {
        expect(text.includes(key), `api_keys.${column} contains the plaintext`).toBe(false);
        expect(text.includes(secret), `api_keys.${column} contains the secret part of the key`).toBe(false);
      }
    }
    // Nor anywhere else in the schema.
    const tables = await db.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
    );
    for (const { table_name } of tables.rows) {
      const hit = await db.query(`SELECT 1 FROM "${table_name}" t WHERE row_to_json(t)::text LIKE $1 LIMIT 1`, [`%${secret}%`]);
      expect(hit.rowCount, `table ${table_name} contains the secret part of the key`).toBe(0);
    }
    // keyListByAccount (what the dashboard and CLI show) has neither the plaintext nor the hash.
    const listed = await keyListByAccount(db, row.account_id as string);
    const text = JSON.stringify(listed);
    expect(text.includes(secret)).toBe(false);
    expect(listed[0]).not.toHaveProperty('hash');
  });
});

describe('last_used_at', () => {
  it('is null before first use, recorded (batched, within a few seconds) after a call, and advances on later use', async () => {
    const { key, keyId } = await createAccountWithKey(db, { plan: 'roomy' });
    const lastUsed = async () =>
      (await db.query<{ last_used_at: Date | null }>('SELECT last_used_at FROM api_keys WHERE id = $1', [keyId])).rows[0]!.last_used_at;
    const waitForLastUsed = (after: Date | null): Promise<Date> =>
      eventually(async () => {
        const at = await lastUsed();
        return at && (!after || at.getTime() > after.getTime()) ? at : undefined;
      }, 4000, 'last_used_at to be recorded');
    expect(await lastUsed()).toBeNull();

    const t0 = keyClock();
    expect((await ping(key)).status).toBe(200);
    const t1 = keyClock();
    const first = await waitForLastUsed(null);
    expect(first.getTime()).toBeGreaterThanOrEqual(t0);
    expect(first.getTime()).toBeLessThanOrEqual(t1);

    advance(50);
    expect((await ping(key)).status).toBe(200);
    const second = await waitForLastUsed(first);
    expect(second.getTime()).toBeGreaterThan(first.getTime());
  });

  it('a rejected key (revoked) does not get its last_used_at recorded', async () => {
    const { key, keyId } = await createAccountWithKey(db, { plan: 'roomy' });
    const used = await createAccountWithKey(db, { plan: 'roomy' });
    await keyRevoke(db, keyId);
    expect((await ping(key)).status).toBe(401);
    // Then a key that is used: once its last_used_at is written, so is any use noted before it
    // (one batch per flush), and the revoked key's would be too.
    expect((await ping(used.key)).status).toBe(200);
    await eventually(
      async () => (await db.query('SELECT 1 FROM api_keys WHERE id = $1 AND last_used_at IS NOT NULL', [used.keyId])).rowCount,
      4000,
      'the flush of last_used_at',
    );
    const row = await db.query<{ last_used_at: Date | null }>('SELECT last_used_at FROM api_keys WHERE id = $1', [keyId]);
    expect(row.rows[0]!.last_used_at).toBeNull();
  });
});
