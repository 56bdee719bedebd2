// OpenTelemetry tracing for the service process (DESIGN.md §8). Must run before the app's modules
// are loaded, so the pg instrumentation sees pg (server/cli.ts imports ./register.ts first).
// Configured only by the standard OTEL_* variables, which the SDK reads itself (endpoint, headers,
// protocol, sampler, resource attributes, batch settings); tracing is off unless an exporter is
// asked for, so a local `npm start` loads none of the SDK.
import { createRequire } from 'node:module';
import type * as OtelCore from '@opentelemetry/core';
import type * as PgInstrumentationModule from '@opentelemetry/instrumentation-pg';
import type * as NodeSdk from '@opentelemetry/sdk-node';
import type * as SdkTrace from '@opentelemetry/sdk-trace';
import type { Sampler, SpanProcessor } from '@opentelemetry/sdk-trace';
import { otelEnv, plainTelemetry, serviceName } from './config.ts';
import { ExportThreadSpanProcessor } from './export-thread.ts';
import { CryptoIdGenerator, InjectOnlyPropagator } from './ids.ts';
import { markTracingEnabled } from './tracing.ts';

/**
 * True when the environment asks for traces: OTEL_TRACES_EXPORTER names an exporter other than
 * "none", or (the SDK's default exporter being OTLP) an OTLP endpoint is set. OTEL_SDK_DISABLED
 * wins over both, as the specification says.
 */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = env.OTEL_TRACES_EXPORTER?.split(',').map((s) => s.trim()).filter(Boolean);
  if (exporters && exporters.length > 0) return exporters.some((e) => e !== 'none');
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/** The OTEL_TRACES_SAMPLER values the JavaScript SDK supports. */
const SAMPLER_NAMES = new Set(['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio']);

/**
 * What OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG choose, read as the SDK reads them: the
 * sampler's name (its default, parentbased_always_on, when unset or unknown), whether it follows
 * a parent's decision, and what it does with a new trace: keep it, drop it, or keep a ratio of
 * them (the argument; outside [0, 1] or unparseable, 1). samplerFromEnv builds the sampler from
 * it and describeTracing describes it.
 */
interface SamplerChoice {
  name: string;
  parentBased: boolean;
  root: 'on' | 'off' | 'ratio';
  ratio: number;
  /** The name given, when the SDK does not know it. */
  unknown: string | undefined;
}

function samplerChoice(env: NodeJS.ProcessEnv): SamplerChoice {
  const given = env.OTEL_TRACES_SAMPLER?.trim() || undefined;
  const name = given && SAMPLER_NAMES.has(given) ? given : 'parentbased_always_on';
  const root = name.endsWith('always_on') ? 'on' : name.endsWith('always_off') ? 'off' : 'ratio';
  let ratio = root === 'on' ? 1 : 0;
  if (root === 'ratio') {
    const arg = env.OTEL_TRACES_SAMPLER_ARG?.trim();
    const value = arg ? Number(arg) : NaN;
    ratio = Number.isFinite(value) && value >= 0 && value <= 1 ? value : 1;
  }
  return { name, parentBased: name.startsWith('parentbased_'), root, ratio, unknown: given !== name ? given : undefined };
}

/**
 * The sampler OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG name, built as the SDK would build
 * it (samplerChoice). Built here rather than by the SDK so that tracing.ts can ask the same
 * instance about a request before any span exists.
 */
export function samplerFromEnv(env: NodeJS.ProcessEnv, sdk: typeof SdkTrace): Sampler {
  const { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, TraceIdRatioBasedSampler } = sdk;
  const choice = samplerChoice(env);
  const root = choice.root === 'on' ? new AlwaysOnSampler() : choice.root === 'off' ? new AlwaysOffSampler() : new TraceIdRatioBasedSampler(choice.ratio);
  return choice.parentBased ? new ParentBasedSampler({ root }) : root;
}

/**
 * One line for the start-up banner: whether traces are exported, where to, and what share of
 * requests samplerFromEnv's sampler traces. Tracing every request is what OpenTelemetry does
 * when OTEL_TRACES_SAMPLER is unset, and it costs a saturated server about a quarter of its
 * throughput (docs/kubernetes.md, Observability), so the line says so.
 */
