// Turns span records (export-thread.ts's SpanRecord: a span as plain data) back into SDK spans:
// each is started through the SDK's own tracer with its recorded name, kind, ids, parent, start
// time, attributes and links, given its events and status, and ended at its recorded end time,
// so the span processors and exporters the SDK was configured with handle it as one of theirs.
// The export thread replays what crosses the span ring; with span processors of a caller's own
// (tests), the service replays its own spans on the spot (start.ts).
import { createTraceState, ROOT_CONTEXT, trace, type Context, type Tracer, type TracerProvider } from '@opentelemetry/api';
import type { SpanRecord } from './export-thread.ts';
import { withChosenIds } from './ids.ts';

/**
 * Replays records into `provider`, whose SDK must take its ids from ids.ts's CryptoIdGenerator
 * (that is how each span gets its recorded ids), with a sampler that keeps them: the SDK asks it
 * again, and a parent-based or trace-id-ratio sampler gives the answer it gave the first time.
 */
export class SpanReplayer {
  readonly #provider: TracerProvider;
  readonly #tracers = new Map<string, Tracer>();

  constructor(provider: TracerProvider) {
    this.#provider = provider;
  }

  replay(r: SpanRecord): void {
    const traceState = r.traceState ? createTraceState(r.traceState) : undefined;
    const parent: Context = r.parentSpanId
      ? trace.setSpanContext(ROOT_CONTEXT, { traceId: r.traceId, spanId: r.parentSpanId, traceFlags: r.traceFlags, isRemote: r.parentIsRemote ?? false, traceState })
      : ROOT_CONTEXT;
    const options = {
      kind: r.kind,
      attributes: r.attributes,
      startTime: r.startTime,
      links: r.links.map((l) => ({ context: { traceId: l.traceId, spanId: l.spanId, traceFlags: l.traceFlags }, attributes: l.attributes })),
    };
    const tracer = this.#tracerFor(r.scope);
    const span = withChosenIds(r.traceId, r.spanId, () => tracer.startSpan(r.name, options, parent));
    for (const e of r.events) span.addEvent(e.name, e.attributes, e.time);
    span.setStatus(r.status);
    span.end(r.endTime);
  }

  #tracerFor(scope: SpanRecord['scope']): Tracer {
    const key = `${scope.name}\u0000${scope.version ?? ''}\u0000${scope.schemaUrl ?? ''}`;
    let tracer = this.#tracers.get(key);
    if (!tracer) {
      tracer = this.#provider.getTracer(scope.name, scope.version, scope.schemaUrl ? { schemaUrl: scope.schemaUrl } : undefined);
      this.#tracers.set(key, tracer);
    }
    return tracer;
  }
}
