// DESIGN.md §3 row 2-3 and §5 "API key", against the real service on a database of its own:
// expiry, revocation and suspension take effect (within the key cache TTL where the design
// allows one), key settings are validated, the plan's key cap holds under concurrency, only
// the hash and display prefix are stored, and last_used_at is recorded.
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

const TTL_MS = 500;
/** Time allowed beyond the TTL for timer and clock granularity. */
const SLACK_MS = 200;

let db: TestDatabase;
let svc: RunningService;

beforeAll(async () => {
  db = await createTestDatabase();
  svc = await startTestService(db.url, { KEY_CACHE_TTL_MS: String(TTL_MS) });
  // Polling sends many requests per account: keep those accounts clear of the free plan's rate limit.
  await createUnlimitedPlan(db, 'roomy', 1000);
});
afterAll(async () => {
  await svc?.close();
  await db?.drop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type ErrorBody = { success: false; error: { code: string; message: string; details: Record<string, unknown> } };

/** One authenticated MCP request (ping: free, but it passes the whole gateway). */
function ping(key: string, server = 'market-intelligence'): Promise<RawResponse> {
  return post(`${svc.url}/mcp/${server}`, { jsonrpc: '2.0', id: 1, method: 'ping' }, { 'x-api-key': key });
}

function codeOf(res: RawResponse): string | undefined {
  return (res.body as Partial<ErrorBody> | undefined)?.error?.code;
}

/**
 * Polls until `key` gets `status`/`code`. The guarantee checked: no request *sent* more than
 * `withinMs` after `since` (the change was committed) still succeeds; measuring at the send
 * time keeps a slow round trip on a loaded machine from failing the test. Returns the delay.
 */
async function waitForRejection(key: string, status: number, code: string, since: number, withinMs: number): Promise<number> {
  for (;;) {
    const sentAt = Date.now();
    const res = await ping(key);
    if (res.status === status && codeOf(res) === code) return sentAt - since;
    expect(res.status, `while waiting for ${code}: ${JSON.stringify(res.body)}`).toBe(200);
    expect(sentAt - since, `a request sent ${sentAt - since} ms after the change still succeeded (allowed: ${withinMs} ms)`).toBeLessThanOrEqual(
      withinMs,
    );
    await sleep(25);
  }
}

/** Checks that `key` keeps getting `status`/`code` for `forMs` (several TTLs: no stale cache flip-back). */
async function expectStaysRejected(key: string, status: number, code: string, forMs: number): Promise<void> {
  const until = Date.now() + forMs;
  let n = 0;
  while (Date.now() < until) {
    const res = await ping(key);
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(codeOf(res)).toBe(code);
    n += 1;
    await sleep(50);
  }
  expect(n).toBeGreaterThan(5);
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
    const expiresAt = new Date(Date.now() + 2000);
    const { key } = await createAccountWithKey(db, { plan: 'roomy', key: { expires_at: expiresAt.toISOString() } });
    expect((await ping(key)).status).toBe(200);
    await sleep(expiresAt.getTime() - Date.now() + 50);
    const res = await ping(key);
    expect(res.status, JSON.stringify(res.body)).toBe(401);
    const err = (res.body as ErrorBody).error;
    expect(err.code).toBe('API_KEY_EXPIRED');
    expect(err.details.expired_at).toBe(expiresAt.toISOString());
  });

  it('expiry is enforced at the expiry instant even while the key is cached (a long TTL does not extend a key)', async () => {
    const longTtl = await startTestService(db.url, { KEY_CACHE_TTL_MS: '60000' });
    try {
      const expiresAt = new Date(Date.now() + 2000);
      const { key } = await createAccountWithKey(db, { plan: 'roomy', key: { expires_at: expiresAt.toISOString() } });
      const call = () => post(`${longTtl.url}/mcp/kol-analytics`, { jsonrpc: '2.0', id: 1, method: 'ping' }, { 'x-api-key': key });
      expect((await call()).status).toBe(200); // now cached for a minute
      await sleep(expiresAt.getTime() - Date.now() + 50);
      const res = await call();
      expect(res.status).toBe(401);
      expect(codeOf(res)).toBe('API_KEY_EXPIRED');
    } finally {
      await longTtl.close();
    }
  });

  it('an expired key stays rejected after the key cache TTL has passed', async () => {
    const { key, keyId } = await createAccountWithKey(db, { plan: 'roomy' });
    await db.query(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [keyId]);
    await sleep(TTL_MS + 50);
    await expectStaysRejected(key, 401, 'API_KEY_EXPIRED', 3 * TTL_MS);
  });
});

