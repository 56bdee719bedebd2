// The audit log is written in the action's own transaction (server/dashboard/audit.ts, issue 36
// item 3), over real HTTP against the real service and PostgreSQL: when the audit row cannot be
// written (a trigger of this test's database refuses it), the action did not happen either —
// no key made, paused or revoked, no session ended, no account opened by a first sign-in; and when
// the action fails inside the database, no audit row says it happened.
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startTestService } from '../helpers/service.ts';
import { CookieClient, signedInNewAccount, signInEvm } from './helpers.ts';

let db: TestDatabase;
let service: RunningService;

beforeAll(async () => {
  db = await createTestDatabase();
  service = await startTestService(db.url, { MCP_SERVERS: 'market-intelligence' });
  // Audit rows of the (action, wallet) pairs listed in audit_refused fail; others are written.
  await db.query(`
    CREATE TABLE audit_refused (action text NOT NULL, wallet text NOT NULL);
    CREATE FUNCTION audit_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF EXISTS (SELECT 1 FROM audit_refused r WHERE r.action = NEW.action AND r.wallet = NEW.wallet) THEN
        RAISE EXCEPTION 'audit row refused by the test';
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER audit_refuse BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_refuse();
    -- Key updates naming this description fail inside the database, after the route started its work.
    CREATE FUNCTION key_update_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.description = 'refused by the test' THEN RAISE EXCEPTION 'key update refused by the test'; END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER key_update_refuse BEFORE UPDATE ON api_keys FOR EACH ROW EXECUTE FUNCTION key_update_refuse();
  `);
});

afterAll(async () => {
  await service?.close();
  await db?.drop();
});

async function account() {
  const { client, accountId } = await signedInNewAccount(service.url);
  const wallet = ((await client.get('/api/session')).body as { wallet: { address: string } }).wallet.address;
  const refuse = (action: string) => db.query('INSERT INTO audit_refused (action, wallet) VALUES ($1, $2)', [action, wallet]);
  const actions = async () => (await db.query<{ action: string }>('SELECT action FROM audit_log WHERE account_id = $1 ORDER BY id', [accountId])).rows.map((r) => r.action);
  const key = async (id: string) => (await db.query<{ paused_at: Date | null; revoked_at: Date | null; description: string | null }>('SELECT paused_at, revoked_at, description FROM api_keys WHERE id = $1', [id])).rows[0]!;
  return { client, accountId, refuse, actions, key };
}

describe('an action and its audit row commit together', () => {
  it('the audit row fails: no key is created', async () => {
    const a = await account();
    await a.refuse('key_create');
    const res = await a.client.post('/api/keys', { name: 'never' });
    expect(res.status).toBe(500);
    expect(res.body.error.code).toBe('INTERNAL_ERROR');
    expect((await db.query('SELECT 1 FROM api_keys WHERE account_id = $1', [a.accountId])).rowCount).toBe(0);
    // Nor with an Idempotency-Key (the key and its idempotency record are undone together).
    const again = await a.client.post('/api/keys', { name: 'never' }, { 'idempotency-key': 'one-try' });
    expect(again.status).toBe(500);
    expect((await db.query('SELECT 1 FROM api_keys WHERE account_id = $1', [a.accountId])).rowCount).toBe(0);
    expect((await db.query('SELECT 1 FROM dashboard_idempotency WHERE account_id = $1', [a.accountId])).rowCount).toBe(0);
    expect(await a.actions()).toEqual(['sign_in']);
  });

  it('the audit row fails: the key is not paused, not revoked', async () => {
    const a = await account();
    const created = await a.client.post('/api/keys', { name: 'kept' });
    expect(created.status).toBe(201);
    const id = created.body.key.id as string;
    await a.refuse('key_pause');
    await a.refuse('key_revoke');
    expect((await a.client.post(`/api/keys/${id}/pause`)).status).toBe(500);
    expect((await a.key(id)).paused_at).toBeNull();
    expect((await a.client.post(`/api/keys/${id}/revoke`)).status).toBe(500);
    expect((await a.key(id)).revoked_at).toBeNull();
    // The key still answers as active.
    const listed = (await a.client.get('/api/keys')).body.keys as { id: string; status: string }[];
    expect(listed.find((k) => k.id === id)?.status).toBe('active');
    expect(await a.actions()).toEqual(['sign_in', 'key_create']);
  });

  it('the audit row fails: the session is not ended', async () => {
    const a = await account();
    await a.refuse('sign_out');
    expect((await a.client.post('/api/auth/sign-out')).status).toBe(500);
    expect((await a.client.get('/api/session')).status).toBe(200);
  });

  it("the audit row fails: a wallet's first sign-in opens no account", async () => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    await db.query("INSERT INTO audit_refused (action, wallet) VALUES ('sign_in', $1)", [wallet.address.toLowerCase()]);
    const { res } = await signInEvm(new CookieClient(service.url), wallet);
    expect(res.status).toBe(500);
    expect((await db.query('SELECT 1 FROM wallets WHERE address = $1', [wallet.address.toLowerCase()])).rowCount).toBe(0);
    expect((await db.query('SELECT 1 FROM dashboard_sessions WHERE wallet_address = $1', [wallet.address.toLowerCase()])).rowCount).toBe(0);
  });

  it('the action fails in the database: no audit row says it happened', async () => {
    const a = await account();
    const id = (await a.client.post('/api/keys', { name: 'kept' })).body.key.id as string;
    const res = await a.client.request('PATCH', `/api/keys/${id}`, { description: 'refused by the test' });
    expect(res.status).toBe(500);
    expect((await a.key(id)).description).toBeNull();
    expect(await a.actions()).toEqual(['sign_in', 'key_create']);
  });
});
