// Every bad input to the OAuth endpoints is answered in the RFC's error format (`error`,
// `error_description`, in JSON or on the redirect back to a registered client), never a 500, and
// none of them creates an account, a connection, a token or a charge.
import net from 'node:net';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningService } from '../../server/runtime.ts';
import { CookieClient } from '../dashboard/helpers.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startTestService } from '../helpers/service.ts';
import { approve, authorizationUrl, connect, navigate, openConsent, pkcePair, REDIRECT_URL, registerClient, startHost, tokenRequest } from './helpers.ts';

let db: TestDatabase;
let service: RunningService;
let strict: RunningService;
let base: string;
let host: Awaited<ReturnType<typeof startHost>>;

/** Documents the CIMD test host serves, by path. */
const documents: Record<string, { status?: number; type?: string; body: string }> = {};

beforeAll(async () => {
  db = await createTestDatabase();
  // Every test here registers and fetches from this one address: budgets none of them reaches (own tests check the limits).
  service = await startTestService(db.url, { OAUTH_CIMD_ALLOW_LOCALHOST: '1', OAUTH_CIMD_FETCH_LIMIT: '1000', OAUTH_REGISTER_LIMIT: '1000' });
  // The same database without the development flag: loopback documents are refused.
  strict = await startTestService(db.url, { OAUTH_CIMD_FETCH_LIMIT: '1000' });
  base = service.url;
  host = await startHost((req, res) => {
    const doc = documents[req.url ?? ''];
    res.statusCode = doc?.status ?? (doc ? 200 : 404);
    res.setHeader('content-type', doc?.type ?? 'application/json');
    res.end(doc?.body ?? '');
  });
});

afterAll(async () => {
  await host?.close();
  await strict?.close();
  await service?.close();
  await db?.drop();
});

interface Counts {
  accounts: number;
  connections: number;
  tokens: number;
  ledger: number;
}

async function counts(): Promise<Counts> {
  const res = await db.query<Counts>(`SELECT
      (SELECT count(*) FROM accounts)::int AS accounts,
      (SELECT count(*) FROM oauth_connections)::int AS connections,
      (SELECT count(*) FROM oauth_artifacts WHERE model IN ('AccessToken', 'RefreshToken', 'AuthorizationCode'))::int AS tokens,
      (SELECT count(*) FROM credit_ledger)::int AS ledger`);
  return res.rows[0]!;
}

let before: Counts;
beforeEach(async () => {
  before = await counts();
});

async function nothingCreated(): Promise<void> {
  expect(await counts(), 'no account, connection, token or charge').toEqual(before);
}

/**
 * The RFC 6749 error in an answer: the JSON object, or the page a browser is shown instead
 * (server/oauth/error-page.ts), which keeps the code and the description in its details line.
 */
function errorOf(body: string): unknown {
  if (!body.startsWith('<!doctype html>')) return JSON.parse(body);
  const details = /<p>Details: <code>([^<]*)<\/code>(?: — ([^<]*))?<\/p>/.exec(body);
  return { error: details?.[1], error_description: details?.[2] };
}

function expectRfcError(body: unknown, error: string | RegExp): void {
  expect(body).toMatchObject({ error: expect.stringMatching(error), error_description: expect.any(String) });
}

/** An authorization request as a browser sends it: one hop, Accept: text/html. */
async function authorize(url: URL): Promise<{ status: number; location: string | null; body: string }> {
  return navigate(new CookieClient(base), url.href);
}

