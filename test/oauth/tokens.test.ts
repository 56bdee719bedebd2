// A connection's tokens at the gateway and the token endpoint: metered and scoped like a key,
// refresh tokens that rotate (a reused one revokes the whole connection), revocation from the
// dashboard or the revocation endpoint within the key cache bound, and nothing stored in the clear.
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountIdByWallet } from '../../server/accounts/accounts.ts';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { balanceOf, post, startTestService, toolCall } from '../helpers/service.ts';
import { CookieClient, signInEvm } from '../dashboard/helpers.ts';
import { approve, authorizationUrl, connect, navigate, openConsent, pkcePair, REDIRECT_URL, registerClient, tokenRequest } from './helpers.ts';

const CACHE_TTL_MS = 800;
/**
 * The token cache's clock: real time plus what a test has moved it on by, so "within the TTL" is
 * checked at the TTL instead of against the wall clock of a loaded machine.
 */
let ahead = 0;
const keyClock = () => Date.now() + ahead;
const afterTtl = () => void (ahead += CACHE_TTL_MS);

let db: TestDatabase;
let service: RunningService;
let base: string;

beforeAll(async () => {
  db = await createTestDatabase();
  service = await startTestService(db.url, { KEY_CACHE_TTL_MS: String(CACHE_TTL_MS) }, { keyClock });
  base = service.url;
});

afterAll(async () => {
  await service?.close();
  await db?.drop();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const echo = (server: string, token: string, headers = bearer(token)) => post(`${base}/mcp/${server}`, toolCall('bench_echo', { message: 'hi' }), headers);
const wallet = () => privateKeyToAccount(generatePrivateKey());

describe('a connection is scoped, metered and limited like a key', () => {
  it('a token for one server is refused on another with 403 KEY_SCOPE_FORBIDDEN, and works on its own', async () => {
    const t = await connect(base, wallet(), { resource: `${base}/mcp/market-intelligence`, scope: 'market-intelligence' });
    const own = await echo('market-intelligence', t.access_token);
    expect(own.status).toBe(200);
    expect(own.headers.get('x-credits-used')).toBe('1');
    expect(own.headers.get('ratelimit-policy')).toBe('"free";q=30;w=60');
    const other = await echo('price-prediction', t.access_token);
    expect(other.status).toBe(403);
    expect(other.body).toMatchObject({ success: false, error: { code: 'KEY_SCOPE_FORBIDDEN', details: { server: 'price-prediction', allowed_servers: ['market-intelligence'] } } });
  });

  it("a token's audience binds it: of a connection approved for two servers, a token minted for one (RFC 8707 resource at the token endpoint) is refused at the other", async () => {
    const mi = `${base}/mcp/market-intelligence`;
    const pp = `${base}/mcp/price-prediction`;
    const clientId = await registerClient(base);
    const { verifier, challenge } = pkcePair();
    const walk = await openConsent(base, authorizationUrl(base, { clientId, challenge, resource: [mi, pp] }), wallet());
    expect([...walk.details.servers].sort()).toEqual(['market-intelligence', 'price-prediction']);
    const code = (await approve(walk)).searchParams.get('code')!;
    const forMi = await tokenRequest(base, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URL, client_id: clientId, code_verifier: verifier, resource: mi });
    expect(forMi.status).toBe(200);
    const miToken = String(forMi.body.access_token);
    const list = (server: string, token: string) => post(`${base}/mcp/${server}`, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, bearer(token));
    expect((await echo('market-intelligence', miToken)).status).toBe(200);
    const elsewhere = await list('price-prediction', miToken);
    expect(elsewhere.status).toBe(403);
    expect((elsewhere.body as { error: { code: string } }).error.code).toBe('KEY_SCOPE_FORBIDDEN');
    // The same grant refreshed for the other resource: the mirror image.
    const forPp = await tokenRequest(base, { grant_type: 'refresh_token', refresh_token: String(forMi.body.refresh_token), client_id: clientId, resource: pp });
    expect(forPp.status).toBe(200);
    expect((await list('price-prediction', String(forPp.body.access_token))).status).toBe(200);
    expect((await list('market-intelligence', String(forPp.body.access_token))).status).toBe(403);
  });

  it('the user can narrow the servers: an all-service token reaches only the servers approved', async () => {
    const t = await connect(base, wallet(), { scope: 'market-intelligence price-prediction', servers: ['market-intelligence'] });
    const ok = await echo('market-intelligence', t.access_token);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const refused = await echo('price-prediction', t.access_token);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: { code: 'KEY_SCOPE_FORBIDDEN', details: { allowed_servers: ['market-intelligence'] } } });
  });

  it('the paid call is charged to the approving account, with the same headers and envelope as a key', async () => {
    const w = wallet();
    const t = await connect(base, w, { resource: `${base}/mcp/market-intelligence` });
    const accountId = (await accountIdByWallet(db, 'ethereum', w.address.toLowerCase()))!;
    const before = await balanceOf(db, accountId);
    expect(before, 'a new wallet gets the free plan').toBe(150);
    const res = await echo('market-intelligence', t.access_token);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-credits-remaining')).toBe(String(before - 1));
    expect(await balanceOf(db, accountId)).toBe(before - 1);
  });

  it('an access token is not an API key: as x-api-key it is 401 INVALID_API_KEY', async () => {
    const t = await connect(base, wallet(), { resource: `${base}/mcp/market-intelligence` });
    const res = await echo('market-intelligence', t.access_token, { 'x-api-key': t.access_token } as never);
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: { code: 'INVALID_API_KEY' } });
  });

  it('a connection does not count toward the key cap: an account at its cap still connects', async () => {
    const w = wallet();
    const first = await connect(base, w, { resource: `${base}/mcp/market-intelligence` });
    for (let i = 0; i < 3; i++) expect((await first.browser.post('/api/keys', { name: `k${i}` })).status).toBe(201);
    expect((await first.browser.post('/api/keys', { name: 'one too many' })).status).toBe(409);
    const second = await connect(base, w, { resource: `${base}/mcp/market-intelligence` });
    expect((await echo('market-intelligence', second.access_token)).status).toBe(200);
  });
});

