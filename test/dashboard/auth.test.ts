// The dashboard's sign-in and session API against the real service, PostgreSQL and a local EVM
// node: SIWE (EIP-4361) with real secp256k1 signatures, an EIP-1271 contract wallet checked over
// JSON-RPC, Sign-In With Solana with a real ed25519 key, single-use nonces, sessions behind an
// httpOnly SameSite cookie, CSRF, the sign-in rate limit and wallet linking.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startDevnet, type Devnet } from '../../server/devnet/devnet.ts';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startTestService } from '../helpers/service.ts';
import { rawRequest } from '../oauth/helpers.ts';
import { CookieClient, deploySmartWallet, rpcEnv, signInEvm, signInSolana, siweMessage, solanaSign, solanaWallet } from './helpers.ts';
import { createSignInMessageText } from '@solana/wallet-standard-util';

let db: TestDatabase;
let service: RunningService;
let devnet: Devnet;

beforeAll(async () => {
  db = await createTestDatabase();
  devnet = await startDevnet();
  service = await startTestService(db.url, { ...rpcEnv(devnet.manifest.rpc_url), MCP_SERVERS: 'market-intelligence', DASHBOARD_SIGN_IN_LIMIT: '1000' });
});

afterAll(async () => {
  await service?.close();
  await devnet?.stop();
  await db?.drop();
});

const fresh = () => privateKeyToAccount(generatePrivateKey());

