// Span export off the main thread. The service's spans are made on the main thread, as they must
// be, but everything after a span ends (batching, OTLP encoding, the exporter's HTTP or gRPC
// client) runs in a worker thread: export-thread-worker.ts, which builds its exporters from the
// same OTEL_* variables with the SDK's own code.
//
// Why (note on issue 6): with the SDK's batch processor and OTLP/HTTP exporter on the main thread,
// each export ran Node's HTTP client through the same functions as the server's HTTP path
// (_http_outgoing, the streams, net, events) with other object shapes, and V8 threw away its
// optimised code for the server: `node --log-deopt` counted ~100 deoptimisations in 8 s at
// 2,000 req/s with 1% of traces sampled, against 0 with the SDK on and nothing sampled. That is
// why 1% sampling cost about as much throughput as 10%. A worker is a separate V8 isolate, so the
// exporter's code no longer shares type feedback with the server's.
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { diag, TraceFlags, type Attributes, type HrTime, type SpanKind, type SpanStatus } from '@opentelemetry/api';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace';

/** An ended span as plain data (structured-clone safe): what crosses to the export thread. */
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

/** Messages to the export thread, and its answers to flush and shutdown. */
export type ToExportThread = { type: 'spans'; spans: SpanRecord[] } | { type: 'flush' | 'shutdown'; id: number };
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
  /** Spans collected before they are posted at once (default 64). */
  maxBatch?: number;
  /** How long a span waits on this side for its batch to fill (default 25 ms). */
  maxDelayMs?: number;
  /** Heap limits for the export thread (none beyond Node's defaults unless given). */
  resourceLimits?: ResourceLimits;
}

/**
 * A span processor that hands every sampled span, once ended, to the export thread. It batches
 * on this side only to make postMessage calls few (a batch of at most `maxBatch` spans, at most
 * `maxDelayMs` old); the export thread batches again for the exporter, as OTEL_BSP_* configures,
 * and drops spans beyond OTEL_BSP_MAX_QUEUE_SIZE there. The worker does not keep the process
 * alive except while a flush or shutdown is awaited.
 */
export class ExportThreadSpanProcessor implements SpanProcessor {
  readonly #worker: Worker;
  readonly #maxBatch: number;
  readonly #maxDelayMs: number;
  #buffer: SpanRecord[] = [];
  #timer: NodeJS.Timeout | undefined;
  readonly #pending = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  #nextId = 1;
  #failed: Error | undefined;
  #shutdown: Promise<void> | undefined;

  constructor(options: ExportThreadOptions = {}) {
    this.#maxBatch = options.maxBatch ?? 64;
    this.#maxDelayMs = options.maxDelayMs ?? 25;
    this.#worker = new Worker(new URL('./export-thread-worker.ts', import.meta.url), { env: options.env ?? process.env, name: 'otel-span-export', resourceLimits: options.resourceLimits });
    this.#worker.unref();
    this.#worker.on('message', (msg: FromExportThread) => this.#settle(msg.id, msg.error === undefined ? undefined : new Error(msg.error)));
    this.#worker.on('error', (err) => this.#fail(err));
    this.#worker.on('exit', (code) => this.#fail(new Error(`the span export thread exited (code ${code})`)));
  }

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    if (this.#failed || this.#shutdown || (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    this.#buffer.push(toSpanRecord(span));
    if (this.#buffer.length >= this.#maxBatch) this.#post();
    else this.#timer ??= setTimeout(() => this.#post(), this.#maxDelayMs).unref();
  }

  /** Posts what is buffered, then waits until the export thread has exported everything it holds. */
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

  #post(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#buffer.length === 0 || this.#failed) return;
    const spans = this.#buffer;
    this.#buffer = [];
    this.#worker.postMessage({ type: 'spans', spans } satisfies ToExportThread);
  }

  #request(type: 'flush' | 'shutdown'): Promise<void> {
    this.#post();
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
    this.#buffer = [];
    clearTimeout(this.#timer);
    // A warning on stderr as well as the SDK's diag channel, which is silent unless OTEL_LOG_LEVEL is set.
    if (!this.#shutdown) {
      diag.error('cryptomcp: span export thread failed; spans are dropped from now on', err);
      process.emitWarning(`the span export thread failed, spans are dropped from now on: ${err.message}`, 'TracingWarning');
    }
    for (const id of [...this.#pending.keys()]) this.#settle(id, err);
  }
}