describe('authorization endpoint', () => {
  it('PKCE missing: the error goes back to the registered redirect URI', async () => {
    const clientId = await registerClient(base);
    const url = authorizationUrl(base, { clientId, challenge: 'x' });
    url.searchParams.delete('code_challenge');
    url.searchParams.delete('code_challenge_method');
    const res = await authorize(url);
    expect(res.status).toBe(303);
    const back = new URL(res.location!);
    expect(back.origin + back.pathname).toBe(REDIRECT_URL);
    expect(back.searchParams.get('error')).toBe('invalid_request');
    expect(back.searchParams.get('error_description')).toMatch(/PKCE/);
    expect(back.searchParams.get('iss')).toBe(base);
    await nothingCreated();
  });

  it('PKCE plain is refused', async () => {
    const clientId = await registerClient(base);
    const url = authorizationUrl(base, { clientId, challenge: 'a'.repeat(43) });
    url.searchParams.set('code_challenge_method', 'plain');
    const back = new URL((await authorize(url)).location!);
    expect(back.searchParams.get('error')).toBe('invalid_request');
    expect(back.searchParams.get('error_description')).toMatch(/code_challenge_method/);
    await nothingCreated();
  });

  it('a redirect URI not registered: 400, no redirect; a browser reads a page in words with the error code, a JSON client the RFC object', async () => {
    const clientId = await registerClient(base);
    const url = authorizationUrl(base, { clientId, challenge: pkcePair().challenge });
    url.searchParams.set('redirect_uri', 'https://attacker.example/cb');
    const res = await authorize(url);
    expect(res.status).toBe(400);
    expect(res.location).toBeNull();
    expect(res.body).toMatch(/^<!doctype html>/);
    expect(res.body).toContain('<h1>The app asked to return you to an address it never registered</h1>');
    expect(res.body).toContain('<code>invalid_redirect_uri</code>');
    expect(res.body).not.toContain('attacker.example/cb"');
    const json = await fetch(url, { headers: { accept: 'application/json' }, redirect: 'manual' });
    expect(json.status).toBe(400);
    expectRfcError(await json.json(), 'invalid_redirect_uri');
    await nothingCreated();
  });

  it('an unknown client: 400 invalid_client', async () => {
    const res = await fetch(authorizationUrl(base, { clientId: 'no-such-client', challenge: pkcePair().challenge }), { headers: { accept: 'application/json' }, redirect: 'manual' });
    expect(res.status).toBe(400);
    expectRfcError(await res.json(), 'invalid_client');
    await nothingCreated();
  });

  it('a resource that is not one of our servers: invalid_target', async () => {
    const clientId = await registerClient(base);
    for (const resource of ['https://elsewhere.example/mcp/market-intelligence', `${base}/mcp/no-such-server`, `${base}/v1/catalog`]) {
      const back = new URL((await authorize(authorizationUrl(base, { clientId, challenge: pkcePair().challenge, resource }))).location!);
      expect(back.searchParams.get('error'), resource).toBe('invalid_target');
    }
    await nothingCreated();
  });
});

describe('token endpoint', () => {
  async function codeFor(clientId: string) {
    const { verifier, challenge } = pkcePair();
    const walk = await openConsent(base, authorizationUrl(base, { clientId, challenge, resource: `${base}/mcp/market-intelligence` }), privateKeyToAccount(generatePrivateKey()));
    const code = (await approve(walk)).searchParams.get('code')!;
    return { code, verifier };
  }
  const exchange = (clientId: string, code: string, verifier: string, extra: Record<string, string> = {}) =>
    tokenRequest(base, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URL, client_id: clientId, code_verifier: verifier, ...extra });

  it('a replayed code is invalid_grant, and the replay revokes what the first use issued', async () => {
    const clientId = await registerClient(base);
    const { code, verifier } = await codeFor(clientId);
    const first = await exchange(clientId, code, verifier);
    expect(first.status).toBe(200);
    const again = await exchange(clientId, code, verifier);
    expect(again.status).toBe(400);
    expectRfcError(again.body, 'invalid_grant');
    const refresh = await tokenRequest(base, { grant_type: 'refresh_token', refresh_token: String(first.body.refresh_token), client_id: clientId });
    expectRfcError(refresh.body, 'invalid_grant');
  });

  it('a code used by another client is invalid_grant', async () => {
    const owner = await registerClient(base);
    const thief = await registerClient(base);
    const { code, verifier } = await codeFor(owner);
    before = await counts();
    const res = await exchange(thief, code, verifier);
    expect(res.status).toBe(400);
    expectRfcError(res.body, 'invalid_grant');
    await nothingCreated();
  });

  it('an expired code is invalid_grant', async () => {
    const clientId = await registerClient(base);
    const { code, verifier } = await codeFor(clientId);
    await db.query(`UPDATE oauth_artifacts SET expires_at = now() - interval '1 second' WHERE model = 'AuthorizationCode'`);
    before = await counts();
    const res = await exchange(clientId, code, verifier);
    expectRfcError(res.body, 'invalid_grant');
    await nothingCreated();
  });

  it('a wrong or missing code_verifier is refused', async () => {
    const clientId = await registerClient(base);
    const { code } = await codeFor(clientId);
    before = await counts();
    const wrong = await exchange(clientId, code, pkcePair().verifier);
    expectRfcError(wrong.body, 'invalid_grant');
    const { code: code2 } = await codeFor(clientId);
    before = await counts();
    const missing = await tokenRequest(base, { grant_type: 'authorization_code', code: code2, redirect_uri: REDIRECT_URL, client_id: clientId });
    expectRfcError(missing.body, /invalid_(grant|request)/);
    await nothingCreated();
  });

  it('a resource other than the one authorized is invalid_target', async () => {
    const clientId = await registerClient(base);
    const { code, verifier } = await codeFor(clientId);
    before = await counts();
    const res = await exchange(clientId, code, verifier, { resource: `${base}/mcp/price-prediction` });
    expect(res.status).toBe(400);
    expectRfcError(res.body, 'invalid_target');
    await nothingCreated();
  });

  it('garbage: unknown grant type, unknown refresh token, an empty body', async () => {
    expectRfcError((await tokenRequest(base, { grant_type: 'password', username: 'a', password: 'b' })).body, /unsupported_grant_type|invalid_request/);
    expectRfcError((await tokenRequest(base, { grant_type: 'refresh_token', refresh_token: 'nope', client_id: await registerClient(base) })).body, 'invalid_grant');
    const empty = await fetch(`${base}/oauth/token`, { method: 'POST' });
    expect(empty.status).toBe(400);
    expectRfcError(await empty.json(), /invalid_request|invalid_client/);
    await nothingCreated();
  });
});

