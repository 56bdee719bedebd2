// The service as its own OAuth authorization server and protected resource (DESIGN.md §5a), on
// the service's origin: protected resource metadata (RFC 9728) for the service and for each
// /mcp/{server}, authorization server metadata (RFC 8414), and the provider's endpoints under
// /oauth (authorize, token, register, revoke), handed the raw request so the library reads and
// answers it itself.
import type { IncomingMessage } from 'node:http';
import { Limiter, retryAfterSeconds } from '../lib/limiter.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type Provider from 'oidc-provider';
import type { PublicOrigins } from '../origin.ts';
import { OAUTH_PREFIX, ROUTES, clientAddresses, createProvider, processSecrets, serversOfResource, type ProviderDeps } from './provider.ts';

export interface OAuthServerDeps extends Omit<ProviderDeps, 'trustProxy'> {
  /** The service's public origin (the issuer), from configuration or the URL it listens on. */
  origins: PublicOrigins;
  /** DATABASE_URL, when set: the cookie signing key is derived from it (provider.ts processSecrets). */
  databaseUrl: string | undefined;
}

export class OAuthServer {
  readonly deps: OAuthServerDeps;
  #entry: { issuer: string; provider: Provider; handler: ReturnType<Provider['callback']> } | undefined;
  readonly #secrets: ReturnType<typeof processSecrets>;

  constructor(deps: OAuthServerDeps) {
    this.deps = deps;
    this.#secrets = processSecrets(deps.settings, deps.databaseUrl);
  }

  /** The issuer: the configured public base URL, whatever Host a request names. */
  get issuer(): string {
    return this.deps.origins.base;
  }

  get provider(): Provider {
    return this.#current().provider;
  }

  /** Built on first use: without PUBLIC_BASE_URL the issuer is known only once the server listens. */
  #current() {
    const issuer = this.issuer;
    if (this.#entry?.issuer !== issuer) {
      // The provider is told it sits behind a proxy: forward() sets the forwarded headers itself.
      const provider = createProvider(issuer, { ...this.deps, trustProxy: true }, this.#secrets.cookieKeys, this.#secrets.signingKey);
      this.#entry = { issuer, provider, handler: provider.callback() };
    }
    return this.#entry;
  }

  /**
   * The raw request as the provider may read it. The provider builds URLs (endpoints in its
   * metadata, redirects) and cookie flags from the request's host and scheme: it is given the
   * configured origin, overwriting whatever the client sent.
   */
  asIssuer(request: FastifyRequest): IncomingMessage {
    const raw = request.raw;
    const publicUrl = new URL(this.issuer);
    raw.headers.host = publicUrl.host;
    raw.headers['x-forwarded-host'] = publicUrl.host;
    raw.headers['x-forwarded-proto'] = publicUrl.protocol.slice(0, -1);
    clientAddresses.set(raw, request.ip);
    return raw;
  }

  /** Hands the request to the provider as if it had arrived at `path` under its mount. */
  forward(request: FastifyRequest, reply: FastifyReply, path: string): void {
    const { handler, issuer } = this.#current();
    const raw = request.raw as IncomingMessage & { originalUrl?: string };
    let query = raw.url?.includes('?') ? raw.url.slice(raw.url.indexOf('?')) : '';
    if (path === ROUTES.authorization) query = withDefaultScope(issuer, query, this.deps.servers);
    raw.originalUrl = `${OAUTH_PREFIX}${path}${query}`;
    raw.url = `${path}${query}`;
    this.asIssuer(request);
    reply.hijack();
    void handler(raw, reply.raw);
  }

  /** RFC 9728 metadata of one server's URL, of the all-in-one endpoint (`all`), or of the whole origin. */
  protectedResource(server: string | 'all' | undefined) {
    const issuer = this.issuer;
    const one = server !== undefined && server !== 'all';
    const servers = one ? [server] : [...this.deps.servers];
    return {
      resource: one ? `${issuer}/mcp/${server}` : server === 'all' ? `${issuer}/mcp` : issuer,
      authorization_servers: [issuer],
      scopes_supported: servers,
      bearer_methods_supported: ['header'],
      resource_name: one ? `cryptomcp ${server}` : 'cryptomcp',
      resource_documentation: `${issuer}/app/connect`,
    };
  }
}

/**
 * An authorization request that names no scope asks for the servers its resources name (the
 * library grants nothing without a scope, and many clients send only `resource`).
 */
export function withDefaultScope(issuer: string, query: string, servers: readonly string[]): string {
  const params = new URLSearchParams(query);
  if (params.has('scope') || !params.has('client_id')) return query;
  const resources = params.getAll('resource');
  const named = (resources.length > 0 ? resources : [issuer]).flatMap((r) => serversOfResource(issuer, r, servers) ?? []);
  if (named.length === 0) return query;
  params.set('scope', [...new Set(named)].join(' '));
  return `?${params.toString()}`;
}

export async function oauthRoutes(app: FastifyInstance, oauth: OAuthServer): Promise<void> {
  const notFound = (request: FastifyRequest, reply: FastifyReply) =>
    reply.code(404).send({ error: 'not_found', error_description: `no protected resource at ${request.url.split('?')[0] ?? ''}` });

  app.get('/.well-known/oauth-protected-resource', async () => oauth.protectedResource(undefined));
  // The all-in-one endpoint's own resource: a token for it covers every server the user approves.
  app.get('/.well-known/oauth-protected-resource/mcp', async () => oauth.protectedResource('all'));
  app.get<{ Params: { server: string } }>('/.well-known/oauth-protected-resource/mcp/:server', async (request, reply) => {
    if (!oauth.deps.servers.includes(request.params.server)) return notFound(request, reply);
    return oauth.protectedResource(request.params.server);
  });
  for (const url of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
    app.get(url, (request, reply) => oauth.forward(request, reply, '/.well-known/openid-configuration'));
  }

  // The provider's own endpoints: the body stays unread for the library to parse.
  await app.register(
    async (mounted) => {
      mounted.removeAllContentTypeParsers();
      mounted.addContentTypeParser('*', (_request, _payload, done) => done(null));
      const forward = (request: FastifyRequest, reply: FastifyReply) => {
        const path = (request.raw.url ?? '').split('?')[0]!.slice(OAUTH_PREFIX.length) || '/';
        oauth.forward(request, reply, path);
      };
      // Dynamic client registration takes no credential, so registrations are limited per client
      // address (in memory, per pod: it guards the clients table against floods). Hosted
      // connectors register from a few shared addresses, one registration per person
      // connecting, hence a generous default (OAUTH_REGISTER_LIMIT a minute).
      const registrations = Limiter.perWindow(oauth.deps.settings.registerLimitPerMinute, 60_000);
      const limitRegistrations = async (request: FastifyRequest, reply: FastifyReply) => {
        const taken = registrations.take(request.ip);
        if (taken.ok) return;
        const retry = retryAfterSeconds(taken.retryAfterMs);
        // The OAuth error format (RFC 7591 §3.2.2), nothing stored.
        return reply
          .code(429)
          .header('retry-after', String(retry))
          .send({ error: 'temporarily_unavailable', error_description: `Too many client registrations from this address; retry in ${retry} s.` });
      };
      mounted.post('/register', { onRequest: limitRegistrations }, forward);
      mounted.all('/*', forward);
    },
    { prefix: OAUTH_PREFIX },
  );
}
