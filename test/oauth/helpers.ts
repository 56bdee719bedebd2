// What an MCP client and a person at a browser do in the OAuth flow, without a browser: the v2
// SDK's OAuthClientProvider kept in memory, and a cookie-keeping walk through authorize →
// dashboard sign-in with a real wallet signature → consent → the redirect back with the code.
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OAuthClientMetadata, OAuthClientProvider, OAuthDiscoveryState, StoredOAuthClientInformation, StoredOAuthTokens } from '@modelcontextprotocol/client';
import type { LocalAccount } from 'viem';
import { CookieClient, signInEvm } from '../dashboard/helpers.ts';

export const REDIRECT_URL = 'http://127.0.0.1:47651/callback';

/** The SDK's client-side OAuth state, in memory; `authorizationUrl` is where it sent the "user". */
export class MemoryOAuthProvider implements OAuthClientProvider {
  readonly clientMetadataUrl: string | undefined;
  authorizationUrl: URL | undefined;
  client: StoredOAuthClientInformation | undefined;
  saved: StoredOAuthTokens | undefined;
  #verifier = '';
  #discovery: OAuthDiscoveryState | undefined;

  constructor(opts: { clientMetadataUrl?: string } = {}) {
    this.clientMetadataUrl = opts.clientMetadataUrl;
  }

  get redirectUrl(): string {
    return REDIRECT_URL;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test Assistant',
      client_uri: 'https://assistant.example/',
      logo_uri: 'https://assistant.example/logo.png',
      redirect_uris: [REDIRECT_URL],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: StoredOAuthClientInformation) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: StoredOAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.#verifier = verifier;
  }
  codeVerifier() {
    return this.#verifier;
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.#discovery = state;
  }
  discoveryState() {
    return this.#discovery;
  }
}

/** A GET the way a browser navigates: one hop, no redirect followed, cookies kept in the jar. */
export async function navigate(client: CookieClient, url: string): Promise<{ status: number; location: string | null; body: string }> {
  const cookie = [...client.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const res = await fetch(new URL(url, client.base), { redirect: 'manual', headers: { accept: 'text/html', ...(cookie ? { cookie } : {}) } });
  for (const c of res.headers.getSetCookie()) {
    const [pair] = c.split(';');
    const eq = pair!.indexOf('=');
    const name = pair!.slice(0, eq);
    const value = pair!.slice(eq + 1);
    if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(c)) client.jar.delete(name);
    else client.jar.set(name, value);
  }
  return { status: res.status, location: res.headers.get('location'), body: await res.text() };
}

export interface ConsentWalk {
  browser: CookieClient;
  uid: string;
  details: { client: Record<string, unknown>; servers: string[] };
}

/** Follows the authorization URL to the consent page and signs in with the wallet there. */
export async function openConsent(base: string, authorizationUrl: URL, wallet: LocalAccount, browser = new CookieClient(base)): Promise<ConsentWalk> {
  const authorize = await navigate(browser, authorizationUrl.href);
  if (authorize.status !== 303 || !authorize.location) throw new Error(`authorize answered ${authorize.status}: ${authorize.body}`);
  const interaction = await navigate(browser, authorize.location);
  const page = interaction.location ?? '';
  const uid = /\/app\/consent\/([^/?]+)/.exec(page)?.[1];
  if (!uid) throw new Error(`the interaction did not lead to the consent page: ${interaction.status} ${page}`);
  const signIn = await signInEvm(browser, wallet);
  if (signIn.res.status >= 300) throw new Error(`sign-in failed: ${JSON.stringify(signIn.res.body)}`);
  const details = await browser.get(`/api/oauth/interaction/${uid}/details`);
  if (details.status !== 200) throw new Error(`details answered ${details.status}: ${JSON.stringify(details.body)}`);
  return { browser, uid, details: details.body };
}

/** Approves (optionally narrowed) and follows the redirect back: the client's callback URL. */
export async function approve(walk: ConsentWalk, servers = walk.details.servers): Promise<URL> {
  const res = await walk.browser.post(`/api/oauth/interaction/${walk.uid}/approve`, { servers });
  if (res.status !== 200) throw new Error(`approve answered ${res.status}: ${JSON.stringify(res.body)}`);
  const resume = await navigate(walk.browser, res.body.redirect_to);
  if (resume.status !== 303 || !resume.location) throw new Error(`resume answered ${resume.status}: ${resume.body}`);
  return new URL(resume.location);
}

/** A plain-HTTP test host on loopback (the development flag lets the service fetch from it). */
export async function startHost(handler: http.RequestListener): Promise<{ url: string; port: number; close: () => Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A token request as a client sends it (form-encoded). */
export async function tokenRequest(base: string, form: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** Dynamic Client Registration of a public client with one loopback redirect URI. */
export async function registerClient(base: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await fetch(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Raw Client',
      redirect_uris: [REDIRECT_URL],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
      ...extra,
    }),
  });
  const body = (await res.json()) as { client_id?: string };
  if (res.status !== 201 || !body.client_id) throw new Error(`registration answered ${res.status}: ${JSON.stringify(body)}`);
  return body.client_id;
}

export function authorizationUrl(base: string, p: { clientId: string; challenge: string; resource?: string | string[]; scope?: string; state?: string; redirectUri?: string }): URL {
  const url = new URL(`${base}/oauth/authorize`);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', p.clientId);
  url.searchParams.set('redirect_uri', p.redirectUri ?? REDIRECT_URL);
  url.searchParams.set('code_challenge', p.challenge);
  url.searchParams.set('code_challenge_method', 'S256');
  url.searchParams.set('state', p.state ?? 'st4te');
  if (p.scope) url.searchParams.set('scope', p.scope);
  for (const r of [p.resource ?? []].flat()) url.searchParams.append('resource', r);
  return url;
}

/** Register, authorize, sign in with the wallet, approve `servers`, exchange the code: a connection's tokens. */
export async function connect(
  base: string,
  wallet: LocalAccount,
  p: { resource?: string | string[]; scope?: string; servers?: string[]; clientId?: string } = {},
): Promise<{ clientId: string; access_token: string; refresh_token: string; browser: CookieClient; code: string }> {
  const clientId = p.clientId ?? (await registerClient(base));
  const { verifier, challenge } = pkcePair();
  const walk = await openConsent(base, authorizationUrl(base, { clientId, challenge, resource: p.resource, scope: p.scope }), wallet);
  const callback = await approve(walk, p.servers);
  const code = callback.searchParams.get('code');
  if (!code) throw new Error(`no code in ${callback.href}`);
  const token = await tokenRequest(base, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URL, client_id: clientId, code_verifier: verifier });
  if (token.status !== 200) throw new Error(`token answered ${token.status}: ${JSON.stringify(token.body)}`);
  return { clientId, access_token: String(token.body.access_token), refresh_token: String(token.body.refresh_token), browser: walk.browser, code };
}

/**
 * One HTTP request over node:http, which (unlike fetch) sends the Host header it is given: what a
 * phishing page's server does when it relays a victim's browser to this service.
 */
export function rawRequest(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: opts.method ?? 'GET', headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}