describe('EVM sign-in (EIP-4361)', () => {
  it('a first sign-in creates an account on the free plan with 150 credits and opens an httpOnly, SameSite=Strict session', async () => {
    const client = new CookieClient(service.url);
    const account = fresh();
    const { res } = await signInEvm(client, account);
    expect(res.status).toBe(201);
    expect(res.body.account).toMatchObject({ plan: 'free', balance: 150, created: true, status: 'active' });
    expect(res.body.account.wallets).toEqual([expect.objectContaining({ chain: 'ethereum', address: account.address.toLowerCase() })]);
    const sessionCookie = res.setCookies.find((c: string) => c.startsWith('cmcp_session='))!;
    expect(sessionCookie).toMatch(/HttpOnly/i);
    expect(sessionCookie).toMatch(/SameSite=Strict/i);
    expect(sessionCookie).toMatch(/Path=\/api/);
    // Loopback is the one place a cookie may go without Secure.
    expect(sessionCookie).not.toMatch(/Secure/i);
    const session = await client.get('/api/session');
    expect(session.status).toBe(200);
    expect(session.body.account.id).toBe(res.body.account.id);
    expect(session.body.wallet).toEqual({ family: 'evm', address: account.address.toLowerCase() });
    // Only the cookie token's hash is stored.
    const stored = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM dashboard_sessions WHERE account_id = $1', [res.body.account.id]);
    expect(stored.rows[0]!.n).toBe(1);
    const raw = client.jar.get('cmcp_session')!;
    const leak = await db.query('SELECT 1 FROM dashboard_sessions WHERE encode(token_hash, $1) = $2', ['escape', raw]);
    expect(leak.rowCount).toBe(0);
  });

  it('signing in again with the same wallet on another chain (Base) reaches the same account', async () => {
    const account = fresh();
    const first = await signInEvm(new CookieClient(service.url), account);
    const again = await signInEvm(new CookieClient(service.url), account, { chainId: 8453 });
    expect(again.res.status).toBe(200);
    expect(again.res.body.account.id).toBe(first.res.body.account.id);
    expect(again.res.body.account.created).toBe(false);
  });

  it('a replayed message (nonce already used) is refused', async () => {
    const client = new CookieClient(service.url);
    const account = fresh();
    const { res, message, signature } = await signInEvm(client, account);
    expect(res.status).toBe(201);
    // Replay with the same nonce cookie a browser would still hold, too.
    client.jar.set('cmcp_nonce', /Nonce: (\w+)/.exec(message)![1]!);
    const replay = await client.post('/api/auth/sign-in', { family: 'evm', message, signature });
    expect(replay.status).toBe(401);
    expect(replay.body.error).toMatchObject({ code: 'SIGN_IN_REJECTED', details: { reason: 'nonce_used' } });
  });

  it('of ten concurrent sign-ins with one nonce, exactly one succeeds', async () => {
    const client = new CookieClient(service.url);
    const account = fresh();
    const nonce = (await client.get('/api/auth/nonce')).body;
    const message = siweMessage(account, nonce);
    const signature = await account.signMessage({ message });
    const results = await Promise.all(Array.from({ length: 10 }, () => client.post('/api/auth/sign-in', { family: 'evm', message, signature })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, ...Array(9).fill(401)]);
    expect(new Set(results.filter((r) => r.status === 401).map((r) => r.body.error.details.reason))).toEqual(new Set(['nonce_used']));
    const sessions = await db.query('SELECT 1 FROM dashboard_sessions s JOIN wallets w ON w.account_id = s.account_id WHERE w.address = $1', [
      account.address.toLowerCase(),
    ]);
    expect(sessions.rowCount).toBe(1);
  });

  it('an expired nonce is refused, and so is a nonce this browser was not given', async () => {
    const client = new CookieClient(service.url);
    const account = fresh();
    const nonce = (await client.get('/api/auth/nonce')).body;
    await db.query(`UPDATE dashboard_nonces SET expires_at = now() - interval '1 second' WHERE nonce = $1`, [nonce.nonce]);
    const message = siweMessage(account, nonce);
    const expired = await client.post('/api/auth/sign-in', { family: 'evm', message, signature: await account.signMessage({ message }) });
    expect(expired.status).toBe(401);
    expect(expired.body.error.details.reason).toBe('nonce_expired');

    // A nonce fetched by another client (no matching cookie here) cannot be used by this one.
    const other = (await new CookieClient(service.url).get('/api/auth/nonce')).body;
    const m2 = siweMessage(account, other);
    const foreign = await client.post('/api/auth/sign-in', { family: 'evm', message: m2, signature: await account.signMessage({ message: m2 }) });
    expect(foreign.status).toBe(401);
    expect(foreign.body.error.details.reason).toBe('nonce_mismatch');
  });

  it('a signature from another address is refused, and the nonce is used up anyway', async () => {
    const client = new CookieClient(service.url);
    const claimed = fresh();
    const { res, message } = await signInEvm(client, claimed, {}, fresh());
    expect(res.status).toBe(401);
    expect(res.body.error.details.reason).toBe('bad_signature');
    const nonce = /Nonce: (\w+)/.exec(message)![1]!;
    const row = await db.query<{ used: boolean }>('SELECT used_at IS NOT NULL AS used FROM dashboard_nonces WHERE nonce = $1', [nonce]);
    expect(row.rows[0]!.used).toBe(true);
    const wallets = await db.query('SELECT 1 FROM wallets WHERE address = $1', [claimed.address.toLowerCase()]);
    expect(wallets.rowCount).toBe(0);
  });

  it('a message for another domain, another URI, an unsupported chain or stale issuance is refused', async () => {
    const account = fresh();
    const cases: [Record<string, unknown>, string][] = [
      [{ domain: 'evil.example' }, 'wrong_domain'],
      [{ uri: 'https://evil.example/login' }, 'wrong_uri'],
      [{ chainId: 10 }, 'unsupported_chain'],
      [{ issuedAt: new Date(Date.now() - 3_600_000) }, 'stale_message'],
      [{ expirationTime: new Date(Date.now() - 1000) }, 'message_expired'],
    ];
    for (const [overrides, reason] of cases) {
      const { res } = await signInEvm(new CookieClient(service.url), account, overrides);
      expect(res.status, reason).toBe(401);
      expect(res.body.error.details.reason, reason).toBe(reason);
    }
  });

  it('an EIP-1271 smart-contract wallet signs in through an isValidSignature call on the chain', async () => {
    const owner = fresh();
    const contract = await deploySmartWallet(devnet.manifest.rpc_url, owner.address);
    const client = new CookieClient(service.url);
    // The message names the contract; its owner's key signs (what a smart wallet's app does).
    const { res } = await signInEvm(client, { ...owner, address: contract } as typeof owner, {}, owner);
    expect(res.status).toBe(201);
    expect(res.body.account.wallets[0].address).toBe(contract.toLowerCase());
    // A stranger's signature is refused by the same contract.
    const bad = await signInEvm(new CookieClient(service.url), { ...owner, address: contract } as typeof owner, {}, fresh());
    expect(bad.res.status).toBe(401);
    expect(bad.res.body.error.details.reason).toBe('bad_signature');
  });
});

