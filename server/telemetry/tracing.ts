// What the app uses of OpenTelemetry: @opentelemetry/api, whose calls are no-ops until the SDK is
// started (./start.ts); spans are made only for sampled requests. Span names
// and attributes follow the OpenTelemetry MCP and GenAI semantic conventions, plus cryptomcp.* for
// server, plan and credits. Never keys, accounts or arguments: attributes are exported to a
// third-party backend.
import type { IncomingMessage } from 'node:http';
import { context, ROOT_CONTEXT, SamplingDecision, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import type { Sampler } from '@opentelemetry/sdk-trace';
import { newSpanId, newTraceId, withChosenIds } from './ids.ts';

let enabled = false;
let rootSampler: Sampler | undefined;
let tracer: Tracer | undefined;

/**
 * Called by startTelemetry once the SDK is registered, with the sampler it gave the SDK; before
 * it every helper here costs next to nothing.
 */
export function markTracingEnabled(sampler: Sampler): void {
  enabled = true;
  rootSampler = sampler;
  tracer = trace.getTracer('cryptomcp');
}

/** A child of `parent` in the same trace (parent is sampled, so the SDK samples the child too). */
function childSpan(name: string, kind: SpanKind, parent: Span, attributes: Attributes): Span {
  return tracer!.startSpan(name, { kind, attributes }, trace.setSpan(ROOT_CONTEXT, parent));
}

/**
 * The HTTP server span of each sampled request, kept beside the request rather than on it: a
 * property added to IncomingMessage only on sampled requests gave those objects a second hidden
 * class, and V8 threw away its optimised code for the server's hot path (Fastify's routeHandler,
 * where genReqId is inlined) whenever one showed up (`node --log-deopt`, 1% sampled: "dependent
 * field type constness changed" there).
 */
const httpSpans = new WeakMap<IncomingMessage, Span>();
/** Health probes and scrapes would be most of the spans and tell nothing. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);
const NO_ATTRIBUTES: Attributes = Object.freeze({}) as Attributes;

/**
 * The id of a new request (Fastify's genReqId): a fresh trace id from the CSPRNG (32 hex), so a
 * request_id from a user's error report finds its trace. With tracing on, the sampler the SDK
 * uses is asked about that trace id; a request it drops gets no span at all and runs outside any
 * span, so none of the helpers below starts a child for it (see recordingParent). A request it
 * keeps gets the HTTP server span, with that same trace id. The span is always a root:
 * a client's traceparent is never continued (its trace id would become the ledger's idempotency
 * key). Our own span, not @opentelemetry/instrumentation-http: that instrumentation cost a third
 * of the gateway's throughput in bench:observability even with 10% of traces sampled.
 */
export function requestIdForNewRequest(req: IncomingMessage): string {
  const traceId = newTraceId();
  if (!enabled) return traceId;
  const path = req.url?.split('?')[0] ?? '';
  if (UNTRACED_PATHS.has(path)) return traceId;
  const name = req.method ?? 'HTTP';
  const sampled = rootSampler!.shouldSample(ROOT_CONTEXT, traceId, name, SpanKind.SERVER, NO_ATTRIBUTES, []);
  // RECORD without SAMPLED would make a span no exporter is given: treated as not sampled.
  if (sampled.decision !== SamplingDecision.RECORD_AND_SAMPLED) return traceId;
  const attributes: Attributes = { 'http.request.method': req.method ?? '_OTHER', 'url.path': path, 'url.scheme': 'http', 'network.protocol.version': req.httpVersion };
  // The SDK asks the same sampler again (with the same trace id, the same answer) and adds what it returns.
  httpSpans.set(req, withChosenIds(traceId, newSpanId(), () => tracer!.startSpan(name, { kind: SpanKind.SERVER, attributes }, ROOT_CONTEXT)));
  return traceId;
}

/**
 * The span our spans are children of: `parent`, else the active one, when it is recording. An
 * unsampled request has no active span, so it pays for no child spans, no context switches and no
 * bound emitters: with a parent-based sampler (the SDK's default, and what
 * OTEL_TRACES_SAMPLER=parentbased_traceidratio configures) its children would have been dropped
 * anyway. With a sampler that is not parent-based they would have become orphan fragments. A
 * child of a recording parent is sampled too: for a child of a sampled parent in the same trace,
 * every sampler OTEL_TRACES_SAMPLER can name says so.
 */
function recordingParent(parent?: Span): Span | undefined {
  const span = parent ?? trace.getActiveSpan();
  return span?.isRecording() ? span : undefined;
}

/**
 * From an onRequest hook: names the HTTP span after the route Fastify matched (`POST
 * /mcp/:server`, with http.route, as the HTTP semantic conventions ask). The span is not made the
 * active one for the rest of the request, and no listener is added to the response: with every
 * request sampled, running the remaining hooks inside context.with and a response 'close'
 * listener each cost several times what the span itself does. The work that needs the span as its parent gets it
 * explicitly (httpSpanOf, withSpan), and endHttpSpan ends it from the onResponse hook.
 */
export function enterHttpSpan(req: IncomingMessage, route: string | undefined): void {
  const span = httpSpanOf(req);
  if (!span || !route) return;
  span.updateName(`${req.method ?? 'HTTP'} ${route}`);
  span.setAttribute('http.route', route);
}

/**
 * Ends the request's HTTP span with its status (from the onResponse hook), or without one when
 * the client went away first (onRequestAbort). Once: the span is forgotten after it ends.
 */
export function endHttpSpan(req: IncomingMessage, statusCode: number | undefined): void {
  const span = httpSpanOf(req);
  if (!span) return;
  httpSpans.delete(req);
  if (statusCode !== undefined) {
    span.setAttribute('http.response.status_code', statusCode);
    if (statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

/** The HTTP server span of a request that is being traced (sampled); no lookup while tracing is off. */
export function httpSpanOf(req: IncomingMessage): Span | undefined {
  return enabled ? httpSpans.get(req) : undefined;
}

/** Runs fn with `span` as the active span (log lines, child spans); without a span, just runs it. */
export function withSpan<T>(span: Span | undefined, fn: () => T): T {
  return span ? context.with(trace.setSpan(ROOT_CONTEXT, span), fn) : fn();
}

const NO_EXEMPLAR: Record<string, string> = {};

/** Exemplar labels for a metric observed in this span: its trace id, if the trace is sampled (exported). */
export function traceExemplar(span: Span | undefined): Record<string, string> {
  if (!span) return NO_EXEMPLAR;
  const ctx = span.spanContext();
  return ctx.traceFlags & TraceFlags.SAMPLED ? { trace_id: ctx.traceId } : NO_EXEMPLAR;
}

/** pino mixin: every log line written inside a span carries its ids. */
export function logTraceIds(): Record<string, string> {
  if (!enabled) return {};
  const span = trace.getActiveSpan();
  if (!span) return {};
  const ctx = span.spanContext();
  return { trace_id: ctx.traceId, span_id: ctx.spanId };
}

export interface McpOperation {
  method: string;
  tool: string | undefined;
  protocolVersion: string | undefined;
  jsonrpcId: string | number | undefined;
  server: string;
  plan: string;
}

/**
 * The MCP server span of one JSON-RPC request (`{mcp.method.name} {gen_ai.tool.name}`), a child
 * of the request's HTTP span; undefined when tracing is off or the request is not sampled.
 */
export function startMcpSpan(op: McpOperation, httpSpan: Span | undefined): Span | undefined {
  if (!enabled) return undefined;
  const parent = recordingParent(httpSpan);
  if (!parent) return undefined;
  const attributes: Attributes = {
    'mcp.method.name': op.method,
    'jsonrpc.protocol.version': '2.0',
    'network.transport': 'tcp',
    'network.protocol.name': 'http',
    'cryptomcp.server': op.server,
    'cryptomcp.plan': op.plan,
  };
  if (op.protocolVersion) attributes['mcp.protocol.version'] = op.protocolVersion;
  if (op.jsonrpcId !== undefined) attributes['jsonrpc.request.id'] = String(op.jsonrpcId);
  if (op.tool) {
    attributes['gen_ai.tool.name'] = op.tool;
    attributes['gen_ai.operation.name'] = 'execute_tool';
  }
  return childSpan(op.tool ? `${op.method} ${op.tool}` : op.method, SpanKind.SERVER, parent, attributes);
}

/** Ends the MCP span with the request's outcome (error.type is the public error code). */
export function endMcpSpan(span: Span | undefined, outcome: { code: string | undefined; status: number; creditsUsed: number; remaining: number | undefined }): void {
  if (!span) return;
  span.setAttribute('http.response.status_code', outcome.status);
  span.setAttribute('cryptomcp.credits.used', outcome.creditsUsed);
  if (outcome.remaining !== undefined) span.setAttribute('cryptomcp.credits.remaining', outcome.remaining);
  if (outcome.code) {
    span.setAttribute('error.type', outcome.code);
    span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.code });
  }
  span.end();
}

/**
 * Runs fn in a child span of `parent` (or of the active span), ending it with fn's outcome.
 * Without tracing, or outside a sampled request, it only calls fn.
 */
export function inSpan<T>(name: string, attributes: Attributes, parent: Span | undefined, fn: () => Promise<T>): Promise<T> {
  if (!enabled) return fn();
  const recording = recordingParent(parent);
  if (!recording) return fn();
  const span = childSpan(name, SpanKind.INTERNAL, recording, { ...attributes });
  return context.with(trace.setSpan(context.active(), span), fn).then(
    (value) => {
      span.end();
      return value;
    },
    (err: unknown) => {
      span.setStatus({ code: SpanStatusCode.ERROR, message: errorName(err) });
      span.setAttribute('error.type', errorName(err));
      span.end();
      throw err;
    },
  );
}

/** A public code (ApiError, ProviderError kind) or the class name; never a message, which may hold input. */
export function errorName(err: unknown): string {
  if (typeof err === 'object' && err !== null) {
    const e = err as { code?: unknown; kind?: unknown; name?: unknown };
    if (typeof e.code === 'string') return e.code;
    if (typeof e.kind === 'string') return e.kind;
    if (typeof e.name === 'string') return e.name;
  }
  return 'Error';
}

export interface UpstreamSpan {
  end(outcome: string, status: number | undefined): void;
}

/**
 * A client span for one attempt at an upstream provider. Only the host goes in: paths can carry
 * addresses and query strings keys, and neither belongs in a trace backend.
 */
export function upstreamSpan(provider: string, method: string, url: string, attempt: number): UpstreamSpan | undefined {
  const parent = enabled ? recordingParent() : undefined;
  if (!parent) return undefined;
  let host = '';
  try {
    host = new URL(url).hostname;
  } catch {
    // an unparseable URL fails in fetch; the span still records the attempt
  }
  const span = childSpan(method, SpanKind.CLIENT, parent, {
    'http.request.method': method,
    'server.address': host,
    'cryptomcp.provider': provider,
    ...(attempt > 0 ? { 'http.request.resend_count': attempt } : {}),
  });
  return {
    end(outcome, status) {
      if (status !== undefined) span.setAttribute('http.response.status_code', status);
      if (outcome !== 'ok') {
        span.setAttribute('error.type', outcome);
        span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
      }
      span.end();
    },
  };
}
