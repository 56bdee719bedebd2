// The real `cryptomcp serve` process exports traces over OTLP/HTTP when, and only when, the
// standard OTEL_* variables ask for it (issue 6): a loopback OTLP receiver gets the spans of a
// tools/call, whose trace id is the request_id the client saw, with the HTTP, MCP, metering and
// tool spans in it. With OTEL_SDK_DISABLED the same process sends nothing and still answers with
// request ids of the trace-id form.
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp.ts';
import { spawnServer, stopServer } from '../helpers/process.ts';
import { eventually } from '../helpers/wait.ts';
import { createAccountWithKey, createUnlimitedPlan, post, toolCall } from '../helpers/service.ts';
import { ROOT_CONTEXT, SamplingDecision, SpanKind, trace, TraceFlags } from '@opentelemetry/api';
import * as SdkTrace from '@opentelemetry/sdk-trace';
import { describeTracing, samplerFromEnv, tracingRequested } from '../../server/telemetry/start.ts';
import { buildEnv } from '../../operator/builders/mcpserver.ts';
import type { MCPServer } from '../../operator/api/types.ts';

let db: TestDatabase;
let receiver: OtlpReceiver;
const children: ChildProcess[] = [];
let key = '';

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  db = await createTestDatabase();
  await createUnlimitedPlan(db, 'otlp-plan', 100);
  key = (await createAccountWithKey(db, { plan: 'otlp-plan' })).key;
}, 60_000);

afterAll(async () => {
  await Promise.all(children.map((c) => stopServer(c)));
  await db?.drop();
  await receiver?.close();
});

const allSpans = () => receiver.received.map((r) => r.span);

/** A `serve` process exporting to the receiver over OTLP/HTTP JSON every 100 ms, plus `env`. */
async function startExporting(env: Record<string, string> = {}) {
  const server = await spawnServer(db.url, {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
    OTEL_METRICS_EXPORTER: 'none',
    OTEL_LOGS_EXPORTER: 'none',
    ...env,
  });
  children.push(server.child);
  return server;
}