describe('when the chain cannot be reached', () => {
  it('a signature that is not the address\'s own ECDSA one answers 502 UPSTREAM_ERROR (not a refusal), while ordinary accounts still sign in', async () => {
    const closed = await startTestService(db.url, { ...rpcEnv('http://127.0.0.1:9'), MCP_SERVERS: 'market-intelligence', EVM_TIMEOUT_MS: '2000', DASHBOARD_SIGN_IN_LIMIT: '1000' });
    try {
      const ok = await signInEvm(new CookieClient(closed.url), fresh());
      expect(ok.res.status).toBe(201);
      const other = await signInEvm(new CookieClient(closed.url), fresh(), {}, fresh());
      expect(other.res.status).toBe(502);
      expect(other.res.body.error).toMatchObject({ code: 'UPSTREAM_ERROR', details: { provider: 'rpc:ethereum' } });
    } finally {
      await closed.close();
    }
  });
});

describe('Solana sign-in (ed25519)', () => {
  it('a Sign-In With Solana message signed with ed25519 creates an account', async () => {
    const client = new CookieClient(service.url);
    const wallet = solanaWallet();
    const { res } = await signInSolana(client, wallet);
    expect(res.status).toBe(201);
    expect(res.body.account).toMatchObject({ plan: 'free', balance: 150 });
    expect(res.body.account.wallets).toEqual([expect.objectContaining({ chain: 'solana', address: wallet.address })]);
    expect((await client.get('/api/session')).status).toBe(200);
  });

  it('a signature by another key, or a tampered message, is refused', async () => {
    const client = new CookieClient(service.url);
    const wallet = solanaWallet();
    const nonce = (await client.get('/api/auth/nonce')).body;
    const message = createSignInMessageText({
      domain: nonce.domain,
      address: wallet.address,
      uri: nonce.uri,
      version: '1',
      nonce: nonce.nonce,
      issuedAt: new Date().toISOString(),
    });
    const res = await client.post('/api/auth/sign-in', { family: 'solana', message, signature: solanaSign(solanaWallet(), message) });
    expect(res.status).toBe(401);
    expect(res.body.error.details.reason).toBe('bad_signature');
  });
});

