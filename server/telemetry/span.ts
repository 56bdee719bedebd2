// The service's own spans (HTTP, MCP, metering, tool, upstream: tracing.ts) are recorded on the
// request's thread as plain data, not as SDK spans: each is a RecordingSpan, which implements the
// OpenTelemetry API's Span (so the pg instrumentation and the log mixin find it as the active
// span, and the SDK parents its own spans on it) and, when it ends, hands a SpanRecord to the sink
// start.ts set: the span ring to the export thread, where the SDK replays it (replay.ts) and
// batches and exports it with the exporters OTEL_* configures.
//
// Why not the SDK's spans here (note on issue 6): with 10% of traces sampled, creating and ending
// the three SDK spans of a sampled request cost the main thread about 80 us of CPU each time in
// the running gateway (bench:gateway's (f) at a fixed 6,000 req/s, thread CPU from /proc, 4
// rounds: a request with its three SDK spans made and ended at its start cost as much as the
// real sampled path, and one writing three records of the same size to the ring cost about
// nothing over an unsampled one). In a loop the same spans cost ~5 us: the SDK's span, its
// attribute checks, clock and context objects are code and allocations a rare sampled request
// runs cold. Sampling, ids (ids.ts), the export and its format stay the SDK's.
import { ROOT_CONTEXT, SpanStatusCode, trace, TraceFlags, type Attributes, type AttributeValue, type Exception, type HrTime, type Link, type SpanContext, type SpanKind, type SpanStatus, type TimeInput, type Span, type Tracer } from '@opentelemetry/api';
import { cleanSimpleAttributes, hrTime, isTimeInput, maybeAddAttribute, timeInputToHrTime } from '@opentelemetry/core';
import type { SpanRecord } from './export-thread.ts';
import { newSpanId, withChosenIds } from './ids.ts';

/** Where ended spans go; set by startTelemetry. Until then spans are dropped. */
let sink: ((record: SpanRecord) => void) | undefined;

export function setSpanSink(next: ((record: SpanRecord) => void) | undefined): void {
  sink = next;
}

/**
 * No count or length limit here: the SDK applies the limits OTEL_ATTRIBUTE_* and OTEL_SPAN_*
 * configure when it replays the span (replay.ts), as it would have when the span was made.
 */
const NO_LIMITS = Object.freeze({ attributeCountLimit: Infinity, attributeValueLengthLimit: Infinity });

/** The instrumentation scope of every span of ours, as trace.getTracer('cryptomcp') gave it. */
const SCOPE: SpanRecord['scope'] = Object.freeze({ name: 'cryptomcp', version: undefined, schemaUrl: undefined });

/**
 * A sampled span of ours. Only sampled spans are made (tracing.ts asks the sampler first for a
 * root, and makes children only of a recording parent), so the trace flags are always SAMPLED.
 * Semantics follow the SDK's span, with its own attribute checks: invalid values are dropped, a
 * status of OK is final, an ERROR status keeps its message, nothing changes once the span ended.
 */
export class RecordingSpan implements Span {
  readonly #context: SpanContext;
  readonly #kind: SpanKind;
  readonly #parent: SpanContext | undefined;
  readonly #start: HrTime;
  readonly #attributes: Attributes;
  #name: string;
  #status: SpanStatus = { code: SpanStatusCode.UNSET };
  #events: SpanRecord['events'] | undefined;
  #links: SpanRecord['links'] | undefined;
  #ended = false;

  /**
   * @param traceId the trace's id (the request id, for a root span)
   * @param parent the parent's context; undefined for a root span
   * @param attributes taken as they are (the caller's object becomes the span's): our helpers
   *   pass fresh literals of valid values
   */
  constructor(name: string, kind: SpanKind, traceId: string, parent: SpanContext | undefined, attributes: Attributes, traceState?: SpanContext['traceState']) {
    this.#name = name;
    this.#kind = kind;
    this.#parent = parent;
    this.#context = { traceId, spanId: newSpanId(), traceFlags: TraceFlags.SAMPLED, traceState: traceState ?? parent?.traceState };
    this.#attributes = attributes;
    this.#start = hrTime();
  }

  spanContext(): SpanContext {
    return this.#context;
  }

