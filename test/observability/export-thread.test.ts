// The span export thread (server/telemetry/export-thread.ts): spans made on this thread are
// exported from a worker thread by exporters the SDK builds there from OTEL_* variables. Checked
// against a real OTLP/HTTP JSON receiver on loopback, beside an in-memory exporter fed by the same
// spans. Guarantees: what the receiver gets is what was recorded (ids, parent, name, kind, start
// and end to the nanosecond, attributes, events, links, status, instrumentation scope), the
// service name and exporter settings come from the environment given to the thread, only sampled
// spans are exported, forceFlush returns once the thread has exported everything it was handed,
// shutdown ends the thread after a last flush, and a thread that dies is reported, not waited on.
import { context, ROOT_CONTEXT, SamplingDecision, SpanKind, SpanStatusCode, trace, type HrTime } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan, type Sampler } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExportThreadSpanProcessor } from '../../server/telemetry/export-thread.ts';
import { plainAttributes as attrs, startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp.ts';
import { eventually } from '../helpers/wait.ts';

let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
});

afterAll(async () => {
  await receiver?.close();
});

/** Samples everything except spans named `record-only`, which it records without sampling. */
const sampler: Sampler = {
  shouldSample: (_ctx, _traceId, name) => ({ decision: name === 'record-only' ? SamplingDecision.RECORD : SamplingDecision.RECORD_AND_SAMPLED }),
  toString: () => 'test sampler',
};

function exportingThread(env: Record<string, string> = {}) {
  return new ExportThreadSpanProcessor({
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'export-thread-test',
      // Long enough that only forceFlush and shutdown export: the test sees when things are sent.
      OTEL_BSP_SCHEDULE_DELAY: '60000',
      ...env,
    },
  });
}

const nanos = (t: HrTime) => (BigInt(t[0]) * 1_000_000_000n + BigInt(t[1])).toString();

