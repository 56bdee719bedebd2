// buildApp wires the HTTP surface and never listens: tests call inject() or listen on port 0.
import { createHash } from 'node:crypto';
import cors from '@fastify/cors';
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { publicPlan, type Plan } from './accounts/plans.ts';
import type { CreditPack } from './config.ts';
import { x402Plugin, type X402Deps } from './x402/plugin.ts';
import { dashboardApi, type DashboardDeps } from './dashboard/api.ts';
import { dashboardUi } from './dashboard/ui.ts';
import { ApiError, BODY_LIMIT_BYTES, errorEnvelope, fromFrameworkError } from './errors.ts';
import { gatewayPlugin, type GatewayDeps } from './gateway/plugin.ts';
import type { ConnectLimit } from './gateway/rate-limit.ts';
import { aiCatalog, AI_CATALOG_TYPE, serverCards, SERVER_CARD_TYPE, type CardSource } from './mcp/cards.ts';
import type { Registry } from './mcp/registry.ts';
import { LEGACY_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS } from './gateway/classify.ts';
import { oauthRoutes, type OAuthServer } from './oauth/server.ts';
import { HEADERS_TIMEOUT_MS, limitConnections, REQUEST_TIMEOUT_MS, type ConnectionLimits } from './connections.ts';
import { landingPage } from './dashboard/landing.ts';
import type { PublicOrigins } from './origin.ts';
import { endHttpSpan, enterHttpSpan, httpSpanOf, logTraceIds, requestIdForNewRequest, withSpan } from './telemetry/tracing.ts';

export interface AppDeps extends GatewayDeps {
  /** Plans for the public catalog (cached by the caller; PlanPolicy resources can change them). */
  plans: () => Promise<Plan[]>;
  /** Packs, chains and x402 pricing for the catalog (issue 21). */
  catalogPayments?: CatalogPayments;
  /** x402 pay-per-call at /x402/mcp/{server}; absent: not served. */
  x402?: X402Deps;
  /** Database reachable and migrations current. */
  ready: () => Promise<{ ready: boolean; checks: Record<string, boolean> }>;
  logger?: FastifyServerOptions['logger'];
  /** The public base URL and dashboard origin, from configuration (never from a request's Host). */
  origins: PublicOrigins;
  /** Reverse proxies whose X-Forwarded-For is believed (request.ip); 0 or absent: none. */
  trustProxyHops?: number;
  /** The web dashboard (/app and its JSON API /api); absent in gateway-only tests. */
  dashboard?: Omit<DashboardDeps, 'registry' | 'plans' | 'usage' | 'keys' | 'oauth' | 'origins'>;
  /** The OAuth authorization server for connectors (/.well-known/*, /oauth/*); absent in gateway-only tests. */
  oauth?: OAuthServer;
  /** Bounds on connections per client address and requests in flight per connection. */
  connections?: ConnectionLimits;
}


const EXPOSED_HEADERS = ['etag', 'x-request-id', 'x-credits-used', 'x-credits-remaining', 'ratelimit', 'ratelimit-policy', 'retry-after', 'www-authenticate', 'payment-required', 'payment-response'];

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    // Every line logged inside a traced request carries trace_id and span_id (besides reqId).
    logger: typeof deps.logger === 'object' && deps.logger !== null ? { ...deps.logger, mixin: logTraceIds } : (deps.logger ?? false),
    // Request lines would be one per MCP call; errors are still logged.
    logController: new LogController({ disableRequestLogging: true }),
    // The trace id of the request's span (or a fresh id of that form without tracing): the
    // request_id in a user's error report then finds its trace. Never a client's own id: it is
    // the idempotency key of the ledger row.
    genReqId: requestIdForNewRequest,
    requestIdHeader: false,
    bodyLimit: BODY_LIMIT_BYTES,
    return503OnClosing: true,
    requestTimeout: REQUEST_TIMEOUT_MS,
    // Believe X-Forwarded-For for exactly that many proxy hops (proxy-addr's trust function).
    trustProxy: deps.trustProxyHops ? (_address: string, hop: number) => hop < deps.trustProxyHops! : false,
  });
  // Every plugin reads the public origins from here per request: they may be settled only once
  // the server listens (PORT=0 without PUBLIC_BASE_URL).
  app.decorate('origins', deps.origins);

  app.server.headersTimeout = HEADERS_TIMEOUT_MS;
  if (deps.connections) limitConnections(app, deps.connections);
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    enterHttpSpan(request.raw, request.routeOptions.url);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    endHttpSpan(request.raw, reply.statusCode);
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    endHttpSpan(request.raw, undefined);
    done();
  });

  app.setErrorHandler((err: FastifyError | ApiError, request, reply) => {
    const apiError = fromFrameworkError(err);
    // Logged in the request's HTTP span, so the line carries its ids.
    if (apiError.code === 'INTERNAL_ERROR') withSpan(httpSpanOf(request.raw), () => request.log.error({ err }, 'unhandled error'));
    for (const [name, value] of Object.entries(apiError.headers)) reply.header(name, value);
    return reply.code(apiError.status).send(errorEnvelope(apiError, request.id));
  });

  app.setNotFoundHandler((request, reply) => {
    const apiError = new ApiError('NOT_FOUND', 'No such route.', { path: request.url.split('?')[0] ?? '' });
    return reply.code(apiError.status).send(errorEnvelope(apiError, request.id));
  });

  await app.register(cors, {
    origin: '*',
    methods: ['GET', 'POST', 'OPTIONS'],
    allowedHeaders: ['if-none-match', 'x-api-key', 'authorization', 'content-type', 'accept', 'mcp-protocol-version', 'mcp-method', 'mcp-name', 'payment-signature', 'x-payment'],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  });

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const { ready, checks } = await deps.ready();
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', checks });
  });
  app.get('/v1/catalog', async () => catalog(deps.registry, await deps.plans(), deps.connectLimit, deps.catalogPayments));

  await app.register(async (scope) => discoveryDocuments(scope, deps));
  await app.register(async (mcp) => gatewayPlugin(mcp, deps), { prefix: '/mcp' });
  if (deps.oauth) {
    const oauth = deps.oauth;
    await app.register(async (scope) => oauthRoutes(scope, oauth));
  }
  if (deps.x402) {
    const x402 = deps.x402;
    await app.register(async (paid) => x402Plugin(paid, { ...deps, ...x402 }), { prefix: '/x402/mcp' });
  }
  if (deps.dashboard) {
    const oauth = deps.oauth && { server: deps.oauth, tokens: deps.tokens };
    const dashboard = { ...deps.dashboard, registry: deps.registry, plans: deps.plans, usage: deps.usage, keys: deps.keys, oauth, origins: deps.origins };
    await app.register(async (api) => dashboardApi(api, dashboard), { prefix: '/api' });
    await app.register(async (ui) => dashboardUi(ui), { prefix: '/app' });
    // The public page: product, servers, prices in dollars, before any sign-in (server/dashboard/landing.ts).
    app.get('/', async (_request, reply) =>
      reply
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-cache')
        .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
        .header('x-content-type-options', 'nosniff')
        .send(landingPage({ origin: deps.origins.base, registry: deps.registry, plans: await deps.plans(), payments: deps.catalogPayments })),
    );
  }
  return app;
}