export function describeTracing(env: NodeJS.ProcessEnv): string {
  if (!tracingRequested(env)) return 'off (OTEL_EXPORTER_OTLP_ENDPOINT turns it on)';
  const exporters = env.OTEL_TRACES_EXPORTER?.trim() || 'otlp';
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const to = exporters.split(',').some((e) => e.trim() === 'otlp') && endpoint ? `${exporters} to ${endpoint}` : exporters;
  const c = samplerChoice(env);
  let share: string;
  if (c.root === 'off') share = 'no request sampled';
  else if (c.root === 'ratio') share = `${+(c.ratio * 100).toPrecision(6)}% of requests sampled (${c.name})`;
  else if (!c.parentBased) share = `every request sampled (${c.name})`;
  else share = `every request sampled (${c.unknown ? `${c.unknown} is not known here, so ` : ''}the default, ${c.name}; production sets OTEL_TRACES_SAMPLER=parentbased_traceidratio)`;
  return `${to}, ${share}`;
}

export interface Telemetry {
  /** Flushes pending spans and stops the SDK. */
  shutdown(): Promise<void>;
}

export interface StartTelemetryOptions {
  /**
   * Span processors instead of the export thread, which exports to what the environment names
   * (tests: an in-memory exporter).
   */
  spanProcessors?: SpanProcessor[];
}

let started: Telemetry | undefined;

/**
 * Starts the SDK once per process. Synchronous on purpose: register.ts is the first import of
 * server/cli.ts, and the modules after it must not run before the instrumentations are in place.
 */
export function startTelemetry(options: StartTelemetryOptions = {}): Telemetry {
  if (started) return started;
  // Loaded only when tracing is on (the SDK and its exporters cost start-up time and memory),
  // through require so that this stays synchronous. The API keeps one global registry, so the
  // app's ESM copy of @opentelemetry/api sees the provider this CommonJS copy registers.
  const require = createRequire(import.meta.url);
  const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof NodeSdk;
  const { PgInstrumentation } = require('@opentelemetry/instrumentation-pg') as typeof PgInstrumentationModule;
  const { W3CTraceContextPropagator } = require('@opentelemetry/core') as typeof OtelCore;
  const sampler = samplerFromEnv(otelEnv(), require('@opentelemetry/sdk-trace') as typeof SdkTrace);
  const plain = plainTelemetry();
  // With the `export` piece swapped (a benchmark, config.ts), the SDK builds its own batch
  // processor and exporter from OTEL_* on this thread: spanProcessors left undefined.
  const exportThread = options.spanProcessors || plain.has('export') ? undefined : new ExportThreadSpanProcessor();
  const sdk = new NodeSDK({
    serviceName: serviceName(),
    // Ended spans go to a worker thread that batches and exports them with exporters built from
    // OTEL_* by the SDK there (export-thread.ts says why not on this thread).
    spanProcessors: exportThread ? [exportThread] : options.spanProcessors,
    // Trace ids double as the request ids clients see and the ledger's idempotency keys, so they
    // come from the CSPRNG (the SDK's default generator uses Math.random).
    idGenerator: new CryptoIdGenerator(),
    sampler,
    // The gateway is the edge of the trust boundary: a client's traceparent is not continued,
    // since its trace id would become the request id (DESIGN.md: never trust a client's request
    // id). Outgoing calls still carry our context.
    textMapPropagator: new InjectOnlyPropagator(new W3CTraceContextPropagator()),
    // Traces only. Metrics are prom-client's on METRICS_PORT and logs are pino's on stdout; left
    // to the environment, the SDK would also start an OTLP metric exporter (pg's metrics, every
    // 60 s, from this thread) and an idle OTLP log pipeline whenever OTEL_METRICS_EXPORTER and
    // OTEL_LOGS_EXPORTER are unset.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      // Query spans only (no pool-connect spans), never parameter values.
      new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false, ignoreConnectSpans: true }),
      // Neither @fastify/otel (a span per hook halved the gateway's throughput in
      // bench:observability with nothing sampled) nor @opentelemetry/instrumentation-http (a third
      // of it, even at 10% sampling): the HTTP server span is our own (tracing.ts,
      // requestIdForNewRequest and enterHttpSpan), and our spans cover the work inside.
    ],
  });
  sdk.start();
  // pg is CommonJS reached from ES modules, which the require hook does not see:
  // requiring it here, after start(), lets the instrumentation patch the one shared copy
  // (it patches prototypes, which the later ESM imports share).
  require('pg');
  markTracingEnabled(sampler);
  started = {
    shutdown: async () => {
      await sdk.shutdown();
    },
  };
  return started;
}

/** Flushes and stops tracing if it was started (the CLI calls it before exiting). */
export async function shutdownTelemetry(): Promise<void> {
  await started?.shutdown();
}
