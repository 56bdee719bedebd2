// The dashboard's keys, usage and plans API against the real service and PostgreSQL: a key made
// here works on /mcp at once through the MCP SDK client; revocation and rotation take effect;
// the plan's key cap answers a clear error; usage and the CSV count the real calls.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { rotatedKeyName } from '../../server/keys/store.ts';
import { mcpClient, post, startTestService, toolCall } from '../helpers/service.ts';
import { clearOfMidnight } from '../helpers/wait.ts';
import { CookieClient, signedInNewAccount } from './helpers.ts';

let db: TestDatabase;
let service: RunningService;

beforeAll(async () => {
  db = await createTestDatabase();
  // EOA sign-ins are checked by ECDSA recovery alone, so no chain node is needed here.
  service = await startTestService(db.url, { MCP_SERVERS: 'market-intelligence', KEY_CACHE_TTL_MS: '60000' });
});

afterAll(async () => {
  await service?.close();
  await db?.drop();
});

const signedIn = () => signedInNewAccount(service.url);

async function mcpStatus(key: string): Promise<{ status: number; code?: string }> {
  const res = await post(`${service.url}/mcp/market-intelligence`, toolCall('get_capabilities'), { 'x-api-key': key });
  return { status: res.status, code: (res.body as { error?: { code: string } }).error?.code };
}