/**
 * The server cards (<mcp-url>/server-card) and the AI catalog (/.well-known/ai-catalog.json): public
 * and keyless, registered beside the gateway (whose hooks stay in its own plugin; a static
 * /mcp/server-card wins over /mcp/:server). Written from the configured origin, once per origin.
 */
async function discoveryDocuments(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const source: CardSource = {
    registry: deps.registry,
    allInOne: deps.allInOne,
    version: deps.version,
    protocolVersions: [...MODERN_PROTOCOL_VERSIONS, ...LEGACY_PROTOCOL_VERSIONS],
  };
  let built: { base: string; cards: Map<string, string>; catalog: string } | undefined;
  const documents = () => {
    const origins = { base: deps.origins.base, documentation: `${deps.origins.dashboard}/app/connect` };
    if (built?.base !== origins.base) {
      const cards = new Map([...serverCards(source, origins)].map(([path, card]) => [path, JSON.stringify(card)]));
      built = { base: origins.base, cards, catalog: JSON.stringify(aiCatalog(source, origins)) };
    }
    return built;
  };
  const send = (request: FastifyRequest, reply: FastifyReply, type: string, body: string) => {
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    reply.header('cache-control', 'public, max-age=3600').header('etag', etag);
    if (request.headers['if-none-match']?.split(/\s*,\s*/).includes(etag)) return reply.code(304).send();
    return reply.type(type).send(body);
  };
  app.get('/.well-known/ai-catalog.json', async (request, reply) => send(request, reply, AI_CATALOG_TYPE, documents().catalog));
  for (const url of ['/mcp/server-card', '/mcp/:server/server-card']) {
    app.get<{ Params: { server?: string } }>(url, async (request, reply) => {
      const path = request.params.server === undefined ? '' : `/${request.params.server}`;
      const card = documents().cards.get(path);
      if (!card) throw new ApiError('SERVER_NOT_FOUND', undefined, { server: request.params.server, available: [...deps.registry.keys()] });
      return send(request, reply, SERVER_CARD_TYPE, card);
    });
  }
}

/** What the catalog says about buying: credit packs, the chains paid on, x402's price per credit. */
export interface CatalogPayments {
  packs: CreditPack[];
  chains: { chain: string; chain_id: number | null; token: string; decimals: number }[];
  x402: { network: string; asset: string; usd_micros_per_credit: number; path: string } | null;
}

export function catalog(registry: Registry, plans: Plan[], connectLimit: ConnectLimit, payments?: CatalogPayments) {
  return {
    servers: [...registry.values()].map((s) => ({
      name: s.name,
      description: s.description,
      tools: [...s.tools.values()].map((t) => ({
        name: t.name,
        description: t.description,
        credits: t.credits,
        title: t.listing.title,
        input_schema: t.inputSchema,
      })),
    })),
    // price_cents: the monthly price in integer USD cents; null: not for sale.
    plans: plans.map(publicPlan),
    ...(payments ? { credit_packs: payments.packs, payments: { chains: payments.chains, x402: payments.x402 } } : {}),
    // What a call is charged (DESIGN.md §3): only an answer with data, delivered.
    billing: {
      charged: "a tools/call answered successfully, at the tool's credits, once the answer is handed to the client's connection",
      free: [
        'an answer with no data for what was asked (metadata.credits_used is 0)',
        'any error, timeout or refusal',
        'a call whose client is gone before its answer exists',
        'every method but tools/call',
      ],
      partial:
        "a list page cut for size (metadata.truncated) is charged for the items it holds: the tool's credits buy `limit` items; its note says what it cost (on /x402 it is settled in full)",
    },
    // The rule behind "connecting never locks a key out" (DESIGN.md §3).
    rate_limits: {
      tools_call: "each tools/call counts toward the plan's requests_per_minute and burst, per account",
      connect: {
        methods: ['server/discover', 'initialize', 'notifications/*', 'tools/list', 'ping', 'any other method but tools/call'],
        credits: 0,
        counted_against_plan: false,
        requests_per_minute: connectLimit.requestsPerMinute,
        burst: connectLimit.burst,
        scope: 'per key, per replica',
      },
    },
  };
}