describe('a client that registers with a secret (as claude.ai does)', () => {
  it('gets a secret, must present it at the token endpoint, and still needs PKCE', async () => {
    const res = await fetch(`${base}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Confidential', redirect_uris: [REDIRECT_URL], token_endpoint_auth_method: 'client_secret_post', grant_types: ['authorization_code', 'refresh_token'] }),
    });
    expect(res.status).toBe(201);
    const registered = (await res.json()) as { client_id: string; client_secret: string; token_endpoint_auth_method: string };
    expect(registered.token_endpoint_auth_method).toBe('client_secret_post');
    expect(registered.client_secret).toBeTruthy();
    const { verifier, challenge } = pkcePair();
    const walk = await openConsent(base, authorizationUrl(base, { clientId: registered.client_id, challenge, resource: `${base}/mcp/market-intelligence` }), wallet());
    const code = (await approve(walk)).searchParams.get('code')!;
    const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URL, client_id: registered.client_id, code_verifier: verifier };
    const without = await tokenRequest(base, form);
    expect(without.body.error).toBe('invalid_client');
    const withSecret = await tokenRequest(base, { ...form, client_secret: registered.client_secret });
    expect(withSecret.status).toBe(200);
    expect((await echo('market-intelligence', String(withSecret.body.access_token))).status).toBe(200);
  });
});

describe('replicas', () => {
  it('an authorization started on one replica can be approved on another (cookie keys derived from the shared DATABASE_URL)', async () => {
    // Replicas serve one public origin: the second one is told it is the first one's.
    const other = await startTestService(db.url, { KEY_CACHE_TTL_MS: String(CACHE_TTL_MS), PUBLIC_BASE_URL: base });
    try {
      const clientId = await registerClient(base);
      const { verifier, challenge } = pkcePair();
      const browser = new CookieClient(other.url);
      // The authorization request reaches this replica; the consent API calls reach the other.
      const first = await navigate(browser, authorizationUrl(base, { clientId, challenge, resource: `${base}/mcp/market-intelligence` }).href);
      const uid = /interaction\/([^/?]+)/.exec(first.location!)![1]!;
      expect((await signInEvm(browser, wallet())).res.status).toBeLessThan(300);
      const details = await browser.get(`/api/oauth/interaction/${uid}/details`);
      expect(details.status, JSON.stringify(details.body)).toBe(200);
      const approved = await browser.post(`/api/oauth/interaction/${uid}/approve`, { servers: ['market-intelligence'] });
      expect(approved.status, JSON.stringify(approved.body)).toBe(200);
      const back = new URL((await navigate(browser, approved.body.redirect_to)).location!);
      const token = await tokenRequest(base, { grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: REDIRECT_URL, client_id: clientId, code_verifier: verifier });
      expect(token.status).toBe(200);
    } finally {
      await other.close();
    }
  });
});

describe('401 says where to log in', () => {
  it('an unknown Bearer token: 401 with resource_metadata and error="invalid_token", envelope code INVALID_TOKEN (not an API key error)', async () => {
    const res = await echo('whale-intelligence', 'A'.repeat(43));
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp/whale-intelligence", error="invalid_token"`,
    );
    expect(res.body).toMatchObject({ success: false, error: { code: 'INVALID_TOKEN', message: expect.any(String), details: { request_id: expect.any(String) } } });
  });

  it('no credential: 401 MISSING_API_KEY with resource_metadata only', async () => {
    const res = await post(`${base}/mcp/kol-analytics`, toolCall('bench_echo', {}));
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp/kol-analytics"`);
    expect(res.body).toMatchObject({ error: { code: 'MISSING_API_KEY' } });
  });

  it('an expired access token is 401 INVALID_TOKEN (reason expired)', async () => {
    const t = await connect(base, wallet(), { resource: `${base}/mcp/market-intelligence` });
    // Short-lived tokens, without waiting an hour: the stored expiry is moved into the past.
    await db.query(`UPDATE oauth_artifacts SET expires_at = now() - interval '1 second' WHERE model = 'AccessToken'`);
    afterTtl();
    const res = await echo('market-intelligence', t.access_token);
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: { code: 'INVALID_TOKEN', details: { reason: 'expired' } } });
  });
});

