// The consent step and Connected apps, in the dashboard's JSON API (/api). The authorization
// server sends the browser to /api/oauth/interaction/{uid} with a cookie bound to that path, so
// only the browser that started the authorization can see or answer it. That address forwards to
// the dashboard's consent page (/app/consent/{uid}), which shows the wallet sign-in, then the
// client and the servers it asks for; Approve (signed in, CSRF-checked) makes a connection — the
// key-like record the gateway meters — and a grant naming the chosen servers; Deny answers the
// client `access_denied`.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type Provider from 'oidc-provider';
import { z } from 'zod';
import type { Database } from '../db/pool.ts';
import { ApiError } from '../errors.ts';
import type { KeyResolver } from '../keys/resolver.ts';
import { serversOfResource } from './provider.ts';
import type { OAuthServer } from './server.ts';
import { connectionCreate, connectionListByAccount, connectionRevoke, type Connection } from './store.ts';
import { credentialStatus } from '../lib/credentials.ts';

type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;

const OIDC_SCOPES = new Set(['openid', 'offline_access']);

const ApproveBody = z.object({ servers: z.array(z.string().min(1).max(64)).min(1).max(64) }).strict();

export interface ConsentDeps {
  db: Database;
  oauth: OAuthServer;
  /** The gateway's token lookups, cleared on this pod when a connection is revoked. */
  tokens: KeyResolver | undefined;
  /**
   * Runs a revocation (given the Database to run it on) together with its audit row, so both
   * commit or neither (the dashboard's audit log); without it the revocation runs alone.
   */
  auditRevoke?: (request: FastifyRequest, revoke: (tx: Database) => Promise<Connection>) => Promise<Connection>;
}

/** The interaction the browser's cookie names, which must be the one in the address. */
async function interactionOf(oauth: OAuthServer, request: FastifyRequest<{ Params: { uid: string } }>, reply: FastifyReply): Promise<{ provider: Provider; interaction: Interaction }> {
  const provider = oauth.provider;
  let interaction: Interaction;
  try {
    interaction = await provider.interactionDetails(oauth.asIssuer(request), reply.raw);
  } catch (err) {
    if ((err as { name?: string }).name === 'SessionNotFound') throw interactionGone(request.params.uid);
    throw err;
  }
  if (interaction.uid !== request.params.uid) throw interactionGone(request.params.uid);
  // Answered already (a second click, another tab): one approval makes one connection.
  if (interaction.result && request.method === 'POST') throw interactionGone(request.params.uid);
  return { provider, interaction };
}

/**
 * The client an interaction names. A metadata document client is fetched again once its cache
 * lapses; one that no longer resolves ends the request rather than the page failing.
 */
async function clientOf(provider: Provider, interaction: Interaction, uid: string) {
  const client = await provider.Client.find(String(interaction.params.client_id)).catch(() => undefined);
  if (!client) throw interactionGone(uid);
  return client;
}

function interactionGone(uid: string): ApiError {
  return new ApiError('NOT_FOUND', 'This authorization request has expired, was already answered, or was started in another browser. Start again from your app.', {
    interaction: uid,
  });
}

function scopeTokens(interaction: Interaction): string[] {
  const scope = interaction.params.scope;
  return typeof scope === 'string' ? scope.split(' ').filter(Boolean) : [];
}

function resourcesOf(interaction: Interaction, issuer: string): string[] {
  const resource = interaction.params.resource;
  if (typeof resource === 'string') return [resource];
  if (Array.isArray(resource)) return resource.filter((r): r is string => typeof r === 'string');
  return [issuer];
}

/** The servers a request asks for: those its resources name, narrowed by server names in its scope. */
function requestedServers(interaction: Interaction, issuer: string, servers: readonly string[]): string[] {
  const byResource = new Set(resourcesOf(interaction, issuer).flatMap((r) => serversOfResource(issuer, r, servers) ?? []));
  const named = scopeTokens(interaction).filter((s) => byResource.has(s));
  return named.length > 0 ? servers.filter((s) => named.includes(s)) : servers.filter((s) => byResource.has(s));
}

export function consentPublicRoutes(app: FastifyInstance, deps: ConsentDeps): void {
  const { oauth } = deps;

  // Where the authorization server sends the browser: on to the dashboard's consent page.
  app.get<{ Params: { uid: string } }>('/oauth/interaction/:uid', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    return reply.redirect(`/app/consent/${encodeURIComponent(request.params.uid)}`, 303);
  });

  app.get<{ Params: { uid: string } }>('/oauth/interaction/:uid/details', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const { provider, interaction } = await interactionOf(oauth, request, reply);
    const clientId = String(interaction.params.client_id);
    const client = await clientOf(provider, interaction, request.params.uid);
    const meta = client.metadata();
    const redirectUri = typeof interaction.params.redirect_uri === 'string' ? interaction.params.redirect_uri : (client.redirectUris?.[0] ?? null);
    return {
      uid: interaction.uid,
      client: {
        client_id: clientId,
        name: typeof meta.client_name === 'string' ? meta.client_name : null,
        uri: typeof meta.client_uri === 'string' ? meta.client_uri : null,
        logo_uri: typeof meta.logo_uri === 'string' ? meta.logo_uri : null,
        // A URL client_id (Client ID Metadata Document) is the client's own web address.
        registration: /^https:\/\//.test(clientId) ? 'metadata_document' : 'dynamic',
        redirect_host: redirectUri ? safeHost(redirectUri) : null,
      },
      servers: requestedServers(interaction, oauth.issuer, oauth.deps.servers),
      expires_at: new Date(interaction.exp * 1000).toISOString(),
    };
  });

  app.post<{ Params: { uid: string } }>('/oauth/interaction/:uid/deny', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const { provider } = await interactionOf(oauth, request, reply);
    const redirectTo = await provider.interactionResult(
      oauth.asIssuer(request),
      reply.raw,
      { error: 'access_denied', error_description: 'The user denied the request.' },
      { mergeWithLastSubmission: false },
    );
    return { redirect_to: redirectTo };
  });
}