describe('OTLP export from the serve process', () => {
  it('exports the spans of a tools/call to the endpoint OTEL_EXPORTER_OTLP_ENDPOINT names', async () => {
    const server = await startExporting({ OTEL_SERVICE_NAME: 'cryptomcp-otlp-test' });
    const res = await post(`${server.url}/mcp/market-intelligence`, toolCall('bench_echo', { message: 'otlp' }), { 'x-api-key': key });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id')!;
    // The batch processor sends every 100 ms; stopping the server flushes what is left.
    await eventually(() => allSpans().some((s) => s.traceId === requestId && s.name === 'tools/call bench_echo'), 10_000, 'the MCP span at the receiver').catch(() => {
      // Not sent yet: stopping the server flushes it, and the checks below say what is missing.
    });
    await stopServer(server.child);
    const spans = allSpans().filter((s) => s.traceId === requestId);
    const names = spans.map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(['tools/call bench_echo', 'cryptomcp.metering.reserve', 'execute_tool bench_echo']));
    expect(spans.filter((s) => !s.parentSpanId)).toHaveLength(1);
    expect(receiver.received.every((r) => r.path === '/v1/traces')).toBe(true);
    expect(receiver.received[0]!.serviceName).toBe('cryptomcp-otlp-test');
    const mcp = spans.find((s) => s.name === 'tools/call bench_echo')!;
    expect(mcp.attributes.find((a) => a.key === 'gen_ai.tool.name')?.value).toEqual({ stringValue: 'bench_echo' });
  });

  it("a pod configured by an MCPServer's spec.tracing exports its spans, sampled as set, with the pod's resource attributes", async () => {
    // The env the operator gives the pods, resolved as the kubelet would: fieldRefs from the pod,
    // $(VAR) from variables defined before. Only the OTEL_* part matters here.
    const mcp: MCPServer = {
      apiVersion: 'cryptomcp.dev/v1alpha1',
      kind: 'MCPServer',
      metadata: { name: 'market-intelligence', namespace: 'cryptomcp' },
      spec: { server: 'market-intelligence', database: { secretRef: { name: 'db' } }, tracing: { endpoint: receiver.endpoint, protocol: 'http/json', sampleRatio: 1 } },
    };
    const pod = { 'metadata.name': 'market-intelligence-5d8f7-x2x9k', 'metadata.namespace': 'cryptomcp' } as Record<string, string>;
    const env: Record<string, string> = {};
    for (const v of buildEnv(mcp).filter((e) => e.name.startsWith('OTEL_'))) {
      env[v.name] = v.valueFrom?.fieldRef ? pod[v.valueFrom.fieldRef.fieldPath]! : v.value!.replace(/\$\(([A-Z_]+)\)/g, (_, name: string) => env[name]!);
    }
    const server = await spawnServer(db.url, { ...env, OTEL_BSP_SCHEDULE_DELAY: '100' });
    children.push(server.child);
    // The pod's ready line says where its spans go and what share it samples.
    expect(server.tracing).toContain(receiver.endpoint);
    expect(server.tracing).toContain('100% of requests sampled (parentbased_traceidratio)');
    const res = await post(`${server.url}/mcp/market-intelligence`, toolCall('bench_echo', { message: 'from a pod' }), { 'x-api-key': key });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id')!;
    await stopServer(server.child); // flushes
    const mine = receiver.received.filter((r) => r.span.traceId === requestId);
    expect(mine.map((r) => r.span.name)).toEqual(expect.arrayContaining(['tools/call bench_echo', 'execute_tool bench_echo']));
    for (const r of mine) {
      expect(r.resource).toMatchObject({
        'service.name': 'cryptomcp',
        'k8s.pod.name': 'market-intelligence-5d8f7-x2x9k',
        'k8s.namespace.name': 'cryptomcp',
        'k8s.deployment.name': 'market-intelligence',
        'cryptomcp.server': 'market-intelligence',
      });
    }
  });

  // bench:observability weighs the export thread against the SDK's own batch processor on the
  // main thread (CRYPTOMCP_BENCH_PLAIN_TELEMETRY=export): a fair comparison only if both export
  // the same trace.
  it("with the export piece swapped for the SDK's batch processor, the same trace is exported", async () => {
    const server = await startExporting({ CRYPTOMCP_BENCH_PLAIN_TELEMETRY: 'export' });
    const res = await post(`${server.url}/mcp/market-intelligence`, toolCall('bench_echo', { message: 'plain export' }), { 'x-api-key': key });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id')!;
    await stopServer(server.child); // flushes
    const trace = allSpans().filter((s) => s.traceId === requestId);
    expect(trace.map((s) => s.name)).toEqual(expect.arrayContaining(['POST /mcp/:server', 'tools/call bench_echo', 'cryptomcp.metering.reserve', 'execute_tool bench_echo']));
    expect(trace.filter((s) => !s.parentSpanId)).toHaveLength(1);
    for (const s of trace) if (s.parentSpanId) expect(trace.some((p) => p.spanId === s.parentSpanId)).toBe(true);
    const mcp = trace.find((s) => s.name === 'tools/call bench_echo')!;
    expect(mcp.attributes.find((a) => a.key === 'gen_ai.tool.name')?.value).toEqual({ stringValue: 'bench_echo' });
  });

  it('a benchmark setting naming an unknown piece stops the process at start with the name', async () => {
    await expect(startExporting({ CRYPTOMCP_BENCH_PLAIN_TELEMETRY: 'spans' })).rejects.toThrow(/CRYPTOMCP_BENCH_PLAIN_TELEMETRY: unknown piece "spans"/);
  });

  it('sends nothing when OTEL_SDK_DISABLED says so, even with an endpoint set; request ids keep the trace-id form', async () => {
    const before = receiver.received.length;
    const server = await startExporting({ OTEL_SDK_DISABLED: 'true' });
    const res = await post(`${server.url}/mcp/market-intelligence`, toolCall('bench_echo'), { 'x-api-key': key });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f]{32}$/);
    await stopServer(server.child);
    expect(receiver.received.length).toBe(before);
  });

  it('with a ratio sampler, a sampled request exports its whole trace and an unsampled one exports nothing (no orphan spans)', async () => {
    const server = await startExporting({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' });
    const ids: string[] = [];
    // 24 calls at one half: all or none sampled has odds of 2^-23.
    for (let i = 0; i < 24; i++) {
      const res = await post(`${server.url}/mcp/market-intelligence`, toolCall('bench_echo', { message: 'ratio' }, i), { 'x-api-key': key });
      expect(res.status).toBe(200);
      ids.push(res.headers.get('x-request-id')!);
    }
    await stopServer(server.child); // flushes the batch processor
    const spans = allSpans().filter((s) => ids.includes(s.traceId));
    const traced = new Set(spans.map((s) => s.traceId));
    expect(traced.size).toBeGreaterThan(0);
    expect(traced.size).toBeLessThan(ids.length);
    for (const traceId of traced) {
      const trace = spans.filter((s) => s.traceId === traceId);
      expect(trace.map((s) => s.name)).toEqual(expect.arrayContaining(['POST /mcp/:server', 'tools/call bench_echo', 'cryptomcp.metering.reserve', 'execute_tool bench_echo']));
      // One root, and every other span's parent is in the same exported trace.
      expect(trace.filter((s) => !s.parentSpanId)).toHaveLength(1);
      for (const s of trace) if (s.parentSpanId) expect(trace.some((p) => p.spanId === s.parentSpanId)).toBe(true);
    }
  });

  it('tracing is on only when OTEL_* asks for an exporter (off by default)', () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(false);
    expect(tracingRequested({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' })).toBe(false);
  });

  it('the sampler asked before a request has a span is the one OTEL_TRACES_SAMPLER names, with the SDK defaults', () => {
    // Trace ids whose ratio decision is known: the ratio sampler keeps an id when the XOR of its
    // four 32-bit words falls under ratio * 2^32; these two sit at the bottom and the top.
    const low = '0000000000000000000000000000000f';
    const high = '000000000000000000000000ffffffff';
    const decide = (env: NodeJS.ProcessEnv, traceId: string, parent = ROOT_CONTEXT) =>
      samplerFromEnv(env, SdkTrace).shouldSample(parent, traceId, 'POST', SpanKind.SERVER, {}, []).decision;
    const sampledParent = trace.setSpanContext(ROOT_CONTEXT, { traceId: high, spanId: '00000000000000ff', traceFlags: TraceFlags.SAMPLED });
    // Unset or unknown: the SDK's default, parentbased_always_on.
    expect(decide({}, high)).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    expect(decide({ OTEL_TRACES_SAMPLER: 'jaeger_remote' }, high)).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    expect(decide({ OTEL_TRACES_SAMPLER: 'always_off' }, low)).toBe(SamplingDecision.NOT_RECORD);
    expect(decide({ OTEL_TRACES_SAMPLER: 'always_on' }, high)).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    expect(decide({ OTEL_TRACES_SAMPLER: 'parentbased_always_off' }, low)).toBe(SamplingDecision.NOT_RECORD);
    expect(decide({ OTEL_TRACES_SAMPLER: 'parentbased_always_off' }, low, sampledParent)).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    for (const name of ['traceidratio', 'parentbased_traceidratio']) {
      expect(decide({ OTEL_TRACES_SAMPLER: name, OTEL_TRACES_SAMPLER_ARG: '0.1' }, low)).toBe(SamplingDecision.RECORD_AND_SAMPLED);
      expect(decide({ OTEL_TRACES_SAMPLER: name, OTEL_TRACES_SAMPLER_ARG: '0.1' }, high)).toBe(SamplingDecision.NOT_RECORD);
      expect(decide({ OTEL_TRACES_SAMPLER: name, OTEL_TRACES_SAMPLER_ARG: '0' }, low)).toBe(SamplingDecision.NOT_RECORD);
      // Blank, unparseable or out of range: the SDK's default ratio, 1.
      for (const arg of [undefined, 'abc', '1.5', '-0.1']) {
        expect(decide({ OTEL_TRACES_SAMPLER: name, ...(arg === undefined ? {} : { OTEL_TRACES_SAMPLER_ARG: arg }) }, high)).toBe(SamplingDecision.RECORD_AND_SAMPLED);
      }
    }
  });

  it("the start-up banner's tracing line says where spans go and what share of requests the sampler keeps, and warns when it is every request", () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(describeTracing({})).toMatch(/^off /);
    expect(describeTracing({ ...endpoint, OTEL_SDK_DISABLED: 'true' })).toMatch(/^off /);
    // What the operator gives a pod by default (spec.tracing.sampleRatio 0.01).
    expect(describeTracing({ ...endpoint, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' })).toBe(
      'otlp to http://collector:4318, 1% of requests sampled (parentbased_traceidratio)',
    );
    expect(describeTracing({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces', OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.125' })).toBe(
      'otlp to http://c:4318/v1/traces, 12.5% of requests sampled (traceidratio)',
    );
    // The ratio the sampler would use: an unparseable argument means 1, as in samplerFromEnv.
    expect(describeTracing({ ...endpoint, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: 'abc' })).toContain('100% of requests sampled');
    expect(describeTracing({ OTEL_TRACES_EXPORTER: 'console', OTEL_TRACES_SAMPLER: 'always_off' })).toBe('console, no request sampled');
    // Unset or unknown: the default samples everything, and the line says what production sets.
    for (const env of [endpoint, { ...endpoint, OTEL_TRACES_SAMPLER: 'jaeger_remote' }]) {
      const line = describeTracing(env);
      expect(line).toMatch(/every request sampled/);
      expect(line).toContain('parentbased_traceidratio');
    }
  });
});