describe('keys', () => {
  it('a key created in the dashboard (name, description, expiry, servers) is shown once and calls a tool through the MCP SDK client', async () => {
    const { client } = await signedIn();
    const expires = new Date(Date.now() + 90 * 86400_000).toISOString();
    const created = await client.post('/api/keys', { name: 'laptop', description: 'Claude Desktop', expires_at: expires, servers: ['market-intelligence'] });
    expect(created.status).toBe(201);
    expect(created.body.plaintext).toMatch(/^cmcp_[0-9A-Za-z]{38}$/);
    expect(created.body.key).toMatchObject({ name: 'laptop', description: 'Claude Desktop', servers: ['market-intelligence'], status: 'active', expires_at: expires });
    expect(created.body.plaintext.startsWith(created.body.key.prefix)).toBe(true);
    const list = await client.get('/api/keys');
    expect(list.body.max_keys).toBe(3);
    expect(list.body.keys).toHaveLength(1);
    // Listing never shows the plaintext again.
    expect(JSON.stringify(list.body)).not.toContain(created.body.plaintext);

    const mcp = await mcpClient(service.url, 'market-intelligence', created.body.plaintext);
    try {
      const result = await mcp.callTool({ name: 'get_capabilities', arguments: {} });
      expect((result.structuredContent as { success: boolean }).success).toBe(true);
    } finally {
      await mcp.close();
    }
  });

  it('revoking a key makes /mcp answer 401 API_KEY_REVOKED at once on this pod', async () => {
    const { client } = await signedIn();
    const { body } = await client.post('/api/keys', { name: 'k' });
    expect((await mcpStatus(body.plaintext)).status).toBe(200);
    const revoked = await client.post(`/api/keys/${body.key.id}/revoke`);
    expect(revoked.body.key.status).toBe('revoked');
    expect(await mcpStatus(body.plaintext)).toEqual({ status: 401, code: 'API_KEY_REVOKED' });
  });

  it('rotation makes a new key with the same settings; the old one works through the grace period, or stops at once with no grace', async () => {
    await clearOfMidnight();
    const { client } = await signedIn();
    const { body: first } = await client.post('/api/keys', { name: 'ci', description: 'runner', servers: ['market-intelligence'] });
    const graced = await client.post(`/api/keys/${first.key.id}/rotate`, { grace_seconds: 3600 });
    expect(graced.status).toBe(201);
    const day = new Date().toISOString().slice(0, 10);
    expect(graced.body.key).toMatchObject({ name: `ci (rotated ${day})`, description: 'runner', servers: ['market-intelligence'], rotated_from: first.key.id });
    const graceEnd = new Date(graced.body.replaced.expires_at).getTime();
    expect(Math.abs(graceEnd - (Date.now() + 3600_000))).toBeLessThan(60_000);
    expect((await mcpStatus(first.plaintext)).status).toBe(200);
    expect((await mcpStatus(graced.body.plaintext)).status).toBe(200);

    const immediate = await client.post(`/api/keys/${graced.body.key.id}/rotate`, { grace_seconds: 0 });
    expect(immediate.body.replaced.status).toBe('revoked');
    // Named apart from every earlier key of the chain, not "(rotated …) (rotated …)".
    expect(immediate.body.key.name).toBe(`ci (rotated ${day}, 2)`);
    expect((await mcpStatus(graced.body.plaintext)).code).toBe('API_KEY_REVOKED');
    expect((await mcpStatus(immediate.body.plaintext)).status).toBe(200);
  });

  it('the same Idempotency-Key makes one key: a concurrent or repeated request answers the first key without its secret', async () => {
    const { client, accountId } = await signedIn();
    const headers = { 'idempotency-key': 'b3c2a1e0-5f4d-4c3b-9a8f-7e6d5c4b3a21' };
    const body = { name: 'double click', servers: ['market-intelligence'] };
    const [a, b] = await Promise.all([client.post('/api/keys', body, headers), client.post('/api/keys', body, headers)]);
    const first = a.status === 201 ? a : b;
    const second = a.status === 201 ? b : a;
    expect([first.status, second.status]).toEqual([201, 200]);
    expect(first.body.plaintext).toMatch(/^cmcp_/);
    expect(second.body).toMatchObject({ replayed: true, plaintext: null, key: { id: first.body.key.id, name: 'double click' } });
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    const later = await client.post('/api/keys', body, headers);
    expect(later.body.key.id).toBe(first.body.key.id);
    const rows = await db.query('SELECT 1 FROM api_keys WHERE account_id = $1', [accountId]);
    expect(rows.rowCount).toBe(1);
    // The same header with another body is refused rather than silently answering the first key.
    const reused = await client.post('/api/keys', { name: 'other' }, headers);
    expect(reused.status).toBe(400);
    expect(reused.body.error.details.issues[0].path).toBe('Idempotency-Key');
    // Another header is another request.
    expect((await client.post('/api/keys', body, { 'idempotency-key': 'another' })).status).toBe(201);
    expect((await client.post('/api/keys', body, { 'idempotency-key': 'has space' })).status).toBe(400);
  });

  it('an Idempotency-Key is remembered for 24 hours, then a new key can be made with it', async () => {
    const { client, accountId } = await signedIn();
    const headers = { 'idempotency-key': 'day-old' };
    const first = await client.post('/api/keys', { name: 'k' }, headers);
    await db.query(`UPDATE dashboard_idempotency SET created_at = now() - interval '25 hours' WHERE account_id = $1`, [accountId]);
    const again = await client.post('/api/keys', { name: 'k' }, headers);
    expect(again.status).toBe(201);
    expect(again.body.key.id).not.toBe(first.body.key.id);
  });

  it("a failed creation is not remembered: at the cap the same Idempotency-Key answers KEY_LIMIT_REACHED, and works after a revoke", async () => {
    const { client } = await signedIn();
    const ids: string[] = [];
    for (const name of ['a', 'b', 'c']) ids.push((await client.post('/api/keys', { name })).body.key.id);
    const headers = { 'idempotency-key': 'at-cap' };
    expect((await client.post('/api/keys', { name: 'd' }, headers)).status).toBe(409);
    await client.post(`/api/keys/${ids[0]}/revoke`);
    expect((await client.post('/api/keys', { name: 'd' }, headers)).status).toBe(201);
  });

  it('editing a key changes its name, description, servers and expiry, and /mcp follows the new servers at once; revoked or foreign keys cannot be edited', async () => {
    const { client } = await signedIn();
    const { body } = await client.post('/api/keys', { name: 'edit me', description: 'old', servers: ['market-intelligence'] });
    expect((await mcpStatus(body.plaintext)).status).toBe(200);
    const expires = new Date(Date.now() + 30 * 86400_000).toISOString();
    const edited = await client.request('PATCH', `/api/keys/${body.key.id}`, { name: 'edited', description: null, servers: ['price-prediction'], expires_at: expires });
    expect(edited.status).toBe(200);
    expect(edited.body.key).toMatchObject({ id: body.key.id, name: 'edited', description: null, servers: ['price-prediction'], expires_at: expires, prefix: body.key.prefix });
    // The key is now scoped to another server: the gateway refuses it here without waiting for its cache.
    expect(await mcpStatus(body.plaintext)).toEqual({ status: 403, code: 'KEY_SCOPE_FORBIDDEN' });
    // Absent fields stay; null servers means every server, null expiry never.
    const widened = await client.request('PATCH', `/api/keys/${body.key.id}`, { servers: null, expires_at: null });
    expect(widened.body.key).toMatchObject({ name: 'edited', servers: null, expires_at: null });
    expect((await mcpStatus(body.plaintext)).status).toBe(200);
    for (const bad of [{ name: '' }, { expires_at: '2020-01-01' }, { servers: [] }, { plaintext: 'x' }]) {
      expect((await client.request('PATCH', `/api/keys/${body.key.id}`, bad)).status).toBe(400);
    }
    const stranger = await signedIn();
    expect((await stranger.client.request('PATCH', `/api/keys/${body.key.id}`, { name: 'mine now' })).status).toBe(404);
    await client.post(`/api/keys/${body.key.id}/revoke`);
    expect((await client.request('PATCH', `/api/keys/${body.key.id}`, { name: 'back' })).status).toBe(404);
  });

  it("the free plan's cap of 3 keys answers KEY_LIMIT_REACHED, yet a key at the cap can still be rotated", async () => {
    const { client } = await signedIn();
    const ids: string[] = [];
    for (const name of ['a', 'b', 'c']) ids.push((await client.post('/api/keys', { name })).body.key.id);
    const fourth = await client.post('/api/keys', { name: 'd' });
    expect(fourth.status).toBe(409);
    expect(fourth.body.error).toMatchObject({ code: 'KEY_LIMIT_REACHED', details: { max_keys: 3 } });
    const rotated = await client.post(`/api/keys/${ids[0]}/rotate`, { grace_seconds: 0 });
    expect(rotated.status).toBe(201);
  });

  it("a key of another account cannot be revoked or rotated (404), and bad input is a coded 400", async () => {
    const owner = await signedIn();
    const { body } = await owner.client.post('/api/keys', { name: 'mine' });
    const stranger = await signedIn();
    expect((await stranger.client.post(`/api/keys/${body.key.id}/revoke`)).status).toBe(404);
    expect((await stranger.client.post(`/api/keys/${body.key.id}/rotate`, { grace_seconds: 0 })).status).toBe(404);
    expect((await mcpStatus(body.plaintext)).status).toBe(200);
    const noName = await owner.client.post('/api/keys', { description: 'x' });
    expect(noName.status).toBe(400);
    expect(noName.body.error.code).toBe('INVALID_PARAMS');
    const past = await owner.client.post('/api/keys', { name: 'old', expires_at: '2020-01-01' });
    expect(past.body.error.details.issues[0].path).toBe('expires_at');
  });
});

