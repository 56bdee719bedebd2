// What an MCP client and a person at a browser do in the OAuth flow, without a browser: the v2
// SDK's OAuthClientProvider kept in memory, and a cookie-keeping walk through authorize →
// dashboard sign-in with a real wallet signature → consent → the redirect back with the code.
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