describe('span export thread', () => {
  it('exports from the worker exactly the sampled spans recorded on this thread, field for field, on forceFlush', async () => {
    const memory = new InMemorySpanExporter();
    const thread = exportingThread();
    const provider = new TracerProvider({ sampler, spanProcessors: [new SimpleSpanProcessor({ exporter: memory }), thread] });
    const tracer = provider.getTracer('cryptomcp');
    const pgTracer = provider.getTracer('@opentelemetry/instrumentation-pg', '0.77.0');

    const linked = tracer.startSpan('linked');
    linked.end();
    const root = tracer.startSpan('POST /mcp/:server', { kind: SpanKind.SERVER, attributes: { 'http.request.method': 'POST', 'http.response.status_code': 200 } });
    const parent = trace.setSpan(ROOT_CONTEXT, root);
    const mcp = tracer.startSpan(
      'tools/call get_prices',
      { kind: SpanKind.SERVER, attributes: { 'gen_ai.tool.name': 'get_prices', 'cryptomcp.credits.used': 1.5, ok: true, tags: ['a', 'b'] }, links: [{ context: linked.spanContext(), attributes: { why: 'retry' } }] },
      parent,
    );
    mcp.addEvent('cache miss', { key_kind: 'prices' });
    mcp.setStatus({ code: SpanStatusCode.ERROR, message: 'UPSTREAM_ERROR' });
    mcp.end();
    context.with(parent, () => pgTracer.startSpan('SELECT', { kind: SpanKind.CLIENT }).end());
    tracer.startSpan('record-only', {}, parent).end();
    root.end();

    await thread.forceFlush();
    const recorded = memory.getFinishedSpans().filter((s) => s.name !== 'record-only');
    expect(recorded).toHaveLength(4);
    // Nothing but what was recorded and sampled: the RECORD-only span stayed here.
    expect(receiver.received.map((r) => r.span.name).sort()).toEqual(recorded.map((s) => s.name).sort());

    const find = (s: ReadableSpan) => receiver.received.find((r) => r.span.spanId === s.spanContext().spanId)!;
    for (const s of recorded) {
      const { span, scope, serviceName } = find(s);
      expect(serviceName).toBe('export-thread-test');
      expect(scope.name).toBe(s.instrumentationScope.name);
      expect(scope.version).toBe(s.instrumentationScope.version);
      expect(span.traceId).toBe(s.spanContext().traceId);
      expect(span.parentSpanId || undefined).toBe(s.parentSpanContext?.spanId);
      expect(span.kind).toBe(s.kind + 1); // OTLP numbers kinds from 1 (SPAN_KIND_INTERNAL)
      expect(span.startTimeUnixNano).toBe(nanos(s.startTime));
      expect(span.endTimeUnixNano).toBe(nanos(s.endTime));
      expect(attrs(span.attributes)).toEqual(s.attributes);
      expect(span.status.code ?? 0).toBe(s.status.code);
      expect(span.events.map((e) => ({ name: e.name, time: e.timeUnixNano, attributes: attrs(e.attributes) }))).toEqual(
        s.events.map((e) => ({ name: e.name, time: nanos(e.time), attributes: e.attributes ?? {} })),
      );
      expect(span.links.map((l) => ({ traceId: l.traceId, spanId: l.spanId, attributes: attrs(l.attributes) }))).toEqual(
        s.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId, attributes: l.attributes ?? {} })),
      );
    }
    expect(find(recorded.find((s) => s.name === 'tools/call get_prices')!).span.status.message).toBe('UPSTREAM_ERROR');

    await provider.shutdown();
  });

  it('exports nothing before a flush or the schedule delay, and shutdown exports the rest and ends the thread', async () => {
    receiver.received.length = 0;
    const thread = exportingThread({ OTEL_SERVICE_NAME: 'export-thread-shutdown' });
    const provider = new TracerProvider({ sampler, spanProcessors: [thread] });
    const before = receiver.requests();
    for (let i = 0; i < 10; i++) provider.getTracer('cryptomcp').startSpan(`span ${i}`).end();
    // The thread reads the spans from the ring within 100 ms, but its batch processor holds them
    // for OTEL_BSP_SCHEDULE_DELAY (60 s here). A window in which nothing may be sent is the
    // guarantee under test, so this one waits a fixed time on purpose.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.requests()).toBe(before);
    await provider.shutdown();
    expect(receiver.received.map((r) => r.span.name).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `span ${i}`).sort());
    expect(receiver.received.every((r) => r.serviceName === 'export-thread-shutdown')).toBe(true);
    // After shutdown the thread is gone: new spans are dropped without error and a flush is answered.
    provider.getTracer('cryptomcp').startSpan('late').end();
    await thread.forceFlush();
    expect(receiver.received.some((r) => r.span.name === 'late')).toBe(false);
  });

  it('exports on its own once OTEL_BSP_MAX_EXPORT_BATCH_SIZE spans wait or the oldest has waited OTEL_BSP_SCHEDULE_DELAY, and a backlog beyond OTEL_BSP_MAX_QUEUE_SIZE whole', async () => {
    const names = (service: string) => receiver.received.filter((r) => r.serviceName === service).map((r) => r.span.name).sort();
    const until = (check: () => boolean, ms: number) => eventually(check, ms).catch(() => {
      // The expectation after each wait says what did not arrive.
    });
    const spans = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix} ${i}`);

    // A full batch goes at once, without a flush, though the schedule delay is a minute.
    const byBatch = exportingThread({ OTEL_SERVICE_NAME: 'by-batch', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '5' });
    const batchProvider = new TracerProvider({ sampler, spanProcessors: [byBatch] });
    for (const name of spans('b', 4)) batchProvider.getTracer('cryptomcp').startSpan(name).end();
    // Four spans must not be sent on their own: a window in which nothing may happen, on purpose.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(names('by-batch')).toEqual([]);
    batchProvider.getTracer('cryptomcp').startSpan('b 4').end();
    // Any time short of the schedule delay (a minute) shows the batch went on its own; the thread
    // itself may take seconds to start on a loaded machine.
    await until(() => names('by-batch').length === 5, 20_000);
    expect(names('by-batch')).toEqual(spans('b', 5).sort());

    // One span goes once it has waited the schedule delay.
    const byDelay = exportingThread({ OTEL_SERVICE_NAME: 'by-delay', OTEL_BSP_SCHEDULE_DELAY: '300' });
    const delayProvider = new TracerProvider({ sampler, spanProcessors: [byDelay] });
    const ended = Date.now();
    delayProvider.getTracer('cryptomcp').startSpan('d 0').end();
    await until(() => names('by-delay').length === 1, 20_000);
    expect(names('by-delay')).toEqual(['d 0']);
    expect(Date.now() - ended).toBeGreaterThanOrEqual(300);

    // 35 spans waiting, a queue of 10: all of them exported, none dropped by the batch processor.
    const backlog = exportingThread({ OTEL_SERVICE_NAME: 'backlog', OTEL_BSP_MAX_QUEUE_SIZE: '10', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '10' });
    const backlogProvider = new TracerProvider({ sampler, spanProcessors: [backlog] });
    for (const name of spans('q', 35)) backlogProvider.getTracer('cryptomcp').startSpan(name).end();
    await backlog.forceFlush();
    expect(names('backlog')).toEqual(spans('q', 35).sort());
    expect(backlog.droppedSpans).toBe(0);

    await Promise.all([batchProvider.shutdown(), delayProvider.shutdown(), backlogProvider.shutdown()]);
  }, 90_000);

  it('when the thread dies, says so once on stderr, tells waiting flushes why, drops later spans, and still shuts down', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      // A heap far too small for the SDK the worker loads: it dies of ERR_WORKER_OUT_OF_MEMORY
      // while starting, as a real thread dies of a bug or a runaway queue.
      const thread = new ExportThreadSpanProcessor({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint }, resourceLimits: { maxOldGenerationSizeMb: 8 } });
      const provider = new TracerProvider({ sampler, spanProcessors: [thread] });
      provider.getTracer('cryptomcp').startSpan('before the crash').end();
      await expect(thread.forceFlush()).rejects.toThrow(/memory/);
      const before = receiver.requests();
      provider.getTracer('cryptomcp').startSpan('after the crash').end();
      await expect(thread.forceFlush()).rejects.toThrow(/memory/);
      await provider.shutdown();
      expect(receiver.requests()).toBe(before);
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
      const tracing = warnings.filter((w) => w.name === 'TracingWarning');
      expect(tracing).toHaveLength(1);
      expect(tracing[0]!.message).toMatch(/span export thread failed.*memory/);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
