// POST /mcp/{server}: the gateway in front of the nine MCP servers, as one encapsulated Fastify
// plugin (mounted under /mcp). It runs DESIGN.md §3's checks in order, one file each, the first
// failure winning: route → authenticate → authorize (rows 1-3, before the body is read) → method
// (row 4) → classify (row 5) → rate-limit (row 6) → meter (row 7) → run the tool (row 8) → answer
// → settle or refund. It owns its error handler, headers and not-found answers.
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, errorEnvelope, fromFrameworkError, toApiError } from '../errors.ts';
import type { KeyResolver } from '../keys/resolver.ts';
import { ALL_IN_ONE, AllInOne, type AllInOneModule, type Registry } from '../mcp/registry.ts';
import type { UsageReader } from '../mcp/tool.ts';
import type { RequestLogRowJson } from '../public-types.ts';
import type { CreditMeter } from '../metering/meter.ts';
import { methodLabel, type Metrics } from '../metrics.ts';
import { endMcpSpan, httpSpanOf, inSpan, startMcpSpan, traceExemplar, withSpan } from '../telemetry/tracing.ts';
import { ProtocolAnswerer, type ProtocolAnswer } from './answer.ts';
import { authenticate, presentedCredential } from './authenticate.ts';
import { authorize, authorizeAll, toolOutsideGrant, writeOutsideGrant } from './authorize.ts';
import { classify } from './classify.ts';
import type { Authorized, Classified, Trail } from './context.ts';
import { reserve } from './meter.ts';
import { relay } from './relay.ts';
import { ConnectLimiter, type ConnectAdmission, type ConnectLimit } from './rate-limit.ts';
import { route } from './route.ts';
import { runTool, successResult, type Charge } from './run-tool.ts';
import { CLIENT_GONE, creditsFor, Delivery, reservationPayment, type Charge as DueCharge, type Settlement } from './delivery.ts';
import { TaskRunner } from './tasks.ts';
import { ListenStreams, type ListenFeed } from './subscriptions.ts';

export interface GatewayDeps {
  registry: Registry;
  keys: KeyResolver;
  meter: CreditMeter;
  usage: UsageReader;
  metrics: Metrics;
  toolTimeoutMs: number;
  version: string;
  /** The per-key bucket for everything but tools/call (rate-limit.ts). */
  connectLimit: ConnectLimit;
  /** Where each authenticated request is logged for the account's request log (never throws). */
  requestLog?: RequestLogSink;
  /** OAuth access tokens (Authorization: Bearer), read as their connection's grant (server/oauth). */
  tokens?: KeyResolver;
  /** Longest time an answer may take to leave once handed to the socket (delivery.ts). */
  writeTimeoutMs: number;
  /** The all-in-one endpoint ({base_url}/mcp): its name, icon and own free tools (servers/index.ts). */
  allInOne: AllInOneModule;
  /** The alert feed that 2026-07-28 subscriptions/listen streams read (subscriptions.ts); absent: nothing is honored. */
  alertFeed?: ListenFeed;
  /** Benchmarks only: answer 2026-07-28 through the SDK's createMcpHandler, as before modern.ts (answer.ts). */
  modernViaSdk?: boolean;
  /** Long tools as MCP tasks (tasks.ts); absent: every call is answered in its own exchange. */
  tasks?: TaskRunner;
}

/** One authenticated request as the gateway reports it to the account's request log. */
export interface RequestLogEntry extends Omit<RequestLogRowJson, 'id' | 'created_at' | 'message' | 'args_bytes'> {
  created_at: Date;
  message?: string | null;
  args_bytes?: number | null;
}

export interface RequestLogSink {
  record(entry: RequestLogEntry): void;
}