describe('reuse detection ends the connection at once on the pod that saw it (not after the token cache TTL)', () => {
  // A cache TTL far longer than the test: a token still answering after the replay was served from this pod's cache.
  let slow: RunningService;
  beforeAll(async () => {
    slow = await startTestService(db.url, { KEY_CACHE_TTL_MS: '120000' });
  });
  afterAll(async () => {
    await slow?.close();
  });
  const echoAt = (token: string) => post(`${slow.url}/mcp/market-intelligence`, toolCall('bench_echo', { message: 'hi' }), bearer(token));

  it('an authorization code replayed: the access token it gave is refused on the very next request (401)', async () => {
    const clientId = await registerClient(slow.url);
    const { verifier, challenge } = pkcePair();
    const walk = await openConsent(slow.url, authorizationUrl(slow.url, { clientId, challenge, resource: `${slow.url}/mcp/market-intelligence` }), wallet());
    const code = (await approve(walk)).searchParams.get('code')!;
    const exchange = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URL, client_id: clientId, code_verifier: verifier };
    const token = String((await tokenRequest(slow.url, exchange)).body.access_token);
    // Used once, so the token is in this pod's cache.
    expect((await echoAt(token)).status).toBe(200);
    // The code again (an intercepted code, or a client that retried): RFC 6749 §4.1.2 revokes what it gave.
    const replay = await tokenRequest(slow.url, exchange);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    const after = await echoAt(token);
    expect(after.status).toBe(401);
  });

  it('a rotated refresh token reused: the live access token is refused on the very next request (401)', async () => {
    const t = await connect(slow.url, wallet(), { resource: `${slow.url}/mcp/market-intelligence` });
    const first = await tokenRequest(slow.url, { grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: t.clientId });
    const access2 = String(first.body.access_token);
    expect((await echoAt(access2)).status).toBe(200);
    const reuse = await tokenRequest(slow.url, { grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: t.clientId });
    expect(reuse.body.error).toBe('invalid_grant');
    expect((await echoAt(access2)).status).toBe(401);
  });
});

describe('refresh tokens rotate, and a reused one revokes the connection', () => {
  it('each refresh gives a new access and refresh token; the old refresh token reused ends everything', async () => {
    const t = await connect(base, wallet(), { resource: `${base}/mcp/market-intelligence` });
    const first = await tokenRequest(base, { grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: t.clientId });
    expect(first.status).toBe(200);
    const rotated = String(first.body.refresh_token);
    expect(rotated).not.toBe(t.refresh_token);
    expect(first.body.expires_in).toBe(3600);
    const access2 = String(first.body.access_token);
    expect((await echo('market-intelligence', access2)).status).toBe(200);

    const reuse = await tokenRequest(base, { grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: t.clientId });
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe('invalid_grant');
    // The whole connection is gone: the rotated refresh token and the live access token too.
    const after = await tokenRequest(base, { grant_type: 'refresh_token', refresh_token: rotated, client_id: t.clientId });
    expect(after.body.error).toBe('invalid_grant');
    await expect.poll(async () => (await echo('market-intelligence', access2)).status, { timeout: CACHE_TTL_MS * 3, interval: 100 }).toBe(401);
    const list = await t.browser.get('/api/connections');
    expect(list.body.connections[0]).toMatchObject({ status: 'revoked' });
  });

  it('the connection lives as long as its newest refresh token (sliding lifetime)', async () => {
    const t = await connect(base, wallet(), { resource: `${base}/mcp/market-intelligence` });
    const before = (await t.browser.get('/api/connections')).body.connections[0].expires_at as string;
    expect(Date.parse(before) - Date.now()).toBeGreaterThan(89 * 86400_000);
    await db.query(`UPDATE oauth_connections SET expires_at = now() + interval '1 day'`);
    await db.query(`UPDATE oauth_artifacts SET expires_at = now() + interval '1 day' WHERE model = 'Grant'`);
    const refreshed = await tokenRequest(base, { grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: t.clientId });
    expect(refreshed.status).toBe(200);
    const mine = (await t.browser.get('/api/connections')).body.connections[0];
    expect(Date.parse(mine.expires_at) - Date.now(), 'slid forward by the refresh token lifetime').toBeGreaterThan(89 * 86400_000);
  });
});

