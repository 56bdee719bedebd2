// POST /mcp/:server — the gateway in front of the nine MCP servers. Checks run in the order of
// DESIGN.md §3 and the first failure wins: server (1), key (2), scope/plan/suspension (3),
// method (4), body/tool/arguments (5), rate limit (6), credits (7), then the tool (8). Credits
// are reserved before the tool runs and refunded if the call ends in any error.
import type { Span } from '@opentelemetry/api';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SUPPORTED_PROTOCOL_VERSIONS, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ApiError, toApiError } from '../errors.ts';
import type { KeyGrant } from '../keys/store.ts';
import type { KeyResolver } from '../keys/resolver.ts';
import type { Meter, MeterDecision } from '../metering/meter.ts';
import type { ServerName } from '../servers/names.ts';
import { methodLabel, type Metrics } from '../metrics.ts';
import { endMcpSpan, httpSpanOf, inSpan, startMcpSpan, traceExemplar, withSpan } from '../telemetry/tracing.ts';
import { capResult, RESULT_CHAR_LIMIT } from './envelope.ts';
import { answerWithSdk } from './protocol.ts';
import type { RegisteredServer, RegisteredTool, Registry } from './registry.ts';
import type { ToolOutput, UsageReader } from './tool.ts';

export const BODY_LIMIT_BYTES = 1024 * 1024;

export interface GatewayDeps {
  registry: Registry;
  keys: KeyResolver;
  /** null: metering bypassed (benchmark switch only). */
  meter: Meter | null;
  usage: UsageReader;
  metrics: Metrics;
  toolTimeoutMs: number;
  version: string;
}

/** What the gateway learned about a request so far; the error mapper reads it for headers. */
export interface GatewayState {
  server?: RegisteredServer;
  grant?: KeyGrant;
  decision?: MeterDecision;
  tool?: string;
  method?: string;
  creditsUsed: number;
  /** Balance after this request, once known. */
  remaining?: number;
  /** The public error code the request ended with (set by the error handler); undefined: ok. */
  outcome?: string;
  /** The MCP server span (tracing on, body classified). */
  span?: Span;
}

/** Refusals before a tool runs, counted by code in cryptomcp_gateway_rejections_total. */
const REJECTION_CODES: ReadonlySet<string> = new Set([
  'MISSING_API_KEY',
  'INVALID_API_KEY',
  'API_KEY_EXPIRED',
  'API_KEY_REVOKED',
  'KEY_SCOPE_FORBIDDEN',
  'PLAN_FORBIDDEN',
  'ACCOUNT_SUSPENDED',
  'RATE_LIMITED',
  'INSUFFICIENT_CREDITS',
]);

declare module 'fastify' {
  interface FastifyRequest {
    gateway: GatewayState | null;
  }
}

type Call =
  | { kind: 'tools/call'; tool: RegisteredTool; args: Record<string, unknown> }
  | { kind: 'other'; method: string };

