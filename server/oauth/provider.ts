// The authorization server: oidc-provider (panva), configured for OAuth 2.1 as MCP authorization
// needs it — authorization code + PKCE S256 only, Dynamic Client Registration,
// Client ID Metadata Documents, resource indicators naming /mcp/{server} (or the whole service),
// rotating refresh tokens whose reuse revokes the grant, `iss` in the authorization response.
// The library owns the protocol; this file is the glue: storage (adapter.ts), which resources and
// scopes exist, lifetimes, and where the user is sent to consent (consent.ts).
import { generateKeyPairSync, hkdfSync, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import Provider, { errors, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import type { OAuthConfig } from '../config.ts';
import type { Database } from '../db/pool.ts';
import { Limiter, retryAfterSeconds } from '../lib/limiter.ts';
import { PgAdapter } from './adapter.ts';
import { oauthErrorPage } from './error-page.ts';
import { publicFetch } from './public-fetch.ts';

/** Where the provider's routes are mounted; the issuer itself is the service's origin. */
export const OAUTH_PREFIX = '/oauth';
export const ROUTES = {
  authorization: '/authorize',
  token: '/token',
  registration: '/register',
  revocation: '/revoke',
  jwks: '/jwks',
} as const;

/** The dashboard address an interaction (sign-in and consent) is sent to. */
export const interactionPath = (uid: string) => `/api/oauth/interaction/${uid}`;

export interface ProviderDeps {
  db: Database;
  settings: OAuthConfig;
  /** The servers this deployment hosts (resource indicators and scopes name them). */
  servers: readonly string[];
  /** Believe X-Forwarded-* (behind an ingress, or set from the configured public origin). */
  trustProxy: boolean;
  onServerError?: (err: unknown) => void;
  /** Tokens were revoked (reuse detection, revocation): clears the gateway's token cache on this pod. */
  onTokensRevoked?: () => void;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The most redirect URIs one client may register (MCP clients register one or two). */
export const MAX_REDIRECT_URIS = 10;
/** The longest string a client's metadata may hold (URIs, names). */
const MAX_METADATA_STRING = 2048;
// Never meaningful in a name or a URI; NUL cannot even be stored (PostgreSQL jsonb refuses it).
// eslint-disable-next-line no-control-regex -- control characters are exactly what is matched
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/**
 * Checks a client's metadata (a registration, or a fetched metadata document) beyond the library's
 * own rules, answering 400 invalid_client_metadata / invalid_redirect_uri (RFC 7591 §3.2.2):
 * strings without control characters and of bounded length, at most MAX_REDIRECT_URIS redirect
 * URIs, and plain http only on a loopback address — the library allows it for web clients, which
 * would send authorization codes over the network in the clear.
 */
export function checkClientMetadata(metadata: Record<string, unknown>): void {
  const refuse = (description: string): never => {
    throw new errors.InvalidClientMetadata(description);
  };
  const walk = (value: unknown, path: string): void => {
    if (typeof value === 'string') {
      if (CONTROL_CHARACTER.test(value)) refuse(`${path} must not contain control characters`);
      if (value.length > MAX_METADATA_STRING) refuse(`${path} must be at most ${MAX_METADATA_STRING} characters`);
    } else if (Array.isArray(value)) {
      value.forEach((item, i) => walk(item, `${path}[${i}]`));
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        if (CONTROL_CHARACTER.test(key) || key.length > 256) refuse(`${path || 'metadata'} has an invalid member name`);
        walk(item, path ? `${path}.${key}` : key);
      }
    }
  };
  walk(metadata, '');
  const uris = metadata.redirect_uris;
  if (!Array.isArray(uris)) return;
  if (uris.length > MAX_REDIRECT_URIS) refuse(`redirect_uris must hold at most ${MAX_REDIRECT_URIS} URIs`);
  for (const uri of uris) {
    const parsed = typeof uri === 'string' ? URL.parse(uri) : null;
    if (parsed?.protocol === 'http:' && !LOOPBACK_HOSTS.has(parsed.hostname)) {
      refuse('redirect_uris must use https, or http only on a loopback address (localhost, 127.0.0.1, [::1])');
    }
  }
}

/**
 * The servers a resource indicator names, or undefined when it names none of ours: the service
 * root (`{issuer}` or `{issuer}/mcp`) means every server, `{issuer}/mcp/{server}` that one server.
 */
export function serversOfResource(issuer: string, resource: string, servers: readonly string[]): string[] | undefined {
  let url: URL;
  try {
    url = new URL(resource);
  } catch {
    return undefined;
  }
  if (url.origin !== new URL(issuer).origin || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') return undefined;
  return serversOfPath(url.pathname, servers);
}

/** The servers a token's audience covers, by its path (the origin was checked when it was issued). */
export function serversOfAudience(audience: string | null, servers: readonly string[]): string[] {
  if (!audience) return [];
  try {
    return serversOfPath(new URL(audience).pathname, servers) ?? [];
  } catch {
    return [];
  }
}

function serversOfPath(pathname: string, servers: readonly string[]): string[] | undefined {
  const path = pathname.replace(/\/+$/, '');
  if (path === '' || path === '/mcp') return [...servers];
  const match = /^\/mcp\/([a-z-]+)$/.exec(path);
  return match?.[1] && servers.includes(match[1]) ? [match[1]] : undefined;
}

/**
 * The client address of each request handed to the provider: Fastify's request.ip, with only the
 * configured proxy hops believed (the provider itself is told to trust every forwarded header).
 */
export const clientAddresses = new WeakMap<IncomingMessage, string>();

export function createProvider(issuer: string, deps: ProviderDeps, cookieKeys: string[], signingKey: JsonWebKey & { kid: string }): Provider {
  const { settings, servers, db } = deps;
  const fetchLimit = Limiter.perWindow(settings.cimdFetchLimitPerMinute, 60_000);
  const configuration: Configuration = {
    adapter: (model: string) => new PgAdapter(model, db, deps.onTokensRevoked),
    routes: ROUTES,
    jwks: { keys: [signingKey as never] },
    cookies: {
      keys: cookieKeys,
      long: { signed: true, sameSite: 'lax' },
      short: { signed: true, sameSite: 'lax' },
    },
    // Server names are scopes too (a client may register or ask for them; RFC 7591 checks them).
    scopes: ['openid', 'offline_access', ...servers],
    responseTypes: ['code'],
    // Public clients (PKCE alone) by default; a client that registers with a secret (claude.ai's
    // DCR asks for client_secret_post) gets one, and still needs PKCE.
    clientAuthMethods: ['none', 'client_secret_post', 'client_secret_basic'],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'ES256',
    },
    enabledJWA: { idTokenSigningAlgValues: ['ES256'] },
    pkce: { required: () => true },
    // Browser-based MCP clients (an inspector in a web page) call the token and registration endpoints.
    clientBasedCORS: () => true,
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    // The library calls the validator once per listed property, with the whole metadata: one
    // standard property listed makes it run for every registration and metadata document.
    extraClientMetadata: {
      properties: ['client_name'],
      validator: (_ctx, key, _value, metadata) => {
        if (key === 'client_name') checkClientMetadata(metadata as Record<string, unknown>);
      },
    },
    features: {
      devInteractions: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      userinfo: { enabled: false },
      revocation: { enabled: true },
      registration: { enabled: true, initialAccessToken: false, issueRegistrationAccessToken: false },
      clientIdMetadataDocument: {
        enabled: true,
        ack: 'draft-02',
        // Without the development flag a loopback name is refused up front; any other host must
        // resolve to public addresses only (the fetch below). Each fetch is an outbound request an
        // anonymous client chose, so they are limited per client address.
        allowFetch: async (ctx: KoaContextWithOIDC | undefined, clientId: string) => {
          if (!settings.cimdAllowLocalhost && LOOPBACK_HOSTS.has(new URL(clientId).hostname)) return false;
          const client = ctx && clientAddresses.get(ctx.req);
          const taken = client === undefined ? { ok: true as const } : fetchLimit.take(client);
          if (taken.ok) return true;
          const retry = retryAfterSeconds(taken.retryAfterMs);
          ctx!.set('retry-after', String(retry));
          const limited = new errors.CustomOIDCProviderError('temporarily_unavailable', `Too many client metadata documents fetched for this address; retry in ${retry} s.`);
          limited.status = 429;
          limited.statusCode = 429;
          throw limited;
        },
      },
      resourceIndicators: {
        enabled: true,
        // No resource named: the whole service (every server the user approves).
        defaultResource: async (_ctx, _client, oneOf) => oneOf ?? issuer,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, resource) => {
          const named = serversOfResource(issuer, resource, servers);
          if (!named) throw new errors.InvalidTarget(`the resource must be ${issuer} or ${issuer}/mcp/{server} for a server hosted here`);
          return { scope: named.join(' '), accessTokenFormat: 'opaque', accessTokenTTL: settings.accessTokenTtlSeconds };
        },
      },
    } as Configuration['features'],
    interactions: { url: async (_ctx, interaction) => interactionPath(interaction.uid) },
    // Every authorization asks the user again (no silent re-use of an earlier grant): each
    // approval is its own connection, listed and revocable on its own.
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId;
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    expiresWithSession: async () => false,
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    ttl: {
      AccessToken: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? settings.accessTokenTtlSeconds,
      AuthorizationCode: 60,
      RefreshToken: () => settings.refreshTokenTtlSeconds,
      // Extended by every refresh token issued under it (adapter.ts): the sliding lifetime.
      Grant: settings.refreshTokenTtlSeconds,
      Interaction: 600,
      Session: 3600,
      IdToken: 3600,
    },
    // An error the user's browser sees (no redirect back is safe): a page in words for a browser
    // (error-page.ts), the RFC's JSON error object for anything that does not ask for HTML.
    renderError: async (ctx, out) => {
      const body = { error: out.error, error_description: out.error_description };
      if (ctx.accepts('json', 'html') === 'html') {
        ctx.type = 'text/html; charset=utf-8';
        ctx.set('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
        ctx.body = oauthErrorPage(body);
      } else {
        ctx.type = 'application/json';
        ctx.body = body;
      }
    },
    // The development flag lets a Client ID Metadata Document live on this machine; loopback
    // test hosts have no certificate, so their https:// client_id is fetched over plain http.
    // Everything else (metadata documents, a client's jwks_uri) only from public addresses,
    // checked before connecting and pinned (public-fetch.ts).
    fetch: (input, init) => {
      const target = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
      if (settings.cimdAllowLocalhost && LOOPBACK_HOSTS.has(target.hostname)) {
        const options = { ...init } as RequestInit & { dispatcher?: unknown };
        delete options.dispatcher;
        target.protocol = 'http:';
        return globalThis.fetch(target, options);
      }
      return publicFetch(target, init);
    },
  };
  const provider = new Provider(issuer, configuration);
  provider.proxy = deps.trustProxy;
  provider.on('server_error', (_ctx, err) => deps.onServerError?.(err));
  return provider;
}

/**
 * Keys for a process: the cookie signing key — configured; else derived from the database URL,
 * a secret every replica already shares, so an authorization started on one replica can finish
 * on another; else (embedded database, one process) random — and an ES256 key for ID tokens.
 */
export function processSecrets(settings: OAuthConfig, databaseUrl: string | undefined): { cookieKeys: string[]; signingKey: JsonWebKey & { kid: string } } {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const derived = databaseUrl && Buffer.from(hkdfSync('sha256', databaseUrl, 'cryptomcp', 'oauth cookie signing', 32)).toString('base64url');
  return {
    cookieKeys: [settings.cookieSecret ?? (derived || randomBytes(32).toString('base64url'))],
    signingKey: { ...privateKey.export({ format: 'jwk' }), kid: randomBytes(8).toString('hex'), alg: 'ES256', use: 'sig' },
  };
}