describe('dynamic client registration', () => {
  it.each([
    ['no redirect URIs', { redirect_uris: [] }],
    ['a private_key_jwt client without keys', { token_endpoint_auth_method: 'private_key_jwt' }],
    ['an implicit response type', { response_types: ['token'] }],
    ['a scope that is not ours', { scope: 'admin' }],
    // A web client (the default application type) on plain http off loopback: codes in the clear.
    ['a plain-http redirect URI off loopback (web client)', { redirect_uris: ['http://assistant.example/callback'] }],
    ['a plain-http redirect URI off loopback (native client)', { redirect_uris: ['http://192.0.2.1/callback'], application_type: 'native' }],
    ['eleven redirect URIs', { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://assistant.example/cb/${i}`) }],
    ['a thousand redirect URIs', { redirect_uris: Array.from({ length: 1000 }, (_, i) => `https://assistant.example/cb/${i}`) }],
    ['a NUL in client_name', { client_name: 'Assistant\u0000' }],
    ['a NUL in client_uri', { client_uri: 'https://assistant.example/\u0000' }],
    ['a NUL in a redirect URI', { redirect_uris: ['https://assistant.example/cb\u0000'] }],
    ['a NUL in contacts', { contacts: ['a\u0000@example.com'] }],
    ['a control character in client_name', { client_name: 'Assis\u001btant' }],
    ['a client_name of 10,000 characters', { client_name: 'x'.repeat(10_000) }],
  ])('refuses %s with invalid_client_metadata or invalid_redirect_uri', async (_name, extra) => {
    const res = await fetch(`${base}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'x', redirect_uris: [REDIRECT_URL], token_endpoint_auth_method: 'none', ...extra }),
    });
    expect(res.status).toBe(400);
    expectRfcError(await res.json(), /invalid_client_metadata|invalid_redirect_uri/);
    await nothingCreated();
  });

  it.each([
    ['http on localhost', ['http://localhost:33418/callback']],
    ['http on 127.0.0.1', ['http://127.0.0.1:33418/callback']],
    ['http on [::1]', ['http://[::1]:33418/callback']],
    ['https anywhere, ten of them', Array.from({ length: 10 }, (_, i) => `https://assistant.example/cb/${i}`)],
  ])('accepts a web client with redirect URIs %s (the control for the cases above)', async (_name, uris) => {
    const res = await fetch(`${base}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Assistant', redirect_uris: uris, token_endpoint_auth_method: 'none' }),
    });
    expect(res.status).toBe(201);
  });

  it('refuses a body that is not JSON', async () => {
    const res = await fetch(`${base}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{not json' });
    expect(res.status).toBe(400);
    expectRfcError(await res.json(), /invalid_request|invalid_client_metadata/);
  });

  it('registrations past OAUTH_REGISTER_LIMIT a minute from one address get 429 with Retry-After, and register no client', async () => {
    const limited = await startTestService(db.url, { OAUTH_REGISTER_LIMIT: '3' });
    try {
      const clients = async () => Number((await db.query<{ n: string }>("SELECT count(*) AS n FROM oauth_artifacts WHERE model = 'Client'")).rows[0]!.n);
      const register = () =>
        fetch(`${limited.url}/oauth/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ client_name: 'flood', redirect_uris: [REDIRECT_URL], token_endpoint_auth_method: 'none' }),
        });
      const start = await clients();
      for (let i = 0; i < 3; i++) expect((await register()).status).toBe(201);
      const refused = await register();
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expectRfcError(await refused.json(), 'temporarily_unavailable');
      expect(await clients()).toBe(start + 3);
      // The limit is on registration alone: the metadata and other endpoints still answer.
      expect((await fetch(`${limited.url}/.well-known/oauth-authorization-server`)).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});

describe('client ID metadata documents', () => {
  const cimdId = (path: string) => `https://127.0.0.1:${host.port}${path}`;
  const doc = (path: string, overrides: Record<string, unknown> = {}) =>
    JSON.stringify({ client_id: cimdId(path), client_name: 'Doc', redirect_uris: [REDIRECT_URL], token_endpoint_auth_method: 'none', ...overrides });

  async function authorizeWith(path: string, on = service) {
    const url = authorizationUrl(on.url, { clientId: cimdId(path), challenge: pkcePair().challenge });
    return navigate(new CookieClient(on.url), url.href);
  }

  it('a valid document works (the control for the cases below)', async () => {
    documents['/ok.json'] = { body: doc('/ok.json') };
    const res = await authorizeWith('/ok.json');
    expect(res.status).toBe(303);
    expect(res.location).toMatch(/\/api\/oauth\/interaction\//);
  });

  it.each([
    ['that is unreachable', '/missing.json', undefined, /invalid_client/],
    ['that is not JSON', '/html.json', () => ({ type: 'text/html', body: '<html>hello</html>' }), /invalid_client/],
    ['over the size limit', '/big.json', () => ({ body: doc('/big.json', { client_name: 'x'.repeat(10_000) }) }), /invalid_client/],
    ['whose client_id differs from its URL', '/other.json', () => ({ body: doc('/other.json', { client_id: cimdId('/somewhere-else.json') }) }), /invalid_client/],
    ['that names a client secret', '/secret.json', () => ({ body: doc('/secret.json', { token_endpoint_auth_method: 'client_secret_post' }) }), /invalid_client/],
  ])('a document %s: 400 in the RFC format', async (_name, path, served, error) => {
    if (served) documents[path] = served();
    const res = await authorizeWith(path);
    expect(res.status).toBe(400);
    expectRfcError(errorOf(res.body), error);
    await nothingCreated();
  });

  // The development flag lets exactly localhost, 127.0.0.1 and [::1] through (127.1 is 127.0.0.1):
  // those are checked on the service without it; every other address on both.
  it.each([
    ['0.0.0.0', (port: number) => `https://0.0.0.0:${port}/doc.json`, true],
    ['an IPv4-mapped loopback ([::ffff:127.0.0.1])', (port: number) => `https://[::ffff:127.0.0.1]:${port}/doc.json`, true],
    ['an IPv4-mapped loopback in hex ([::ffff:7f00:1])', (port: number) => `https://[::ffff:7f00:1]:${port}/doc.json`, true],
    ['another loopback address (127.0.0.2)', (port: number) => `https://127.0.0.2:${port}/doc.json`, true],
    ['an IPv4-compatible loopback ([::127.0.0.1])', (port: number) => `https://[::127.0.0.1]:${port}/doc.json`, true],
    ['a loopback in shorthand (127.1)', (port: number) => `https://127.1:${port}/doc.json`, false],
    ['IPv6 loopback ([::1])', (port: number) => `https://[::1]:${port}/doc.json`, false],
  ])('a document at %s is refused before any connection is made (400 invalid_client)', async (_name, idAt, alsoWithFlag) => {
    // A listener on every local address: any connection the service makes to this machine shows up here.
    const sockets: net.Socket[] = [];
    const trap = net.createServer((socket) => sockets.push(socket.destroy()));
    await new Promise<void>((resolve) => trap.listen(0, '::', resolve));
    const port = (trap.address() as net.AddressInfo).port;
    try {
      for (const on of alsoWithFlag ? [strict, service] : [strict]) {
        const url = authorizationUrl(on.url, { clientId: idAt(port), challenge: pkcePair().challenge });
        const res = await navigate(new CookieClient(on.url), url.href);
        expect(res.status).toBe(400);
        expectRfcError(errorOf(res.body), /invalid_client/);
      }
      expect(sockets).toHaveLength(0);
      await nothingCreated();
    } finally {
      await new Promise<void>((resolve) => trap.close(() => resolve()));
    }
  });

  it('fetches are limited per client address (OAUTH_CIMD_FETCH_LIMIT a minute): past it 429 temporarily_unavailable with Retry-After, and nothing more is fetched', async () => {
    const limited = await startTestService(db.url, { OAUTH_CIMD_ALLOW_LOCALHOST: '1', OAUTH_CIMD_FETCH_LIMIT: '3', TRUST_PROXY_HOPS: '1' });
    let fetched = 0;
    const counting = await startHost((req, res) => {
      fetched += 1;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ client_id: `https://127.0.0.1:${counting.port}${req.url}`, client_name: 'Doc', redirect_uris: [REDIRECT_URL], token_endpoint_auth_method: 'none' }));
    });
    try {
      const authorizeFrom = async (client: string, i: number) => {
        const url = authorizationUrl(limited.url, { clientId: `https://127.0.0.1:${counting.port}/doc-${client}-${i}.json`, challenge: pkcePair().challenge });
        const res = await fetch(url, { redirect: 'manual', headers: { accept: 'text/html', 'x-forwarded-for': client } });
        return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text() };
      };
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await authorizeFrom('198.51.100.7', i)).status);
      expect(statuses).toEqual([303, 303, 303]);
      const before = fetched;
      for (let i = 3; i < 8; i++) {
        const refused = await authorizeFrom('198.51.100.7', i);
        expect(refused.status).toBe(429);
        expectRfcError(errorOf(refused.body), 'temporarily_unavailable');
        expect(Number(refused.retryAfter)).toBeGreaterThan(0);
      }
      expect(fetched).toBe(before);
      // Another client address has its own budget.
      expect((await authorizeFrom('198.51.100.8', 0)).status).toBe(303);
    } finally {
      await counting.close();
      await limited.close();
    }
  });

  it('a document on this machine is refused without the development flag', async () => {
    documents['/strict.json'] = { body: doc('/strict.json') };
    const res = await authorizeWith('/strict.json', strict);
    expect(res.status).toBe(400);
    expectRfcError(errorOf(res.body), /invalid_client/);
    await nothingCreated();
  });
});

describe('the consent API', () => {
  it('approving a server the client did not ask for is INVALID_PARAMS and makes no connection', async () => {
    const clientId = await registerClient(base);
    const walk = await openConsent(base, authorizationUrl(base, { clientId, challenge: pkcePair().challenge, resource: `${base}/mcp/market-intelligence` }), privateKeyToAccount(generatePrivateKey()));
    before = await counts();
    const res = await walk.browser.post(`/api/oauth/interaction/${walk.uid}/approve`, { servers: ['price-prediction'] });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('INVALID_PARAMS');
    const empty = await walk.browser.post(`/api/oauth/interaction/${walk.uid}/approve`, { servers: [] });
    expect(empty.status).toBe(400);
    await nothingCreated();
  });

  it('an interaction is answered once: a second Approve makes no second connection', async () => {
    const clientId = await registerClient(base);
    const walk = await openConsent(base, authorizationUrl(base, { clientId, challenge: pkcePair().challenge }), privateKeyToAccount(generatePrivateKey()));
    const first = await walk.browser.post(`/api/oauth/interaction/${walk.uid}/approve`, { servers: walk.details.servers });
    expect(first.status).toBe(200);
    before = await counts();
    const second = await walk.browser.post(`/api/oauth/interaction/${walk.uid}/approve`, { servers: walk.details.servers });
    expect(second.status).toBe(404);
    const deny = await walk.browser.post(`/api/oauth/interaction/${walk.uid}/deny`);
    expect(deny.status).toBe(404);
    await nothingCreated();
  });

  it('approving needs a signed-in session; an interaction from another browser is not found', async () => {
    const clientId = await registerClient(base);
    const url = authorizationUrl(base, { clientId, challenge: pkcePair().challenge });
    const browser = new CookieClient(base);
    const first = await navigate(browser, url.href);
    const uid = /interaction\/([^/?]+)/.exec(first.location!)![1]!;
    const anonymous = await browser.post(`/api/oauth/interaction/${uid}/approve`, { servers: ['market-intelligence'] });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toBe('SESSION_REQUIRED');
    const stranger = await connect(base, privateKeyToAccount(generatePrivateKey()));
    before = await counts();
    const elsewhere = await stranger.browser.get(`/api/oauth/interaction/${uid}/details`);
    expect(elsewhere.status).toBe(404);
    const stolen = await stranger.browser.post(`/api/oauth/interaction/${uid}/approve`, { servers: ['market-intelligence'] });
    expect(stolen.status).toBe(404);
    await nothingCreated();
  });

  it('Deny sends the client access_denied and creates nothing', async () => {
    const clientId = await registerClient(base);
    const browser = new CookieClient(base);
    const first = await navigate(browser, authorizationUrl(base, { clientId, challenge: pkcePair().challenge }).href);
    const uid = /interaction\/([^/?]+)/.exec(first.location!)![1]!;
    await navigate(browser, first.location!);
    const denied = await browser.post(`/api/oauth/interaction/${uid}/deny`);
    expect(denied.status).toBe(200);
    const back = new URL((await navigate(browser, denied.body.redirect_to)).location!);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('st4te');
    await nothingCreated();
  });
});