/** Refusals before a tool runs, counted by code in cryptomcp_gateway_rejections_total. */
const REJECTION_CODES: ReadonlySet<string> = new Set([
  'MISSING_API_KEY',
  'INVALID_API_KEY',
  'API_KEY_EXPIRED',
  'API_KEY_REVOKED',
  'INVALID_TOKEN',
  'KEY_SCOPE_FORBIDDEN',
  'KEY_PAUSED',
  'KEY_CAP_REACHED',
  'REQUEST_REFUSED',
  'PLAN_FORBIDDEN',
  'ACCOUNT_SUSPENDED',
  'RATE_LIMITED',
  'INSUFFICIENT_CREDITS',
]);

interface GatewayRequest {
  trail: Trail;
  /**
   * A POST refused at row 3 (scope, plan): thrown once its body is read, so the request log
   * keeps the tool it named. A body error meanwhile (row 5) still answers this refusal.
   */
  refusal: ApiError | undefined;
  /** The resolver that found the grant: it keeps the balances metering answers. */
  resolver: KeyResolver | undefined;
  /** Set by the onRequest checks (rows 1-3); a request without it never reaches a handler. */
  authorized: Authorized | undefined;
}

declare module 'fastify' {
  interface FastifyRequest {
    mcpGateway: GatewayRequest | null;
  }
}