export function consentSessionRoutes(authed: FastifyInstance, deps: ConsentDeps, accountOf: (request: FastifyRequest) => string): void {
  const { oauth, db } = deps;

  authed.post<{ Params: { uid: string } }>('/oauth/interaction/:uid/approve', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const parsed = ApproveBody.safeParse(request.body ?? {});
    if (!parsed.success) {
      throw new ApiError('INVALID_PARAMS', 'Choose at least one server.', {
        issues: parsed.error.issues.map((i) => ({ path: i.path.join('.') || 'servers', message: i.message })),
      });
    }
    const { provider, interaction } = await interactionOf(oauth, request, reply);
    const issuer = oauth.issuer;
    const servers = oauth.deps.servers;
    const requested = requestedServers(interaction, issuer, servers);
    const chosen = requested.filter((s) => parsed.data.servers.includes(s));
    const extra = parsed.data.servers.filter((s) => !requested.includes(s));
    if (extra.length > 0 || chosen.length === 0) {
      throw new ApiError('INVALID_PARAMS', 'Choose among the servers the app asked for.', {
        issues: [{ path: 'servers', message: `expected a non-empty subset of ${requested.join(', ')}` }],
      });
    }

    const accountId = accountOf(request);
    const clientId = String(interaction.params.client_id);
    const client = await clientOf(provider, interaction, request.params.uid);
    const grant = new provider.Grant({ accountId, clientId });
    const scopes = scopeTokens(interaction);
    // Scopes the provider knows (openid, offline_access, server names): granted, or refused when
    // they name a server the user unticked, so the library does not ask again.
    const granted = scopes.filter((s) => OIDC_SCOPES.has(s) || chosen.includes(s));
    const refusedScopes = scopes.filter((s) => servers.includes(s) && !chosen.includes(s));
    if (granted.length > 0) grant.addOIDCScope(granted.join(' '));
    if (refusedScopes.length > 0) grant.rejectOIDCScope(refusedScopes.join(' '));
    for (const resource of resourcesOf(interaction, issuer)) {
      const covered = serversOfResource(issuer, resource, servers) ?? [];
      const allowed = covered.filter((s) => chosen.includes(s));
      const refused = scopes.filter((s) => covered.includes(s) && !chosen.includes(s));
      if (allowed.length > 0) grant.addResourceScope(resource, allowed.join(' '));
      if (refused.length > 0) grant.rejectResourceScope(resource, refused.join(' '));
    }
    const grantId = await grant.save();
    const meta = client.metadata();
    await connectionCreate(db, {
      grantId,
      accountId,
      clientId,
      clientName: typeof meta.client_name === 'string' ? meta.client_name.slice(0, 256) : undefined,
      clientUri: typeof meta.client_uri === 'string' ? meta.client_uri.slice(0, 2048) : undefined,
      logoUri: typeof meta.logo_uri === 'string' ? meta.logo_uri.slice(0, 2048) : undefined,
      servers: chosen,
      lifetimeSeconds: oauth.deps.settings.refreshTokenTtlSeconds,
    });
    const redirectTo = await provider.interactionResult(
      oauth.asIssuer(request),
      reply.raw,
      { login: { accountId }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
    return { redirect_to: redirectTo };
  });

  authed.get('/connections', async (request) => {
    const connections = await connectionListByAccount(db, accountOf(request));
    return { connections: connections.map((c) => connectionView(c)) };
  });

  authed.post<{ Params: { id: string } }>('/connections/:id/revoke', async (request) => {
    const revoke = (tx: Database) => connectionRevoke(tx, accountOf(request), request.params.id);
    const connection = deps.auditRevoke ? await deps.auditRevoke(request, revoke) : await revoke(db);
    // Token lookups are cached briefly; drop this pod's cache so the revocation is immediate here.
    deps.tokens?.clear();
    return { connection: connectionView(connection) };
  });
}

function safeHost(uri: string): string | null {
  try {
    return new URL(uri).host || new URL(uri).protocol;
  } catch {
    return null;
  }
}

function connectionView(c: Connection) {
  return {
    id: c.id,
    client_id: c.client_id,
    client_name: c.client_name,
    client_uri: c.client_uri,
    logo_uri: c.logo_uri,
    servers: c.servers,
    created_at: c.created_at.toISOString(),
    last_used_at: c.last_used_at?.toISOString() ?? null,
    expires_at: c.expires_at.toISOString(),
    revoked_at: c.revoked_at?.toISOString() ?? null,
    status: credentialStatus(c),
  };
}