describe('revocation', () => {
  it('Connected apps lists the connection (client, servers, created, last used) and Revoke ends it at once', async () => {
    const t = await connect(base, wallet(), { resource: `${base}/mcp/market-intelligence` });
    expect((await echo('market-intelligence', t.access_token)).status).toBe(200);
    await expect
      .poll(async () => (await t.browser.get('/api/connections')).body.connections[0].last_used_at, { timeout: 5000, interval: 200 })
      .not.toBeNull();
    const listed = (await t.browser.get('/api/connections')).body.connections;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ client_id: t.clientId, client_name: 'Raw Client', servers: ['market-intelligence'], status: 'active', created_at: expect.any(String) });

    const revoked = await t.browser.post(`/api/connections/${listed[0].id}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.connection.status).toBe('revoked');
    const audited = (await t.browser.get('/api/audit')).body.entries[0];
    expect(audited).toMatchObject({ action: 'connection_revoke', target: listed[0].id, details: { client: 'Raw Client' } });
    const res = await echo('market-intelligence', t.access_token);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(res.body, 'a revoked connection is an OAuth token error, not an API key one').toMatchObject({ error: { code: 'INVALID_TOKEN' } });
    const refresh = await tokenRequest(base, { grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: t.clientId });
    expect(refresh.body.error).toBe('invalid_grant');
  });

  it('a revocation made elsewhere (another pod) takes effect within the key cache TTL', async () => {
    const t = await connect(base, wallet(), { resource: `${base}/mcp/market-intelligence` });
    expect((await echo('market-intelligence', t.access_token)).status).toBe(200);
    await db.query(`UPDATE oauth_connections SET revoked_at = now(), revoked_reason = 'user' WHERE client_id = $1`, [t.clientId]);
    afterTtl();
    expect((await echo('market-intelligence', t.access_token)).status).toBe(401);
  });

  it('RFC 7009: revoking the refresh token at /oauth/revoke ends the connection', async () => {
    const t = await connect(base, wallet(), { resource: `${base}/mcp/market-intelligence` });
    const res = await fetch(`${base}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: t.refresh_token, client_id: t.clientId }),
    });
    expect(res.status).toBe(200);
    await expect.poll(async () => (await echo('market-intelligence', t.access_token)).status, { timeout: CACHE_TTL_MS * 3, interval: 100 }).toBe(401);
    expect((await t.browser.get('/api/connections')).body.connections[0].status).toBe('revoked');
  });

  it('another account cannot revoke my connection', async () => {
    const mine = await connect(base, wallet(), { resource: `${base}/mcp/market-intelligence` });
    const theirs = await connect(base, wallet(), { resource: `${base}/mcp/market-intelligence` });
    const id = (await mine.browser.get('/api/connections')).body.connections[0].id as string;
    const res = await theirs.browser.post(`/api/connections/${id}/revoke`);
    expect(res.status).toBe(404);
    expect((await echo('market-intelligence', mine.access_token)).status).toBe(200);
  });
});

describe('only hashes are stored', () => {
  it('no access token, refresh token or code appears anywhere in the OAuth tables', async () => {
    const t = await connect(base, wallet(), { resource: `${base}/mcp/market-intelligence` });
    const dump = await db.query<{ text: string }>(
      `SELECT string_agg(row_to_json(a)::text, '\n') AS text FROM (SELECT model, encode(id_hash, 'hex') AS id, payload, grant_id FROM oauth_artifacts) a`,
    );
    const text = dump.rows[0]!.text;
    for (const secret of [t.access_token, t.refresh_token, t.code]) expect(text).not.toContain(secret);
    const connections = await db.query<{ text: string }>(`SELECT string_agg(row_to_json(c)::text, '\n') AS text FROM oauth_connections c`);
    for (const secret of [t.access_token, t.refresh_token]) expect(connections.rows[0]!.text).not.toContain(secret);
  });
});