export async function mcpRoutes(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  app.decorateRequest('gateway', null);

  // Rows 1-3 need only the path and headers, so they run before the body is even read.
  app.addHook('onRequest', async (request: FastifyRequest<{ Params: { server: string } }>) => {
    const g: GatewayState = { creditsUsed: 0 };
    request.gateway = g;
    const server = deps.registry.get(request.params.server as ServerName);
    if (!server) {
      throw new ApiError('SERVER_NOT_FOUND', undefined, { server: request.params.server, available: [...deps.registry.keys()] });
    }
    g.server = server;
    // A key looked up in the database is traced in the request's HTTP span (sampled requests); a
    // cached one costs no context switch.
    const httpSpan = httpSpanOf(request.raw);
    const check = await deps.keys.resolve(presentedKey(request), httpSpan && ((load) => withSpan(httpSpan, load)));
    if (!check.ok) {
      if (check.code === 'API_KEY_EXPIRED') throw new ApiError(check.code, undefined, { expired_at: check.expiredAt.toISOString() });
      throw new ApiError(check.code);
    }
    const grant = check.grant;
    g.grant = grant;
    g.remaining = grant.balance;
    if (grant.key_servers && !grant.key_servers.includes(server.name)) {
      throw new ApiError('KEY_SCOPE_FORBIDDEN', undefined, { server: server.name, allowed_servers: grant.key_servers });
    }
    if (!grant.plan_servers.includes(server.name)) {
      throw new ApiError('PLAN_FORBIDDEN', undefined, { server: server.name, plan: grant.plan });
    }
    if (grant.account_status !== 'active') throw new ApiError('ACCOUNT_SUSPENDED');
    deps.keys.noteUsed(grant.key_id);
  });

  app.route({
    method: ['GET', 'DELETE', 'PUT', 'PATCH'],
    url: '/:server',
    handler: async (_request, reply) => {
      reply.header('allow', 'POST');
      throw new ApiError('METHOD_NOT_ALLOWED');
    },
  });

  app.post('/:server', { bodyLimit: BODY_LIMIT_BYTES }, async (request, reply) => {
    const g = request.gateway!;
    const server = g.server!;
    const grant = g.grant!;
    const body = request.body;

    // Row 5: the body, the tool and its arguments.
    const accept = request.headers.accept;
    if (accept && !/application\/json|application\/\*|\*\/\*/.test(accept)) {
      throw new ApiError('INVALID_REQUEST', 'The Accept header must allow application/json.');
    }
    const protocolVersion = singleHeader(request.headers['mcp-protocol-version']);
    if (protocolVersion !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(protocolVersion)) {
      throw new ApiError('INVALID_REQUEST', `Unsupported MCP-Protocol-Version ${protocolVersion}.`, {
        supported: SUPPORTED_PROTOCOL_VERSIONS,
      });
    }
    const call = classify(body, server);
    g.method = call.kind === 'tools/call' ? 'tools/call' : call.method;
    if (call.kind === 'tools/call') g.tool = call.tool.name;
    g.span = startMcpSpan(
      {
        method: methodLabel(g.method),
        tool: g.tool,
        protocolVersion,
        jsonrpcId: (body as { id?: string | number }).id,
        server: server.name,
        plan: grant.plan,
      },
      httpSpanOf(request.raw),
    );
    // The rest is not run inside the MCP span with context.with: for the HTTP span that way cost
    // ~10% of throughput with every request sampled (see enterHttpSpan in tracing.ts). The
    // metering and tool spans take the MCP span as their parent explicitly, and the log lines
    // below enter it only when they are written.
    return meterCallAndAnswer(request, reply, call, deps);
  });


  app.addHook('onResponse', async (request, reply) => {
    const g = request.gateway;
    const status = reply.statusCode;
    // A 4xx/5xx without a code of ours is the SDK refusing the message (protocol level).
    const outcome = g?.outcome ?? (status >= 400 ? 'PROTOCOL_ERROR' : 'ok');
    const server = g?.server?.name ?? 'unknown';
    const method = methodLabel(g?.method);
    const tool = g?.tool ?? '';
    const m = deps.metrics;
    m.mcpRequests.add({ server, method, tool, outcome, status: String(status) });
    const seconds = reply.elapsedTime / 1000;
    m.mcpRequestDuration.record({ server, method, tool, outcome }, seconds, traceExemplar(g?.span));
    // Only requests that reached the MCP layer (a method is known) are MCP operations.
    if (g?.method !== undefined) {
      m.mcpOperationDuration.record({ mcp_method_name: method, gen_ai_tool_name: tool, error_type: outcome === 'ok' ? '' : outcome }, seconds);
    }
    if (REJECTION_CODES.has(outcome)) m.rejections.inc({ server, code: outcome, plan: g?.grant?.plan ?? '' });
    endMcpSpan(g?.span, { code: g?.outcome, status, creditsUsed: g?.creditsUsed ?? 0, remaining: g?.remaining });
  });
}

