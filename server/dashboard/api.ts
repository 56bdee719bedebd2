// The dashboard's JSON API under /api (DESIGN.md §5, issue 8): wallet sign-in, browser sessions,
// wallets, keys, usage, the request log, plans, orders and Connected apps. An encapsulated Fastify
// plugin: its cookie parsing, session lookup and CSRF checks apply here only, never to /mcp. This
// file assembles it; each resource's routes are a module of routes/ (Connected apps and consent:
// server/oauth/consent.ts).
import { timingSafeEqual } from 'node:crypto';
import cookie from '@fastify/cookie';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Plan } from '../accounts/plans.ts';
import type { DashboardConfig } from '../config.ts';
import type { Database } from '../db/pool.ts';
import { ApiError } from '../errors.ts';
import type { KeyResolver } from '../keys/resolver.ts';
import type { Registry } from '../mcp/registry.ts';
import type { UsageReader } from '../mcp/tool.ts';
import type { EvmNetwork } from '../providers/evm/chains.ts';
import { consentPublicRoutes, consentSessionRoutes } from '../oauth/consent.ts';
import type { OAuthServer } from '../oauth/server.ts';
import type { Connection } from '../oauth/store.ts';
import type { PublicOrigins } from '../origin.ts';
import type { Payments } from '../payments/orders.ts';
import { audited } from './audit.ts';
import { refuseNulInput } from './body.ts';
import { idempotencySweep } from './idempotency.ts';
import { offerSweep } from './offers.ts';
import { requestLogSweep } from './requestLog.ts';
import { auditRoutes } from './routes/audit.ts';
import { configRoutes } from './routes/config.ts';
import { keyRoutes } from './routes/keys.ts';
import { orderRoutes } from './routes/orders.ts';
import { planRoutes } from './routes/plans.ts';
import { requestRoutes } from './routes/requests.ts';
import { sessionRoutes, signInRoutes } from './routes/sessions.ts';
import { usageRoutes } from './routes/usage.ts';
import { walletRoutes } from './routes/wallets.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { SESSION_COOKIE, sessionOf } from './session.ts';
import { nonceRateLimit, signIn } from './signIn.ts';
import { dashboardSweep, sessionByToken } from './store.ts';

export interface DashboardDeps {
  db: Database;
  registry: Registry;
  plans: () => Promise<Plan[]>;
  usage: UsageReader;
  keys: KeyResolver;
  settings: DashboardConfig;
  evm: { rpcUrls: Record<EvmNetwork, string>; timeoutMs: number };
  /** Where MCP clients reach the servers and the dashboard's origin, from configuration only. */
  origins: PublicOrigins;
  /** OAuth consent and Connected apps (server/oauth/consent.ts); absent without the authorization server. */
  oauth?: { server: OAuthServer; tokens: KeyResolver | undefined };
  /** On-chain payments (issue 21); absent: the Plans page offers no purchase. */
  payments?: Payments;
  /** WEBHOOK_ALLOW_PRIVATE: webhook endpoints may be http:// and private addresses (development). */
  allowPrivateWebhooks?: boolean;
}

/**
 * The dashboard's housekeeping, run as a job (server/jobs): expired nonces, sessions, idempotency
 * records and offers go, and request-log rows older than the retention.
 */
export async function dashboardHousekeeping(db: Database, requestLogRetentionDays: number): Promise<void> {
  await dashboardSweep(db);
  await idempotencySweep(db);
  await offerSweep(db);
  await requestLogSweep(db, requestLogRetentionDays);
}

export async function dashboardApi(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const { db, settings, origins } = deps;
  await app.register(cookie);

  // Every mutating request must come from the dashboard's own pages: a browser's Origin and
  // Sec-Fetch-Site say where it came from (a cross-site form or fetch is refused here), and a
  // session's requests must also echo the session's CSRF token (checked below).
  app.addHook('onRequest', async (request) => {
    if (request.method === 'GET' || request.method === 'HEAD' || request.method === 'OPTIONS') return;
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== origins.dashboard) throw new ApiError('CSRF_REJECTED', undefined, { reason: 'origin' });
    const site = request.headers['sec-fetch-site'];
    if (site === 'cross-site' || site === 'same-site') throw new ApiError('CSRF_REJECTED', undefined, { reason: 'cross_site' });
  });
  // Key names and descriptions, and every other text a route stores, are refused with a NUL.
  app.addHook('preValidation', refuseNulInput);

  // One nonce limiter and one set of sign-in budgets for sign-ins, links and merges alike.
  const signing = {
    db,
    origins,
    plans: deps.plans,
    keys: deps.keys,
    settings,
    signIn: signIn({ db, settings, origins, evm: deps.evm }),
    nonceLimit: nonceRateLimit(settings.signInLimit),
  };
  const consent = deps.oauth && {
    db,
    oauth: deps.oauth.server,
    tokens: deps.oauth.tokens,
    auditRevoke: (request: FastifyRequest, revoke: (tx: Database) => Promise<Connection>) =>
      audited(db, request, revoke, (c) => ({ action: 'connection_revoke', target: c.id, details: { client: c.client_name ?? c.client_id } })),
  };

  configRoutes(app, { registry: deps.registry, origins, settings });
  if (consent) consentPublicRoutes(app, consent);
  signInRoutes(app, signing);

  // Everything below needs a signed-in session, and a mutating request its CSRF token.
  await app.register(async (authed) => {
    authed.addHook('onRequest', async (request) => {
      const token = request.cookies[SESSION_COOKIE];
      const session = token ? await sessionByToken(db, token) : undefined;
      if (!session) throw new ApiError('SESSION_REQUIRED');
      if (request.method !== 'GET' && request.method !== 'HEAD' && !csrfMatches(request.headers['x-csrf-token'], session.csrf_token)) {
        throw new ApiError('CSRF_REJECTED', undefined, { reason: 'token' });
      }
      request.dashboardSession = session;
    });

    if (consent) consentSessionRoutes(authed, consent, (request) => sessionOf(request).account_id);
    sessionRoutes(authed, { db, plans: deps.plans });
    walletRoutes(authed, signing);
    keyRoutes(authed, { db, plans: deps.plans, keys: deps.keys });
    usageRoutes(authed, { db, usage: deps.usage, settings });
    requestRoutes(authed, { db, settings });
    webhookRoutes(authed, { db, allowPrivateWebhooks: deps.allowPrivateWebhooks ?? false });
    auditRoutes(authed, { db });
    if (deps.payments) orderRoutes(authed, { db, payments: deps.payments, plans: deps.plans, keys: deps.keys, contact: settings.contact });
    planRoutes(authed, { db, plans: deps.plans, payments: deps.payments, settings });
  });
}

function csrfMatches(presented: string | string[] | undefined, expected: string): boolean {
  if (typeof presented !== 'string' || presented.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(presented), Buffer.from(expected));
}