  setAttribute(key: string, value: AttributeValue | undefined): this {
    // The SDK's own check and copy (an invalid value or key is dropped, with a diag warning).
    if (!this.#ended) maybeAddAttribute({ key, value, attributes: this.#attributes, limits: NO_LIMITS, currentAttributesCount: 0 });
    return this;
  }

  setAttributes(attributes: Attributes): this {
    for (const key of Object.keys(attributes)) this.setAttribute(key, attributes[key]);
    return this;
  }

  addEvent(name: string, attributesOrTime?: Attributes | TimeInput, time?: TimeInput): this {
    if (this.#ended) return this;
    let attributes = attributesOrTime as Attributes | undefined;
    if (isTimeInput(attributesOrTime)) {
      if (!isTimeInput(time)) time = attributesOrTime;
      attributes = undefined;
    }
    (this.#events ??= []).push({
      name,
      time: time === undefined ? hrTime() : timeInputToHrTime(time),
      attributes: attributes === undefined ? undefined : cleanSimpleAttributes(attributes, NO_LIMITS).attributes,
    });
    return this;
  }

  addLink(link: Link): this {
    if (this.#ended) return this;
    const { traceId, spanId, traceFlags } = link.context;
    (this.#links ??= []).push({ traceId, spanId, traceFlags, attributes: link.attributes });
    return this;
  }

  addLinks(links: Link[]): this {
    for (const link of links) this.addLink(link);
    return this;
  }

  setStatus(status: SpanStatus): this {
    if (this.#ended || status.code === SpanStatusCode.UNSET || this.#status.code === SpanStatusCode.OK) return this;
    this.#status = status.code === SpanStatusCode.ERROR && typeof status.message === 'string' ? { code: status.code, message: status.message } : { code: status.code };
    return this;
  }

  updateName(name: string): this {
    if (!this.#ended) this.#name = name;
    return this;
  }

  /** Records an `exception` event with the semantic-convention attributes, as the SDK does. */
  recordException(exception: Exception, time?: TimeInput): void {
    const attributes: Attributes = {};
    if (typeof exception === 'string') attributes['exception.message'] = exception;
    else if (exception) {
      if (exception.code) attributes['exception.type'] = exception.code.toString();
      else if (exception.name) attributes['exception.type'] = exception.name;
      if (exception.message) attributes['exception.message'] = exception.message;
      if (exception.stack) attributes['exception.stacktrace'] = exception.stack;
    }
    if (attributes['exception.type'] || attributes['exception.message']) this.addEvent('exception', attributes, time);
  }

  isRecording(): boolean {
    return !this.#ended;
  }

  /** Ends the span once; its record goes to the sink. */
  end(endTime?: TimeInput): void {
    if (this.#ended) return;
    this.#ended = true;
    sink?.({
      name: this.#name,
      kind: this.#kind,
      traceId: this.#context.traceId,
      spanId: this.#context.spanId,
      traceFlags: this.#context.traceFlags,
      traceState: this.#context.traceState?.serialize(),
      parentSpanId: this.#parent?.spanId,
      parentIsRemote: this.#parent?.isRemote,
      startTime: this.#start,
      endTime: endTime === undefined ? hrTime() : timeInputToHrTime(endTime),
      status: this.#status,
      attributes: this.#attributes,
      links: this.#links ?? [],
      events: this.#events ?? [],
      scope: SCOPE,
    });
  }
}

/**
 * When set (bench:observability's `spans` piece, telemetry/config.ts), rootSpan and childSpan
 * make the SDK's own spans with this tracer instead of recording spans.
 */
let sdkTracer: Tracer | undefined;

export function useSdkSpans(tracer: Tracer | undefined): void {
  sdkTracer = tracer;
}

/** The root span of a sampled request, with the request's trace id. */
export function rootSpan(name: string, kind: SpanKind, traceId: string, attributes: Attributes, traceState?: SpanContext['traceState']): Span {
  if (sdkTracer) {
    const tracer = sdkTracer;
    return withChosenIds(traceId, newSpanId(), () => tracer.startSpan(name, { kind, attributes }, ROOT_CONTEXT));
  }
  return new RecordingSpan(name, kind, traceId, undefined, attributes, traceState);
}

/** A child of `parent` (a span of ours or the SDK's) in the same trace. */
export function childSpan(name: string, kind: SpanKind, parent: Span, attributes: Attributes): Span {
  if (sdkTracer) return sdkTracer.startSpan(name, { kind, attributes }, trace.setSpan(ROOT_CONTEXT, parent));
  const ctx = parent.spanContext();
  return new RecordingSpan(name, kind, ctx.traceId, ctx, attributes);
}