export async function gatewayPlugin(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  const answerer = new ProtocolAnswerer(deps.version, (err) => app.log.debug({ err }, 'MCP protocol layer refused a message'), { modernViaSdk: deps.modernViaSdk });
  const connectLimiter = new ConnectLimiter(deps.connectLimit);
  const allInOne = new AllInOne(deps.registry, deps.allInOne);
  app.addHook('onClose', async () => answerer.close());
  const listens = new ListenStreams(deps.alertFeed, { version: deps.version, writeTimeoutMs: deps.writeTimeoutMs });
  // Open listen streams end with the graceful close before the server waits for requests to finish.
  app.addHook('preClose', async () => listens.closeAll());
  app.decorateRequest('mcpGateway', null);

  // Rows 1-3 need only the path and headers, so they run before the body is even read.
  app.addHook('onRequest', async (request: FastifyRequest<{ Params: { server?: string } }>) => {
    const state: GatewayRequest = { trail: { creditsUsed: 0 }, resolver: undefined, authorized: undefined, refusal: undefined };
    request.mcpGateway = state;
    if (request.method === 'OPTIONS') return;
    // No server in the path: the all-in-one endpoint, every server the credential may use.
    const routed = request.params.server === undefined ? undefined : route(deps.registry, request.id, request.params.server);
    state.trail.server = routed?.server.name ?? ALL_IN_ONE;
    const httpSpan = httpSpanOf(request.raw);
    const { grant, resolver } = await authenticate(deps.keys, request.headers, httpSpan && ((load) => withSpan(httpSpan, load)), deps.tokens);
    state.trail.grant = grant;
    state.resolver = resolver;
    state.trail.remaining = resolver.balanceOf(grant);
    if (routed) {
      try {
        state.authorized = authorize(routed, grant);
      } catch (err) {
        if (request.method !== 'POST' || !(err instanceof ApiError) || !DEFERRED_REFUSALS.has(err.code)) throw err;
        state.refusal = err;
      }
    } else {
      const all = authorizeAll(request.id, grant, allInOne);
      state.authorized = request.routeOptions.config.discovery === true ? { ...all, server: allInOne.discovery(all.server) } : all;
    }
    resolver.noteUsed(grant.key_id);
  });

  app.addHook('preHandler', async (request) => {
    const state = request.mcpGateway;
    if (!state?.refusal) return;
    noteNamedTool(state.trail, request.body);
    throw state.refusal;
  });

  // /discover: the all-in-one endpoint's discovery mode (a static path wins over /:server).
  for (const url of ['/', '/:server', '/:server/', '/discover', '/discover/']) {
    const config = { discovery: url.startsWith('/discover') };
    app.route({
      method: ['GET', 'DELETE', 'PUT', 'PATCH'],
      url,
      config,
      handler: async (_request, reply) => {
        reply.header('allow', 'POST');
        throw new ApiError('METHOD_NOT_ALLOWED');
      },
    });
    app.post(url, { config }, (request, reply) => handle(request, reply));
  }

  async function handle(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const state = request.mcpGateway;
    const authorized = state?.authorized;
    if (!state || !authorized) throw new Error('gateway: the POST handler ran without the onRequest checks');
    const trail = state.trail;
    noteNamedTool(trail, request.body);

    const exchange = relay(allInOne, { authorized, body: request.body, headers: request.headers });
    if (exchange.body !== request.body) noteNamedTool(trail, exchange.body);
    if (exchange.authorized.server.name === ALL_IN_ONE) {
      const refused = toolOutsideGrant(exchange.authorized, allInOne, exchange.body);
      if (refused) throw refused;
    }
    const call = classify(exchange.authorized, exchange.body, exchange.headers);
    trail.method = call.call.kind === 'tools/call' ? 'tools/call' : call.call.method;
    trail.era = call.era;
    if (call.call.kind === 'tools/call') {
      trail.tool = call.call.tool.name;
      // Metered, logged and counted under the server the tool belongs to, on every path.
      trail.server = call.call.tool.server;
    }
    const readOnly = writeOutsideGrant(call);
    if (readOnly) throw readOnly;
    trail.span = startMcpSpan(
      {
        method: methodLabel(trail.method),
        tool: trail.tool,
        protocolVersion: call.protocolVersion,
        jsonrpcId: call.message.id as string | number | undefined,
        server: call.server.name,
        plan: call.grant.plan,
      },
      httpSpanOf(request.raw),
    );

    if (call.call.kind !== 'tools/call') {
      const admission = connectLimiter.admit(call.grant.key_id);
      if (call.era === 'modern' && call.call.method === 'subscriptions/listen' && call.message.id !== undefined) {
        setConnectHeaders(reply, trail, admission);
        const refused = listens.refusal(call);
        if (refused) return send(reply, trail, refused);
        reply.hijack();
        listens.open(call, reply.raw, reply.getHeaders());
        return reply;
      }
      const task = deps.tasks && TaskRunner.isTaskMethod(call) ? await deps.tasks.answer(call) : undefined;
      const answer = await answerer.answer(call, exchange.headers, undefined, task);
      setConnectHeaders(reply, trail, admission);
      return send(reply, trail, answer);
    }
    return callTool({ ...call, call: call.call }, request, exchange.headers, reply, trail, state.resolver!);
  }

  async function callTool(
    call: Classified & { call: { kind: 'tools/call' } },
    request: FastifyRequest,
    headers: IncomingHttpHeaders,
    reply: FastifyReply,
    trail: Trail,
    resolver: KeyResolver,
  ) {
    const meterStarted = performance.now();
    const reservation = await inSpan('cryptomcp.metering.reserve', { 'cryptomcp.credits.cost': call.call.tool.credits }, trail.span, () =>
      reserve(deps.meter, call),
    );
    deps.metrics.meterReserveDuration.observe((performance.now() - meterStarted) / 1000);
    if (!reservation.ok) {
      trail.decision = reservation.decision;
      trail.remaining = reservation.decision.balance;
      resolver.noteBalance(call.grant.account_id, reservation.decision.balance);
      throw reservation.error;
    }
    const reserved = reservation.reserved;
    trail.decision = reserved.decision;
    trail.remaining = reserved.decision.balance;
    trail.creditsUsed = reserved.cost;
    resolver.noteBalance(call.grant.account_id, reserved.decision.balance);

    const labels = { server: call.call.tool.server, tool: call.call.tool.name, plan: call.grant.plan };
    // A long tool asked to run as a task: the reservation becomes the task's, answered at once.
    if (deps.tasks && TaskRunner.wanted(reserved)) {
      const created = await deps.tasks.start(reserved).catch(async (err: unknown) => {
        await deps.meter.refund(call.requestId, 'the task could not be created').catch(() => {});
        trail.creditsUsed = 0;
        throw toApiError(err);
      });
      setPlanHeaders(reply, trail);
      return send(reply, trail, await answerer.answer(reserved, headers, undefined, { result: created }));
    }
    const delivery = new Delivery(reply.raw, reservationPayment(deps.meter, call.requestId), {
      writeTimeoutMs: deps.writeTimeoutMs,
      onSettled: (s) => {
        onSettled(s, trail, labels, reserved.cost, request);
        if (trail.remaining !== undefined) resolver.noteBalance(call.grant.account_id, trail.remaining);
      },
    });
    const refundAndThrow = async (err: unknown, note: string): Promise<never> => {
      const apiError = toApiError(err);
      if (apiError.code === 'INTERNAL_ERROR') withSpan(trail.span, () => request.log.error({ err, tool: labels.tool }, note));
      await delivery.release(`${note}: ${apiError.code}`);
      throw apiError;
    };

    const toolAttributes = { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': labels.tool, 'cryptomcp.server': labels.server };
    const output = await inSpan(`execute_tool ${labels.tool}`, toolAttributes, trail.span, () =>
      runTool(reserved, { usage: deps.usage, timeoutMs: deps.toolTimeoutMs, clientGone: delivery.signal }),
    ).catch((err: unknown) => refundAndThrow(err, 'tool failed'));

    // What the answer costs by the one rule (delivery.ts): nothing when it holds no data, a cut page what it holds.
    const due = creditsFor(reserved.cost, output);
    let charge: Charge = { credits: reserved.cost, remaining: reserved.decision.balance };
    let part: Required<DueCharge> | undefined;
    if (due.credits === 0 && reserved.cost > 0) {
      const settled = await delivery.release('the answer held no data: charged nothing');
      charge = { credits: 0, remaining: settled.kind === 'refunded' && settled.balance !== null ? settled.balance : reserved.decision.balance + reserved.cost };
    } else if (due.credits < reserved.cost && due.note !== undefined) {
      // Given back when the answer is handed over (the reservation is settled for the part then).
      part = { credits: due.credits, note: due.note };
      charge = { credits: due.credits, remaining: reserved.decision.balance + reserved.cost - due.credits, note: due.note };
    }
    const answer = await answerer
      .answer(reserved, headers, successResult(reserved, output, charge))
      .catch((err: unknown) => refundAndThrow(err, 'protocol layer failed'));
    // A JSON-RPC error (an unknown method, a result the SDK refused) is a failed request: never charged.
    if (answer.jsonrpcError) await delivery.release(`protocol answered a JSON-RPC error (HTTP ${answer.status})`);
    // Nobody is left to answer: released by the delivery policy; the write would go nowhere.
    if (!(await delivery.handOver(part))) {
      trail.outcome = CLIENT_GONE;
      return reply.code(499).send();
    }
    if (part !== undefined) {
      trail.creditsUsed = charge.credits;
      trail.remaining = charge.remaining;
    }
    setPlanHeaders(reply, trail);
    return send(reply, trail, answer);
  }

  function onSettled(s: Settlement, trail: Trail, labels: { server: string; tool: string; plan: string }, cost: number, request: FastifyRequest) {
    if (s.kind === 'charged') {
      const charged = s.credits ?? cost;
      deps.metrics.creditsConsumed.inc(labels, charged);
      if (charged < cost) deps.metrics.creditsRefunded.inc(labels, cost - charged);
      return;
    }
    trail.creditsUsed = 0;
    if (cost > 0) deps.metrics.creditsRefunded.inc(labels, cost);
    if (s.kind === 'refund-deferred') {
      trail.remaining = (trail.remaining ?? 0) + cost;
      withSpan(trail.span, () => request.log.warn({ requestId: request.id, note: s.note }, 'refund deferred to the sweep'));
    } else {
      trail.remaining = s.balance ?? (trail.remaining ?? 0) + cost;
    }
  }

  app.setErrorHandler((err: Error, request, reply) => {
    const apiError = request.mcpGateway?.refusal ?? fromFrameworkError(err);
    const trail = request.mcpGateway?.trail;
    if (trail) {
      trail.outcome = apiError.code;
      trail.message = logMessage(apiError);
    }
    // Logged in the request's span (the MCP one, else the HTTP one), so the line carries its ids.
    if (apiError.code === 'INTERNAL_ERROR') withSpan(trail?.span ?? httpSpanOf(request.raw), () => request.log.error({ err }, 'unhandled error'));
    for (const [name, value] of Object.entries(apiError.headers)) reply.header(name, value);
    // Where to get a token (RFC 9728 §5.1); a rejected Bearer value is an invalid_token (RFC 6750 §3.1).
    if (apiError.status === 401) {
      const base = request.server.origins.base;
      const metadata = `${base}/.well-known/oauth-protected-resource/mcp${trail?.server && trail.server !== ALL_IN_ONE ? `/${trail.server}` : ''}`;
      const bearer = presentedCredential(request.headers)?.via === 'bearer';
      reply.header('www-authenticate', `Bearer resource_metadata="${metadata}"${bearer ? ', error="invalid_token"' : ''}`);
    }
    if (trail) setPlanHeaders(reply, trail);
    return reply.code(apiError.status).send(errorEnvelope(apiError, request.id));
  });

  app.setNotFoundHandler((request, reply) => {
    const server = (request.url.split('?')[0] ?? '').replace(/^\/mcp\/?/, '').split('/')[0] ?? '';
    const apiError = new ApiError('SERVER_NOT_FOUND', undefined, { server, available: [...deps.registry.keys()] });
    return reply.code(apiError.status).send(errorEnvelope(apiError, request.id));
  });

  app.addHook('onResponse', async (request, reply) => {
    const trail = request.mcpGateway?.trail;
    const status = reply.statusCode;
    // A Streamable HTTP client's GET (open a stream) or DELETE (end a session) is the protocol
    // asking what this stateless server offers; 405 is the answer it expects, not a failed call.
    const probe = status === 405 && (request.method === 'GET' || request.method === 'DELETE');
    // A 4xx/5xx without a code of ours is the SDK refusing the message (protocol level).
    const outcome = trail?.outcome ?? (status >= 400 ? 'PROTOCOL_ERROR' : 'ok');
    const server = trail?.server ?? 'unknown';
    const method = methodLabel(trail?.method);
    const tool = trail?.tool ?? '';
    const m = deps.metrics;
    m.mcpRequests.add({ server, method, tool, outcome, status: String(status) });
    const seconds = reply.elapsedTime / 1000;
    m.mcpRequestDuration.record({ server, method, tool, outcome }, seconds, traceExemplar(trail?.span));
    // Only requests that reached the MCP layer (a method is known) are MCP operations.
    if (trail?.method !== undefined) {
      m.mcpOperationDuration.record({ mcp_method_name: method, gen_ai_tool_name: tool, error_type: outcome === 'ok' ? '' : outcome }, seconds);
    }
    if (REJECTION_CODES.has(outcome)) m.rejections.inc({ server, code: outcome, plan: trail?.grant?.plan ?? '' });
    const grant = trail?.grant;
    if (grant && deps.requestLog && !probe) {
      deps.requestLog.record({
        account_id: grant.account_id,
        key_id: grant.key_id,
        request_id: request.id,
        server,
        method: trail.method ?? (trail.named ? 'tools/call' : request.method),
        tool: trail.tool ?? trail.named?.tool ?? null,
        status,
        error_code: trail.outcome ?? null,
        message: trail.message ?? null,
        args_bytes: trail.named?.argsBytes ?? null,
        credits: trail.creditsUsed,
        latency_ms: reply.elapsedTime,
        created_at: new Date(Date.now() - reply.elapsedTime),
      });
    }
    endMcpSpan(trail?.span, { code: trail?.outcome, status, creditsUsed: trail?.creditsUsed ?? 0, remaining: trail?.remaining });
  });
}

/** Row-3 refusals answered once the body is read (see GatewayRequest.refusal). */
const DEFERRED_REFUSALS: ReadonlySet<string> = new Set(['KEY_SCOPE_FORBIDDEN', 'PLAN_FORBIDDEN']);

/** The tool a tools/call body names and the size of its arguments, whatever comes of it. */
function noteNamedTool(trail: Trail, body: unknown): void {
  const message = body as { method?: unknown; params?: { name?: unknown; arguments?: unknown } } | null;
  if (message?.method !== 'tools/call' || typeof message.params?.name !== 'string') return;
  const args = message.params.arguments;
  trail.named = { tool: message.params.name, argsBytes: args === undefined ? 0 : Buffer.byteLength(JSON.stringify(args) ?? '') };
}

/** What the request log keeps of an error: its message, and for bad arguments the first issue. */
function logMessage(err: ApiError): string {
  const issue = (err.details.issues as { path?: unknown; message?: unknown }[] | undefined)?.[0];
  return issue ? `${err.message} ${String(issue.path || '(arguments)')}: ${String(issue.message)}` : err.message;
}

/** Writes the SDK's answer; an HTTP error from the protocol layer becomes the error envelope. */
function send(reply: FastifyReply, trail: Trail, answer: ProtocolAnswer): FastifyReply {
  if (answer.status >= 400) {
    let jsonrpc: unknown;
    try {
      jsonrpc = (JSON.parse(answer.body) as { error?: unknown }).error;
    } catch {
      jsonrpc = undefined;
    }
    const message = (jsonrpc as { message?: unknown } | undefined)?.message;
    throw new ApiError('INVALID_REQUEST', typeof message === 'string' ? message : undefined, jsonrpc === undefined ? {} : { jsonrpc_error: jsonrpc });
  }
  if (answer.jsonrpcError) trail.outcome = 'PROTOCOL_ERROR';
  reply.code(answer.status);
  if (answer.contentType) reply.header('content-type', answer.contentType);
  return reply.send(answer.body === '' ? undefined : answer.body);
}

/**
 * The headers every authenticated answer carries (DESIGN.md §3). Before metering ran the balance
 * is the account's as last seen by this process (at most the key cache TTL old), and only the
 * plan's rate-limit policy is known, not its current window.
 */
function setPlanHeaders(reply: FastifyReply, trail: Trail): void {
  const grant = trail.grant;
  if (!grant) return;
  reply.header('x-credits-used', String(trail.creditsUsed));
  reply.header('x-credits-remaining', String(trail.remaining ?? grant.balance));
  const plan = trail.decision?.plan ?? grant.plan;
  const rpm = trail.decision?.requestsPerMinute ?? grant.requests_per_minute;
  if (!reply.hasHeader('ratelimit-policy')) reply.header('ratelimit-policy', `"${plan}";q=${rpm};w=60`);
  if (trail.decision) reply.header('ratelimit', `"${plan}";r=${trail.decision.rateRemaining};t=${Math.ceil(trail.decision.rateResetSeconds)}`);
}

/** A free method answers with the plan's policy beside the connect bucket's, and the bucket's state. */
function setConnectHeaders(reply: FastifyReply, trail: Trail, admission: ConnectAdmission): void {
  const grant = trail.grant;
  if (!grant) return;
  reply.header('ratelimit-policy', `"${grant.plan}";q=${grant.requests_per_minute};w=60, "connect";q=${admission.requestsPerMinute};w=60`);
  reply.header('ratelimit', `"connect";r=${admission.remaining};t=${Math.ceil(admission.resetSeconds)}`);
  setPlanHeaders(reply, trail);
}
