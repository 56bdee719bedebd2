// Traces (issue 6), with the SDK's in-memory exporter in place of OTLP: tracing is started the
// way server/telemetry/register.ts starts it, before the service's modules are loaded (they are
// imported dynamically below), and then real requests go through the real service over HTTP.
// Guarantees: one trace per request, rooted at the HTTP span, with the MCP span (semantic
// convention name and attributes), metering, tool, SQL and upstream spans as its descendants;
// the request_id clients get is that trace's id; a client's traceparent is not continued; no
// attribute carries the key or the account; log lines written inside a request carry the ids.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTelemetry } from '../../server/telemetry/start.ts';
import { logTraceIds } from '../../server/telemetry/tracing.ts';

const exporter = new InMemorySpanExporter();
const telemetry = startTelemetry({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });

// Only now the modules that load pg, http and Fastify.
const { createTestDatabase } = await import('../helpers/db.ts');
const { createAccountWithKey, createUnlimitedPlan, post, toolCall } = await import('../helpers/service.ts');
const { eventually } = await import('../helpers/wait.ts');
const { loadConfig } = await import('../../server/config.ts');
const { startService } = await import('../../server/runtime.ts');

type Service = Awaited<ReturnType<typeof startService>>;
type TestDb = Awaited<ReturnType<typeof createTestDatabase>>;

let db: TestDb;
let svc: Service;
let key = '';
let accountId = '';
let upstream: http.Server;
const logLines: Record<string, unknown>[] = [];