describe('sessions and CSRF', () => {
  it('API calls need a session; sign-out ends it', async () => {
    const anonymous = new CookieClient(service.url);
    expect((await anonymous.get('/api/keys')).body.error.code).toBe('SESSION_REQUIRED');
    const client = new CookieClient(service.url);
    await signInEvm(client, fresh());
    expect((await client.get('/api/keys')).status).toBe(200);
    const token = client.jar.get('cmcp_session')!;
    const out = await client.post('/api/auth/sign-out');
    expect(out.status).toBe(200);
    // Even a client that kept the old cookie is signed out.
    client.jar.set('cmcp_session', token);
    expect((await client.get('/api/keys')).status).toBe(401);
  });

  it('an expired session is refused', async () => {
    const client = new CookieClient(service.url);
    const { res } = await signInEvm(client, fresh());
    expect((await client.get('/api/session')).status).toBe(200);
    await db.query(`UPDATE dashboard_sessions SET expires_at = now() - interval '1 second' WHERE account_id = $1`, [res.body.account.id]);
    const after = await client.get('/api/session');
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('SESSION_REQUIRED');
  });

  it('a mutating request without the CSRF token, with a wrong one, or from another origin is refused and changes nothing', async () => {
    const client = new CookieClient(service.url);
    const { res } = await signInEvm(client, fresh());
    const accountId = res.body.account.id;
    const csrf = client.csrf!;
    client.csrf = undefined;
    const none = await client.post('/api/keys', { name: 'x' });
    expect(none.status).toBe(403);
    expect(none.body.error).toMatchObject({ code: 'CSRF_REJECTED', details: { reason: 'token' } });
    const wrong = await client.post('/api/keys', { name: 'x' }, { 'x-csrf-token': 'f'.repeat(csrf.length) });
    expect(wrong.status).toBe(403);
    // A cross-site page: right cookie (a lax browser would send it), even the right token, wrong origin.
    const crossSite = await client.post('/api/keys', { name: 'x' }, { 'x-csrf-token': csrf, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' });
    expect(crossSite.status).toBe(403);
    expect(crossSite.body.error.details.reason).toBe('origin');
    const keys = await db.query('SELECT 1 FROM api_keys WHERE account_id = $1', [accountId]);
    expect(keys.rowCount).toBe(0);
    const ok = await client.post('/api/keys', { name: 'x' }, { 'x-csrf-token': csrf, origin: service.url });
    expect(ok.status).toBe(201);
  });
});

describe('wallet linking', () => {
  it('a signed-in account links a Solana wallet; signing in with it reaches the same account', async () => {
    const client = new CookieClient(service.url);
    const { res } = await signInEvm(client, fresh());
    const sol = solanaWallet();
    const link = await signInSolana(client, sol, '/api/wallets/nonce', '/api/wallets');
    expect(link.res.status).toBe(201);
    expect(link.res.body.wallets.map((w: { chain: string }) => w.chain)).toEqual(['ethereum', 'solana']);
    const viaSolana = await signInSolana(new CookieClient(service.url), sol);
    expect(viaSolana.res.status).toBe(200);
    expect(viaSolana.res.body.account.id).toBe(res.body.account.id);
  });

  it('a wallet that belongs to another account cannot be linked', async () => {
    const taken = fresh();
    await signInEvm(new CookieClient(service.url), taken);
    const client = new CookieClient(service.url);
    await signInEvm(client, fresh());
    const nonce = (await client.get('/api/wallets/nonce')).body;
    const message = siweMessage(taken, nonce);
    const res = await client.post('/api/wallets', { family: 'evm', message, signature: await taken.signMessage({ message }) });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('WALLET_IN_USE');
  });

  it('a sign-in nonce cannot be used to link, nor a link nonce of another session', async () => {
    const client = new CookieClient(service.url);
    await signInEvm(client, fresh());
    const other = new CookieClient(service.url);
    await signInEvm(other, fresh());
    const foreign = (await other.get('/api/wallets/nonce')).body;
    const w = fresh();
    const message = siweMessage(w, foreign);
    const res = await client.post('/api/wallets', { family: 'evm', message, signature: await w.signMessage({ message }) });
    expect(res.status).toBe(401);
    expect(res.body.error.details.reason).toBe('nonce_unknown');
  });
});

describe('sign-in rate limit', () => {
  it('past the limit a client gets 429 with Retry-After, recorded in PostgreSQL for every pod', async () => {
    const limited = await startTestService(db.url, { ...rpcEnv(devnet.manifest.rpc_url), MCP_SERVERS: 'market-intelligence', DASHBOARD_SIGN_IN_LIMIT: '3', DASHBOARD_SIGN_IN_WINDOW_S: '600' });
    try {
      // Earlier tests' attempts from this address count too: clear them for a clean budget.
      await db.query('DELETE FROM dashboard_sign_in_attempts');
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await signInEvm(new CookieClient(limited.url), fresh())).res.status);
      expect(statuses).toEqual([201, 201, 201]);
      const blocked = (await signInEvm(new CookieClient(limited.url), fresh())).res;
      expect(blocked.status).toBe(429);
      expect(blocked.body.error.code).toBe('RATE_LIMITED');
      expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await limited.close();
      await db.query('DELETE FROM dashboard_sign_in_attempts');
    }
  });
});

