// Key controls (issue 36 item 3) against the real service, PostgreSQL and /mcp over HTTP: a paused
// key is refused on every replica at once (the pause is read by the metering statement, not the
// key cache) and works again when resumed; a credit cap per period refuses the call past it with
// nothing charged, and N parallel calls never spend more than the cap; a key's own rate limit
// refuses past it; a read-only key may not call a write tool; and the audit log lists each action.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createUnlimitedPlan, post, startTestService, toolCall } from '../helpers/service.ts';
import { signedInNewAccount, type CookieClient } from './helpers.ts';

let db: TestDatabase;
let service: RunningService;
/** A second replica on the same database, its key cache as warm and as long-lived as the first's. */
let replica: RunningService;

const ENV = { MCP_SERVERS: 'market-intelligence,price-prediction', KEY_CACHE_TTL_MS: '600000' };

beforeAll(async () => {
  db = await createTestDatabase();
  [service, replica] = await Promise.all([startTestService(db.url, ENV), startTestService(db.url, ENV)]);
  await createUnlimitedPlan(db, 'controls-unlimited', 1000);
});

afterAll(async () => {
  await Promise.all([service?.close(), replica?.close()]);
  await db?.drop();
});

async function call(base: string, key: string, tool = 'bench_echo', args: Record<string, unknown> = {}, server = 'market-intelligence') {
  const res = await post(`${base}/mcp/${server}`, toolCall(tool, args), { 'x-api-key': key });
  const body = res.body as { error?: { code: string; details: Record<string, unknown> } };
  return { status: res.status, code: body.error?.code, details: body.error?.details, headers: res.headers };
}

/** A signed-in account on a plan without a rate limit to speak of, 1,000 credits, and one key. */
async function accountWithKey(settings: Record<string, unknown> = {}): Promise<{ client: CookieClient; accountId: string; key: string; keyId: string }> {
  const { client, accountId } = await signedInNewAccount(service.url);
  await db.query(`UPDATE accounts SET plan = 'controls-unlimited', balance = 1000 WHERE id = $1`, [accountId]);
  const created = await client.post('/api/keys', { name: 'controlled', ...settings });
  expect(created.status).toBe(201);
  return { client, accountId, key: created.body.plaintext, keyId: created.body.key.id };
}

