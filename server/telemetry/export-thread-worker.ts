// The span export thread (see export-thread.ts). It runs its own OpenTelemetry SDK, configured by
// the OTEL_* variables the way the main thread's would have been (exporter and protocol, endpoint,
// headers, batch settings, resource), and replays each ended span into it: a span started with
// the recorded name, kind, ids, parent, start time, attributes and links, given its events and
// status, and ended at the recorded end time. The SDK then batches and exports it as if it had
// been made here. Sampling already happened on the main thread, so everything here is kept.
import { parentPort } from 'node:worker_threads';
import { createTraceState, ROOT_CONTEXT, trace, type Context, type ProxyTracerProvider, type Tracer } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { AlwaysOnSampler, type IdGenerator, type TracerProvider } from '@opentelemetry/sdk-trace';
import type { FromExportThread, SpanRecord, ToExportThread } from './export-thread.ts';

/** Hands the SDK the recorded ids of the span being replayed. */
class RecordedIds implements IdGenerator {
  traceId = '';
  spanId = '';
  generateTraceId(): string {
    return this.traceId;
  }
  generateSpanId(): string {
    return this.spanId;
  }
}

const ids = new RecordedIds();
const sdk = new NodeSDK({
  serviceName: process.env.OTEL_SERVICE_NAME ?? 'cryptomcp',
  sampler: new AlwaysOnSampler(),
  idGenerator: ids,
  // Traces only: no metric readers, no log processors, no instrumentation, no propagation.
  metricReaders: [],
  logRecordProcessors: [],
  instrumentations: [],
  textMapPropagator: null,
});
sdk.start();
// Undefined when the environment names no usable trace exporter (the SDK has warned): spans are
// then dropped here.
const provider = trace.getTracerProvider() as ProxyTracerProvider;
const delegate = provider.getDelegate() as Partial<TracerProvider>;

const tracers = new Map<string, Tracer>();
function tracerFor(scope: SpanRecord['scope']): Tracer {
  const key = `${scope.name}\u0000${scope.version ?? ''}\u0000${scope.schemaUrl ?? ''}`;
  let tracer = tracers.get(key);
  if (!tracer) {
    tracer = provider.getTracer(scope.name, scope.version, scope.schemaUrl ? { schemaUrl: scope.schemaUrl } : undefined);
    tracers.set(key, tracer);
  }
  return tracer;
}

function replay(r: SpanRecord): void {
  ids.traceId = r.traceId;
  ids.spanId = r.spanId;
  const traceState = r.traceState ? createTraceState(r.traceState) : undefined;
  const parent: Context = r.parentSpanId
    ? trace.setSpanContext(ROOT_CONTEXT, { traceId: r.traceId, spanId: r.parentSpanId, traceFlags: r.traceFlags, isRemote: r.parentIsRemote ?? false, traceState })
    : ROOT_CONTEXT;
  const span = tracerFor(r.scope).startSpan(
    r.name,
    {
      kind: r.kind,
      attributes: r.attributes,
      startTime: r.startTime,
      links: r.links.map((l) => ({ context: { traceId: l.traceId, spanId: l.spanId, traceFlags: l.traceFlags }, attributes: l.attributes })),
    },
    parent,
  );
  for (const e of r.events) span.addEvent(e.name, e.attributes, e.time);
  span.setStatus(r.status);
  span.end(r.endTime);
}

async function answer(id: number, work: () => Promise<void>): Promise<void> {
  let reply: FromExportThread = { type: 'done', id };
  try {
    await work();
  } catch (err) {
    reply = { type: 'done', id, error: err instanceof Error ? err.message : String(err) };
  }
  parentPort!.postMessage(reply);
}

parentPort!.on('message', (msg: ToExportThread) => {
  switch (msg.type) {
    case 'spans':
      for (const r of msg.spans) replay(r);
      break;
    case 'flush':
      void answer(msg.id, async () => {
        await delegate.forceFlush?.();
      });
      break;
    case 'shutdown':
      void answer(msg.id, () => sdk.shutdown());
      break;
  }
});