describe('behind a proxy with a configured public origin', () => {
  it('messages must name the configured origin, and the session cookie is Secure off localhost', async () => {
    const proxied = await startTestService(db.url, { MCP_SERVERS: 'market-intelligence', DASHBOARD_ORIGIN: 'https://dash.example.com', TRUST_PROXY_HOPS: '1', DASHBOARD_SIGN_IN_LIMIT: '1000' });
    try {
      const client = new CookieClient(proxied.url);
      const nonce = (await client.get('/api/auth/nonce')).body;
      expect(nonce).toMatchObject({ domain: 'dash.example.com', uri: 'https://dash.example.com' });
      expect(client.jar.has('cmcp_nonce')).toBe(true);
      const account = fresh();
      const message = siweMessage(account, nonce);
      const res = await client.post('/api/auth/sign-in', { family: 'evm', message, signature: await account.signMessage({ message }) }, { origin: 'https://dash.example.com' });
      expect(res.status).toBe(201);
      expect(res.setCookies.find((c: string) => c.startsWith('cmcp_session='))).toMatch(/; Secure/);
      // The loopback address the request really came to is not the dashboard's domain.
      const local = await signInEvm(new CookieClient(proxied.url), fresh(), { domain: new URL(proxied.url).host, uri: proxied.url });
      expect(local.res.body.error.details.reason).toBe('wrong_domain');
    } finally {
      await proxied.close();
    }
  });

  it('the sign-in rate limit counts each forwarded client apart', async () => {
    const proxied = await startTestService(db.url, { MCP_SERVERS: 'market-intelligence', TRUST_PROXY_HOPS: '1', DASHBOARD_SIGN_IN_LIMIT: '2' });
    try {
      // A new browser each time: a browser already signed in would be offered to link the new wallet instead.
      const forwarded = (ip: string) => {
        return async () => {
          const c = new CookieClient(proxied.url);
          const nonce = (await c.get('/api/auth/nonce', { 'x-forwarded-for': ip })).body;
          const account = fresh();
          const message = siweMessage(account, nonce);
          return (await c.post('/api/auth/sign-in', { family: 'evm', message, signature: await account.signMessage({ message }) }, { 'x-forwarded-for': ip })).status;
        };
      };
      const a = forwarded('203.0.113.7');
      const b = forwarded('198.51.100.9');
      expect([await a(), await a(), await a()]).toEqual([201, 201, 429]);
      expect(await b()).toBe(201);
      const rows = await db.query<{ client: string; n: number }>(
        `SELECT client, count(*)::int AS n FROM dashboard_sign_in_attempts WHERE client IN ('203.0.113.7', '198.51.100.9') GROUP BY client ORDER BY client`,
      );
      expect(rows.rows).toEqual([
        { client: '198.51.100.9', n: 1 },
        { client: '203.0.113.7', n: 3 },
      ]);
    } finally {
      await proxied.close();
    }
  });
});

describe('a forged X-Forwarded-For (a pod reachable directly) cannot rotate the sign-in limits away', () => {
  // Each attempt names a new client address, as an attacker can when a pod is reachable without the ingress.
  const from = (base: string, ip: string) => {
    const c = new CookieClient(base);
    return async (account = fresh()) => {
      const nonce = (await c.get('/api/auth/nonce', { 'x-forwarded-for': ip })).body;
      const message = siweMessage(account, nonce);
      const res = await c.post('/api/auth/sign-in', { family: 'evm', message, signature: await account.signMessage({ message }) }, { 'x-forwarded-for': ip });
      return res;
    };
  };

  it('past DASHBOARD_SIGN_IN_GLOBAL_LIMIT, sign-ins from every address wait (429 RATE_LIMITED, scope service), however many addresses are named', async () => {
    const s = await startTestService(db.url, { MCP_SERVERS: 'market-intelligence', TRUST_PROXY_HOPS: '1', DASHBOARD_SIGN_IN_LIMIT: '2', DASHBOARD_SIGN_IN_GLOBAL_LIMIT: '5' });
    try {
      // One client past its own limit: its refused attempts do not eat the shared budget.
      const own: number[] = [];
      for (let i = 0; i < 6; i++) own.push((await from(s.url, '203.0.113.99')()).status);
      expect(own).toEqual([201, 201, 429, 429, 429, 429]);
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await from(s.url, `203.0.113.${100 + i}`)()).status);
      expect(statuses).toEqual([201, 201, 201]);
      const refused = await from(s.url, '203.0.113.200')();
      expect(refused.status).toBe(429);
      expect(refused.body.error).toMatchObject({ code: 'RATE_LIMITED', details: { scope: 'service', limit: 5 } });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await s.close();
    }
  });

  it('past DASHBOARD_SIGN_IN_WALLET_LIMIT, the same wallet is refused from any address (429, scope wallet), and other wallets are not', async () => {
    const s = await startTestService(db.url, { MCP_SERVERS: 'market-intelligence', TRUST_PROXY_HOPS: '1', DASHBOARD_SIGN_IN_LIMIT: '1000', DASHBOARD_SIGN_IN_WALLET_LIMIT: '2' });
    try {
      const wallet = fresh();
      expect((await from(s.url, '198.51.100.21')(wallet)).status).toBe(201);
      expect((await from(s.url, '198.51.100.22')(wallet)).status).toBe(200);
      const refused = await from(s.url, '198.51.100.23')(wallet);
      expect(refused.status).toBe(429);
      expect(refused.body.error).toMatchObject({ code: 'RATE_LIMITED', details: { scope: 'wallet', limit: 2 } });
      expect(refused.setCookies.some((c: string) => c.startsWith('cmcp_session='))).toBe(false);
      expect((await from(s.url, '198.51.100.23')()).status).toBe(201);
    } finally {
      await s.close();
    }
  });
});