beforeAll(async () => {
  upstream = http.createServer((_req, res) => res.writeHead(503).end());
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  db = await createTestDatabase();
  await createUnlimitedPlan(db, 'trace-plan', 1000);
  const created = await createAccountWithKey(db, { plan: 'trace-plan' });
  key = created.key;
  accountId = created.account.id;
  const logs = new PassThrough();
  logs.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) logLines.push(JSON.parse(line) as Record<string, unknown>);
  });
  const config = loadConfig({
    DATABASE_URL: db.url,
    PORT: '0',
    METRICS_PORT: '0',
    HOST: '127.0.0.1',
    CRYPTOMCP_BENCH_TOOLS: '1',
    DATABASE_POOL_MAX: '4',
    MARKET_DATA: 'live',
    COINGECKO_BASE_URL: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/api/v3`,
    COINGECKO_TIMEOUT_MS: '2000',
  });
  svc = await startService(config, { logger: { level: 'error', stream: logs } });
  // A tool that fails with a fault (not a coded error), so the gateway logs it.
  const market = svc.registry.get('market-intelligence')!;
  const echo = market.tools.get('bench_echo')!;
  market.tools.set('bench_crash', {
    ...echo,
    name: 'bench_crash',
    definition: {
      ...echo.definition,
      name: 'bench_crash',
      handler: async () => {
        throw new Error('deliberate fault');
      },
    },
  });
}, 60_000);

afterAll(async () => {
  await svc?.close();
  await db?.drop();
  await telemetry.shutdown();
  await new Promise((resolve) => upstream?.close(resolve));
});

const url = () => `${svc.url}/mcp/market-intelligence`;

/**
 * The finished spans of one trace, once its HTTP span and the named span have ended (the MCP span
 * ends in the onResponse hook, just after the answer is out).
 */
async function traceOf(traceId: string, waitFor: string): Promise<ReadableSpan[]> {
  const spans = () => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
  return eventually(
    () => {
      const found = spans();
      return found.some((s) => s.kind === SpanKind.SERVER && !s.parentSpanContext) && found.some((s) => s.name === waitFor) ? found : undefined;
    },
    10_000,
    `a finished root and ${waitFor} in trace ${traceId} (so far: ${spans().map((s) => s.name).join(', ')})`,
  );
}

const parentOf = (spans: ReadableSpan[], span: ReadableSpan) => spans.find((s) => s.spanContext().spanId === span.parentSpanContext?.spanId);
function isDescendant(spans: ReadableSpan[], span: ReadableSpan, ancestor: ReadableSpan): boolean {
  for (let p = parentOf(spans, span); p; p = parentOf(spans, p)) if (p === ancestor) return true;
  return false;
}

describe('tracing', () => {
  it('a tools/call is one trace: HTTP root, the MCP span, metering, tool and SQL spans; request_id is its trace id', async () => {
    const res = await post(url(), toolCall('bench_echo', { message: 'traced' }, 7), { 'x-api-key': key });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id')!;
    expect(requestId).toMatch(/^[0-9a-f]{32}$/);
    const envelope = (res.body as { result: { structuredContent: { metadata: { request_id: string } } } }).result.structuredContent;
    expect(envelope.metadata.request_id).toBe(requestId);

    const spans = await traceOf(requestId, 'tools/call bench_echo');
    const roots = spans.filter((s) => !s.parentSpanContext);
    expect(roots).toHaveLength(1);
    expect(roots[0]!.kind).toBe(SpanKind.SERVER);
    expect(roots[0]!.attributes['http.request.method']).toBe('POST');
    // Fastify's route on the HTTP span.
    expect(roots[0]!.name).toBe('POST /mcp/:server');
    expect(roots[0]!.attributes['http.route']).toBe('/mcp/:server');
    // Ended from the onResponse hook, with the status the client got.
    expect(roots[0]!.attributes['http.response.status_code']).toBe(200);

    const mcp = spans.find((s) => s.name === 'tools/call bench_echo')!;
    expect(mcp, spans.map((s) => s.name).join(', ')).toBeDefined();
    expect(mcp.kind).toBe(SpanKind.SERVER);
    expect(mcp.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'bench_echo',
      'gen_ai.operation.name': 'execute_tool',
      'jsonrpc.request.id': '7',
      'jsonrpc.protocol.version': '2.0',
      'network.transport': 'tcp',
      'cryptomcp.server': 'market-intelligence',
      'cryptomcp.plan': 'trace-plan',
      'cryptomcp.credits.used': 1,
      'http.response.status_code': 200,
    });
    expect(mcp.attributes['error.type']).toBeUndefined();
    expect(isDescendant(spans, mcp, roots[0]!)).toBe(true);

    const metering = spans.find((s) => s.name === 'cryptomcp.metering.reserve')!;
    const tool = spans.find((s) => s.name === 'execute_tool bench_echo')!;
    expect(parentOf(spans, metering)).toBe(mcp);
    expect(parentOf(spans, tool)).toBe(mcp);
    expect(tool.attributes['gen_ai.tool.name']).toBe('bench_echo');

    // The metering statement itself, as a pg span in this request's trace.
    const sql = spans.filter((s) => s.attributes['db.system.name'] === 'postgresql' || s.attributes['db.system'] === 'postgresql');
    expect(sql.length, spans.map((s) => s.name).join(', ')).toBeGreaterThan(0);
    expect(sql.some((s) => isDescendant(spans, s, metering))).toBe(true);
    // The key's lookup (this is the key's first request, so the cache misses) directly under the HTTP span.
    expect(sql.some((s) => parentOf(spans, s) === roots[0])).toBe(true);
  });

  it("the request latency histogram carries the trace id of a sampled request as its bucket's exemplar", async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 3; i++) ids.add((await post(url(), toolCall('bench_echo'), { 'x-api-key': key })).headers.get('x-request-id')!);
    const res = await fetch(`http://127.0.0.1:${svc.metricsPort}/metrics`);
    expect(res.headers.get('content-type')).toContain('application/openmetrics-text');
    const text = await res.text();
    const exemplars = [...text.matchAll(/^cryptomcp_mcp_request_duration_seconds_bucket\{[^}]*tool="bench_echo"[^}]*\} \d+ # \{trace_id="([0-9a-f]{32})"\}/gm)].map((m) => m[1]);
    expect(exemplars.length).toBeGreaterThan(0);
    expect(exemplars.some((id) => ids.has(id!))).toBe(true);
  });

  it('a request refused before the MCP layer (401, unknown key) is still one whole trace, its HTTP span ended with the status', async () => {
    const res = await post(url(), toolCall('bench_echo'), { 'x-api-key': 'cmcp_live_not_a_key' });
    expect(res.status).toBe(401);
    const requestId = res.headers.get('x-request-id')!;
    const spans = await traceOf(requestId, 'POST /mcp/:server');
    const root = spans.find((s) => !s.parentSpanContext)!;
    expect(root.attributes['http.response.status_code']).toBe(401);
    expect(spans.filter((s) => s.kind === SpanKind.SERVER && !s.parentSpanContext)).toHaveLength(1);
  });

  it('each request has its own trace', async () => {
    const a = await post(url(), toolCall('bench_echo'), { 'x-api-key': key });
    const b = await post(url(), toolCall('bench_echo'), { 'x-api-key': key });
    const ida = a.headers.get('x-request-id')!;
    const idb = b.headers.get('x-request-id')!;
    expect(ida).not.toBe(idb);
    const spansA = await traceOf(ida, 'tools/call bench_echo');
    const spansB = await traceOf(idb, 'tools/call bench_echo');
    expect(spansA.filter((s) => s.name === 'tools/call bench_echo')).toHaveLength(1);
    expect(spansB.filter((s) => s.name === 'tools/call bench_echo')).toHaveLength(1);
  });

  it('a failing tool marks the MCP span with its error code, and the error body carries the trace id', async () => {
    const res = await post(url(), toolCall('bench_fail'), { 'x-api-key': key });
    expect(res.status).toBe(502);
    const requestId = res.headers.get('x-request-id')!;
    const body = res.body as { error: { code: string; details: { request_id?: string } }; request_id?: string };
    expect(body.error.details.request_id ?? body.request_id).toBe(requestId);
    const spans = await traceOf(requestId, 'tools/call bench_fail');
    const mcp = spans.find((s) => s.name === 'tools/call bench_fail')!;
    expect(mcp.status.code).toBe(SpanStatusCode.ERROR);
    expect(mcp.attributes['error.type']).toBe('UPSTREAM_ERROR');
    expect(mcp.attributes['cryptomcp.credits.used']).toBe(0);
    const tool = spans.find((s) => s.name === 'execute_tool bench_fail')!;
    expect(tool.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('every upstream attempt is a client span under the tool, named by provider, without path or query', async () => {
    const res = await post(url(), toolCall('get_prices', { assets: ['bitcoin'] }), { 'x-api-key': key });
    expect(res.status).toBe(200);
    const spans = await traceOf(res.headers.get('x-request-id')!, 'tools/call get_prices');
    const tool = spans.find((s) => s.name === 'execute_tool get_prices')!;
    const attempts = spans.filter((s) => s.kind === SpanKind.CLIENT && s.attributes['cryptomcp.provider'] === 'live:coingecko');
    expect(attempts.length, spans.map((s) => `${s.name} ${JSON.stringify(s.attributes)}`).join('\n')).toBeGreaterThan(0);
    for (const attempt of attempts) {
      expect(isDescendant(spans, attempt, tool)).toBe(true);
      expect(attempt.attributes).toMatchObject({ 'server.address': '127.0.0.1', 'http.response.status_code': 503, 'error.type': 'error' });
      expect(Object.values(attempt.attributes).some((v) => String(v).includes('/api/v3'))).toBe(false);
    }
  });

  it("a client's traceparent is not continued (its trace id would become the ledger's request id)", async () => {
    const foreign = '4bf92f3577b34da6a3ce929d0e0e4736';
    const res = await post(url(), toolCall('bench_echo'), { 'x-api-key': key, traceparent: `00-${foreign}-00f067aa0ba902b7-01` });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).not.toBe(foreign);
    expect(exporter.getFinishedSpans().some((s) => s.spanContext().traceId === foreign)).toBe(false);
  });

  it('no span attribute carries the API key or the account id', () => {
    for (const span of exporter.getFinishedSpans()) {
      for (const value of Object.values(span.attributes)) {
        expect(String(value)).not.toContain(key);
        expect(String(value)).not.toContain(accountId);
      }
    }
  });

  it('a log line written inside a request carries its trace id (= request_id) and span id', async () => {
    const res = await post(url(), toolCall('bench_crash'), { 'x-api-key': key });
    expect(res.status).toBe(500);
    const requestId = res.headers.get('x-request-id')!;
    await traceOf(requestId, 'tools/call bench_crash');
    const line = logLines.find((l) => l.reqId === requestId && l.msg === 'tool failed');
    expect(line, JSON.stringify(logLines)).toBeDefined();
    expect(line!.trace_id).toBe(requestId);
    expect(line!.span_id).toMatch(/^[0-9a-f]{16}$/);
    expect(JSON.stringify(line)).not.toContain(key);
  });

  it('logTraceIds returns the active span ids and nothing outside a span', () => {
    expect(logTraceIds()).toEqual({});
    trace.getTracer('test').startActiveSpan('probe', (span) => {
      expect(logTraceIds()).toEqual({ trace_id: span.spanContext().traceId, span_id: span.spanContext().spanId });
      span.end();
    });
  });
});
