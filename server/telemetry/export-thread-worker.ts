// The span export thread (see export-thread.ts). It runs its own OpenTelemetry SDK, configured by
// the OTEL_* variables the way the main thread's would have been (exporter and protocol, endpoint,
// headers, batch settings, resource), and replays each ended span into it (replay.ts), so the SDK
// batches and exports it as if it had been made here. Sampling already happened on the main
// thread, so everything here is kept.
//
// The spans arrive as JSON lines in the span ring (span-ring.ts), and they wait there, in shared
// memory outside any heap, rather than in the batch processor's queue: the thread looks at the
// ring every `pollMs` and replays what is there only when a batch is due, that is when
// OTEL_BSP_MAX_EXPORT_BATCH_SIZE spans (512) are waiting or the oldest has waited
// OTEL_BSP_SCHEDULE_DELAY (5 s), and then exports them at once. That is the batch processor's own
// timing, without its queue holding every span as a graph of SDK objects for up to 5 s (long
// enough to be promoted out of V8's young generation). Flush and shutdown export whatever is in
// the ring first.
import { parentPort, workerData } from 'node:worker_threads';
import { trace, type ProxyTracerProvider } from '@opentelemetry/api';
import { getNumberFromEnv, globalErrorHandler } from '@opentelemetry/core';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { AlwaysOnSampler, type TracerProvider } from '@opentelemetry/sdk-trace';
import { serviceName } from './config.ts';
import type { ExportThreadData, FromExportThread, SpanRecord, ToExportThread } from './export-thread.ts';
import { CryptoIdGenerator } from './ids.ts';
import { SpanReplayer } from './replay.ts';
import { SpanRing } from './span-ring.ts';

const sdk = new NodeSDK({
  serviceName: serviceName(),
  sampler: new AlwaysOnSampler(),
  // Hands the SDK each replayed span's recorded ids (replay.ts).
  idGenerator: new CryptoIdGenerator(),
  // Traces only: no metric readers, no log processors, no instrumentation, no propagation.
  metricReaders: [],
  logRecordProcessors: [],
  instrumentations: [],
  textMapPropagator: null,
});
sdk.start();
// Its delegate is undefined when the environment names no usable trace exporter (the SDK has
// warned): spans are then dropped here.
const provider = trace.getTracerProvider() as ProxyTracerProvider;
const delegate = provider.getDelegate() as Partial<TracerProvider>;
const replayer = new SpanReplayer(provider);

const { ring: ringBuffer, pollMs } = workerData as ExportThreadData;
const ring = new SpanRing(ringBuffer);
// As the SDK reads them for its batch processor.
const batchSize = getNumberFromEnv('OTEL_BSP_MAX_EXPORT_BATCH_SIZE') ?? 512;
const scheduleDelayMs = getNumberFromEnv('OTEL_BSP_SCHEDULE_DELAY') ?? 5000;
const queueSize = getNumberFromEnv('OTEL_BSP_MAX_QUEUE_SIZE') ?? 2048;

/**
 * Replays every span waiting in the ring and has the SDK export them, at most a queue's worth at
 * a time (more would overflow the batch processor's queue, which drops what does not fit).
 */
async function exportWaiting(): Promise<void> {
  const lines = ring.read();
  let next = 0;
  do {
    const end = Math.min(lines.length, next + queueSize);
    for (; next < end; next++) replayer.replay(JSON.parse(lines[next]!) as SpanRecord);
    await delegate.forceFlush?.();
  } while (next < lines.length);
}

let exporting: Promise<void> | undefined;
let idleSince = performance.now();

/** One export at a time; while one runs, spans keep waiting in the ring. */
function startExport(): Promise<void> {
  exporting ??= exportWaiting().finally(() => {
    exporting = undefined;
    idleSince = performance.now();
  });
  return exporting;
}

/** Every span ended so far: after the export under way (which may have read the ring earlier), one more. */
async function exportEverything(): Promise<void> {
  await exporting?.catch(() => {});
  await startExport();
}

setInterval(() => {
  if (exporting) return;
  const waiting = ring.pending();
  // The schedule delay counts from when the ring was last seen empty.
  if (waiting <= 0) idleSince = performance.now();
  else if (waiting >= batchSize || performance.now() - idleSince >= scheduleDelayMs) startExport().catch(globalErrorHandler);
}, pollMs);

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
    case 'flush':
      void answer(msg.id, exportEverything);
      break;
    case 'shutdown':
      void answer(msg.id, async () => {
        await exportEverything();
        await sdk.shutdown();
      });
      break;
  }
});