describe('nonce issuance', () => {
  it('is limited per client address (a flood of nonce requests gets 429 RATE_LIMITED, nothing more is stored)', async () => {
    // A sign-in budget of 10 allows max(30, 2 × 10) = 30 nonces a minute.
    const flood = await startTestService(db.url, { MCP_SERVERS: 'market-intelligence', TRUST_PROXY_HOPS: '1', DASHBOARD_SIGN_IN_LIMIT: '10' });
    try {
      const client = new CookieClient(flood.url);
      const ip = { 'x-forwarded-for': '192.0.2.44' };
      const before = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM dashboard_nonces')).rows[0]!.n;
      const statuses: number[] = [];
      for (let i = 0; i < 31; i++) statuses.push((await client.get('/api/auth/nonce', ip)).status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(30);
      const refused = await client.get('/api/auth/nonce', ip);
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('RATE_LIMITED');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      const after = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM dashboard_nonces')).rows[0]!.n;
      expect(after - before).toBe(30);
      // Another client is not affected.
      expect((await client.get('/api/auth/nonce', { 'x-forwarded-for': '192.0.2.45' })).status).toBe(200);
    } finally {
      await flood.close();
    }
  });
});

describe('Host-header phishing: the sign-in domain comes from configuration, never from the request', () => {
  // A phishing page at evil.example relays its visitor's requests here naming its own host. The
  // victim's wallet shows an ordinary message for the page it is on (evil.example), which would
  // open a session on the victim's account if the service took its domain from the request.
  async function phish(base: string, forged: Record<string, string>, forgedOrigin: string) {
    const nonceRes = await rawRequest(`${base}/api/auth/nonce`, { headers: forged });
    expect(nonceRes.status).toBe(200);
    const nonce = JSON.parse(nonceRes.body) as { nonce: string; domain: string; uri: string };
    const cookie = [nonceRes.headers['set-cookie'] ?? []].flat().map((c) => c.split(';')[0]).join('; ');
    const victim = fresh();
    const message = siweMessage(victim, { nonce: nonce.nonce, domain: new URL(forgedOrigin).host, uri: forgedOrigin });
    const signature = await victim.signMessage({ message });
    const res = await rawRequest(`${base}/api/auth/sign-in`, {
      method: 'POST',
      headers: { ...forged, cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ family: 'evm', message, signature }),
    });
    const wallets = await db.query('SELECT 1 FROM wallets WHERE address = $1', [victim.address.toLowerCase()]);
    return { nonce, res, body: JSON.parse(res.body) as { error?: { code: string; details: { reason?: string } } }, accountCreated: wallets.rowCount! > 0 };
  }

  it('a forged Host: the nonce names the service, and the message signed for evil.example is refused (401 wrong_domain), no session, no account', async () => {
    const { nonce, res, body, accountCreated } = await phish(service.url, { host: 'evil.example' }, 'http://evil.example');
    expect(res.status).toBe(401);
    expect(body.error).toMatchObject({ code: 'SIGN_IN_REJECTED', details: { reason: 'wrong_domain' } });
    expect([res.headers['set-cookie'] ?? []].flat().some((c) => c.startsWith('cmcp_session='))).toBe(false);
    expect(accountCreated).toBe(false);
    expect(nonce).toMatchObject({ domain: new URL(service.publicBaseUrl).host, uri: service.publicBaseUrl });
  });

  it('behind a trusted proxy, a forged X-Forwarded-Host/-Proto is refused the same way', async () => {
    const proxied = await startTestService(db.url, { MCP_SERVERS: 'market-intelligence', TRUST_PROXY_HOPS: '1', DASHBOARD_SIGN_IN_LIMIT: '1000' });
    try {
      const forged = { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.50' };
      const { nonce, res, body, accountCreated } = await phish(proxied.url, forged, 'https://evil.example');
      expect(res.status).toBe(401);
      expect(body.error).toMatchObject({ code: 'SIGN_IN_REJECTED', details: { reason: 'wrong_domain' } });
      expect(accountCreated).toBe(false);
      expect(nonce).toMatchObject({ domain: new URL(proxied.publicBaseUrl).host, uri: proxied.publicBaseUrl });
    } finally {
      await proxied.close();
    }
  });
});