describe('revocation', () => {
  it(`a revoked key gets 401 API_KEY_REVOKED within the key cache TTL (${TTL_MS} ms) and stays revoked`, async () => {
    const { key, keyId } = await createAccountWithKey(db, { plan: 'roomy' });
    expect((await ping(key)).status).toBe(200); // the grant is now in the resolver's cache
    const revoked = await keyRevoke(db, keyId);
    const since = Date.now();
    expect(revoked.revoked_at).toBeInstanceOf(Date);
    await waitForRejection(key, 401, 'API_KEY_REVOKED', since, TTL_MS + SLACK_MS);
    await expectStaysRejected(key, 401, 'API_KEY_REVOKED', 4 * TTL_MS);
  });

  it("revoking one key leaves the account's other keys working", async () => {
    const { account, key, keyId } = await createAccountWithKey(db, { plan: 'roomy' });
    const other = await keyCreate(db, account.id, { name: 'other' });
    await keyRevoke(db, keyId);
    await waitForRejection(key, 401, 'API_KEY_REVOKED', Date.now(), TTL_MS + SLACK_MS);
    expect((await ping(other.plaintext)).status).toBe(200);
  });

  it('revocation is idempotent: revoking twice keeps the first revoked_at', async () => {
    const { keyId } = await createAccountWithKey(db, { plan: 'roomy' });
    const first = await keyRevoke(db, keyId);
    await sleep(20);
    const second = await keyRevoke(db, keyId);
    expect(second.revoked_at!.getTime()).toBe(first.revoked_at!.getTime());
  });
});

describe('suspension', () => {
  it(`suspending an account makes every one of its keys get 403 ACCOUNT_SUSPENDED within the TTL; reactivation restores them`, async () => {
    const { account, key } = await createAccountWithKey(db, { plan: 'roomy' });
    const second = (await keyCreate(db, account.id, { name: 'second' })).plaintext;
    expect((await ping(key)).status).toBe(200);
    expect((await ping(second)).status).toBe(200);

    await accountSetStatus(db, account.id, 'suspended');
    const since = Date.now();
    await waitForRejection(key, 403, 'ACCOUNT_SUSPENDED', since, TTL_MS + SLACK_MS);
    await waitForRejection(second, 403, 'ACCOUNT_SUSPENDED', since, TTL_MS + SLACK_MS);
    await expectStaysRejected(key, 403, 'ACCOUNT_SUSPENDED', 3 * TTL_MS);

    await accountSetStatus(db, account.id, 'active');
    const back = Date.now();
    for (;;) {
      const sentAt = Date.now();
      const res = await ping(key);
      if (res.status === 200) break;
      expect(codeOf(res)).toBe('ACCOUNT_SUSPENDED');
      expect(sentAt - back, `still suspended for a request sent ${sentAt - back} ms after reactivation`).toBeLessThanOrEqual(TTL_MS + SLACK_MS);
      await sleep(25);
    }
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
    const waitForLastUsed = async (after: Date | null): Promise<Date> => {
      const deadline = Date.now() + 4000;
      for (;;) {
        const at = await lastUsed();
        if (at && (!after || at.getTime() > after.getTime())) return at;
        if (Date.now() > deadline) throw new Error(`last_used_at not recorded within 4 s (still ${at?.toISOString() ?? 'null'})`);
        await sleep(100);
      }
    };
    expect(await lastUsed()).toBeNull();

    const t0 = Date.now();
    expect((await ping(key)).status).toBe(200);
    const t1 = Date.now();
    const first = await waitForLastUsed(null);
    expect(first.getTime()).toBeGreaterThanOrEqual(t0 - 1000);
    expect(first.getTime()).toBeLessThanOrEqual(t1 + 1000);

    await sleep(50);
    expect((await ping(key)).status).toBe(200);
    const second = await waitForLastUsed(first);
    expect(second.getTime()).toBeGreaterThan(first.getTime());
  });

  it('a rejected key (revoked) does not get its last_used_at recorded', async () => {
    const { key, keyId } = await createAccountWithKey(db, { plan: 'roomy' });
    await keyRevoke(db, keyId);
    expect((await ping(key)).status).toBe(401);
    await sleep(1500); // more than one flush interval
    const row = await db.query<{ last_used_at: Date | null }>('SELECT last_used_at FROM api_keys WHERE id = $1', [keyId]);
    expect(row.rows[0]!.last_used_at).toBeNull();
  });
});