/** Rows 6-8 and the answer: metering, the tool, the SDK's framing, the headers. */
async function meterCallAndAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  call: Call,
  deps: GatewayDeps,
): Promise<FastifyReply> {
  const g = request.gateway!;
  const server = g.server!;
  const grant = g.grant!;
  const body = request.body;
  // Rows 6-7: one round trip for rate limit, renewal and the reservation.
  const requestId = request.id;
  const cost = call.kind === 'tools/call' ? call.tool.credits : 0;
  const meterStarted = performance.now();
  const meter = deps.meter;
  const decision = meter
    ? await inSpan('cryptomcp.metering.reserve', { 'cryptomcp.credits.cost': cost }, g.span, () =>
        meter.reserve({
          accountId: grant.account_id,
          requestId,
          cost,
          record: call.kind === 'tools/call',
          server: server.name,
          tool: call.kind === 'tools/call' ? call.tool.name : null,
          keyId: grant.key_id,
        }),
      )
    : unmeteredDecision(grant, cost);
  if (deps.meter) deps.metrics.meterReserveDuration.observe((performance.now() - meterStarted) / 1000);
  g.decision = decision;
  g.remaining = decision.balance;
  grant.balance = decision.balance;
  switch (decision.outcome) {
    case 'rate_limited': {
      const retryAfter = Math.max(1, Math.ceil(decision.retryAfterSeconds));
      throw new ApiError(
        'RATE_LIMITED',
        undefined,
        { limit_per_minute: decision.requestsPerMinute, retry_after_seconds: retryAfter },
        { 'retry-after': String(retryAfter) },
      );
    }
    case 'insufficient_credits':
      throw new ApiError('INSUFFICIENT_CREDITS', undefined, { required: cost, available: decision.balance });
    case 'suspended':
      throw new ApiError('ACCOUNT_SUSPENDED');
    case 'account_not_found':
      throw new ApiError('INVALID_API_KEY');
    case 'ok':
    case 'replayed':
      break;
  }

  let callResult: CallToolResult | undefined;
  if (call.kind === 'tools/call') {
    g.creditsUsed = cost;
    const toolAttributes = { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': call.tool.name, 'cryptomcp.server': server.name };
    const output = await inSpan(`execute_tool ${call.tool.name}`, toolAttributes, g.span, () => runTool(call, request, requestId, deps)).catch(async (err: unknown) => {
      const apiError = toApiError(err);
      if (apiError.code === 'INTERNAL_ERROR') withSpan(g.span, () => request.log.error({ err, tool: call.tool.name }, 'tool failed'));
      await refund(deps, g, requestId, `tool failed: ${apiError.code}`, request);
      throw apiError;
    });
    const envelopeOf = (data: unknown, truncated: boolean) => ({
      success: true as const,
      data,
      metadata: {
        timestamp: new Date().toISOString(),
        credits_used: cost,
        remaining_credits: decision.balance,
        request_id: requestId,
        source: output.source,
        data_as_of: output.data_as_of ?? null,
        truncated,
        ...(output.next_cursor !== undefined ? { next_cursor: output.next_cursor } : {}),
      },
    });
    let envelope = envelopeOf(output.data, output.truncated ?? false);
    let text = JSON.stringify(envelope);
    if (text.length > RESULT_CHAR_LIMIT) {
      // Rare: the text is built anyway, so only oversized results pay for capping.
      const capped = capResult(output.data, RESULT_CHAR_LIMIT - (text.length - JSON.stringify(output.data).length));
      envelope = envelopeOf(capped.data, true);
      text = JSON.stringify(envelope);
    }
    callResult = { content: [{ type: 'text', text }], structuredContent: envelope };
  }

  const answer = await answerWithSdk({ server, body, callResult, version: deps.version }).catch(
    async (err: unknown) => {
      if (callResult) await refund(deps, g, requestId, 'protocol layer failed', request);
      throw err;
    },
  );
  // A JSON-RPC error answered with HTTP 200 (an unknown method, invalid params, a result the SDK
  // refused) is still a failed request: counted as such, and never charged.
  if (answer.jsonrpcError) {
    g.outcome = 'PROTOCOL_ERROR';
    if (callResult) await refund(deps, g, requestId, `protocol answered a JSON-RPC error (HTTP ${answer.status})`, request);
  } else if (callResult && deps.meter) {
    // Charged only if the answer reached the client; a dropped connection is refunded.
    const meter = deps.meter;
    const res = reply.raw;
    res.once('close', () => {
      if (res.writableFinished) {
        meter.settle(requestId);
        deps.metrics.creditsConsumed.inc({ server: server.name, tool: g.tool ?? '', plan: grant.plan }, cost);
      } else void refund(deps, g, requestId, 'client disconnected before the answer', request);
    });
  }
  setGatewayHeaders(reply, g);
  reply.code(answer.status);
  if (answer.contentType) reply.header('content-type', answer.contentType);
  return reply.send(answer.body === '' ? undefined : answer.body);
}

async function refund(deps: GatewayDeps, g: GatewayState, requestId: string, note: string, request: FastifyRequest): Promise<void> {
  const used = g.creditsUsed;
  g.creditsUsed = 0;
  if (!deps.meter) return;
  if (used > 0) deps.metrics.creditsRefunded.inc({ server: g.server?.name ?? 'unknown', tool: g.tool ?? '', plan: g.grant?.plan ?? '' }, used);
  try {
    const balance = await deps.meter.refund(requestId, note);
    g.remaining = balance ?? (g.remaining ?? 0) + used;
  } catch (err) {
    // The stale-reservation sweep refunds it once the database answers again.
    g.remaining = (g.remaining ?? 0) + used;
    withSpan(g.span, () => request.log.warn({ err, requestId }, 'refund deferred to the sweep'));
  }
  if (g.grant) g.grant.balance = g.remaining;
}

async function runTool(
  call: Extract<Call, { kind: 'tools/call' }>,
  request: FastifyRequest,
  requestId: string,
  deps: GatewayDeps,
): Promise<ToolOutput> {
  const g = request.gateway!;
  // Aborted only when the time is up or the client goes away; the happy path allocates no
  // exception (building DOMExceptions on every request showed up as ~10% of CPU under load).
  const controller = new AbortController();
  let rejectTimeout: (err: ApiError) => void = () => {};
  const timedOut = new Promise<never>((_, reject) => (rejectTimeout = reject));
  const timer = setTimeout(() => {
    controller.abort();
    rejectTimeout(new ApiError('UPSTREAM_TIMEOUT', undefined, { provider: 'tool', timeout_ms: deps.toolTimeoutMs }));
  }, deps.toolTimeoutMs);
  const onClose = () => {
    if (!request.raw.complete || request.raw.destroyed) controller.abort();
  };
  request.raw.socket?.once('close', onClose);
  try {
    return await Promise.race([
      call.tool.definition.handler(call.args, {
        requestId,
        server: g.server!.name,
        account: { id: g.grant!.account_id, plan: g.grant!.plan },
        signal: controller.signal,
        usage: deps.usage,
        tools: g.server!.toolInfos,
      }),
      timedOut,
    ]);
  } finally {
    clearTimeout(timer);
    request.raw.socket?.removeListener('close', onClose);
  }
}

/**
 * Row 5: is this one JSON-RPC message, and if it is tools/call, of which tool with which valid
 * arguments? A structural check: the SDK parses the message fully right after, and its zod union
 * parse here as well measured ~4% of CPU per request.
 */
function classify(body: unknown, server: RegisteredServer): Call {
  if (Array.isArray(body)) {
    throw new ApiError('INVALID_REQUEST', 'JSON-RPC batches are not supported; send one message per request.');
  }
  if (typeof body !== 'object' || body === null || (body as { jsonrpc?: unknown }).jsonrpc !== '2.0') {
    throw new ApiError('INVALID_REQUEST');
  }
  const message = body as { id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: unknown };
  const hasId = typeof message.id === 'string' || (typeof message.id === 'number' && Number.isInteger(message.id));
  if (message.id !== undefined && !hasId) throw new ApiError('INVALID_REQUEST', 'The JSON-RPC id must be a string or an integer.');
  if (message.params !== undefined && (typeof message.params !== 'object' || message.params === null || Array.isArray(message.params))) {
    throw new ApiError('INVALID_REQUEST', 'JSON-RPC params must be an object.');
  }
  if (message.method === undefined) {
    if (hasId && ('result' in message || 'error' in message)) return { kind: 'other', method: 'response' };
    throw new ApiError('INVALID_REQUEST');
  }
  if (typeof message.method !== 'string' || message.method === '') throw new ApiError('INVALID_REQUEST');
  if (message.method !== 'tools/call') return { kind: 'other', method: message.method };
  if (!hasId) throw new ApiError('INVALID_REQUEST', 'tools/call must be a request with an id.');
  const params = message.params as { name?: unknown; arguments?: unknown } | undefined;
  if (typeof params?.name !== 'string') throw new ApiError('INVALID_REQUEST', 'tools/call needs params.name.');
  const tool = server.tools.get(params.name);
  if (!tool) throw new ApiError('UNKNOWN_TOOL', undefined, { tool: params.name, available: [...server.tools.keys()] });
  const result = tool.input.safeParse(params.arguments ?? {});
  if (!result.success) {
    throw new ApiError('INVALID_PARAMS', undefined, {
      issues: result.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
  return { kind: 'tools/call', tool, args: result.data as Record<string, unknown> };
}

function singleHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function presentedKey(request: FastifyRequest): string | undefined {
  const apiKey = singleHeader(request.headers['x-api-key'])?.trim();
  if (apiKey) return apiKey;
  const auth = singleHeader(request.headers.authorization);
  const match = auth ? /^Bearer\s+(\S+)\s*$/i.exec(auth) : null;
  return match?.[1];
}

function unmeteredDecision(grant: KeyGrant, cost: number): MeterDecision {
  return {
    outcome: 'ok',
    balance: Math.max(0, grant.balance - cost),
    plan: grant.plan,
    requestsPerMinute: grant.requests_per_minute,
    burst: grant.burst,
    rateRemaining: grant.burst,
    rateResetSeconds: 0,
    retryAfterSeconds: 0,
  };
}

/**
 * The headers every authenticated answer carries (DESIGN.md §3). Before metering ran (rows 3-5)
 * the balance is the account's as last seen by this process (at most the key cache TTL old), and
 * only the rate-limit policy is known, not the current window.
 */
export function setGatewayHeaders(reply: FastifyReply, g: GatewayState | null): void {
  if (!g?.grant) return;
  reply.header('x-credits-used', String(g.creditsUsed));
  reply.header('x-credits-remaining', String(g.remaining ?? g.grant.balance));
  const plan = g.decision?.plan ?? g.grant.plan;
  const rpm = g.decision?.requestsPerMinute ?? g.grant.requests_per_minute;
  reply.header('ratelimit-policy', `"${plan}";q=${rpm};w=60`);
  if (g.decision) {
    reply.header('ratelimit', `"${plan}";r=${g.decision.rateRemaining};t=${Math.ceil(g.decision.rateResetSeconds)}`);
  }
}
