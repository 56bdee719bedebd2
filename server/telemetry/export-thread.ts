// Span export off the main thread. Spans are made on the main thread, as they must be, but
// everything after a span ends (batching, OTLP encoding, the exporter's HTTP or gRPC client) runs
// in a worker thread: export-thread-worker.ts, which builds its exporters from the same OTEL_*
// variables with the SDK's own code.
//
// Why: on the main thread, each export runs Node's HTTP client through the same functions as the
// server's HTTP path (_http_outgoing, the streams, net, events) with other object shapes, and V8
// throws away its optimised code for the server (`node --log-deopt` shows it after each export).
// A worker is a separate V8 isolate, so the exporter no longer shares type feedback with the
// server. bench:observability (BENCH_ONLY=pieces) weighs it against the SDK's own batch processor
// on the main thread; its figures are in bench/NOTES.md, "Telemetry pieces".
//
// How spans cross: each ended span is written as one line of JSON into a ring in shared memory
// (span-ring.ts), which the export thread reads on a timer. Not postMessage (span-ring.ts says
// why), and not batches held back to make the messages fewer: those would keep their spans alive
// on this thread's heap until they left.
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { diag, TraceFlags, type Attributes, type HrTime, type SpanKind, type SpanStatus } from '@opentelemetry/api';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace';
import { otelEnv } from './config.ts';
import { SpanRing } from './span-ring.ts';

/**
 * An ended span as plain data: what crosses to the export thread, as JSON. Attribute values are
 * strings, booleans, numbers, and arrays and maps of them (OTLP's AnyValue), which JSON carries as
 * they are, except a non-finite number (NaN, Infinity), which arrives as null, an empty value the
 * SDK keeps, and a byte array, which would arrive as a map of its indices: no span of ours or of
 * the pg instrumentation has one.
 */
export interface SpanRecord {
  name: string;
  kind: SpanKind;
  traceId: string;
  spanId: string;
  traceFlags: number;
  traceState: string | undefined;
  parentSpanId: string | undefined;
  parentIsRemote: boolean | undefined;
  startTime: HrTime;
  endTime: HrTime;
  status: SpanStatus;
  attributes: Attributes;
  links: { traceId: string; spanId: string; traceFlags: number; attributes: Attributes | undefined }[];
  events: { name: string; time: HrTime; attributes: Attributes | undefined }[];
  scope: { name: string; version: string | undefined; schemaUrl: string | undefined };
}

/** What the export thread is started with (workerData). */
export interface ExportThreadData {
  /** The span ring's shared memory (span-ring.ts). */
  ring: SharedArrayBuffer;
  /** How often the thread reads the ring, in milliseconds. */
  pollMs: number;
}

/**
 * Messages to the export thread, and its answers: flush and shutdown read what is left in the ring
 * first, so a span ended before the call is exported by it.
 */
export type ToExportThread = { type: 'flush' | 'shutdown'; id: number };
export type FromExportThread = { type: 'done'; id: number; error?: string };

export function toSpanRecord(span: ReadableSpan): SpanRecord {
  const ctx = span.spanContext();
  const parent = span.parentSpanContext;
  const scope = span.instrumentationScope;
  return {
    name: span.name,
    kind: span.kind,
    traceId: ctx.traceId,
    spanId: ctx.spanId,
    traceFlags: ctx.traceFlags,
    traceState: ctx.traceState?.serialize(),
    parentSpanId: parent?.spanId,
    parentIsRemote: parent?.isRemote,
    startTime: span.startTime,
    endTime: span.endTime,
    status: span.status,
    attributes: span.attributes,
    links: span.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId, traceFlags: l.context.traceFlags, attributes: l.attributes })),
    events: span.events.map((e) => ({ name: e.name, time: e.time, attributes: e.attributes })),
    scope: { name: scope.name, version: scope.version, schemaUrl: scope.schemaUrl },
  };
}

export interface ExportThreadOptions {
  /** The environment the export thread reads OTEL_* from; the process's own by default. */
  env?: NodeJS.ProcessEnv;
  /**
   * Bytes of shared memory between this thread and the export thread (a power of two; default
   * 8 MiB, ~16,000 spans of the gateway's). Spans that find it full are dropped and counted.
   */
  ringBytes?: number;
  /** How often the export thread reads the ring (default 100 ms). */
  pollMs?: number;
  /** Heap limits for the export thread (none beyond Node's defaults unless given). */
  resourceLimits?: ResourceLimits;
}