const balance = async (accountId: string) => (await db.query<{ balance: number }>('SELECT balance FROM accounts WHERE id = $1', [accountId])).rows[0]!.balance;
const reservations = async (accountId: string) =>
  (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM credit_ledger WHERE account_id = $1 AND kind = 'reserve'`, [accountId])).rows[0]!.n;

describe('pause', () => {
  it('a paused key is refused 403 KEY_PAUSED at once on both replicas (their key caches still hold it), nothing charged; resumed, it works again', async () => {
    const { client, accountId, key, keyId } = await accountWithKey();
    // Both replicas have the key's grant cached for ten minutes.
    expect((await call(service.url, key)).status).toBe(200);
    expect((await call(replica.url, key)).status).toBe(200);
    const before = await balance(accountId);

    const paused = await client.post(`/api/keys/${keyId}/pause`);
    expect(paused.status).toBe(200);
    expect(paused.body.key).toMatchObject({ paused: true, status: 'active' });
    for (const base of [service.url, replica.url]) {
      expect(await call(base, key)).toMatchObject({ status: 403, code: 'KEY_PAUSED' });
    }
    expect(await balance(accountId)).toBe(before);

    const resumed = await client.post(`/api/keys/${keyId}/resume`);
    expect(resumed.body.key.paused).toBe(false);
    expect((await call(replica.url, key)).status).toBe(200);
    expect(await balance(accountId)).toBe(before - 1);
  });
});

describe('credit cap', () => {
  it('the call after the cap is refused 403 KEY_CAP_REACHED and charged nothing; a refunded call gives its credits back to the cap', async () => {
    const { client, accountId, key, keyId } = await accountWithKey({ credit_cap: 3, cap_period: 'day' });
    expect((await call(service.url, key, 'bench_fail')).status).toBeGreaterThanOrEqual(500);
    for (let i = 0; i < 3; i++) expect((await call(i % 2 ? replica.url : service.url, key)).status).toBe(200);
    const before = await balance(accountId);
    const refused = await call(replica.url, key);
    expect(refused).toMatchObject({ status: 403, code: 'KEY_CAP_REACHED', details: { cap: 3, spent: 3, required: 1, period: 'day' } });
    expect(await balance(accountId)).toBe(before);
    const listed = (await client.get('/api/keys')).body.keys.find((k: { id: string }) => k.id === keyId);
    expect(listed).toMatchObject({ credit_cap: 3, cap_period: 'day', cap_spent: 3 });

    // Raising the cap lets it spend again, at once.
    await client.request('PATCH', `/api/keys/${keyId}`, { credit_cap: 4 });
    expect((await call(replica.url, key)).status).toBe(200);
    expect(await call(service.url, key)).toMatchObject({ status: 403, code: 'KEY_CAP_REACHED' });
    // Removing it lifts the limit.
    await client.request('PATCH', `/api/keys/${keyId}`, { credit_cap: null });
    expect((await call(service.url, key)).status).toBe(200);
  });

  it('a cap set on a key that already spent this period counts what it spent', async () => {
    const { client, key, keyId } = await accountWithKey();
    for (let i = 0; i < 2; i++) expect((await call(service.url, key)).status).toBe(200);
    const capped = await client.request('PATCH', `/api/keys/${keyId}`, { credit_cap: 2, cap_period: 'month' });
    expect(capped.body.key).toMatchObject({ credit_cap: 2, cap_spent: 2 });
    expect(await call(service.url, key)).toMatchObject({ status: 403, code: 'KEY_CAP_REACHED' });
  });

  it('zero overspend: 24 parallel calls over two replicas against a cap of 5 charge exactly 5 credits', async () => {
    const { accountId, key } = await accountWithKey({ credit_cap: 5 });
    const before = await balance(accountId);
    const results = await Promise.all(Array.from({ length: 24 }, (_, i) => call(i % 2 ? replica.url : service.url, key)));
    const ok = results.filter((r) => r.status === 200).length;
    expect(ok).toBe(5);
    expect(results.filter((r) => r.code === 'KEY_CAP_REACHED')).toHaveLength(19);
    expect(await balance(accountId)).toBe(before - 5);
    expect(await reservations(accountId)).toBe(5);
  });
});

describe('rate limit per key', () => {
  it("a key limited to 3 per minute gets 429 RATE_LIMITED (bucket key, Retry-After) on the 4th call, across replicas; another key of the account is not limited", async () => {
    const { client, key } = await accountWithKey({ rate_limit_per_minute: 3 });
    for (let i = 0; i < 3; i++) expect((await call(i % 2 ? replica.url : service.url, key)).status).toBe(200);
    const refused = await call(replica.url, key);
    expect(refused).toMatchObject({ status: 429, code: 'RATE_LIMITED', details: { bucket: 'key', limit_per_minute: 3 } });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const other = await client.post('/api/keys', { name: 'unlimited' });
    expect((await call(service.url, other.body.plaintext)).status).toBe(200);
  });
});

describe('read-only keys', () => {
  const alert = { asset: 'bitcoin', condition: 'above', level: 1_000_000, note: 'read-only test' };

  it('a read-only key calls read tools but a write tool (create_price_alert) is 403 KEY_SCOPE_FORBIDDEN with nothing reserved', async () => {
    const { accountId, key } = await accountWithKey({ read_only: true });
    expect((await call(service.url, key)).status).toBe(200);
    const before = await reservations(accountId);
    const refused = await call(service.url, key, 'create_price_alert', alert, 'price-prediction');
    expect(refused).toMatchObject({ status: 403, code: 'KEY_SCOPE_FORBIDDEN', details: { scope: 'read_only', tool: 'create_price_alert' } });
    expect(await reservations(accountId)).toBe(before);
  });

  it('the same call with a key that is not read-only creates the rule', async () => {
    const { key } = await accountWithKey();
    expect((await call(service.url, key, 'create_price_alert', alert, 'price-prediction')).status).toBe(200);
  });
});

describe('audit log', () => {
  it('lists each dashboard action (who, what, when, from which wallet, the request id), newest first, paged', async () => {
    const { client, keyId } = await accountWithKey();
    await client.request('PATCH', `/api/keys/${keyId}`, { credit_cap: 10, read_only: true });
    await client.post(`/api/keys/${keyId}/pause`);
    await client.post(`/api/keys/${keyId}/resume`);
    await client.post(`/api/keys/${keyId}/revoke`);
    const all = await client.get('/api/audit?limit=100');
    expect(all.status).toBe(200);
    const session = await client.get('/api/session');
    const wallet = session.body.wallet.address;
    expect(all.body.entries.map((e: { action: string }) => e.action)).toEqual(['key_revoke', 'key_resume', 'key_pause', 'key_update', 'key_create', 'sign_in']);
    for (const e of all.body.entries) {
      expect(e).toMatchObject({ wallet: { family: 'evm', address: wallet }, request_id: expect.any(String), at: expect.any(String) });
    }
    expect(all.body.entries[3]).toMatchObject({ target: keyId, details: { credit_cap: 10, read_only: true } });

    const first = await client.get('/api/audit?limit=4');
    expect(first.body.entries).toHaveLength(4);
    const rest = await client.get(`/api/audit?limit=4&cursor=${first.body.next_cursor}`);
    expect(rest.body.entries.map((e: { action: string }) => e.action)).toEqual(['key_create', 'sign_in']);
    expect(rest.body.next_cursor).toBeNull();

    // Another account sees none of it.
    const other = await signedInNewAccount(service.url);
    expect((await other.client.get('/api/audit')).body.entries.map((e: { action: string }) => e.action)).toEqual(['sign_in']);
  });

  it('newest first by number, across a change of digit count (ids 998 to 1,003 are not sorted as text)', async () => {
    const { client, keyId } = await accountWithKey();
    await db.query(`SELECT setval('audit_log_id_seq', greatest(997, (SELECT max(id) FROM audit_log)))`);
    for (let i = 0; i < 3; i++) {
      await client.post(`/api/keys/${keyId}/pause`);
      await client.post(`/api/keys/${keyId}/resume`);
    }
    const ids = (await client.get('/api/audit?limit=100')).body.entries.map((e: { id: string }) => Number(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(ids[0]).toBeGreaterThanOrEqual(1000);
  });

  it('active sessions are listed and one can be ended from another (audited)', async () => {
    const { client } = await accountWithKey();
    const listed = await client.get('/api/sessions');
    expect(listed.body.sessions).toHaveLength(1);
    expect(listed.body.sessions[0]).toMatchObject({ current: true, wallet: { family: 'evm' } });
    const revoked = await client.post(`/api/sessions/${listed.body.sessions[0].id}/revoke`);
    expect(revoked.body).toEqual({ revoked: true, current: true });
    expect((await client.get('/api/session')).status).toBe(401);
  });
});

describe('pods of the previous versions during a rolling upgrade', () => {
  it('the 8-argument meter_reserve_batch (no deadline) and the 9-argument one, called as before, still reserve, and a paused key is refused through them too', async () => {
    const { accountId, keyId, client } = await accountWithKey();
    const args = (id: string) => [[accountId], [id], [1], [true], ['market-intelligence'], ['bench_echo'], [keyId]];
    const eight = await db.query<{ outcome: string }>('SELECT outcome FROM meter_reserve_batch($1, $2, $3, $4, $5, $6, $7, NULL)', args('upgrade-8'));
    const nine = await db.query<{ outcome: string }>(
      'SELECT outcome FROM meter_reserve_batch($1, $2, $3, $4, $5, $6, $7, NULL, make_interval(secs => 61))',
      args('upgrade-9'),
    );
    expect([eight.rows[0]!.outcome, nine.rows[0]!.outcome]).toEqual(['ok', 'ok']);
    await client.post(`/api/keys/${keyId}/pause`);
    const paused = await db.query<{ outcome: string }>('SELECT outcome FROM meter_reserve_batch($1, $2, $3, $4, $5, $6, $7, NULL)', args('upgrade-8b'));
    expect(paused.rows[0]!.outcome).toBe('key_paused');
    await db.query(`SELECT meter_refund(r) FROM unnest(ARRAY['upgrade-8', 'upgrade-9']) AS r`);
  });
});