describe('rotatedKeyName', () => {
  it('keeps a rotated name within 64 characters and apart from the names the account holds', () => {
    const now = new Date('2026-11-25T10:00:00Z');
    const long = 'x'.repeat(64);
    const name = rotatedKeyName(long, now, new Set([long]));
    expect(name).toHaveLength(64);
    expect(name.endsWith(' (rotated 2026-11-25)')).toBe(true);
    expect(rotatedKeyName('ci (rotated 2026-11-20)', now, new Set())).toBe('ci (rotated 2026-11-25)');
    expect(rotatedKeyName('ci', now, new Set(['ci (rotated 2026-11-25)', 'ci (rotated 2026-11-25, 2)']))).toBe('ci (rotated 2026-11-25, 3)');
  });
});

describe('usage and plans', () => {
  it('usage shows the balance going down by the calls made with the key, per day, server and tool, and the CSV has the same rows', async () => {
    await clearOfMidnight();
    const { client } = await signedIn();
    const { body } = await client.post('/api/keys', { name: 'usage' });
    const mcp = await mcpClient(service.url, 'market-intelligence', body.plaintext);
    let spent = 0;
    try {
      for (let i = 0; i < 2; i++) {
        const r = await mcp.callTool({ name: 'get_prices', arguments: { assets: ['bitcoin'] } });
        const env = r.structuredContent as { success: boolean; metadata: { credits_used: number } };
        expect(env.success).toBe(true);
        spent += env.metadata.credits_used;
      }
    } finally {
      await mcp.close();
    }
    expect(spent).toBeGreaterThan(0);
    const usage = (await client.get('/api/usage?days=7')).body;
    expect(usage).toMatchObject({ plan: 'free', balance: 150 - spent, calls: 2, credits_used: spent, renews_at: null });
    const today = new Date().toISOString().slice(0, 10);
    expect(usage.daily).toEqual([{ day: today, server: 'market-intelligence', tool: 'get_prices', calls: 2, credits: spent }]);
    const csv = await client.get('/api/usage.csv?days=7');
    expect(csv.headers.get('content-type')).toMatch(/text\/csv/);
    expect(csv.body).toBe(`day,server,tool,calls,credits\r\n${today},market-intelligence,get_prices,2,${spent}\r\n`);
    expect((await client.get('/api/usage?days=0')).status).toBe(400);
  });

  it('plans lists the four plans as the catalog reports them, with the current one marked', async () => {
    const { client } = await signedIn();
    const plans = (await client.get('/api/plans')).body;
    const catalog = (await (await fetch(`${service.url}/v1/catalog`)).json()) as { plans: { name: string; credits: number }[] };
    expect(plans.current).toBe('free');
    expect(plans.plans.map((p: { name: string }) => p.name)).toEqual(catalog.plans.map((p) => p.name));
    expect(plans.plans.find((p: { current: boolean }) => p.current).name).toBe('free');
    for (const p of plans.plans) expect(p.credits).toBe(catalog.plans.find((c) => c.name === p.name)!.credits);
  });

  it('config names the MCP base URL and the servers for the Connect page', async () => {
    const config = (await new CookieClient(service.url).get('/api/config')).body;
    expect(config.mcp_base_url).toBe(service.url);
    expect(config.servers.map((s: { name: string }) => s.name)).toEqual(['market-intelligence']);
    expect(config.chains.map((c: { id: number }) => c.id).sort((a: number, b: number) => a - b)).toEqual([1, 56, 137, 8453]);
  });
});