/**
 * A span processor that hands every sampled span, once ended, to the export thread through the
 * span ring. The export thread batches for the exporter, as OTEL_BSP_* configures; spans that find
 * the ring full (the thread has fallen behind by `ringBytes`) are dropped here, with one warning.
 * The worker does not keep the process alive except while a flush or shutdown is awaited.
 */
export class ExportThreadSpanProcessor implements SpanProcessor {
  readonly #worker: Worker;
  readonly #ring: SpanRing;
  readonly #pending = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  #nextId = 1;
  #failed: Error | undefined;
  #shutdown: Promise<void> | undefined;

  constructor(options: ExportThreadOptions = {}) {
    this.#ring = new SpanRing(options.ringBytes ?? 8 * 1024 * 1024);
    const workerData: ExportThreadData = { ring: this.#ring.buffer, pollMs: options.pollMs ?? 100 };
    this.#worker = new Worker(new URL('./export-thread-worker.ts', import.meta.url), {
      env: options.env ?? otelEnv(),
      name: 'otel-span-export',
      resourceLimits: options.resourceLimits,
      workerData,
    });
    this.#worker.unref();
    this.#worker.on('message', (msg: FromExportThread) => this.#settle(msg.id, msg.error === undefined ? undefined : new Error(msg.error)));
    this.#worker.on('error', (err) => this.#fail(err));
    this.#worker.on('exit', (code) => this.#fail(new Error(`the span export thread exited (code ${code})`)));
  }

  onStart(): void {}

  /** Sampled spans go to the export thread as records. */
  onEnd(span: ReadableSpan): void {
    if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) !== 0) this.write(toSpanRecord(span));
  }

  /** Hands one ended, sampled span to the export thread. */
  write(record: SpanRecord): void {
    if (this.#failed || this.#shutdown) return;
    if (!this.#ring.write(JSON.stringify(record)) && this.#ring.dropped === 1) {
      diag.warn('cryptomcp: the span export thread is behind; spans are dropped until it catches up');
      process.emitWarning('the span export thread is behind: spans are dropped until it catches up', 'TracingWarning');
    }
  }

  /** Spans dropped on this side because the ring was full. */
  get droppedSpans(): number {
    return this.#ring.dropped;
  }

  /** Waits until the export thread has exported every span ended before this call. */
  forceFlush(): Promise<void> {
    if (this.#shutdown) return this.#shutdown;
    return this.#request('flush');
  }

  /**
   * Flushes, stops the export thread's SDK (its exporters flush too), then ends the thread. A
   * thread that already failed has nothing left to flush: that was reported when it failed.
   */
  shutdown(): Promise<void> {
    this.#shutdown ??= (this.#failed ? Promise.resolve() : this.#request('shutdown')).finally(() => this.#worker.terminate());
    return this.#shutdown;
  }

  #request(type: 'flush' | 'shutdown'): Promise<void> {
    if (this.#failed) return Promise.reject(this.#failed);
    const id = this.#nextId++;
    const done = new Promise<void>((resolve, reject) => this.#pending.set(id, { resolve, reject }));
    // Held open while an answer is awaited: an unreferenced worker would let the process exit first.
    this.#worker.ref();
    this.#worker.postMessage({ type, id } satisfies ToExportThread);
    return done;
  }

  #settle(id: number, err: Error | undefined): void {
    const waiter = this.#pending.get(id);
    if (!waiter) return;
    this.#pending.delete(id);
    if (this.#pending.size === 0) this.#worker.unref();
    if (err) waiter.reject(err);
    else waiter.resolve();
  }

  /** The thread is gone: spans from now on are dropped, and whoever waits is told why. */
  #fail(err: Error): void {
    if (this.#failed) return;
    this.#failed = err;
    // A warning on stderr as well as the SDK's diag channel, which is silent unless OTEL_LOG_LEVEL is set.
    if (!this.#shutdown) {
      diag.error('cryptomcp: span export thread failed; spans are dropped from now on', err);
      process.emitWarning(`the span export thread failed, spans are dropped from now on: ${err.message}`, 'TracingWarning');
    }
    for (const id of [...this.#pending.keys()]) this.#settle(id, err);
  }
}
