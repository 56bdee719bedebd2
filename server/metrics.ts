// The process's Prometheus registry (DESIGN.md §8). Names: cryptomcp_<subsystem>_<thing>_<unit>,
// bounded labels only (server, method, tool, outcome, plan, code, provider; never key, account or
// address values), plus the OpenTelemetry MCP convention histogram under its own name. Served on
// METRICS_PORT, never behind the ingress. dashboards/ and its rules query exactly these names;
// test/observability checks that they exist here.
import diagnostics from 'node:diagnostics_channel';
import http from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type CounterConfiguration, type Metric, type HistogramConfiguration, type OpenMetricsContentType } from 'prom-client';
import type pg from 'pg';
import type { ComputeStats } from './compute/types.ts';
import { UPSTREAM_CHANNEL, type UpstreamEvent } from './telemetry/channels.ts';
import { TalliedCounter, TalliedHistogram } from './telemetry/tallies.ts';

/**
 * The JSON-RPC methods an MCP client may send (specs 2025-06-18 to 2026-07-28). The method is
 * client input, so anything else is counted as "other" to keep the label bounded.
 */
export const MCP_METHODS: ReadonlySet<string> = new Set([
  'server/discover',
  'subscriptions/listen',
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
  // A JSON-RPC response sent by the client (classify() in gateway/classify.ts names it so).
  'response',
]);

export function methodLabel(method: string | undefined): string {
  if (method === undefined) return 'none';
  return MCP_METHODS.has(method) ? method : 'other';
}

/**
 * Request latency buckets: the in-process tools answer in about a millisecond (bench:gateway p50
 * ≈ 1-3 ms including metering), upstream-backed tools take tens of milliseconds to seconds, and
 * the tool timeout is 30 s. The SLO threshold (0.5 s, dashboards/rules) is a bucket boundary.
 */
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The bucket boundaries the OpenTelemetry MCP semantic conventions advise for mcp.*.duration. */
const MCP_SEMCONV_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

/** Upstream APIs answer in ~50 ms to a few seconds; attempts time out at 8-10 s by default. */
const UPSTREAM_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * How often the event-loop lag monitor samples (prom-client's default is 10 ms). Each sample is a
 * timer wake-up, and wake-ups are dear on a VM: halving the rate nearly halves what an idle
 * process spends on the monitor. Any stall longer than 20 ms still spans a sample, so the lag p99
 * panel loses none of the stalls worth seeing.
 */
const EVENT_LOOP_RESOLUTION_MS = 20;

/** What the code records into: the prom-client methods it calls, so that recording can be switched off. */
type CounterOf<L extends string = string> = Pick<Counter<L>, 'inc'>;
type HistogramOf<L extends string = string> = Pick<Histogram<L>, 'observe'>;
type TallyOf<L extends string> = Pick<TalliedCounter<L>, 'add'>;
type RecordOf<L extends string> = Pick<TalliedHistogram<L>, 'record'>;

export interface Metrics {
  /** OpenMetrics exposition, the format that carries exemplars (Prometheus scrapes it as well). */
  registry: Registry<OpenMetricsContentType>;
  // Updated on every MCP request: tallied (./telemetry/tallies.ts) rather than prom-client's
  // inc()/observe(), which cost several microseconds each per request.
  mcpRequests: TallyOf<'server' | 'method' | 'tool' | 'outcome' | 'status'>;
  mcpRequestDuration: RecordOf<'server' | 'method' | 'tool' | 'outcome'>;
  /** `mcp.server.operation.duration` of the OpenTelemetry MCP semantic conventions. */
  mcpOperationDuration: RecordOf<'mcp_method_name' | 'gen_ai_tool_name' | 'error_type'>;
  rejections: CounterOf<'server' | 'code' | 'plan'>;
  creditsConsumed: CounterOf<'server' | 'tool' | 'plan'>;
  creditsRefunded: CounterOf<'server' | 'tool' | 'plan'>;
  /** Money received, in millionths of a USD: plan and pack purchases on chain, and x402 calls. */
  revenue: CounterOf<'source' | 'chain'>;
  /** x402 tools/call outcomes: paid, payment_required, payment_invalid, settlement_failed, tool_failed. */
  x402Calls: CounterOf<'server' | 'tool' | 'outcome'>;
  /** On-chain payment checks that could not reach the chain's node (the order is retried later). */
  paymentVerifyErrors: CounterOf<'chain'>;
  meterReserveDuration: HistogramOf;
  meterBatchCalls: HistogramOf;
  meterBatchDuration: HistogramOf;
  meterErrors: CounterOf<'operation'>;
  renewals: CounterOf;
  keyCacheHit: { inc(): void };
  keyCacheMiss: { inc(): void };
  upstreamDuration: HistogramOf<'provider' | 'outcome'>;
  /** Reports the pool's connections at every scrape (no cost on the hot path). */
  watchPool(pool: pg.Pool, max: number): void;
  /** A compute-pool job ended (server/compute/): its outcome, its wait for a thread and its run. */
  computeJob(task: string, outcome: string, waitSeconds: number, runSeconds: number): void;
  /** Reports the compute pool's jobs and threads at every scrape. */
  watchCompute(stats: () => ComputeStats): void;
  /** A background job ended (server/jobs): its task, outcome (ok, error) and how long it ran. */
  jobRun(task: string, outcome: string, seconds: number): void;
  /** Alert rules evaluated by one pass, by kind and outcome (ok, error). */
  alertRulesEvaluated: CounterOf<'kind' | 'outcome'>;
  alertsFired: CounterOf<'kind'>;
  /** An alert delivered: by channel (webhook, pull), and the time from firing to delivery. */
  alertDelivered(channel: string, lagSeconds: number): void;
  /** Webhook attempts by outcome: ok, http_error, network_error, timeout, refused_address. */
  webhookAttempts: CounterOf<'outcome'>;
  /** MCP tasks reaching a state (docs/tasks.md): created, completed, failed, cancelled, orphaned (failed by the sweep). */
  tasks: CounterOf<'server' | 'tool' | 'state'>;
  /** Reports the tasks this process is running at every scrape. */
  watchTasks(running: () => number): void;
  /** Stops listening to process-wide channels (upstream calls). */
  close(): void;
}

/**
 * The tallied metric written through prom-client's own inc() and observe() (bench:observability's
 * `tallies` piece, telemetry/config.ts): what the tallies are measured against.
 */
function plainCounter<L extends string>(config: CounterConfiguration<L>): TallyOf<L> {
  const counter = new Counter<L>(config);
  return { add: (labels, value = 1) => counter.inc(labels, value) };
}

function plainHistogram<L extends string>(config: HistogramConfiguration<L>): RecordOf<L> {
  const histogram = new Histogram<L>(config);
  if (!config.enableExemplars) return { record: (labels, value) => histogram.observe(labels, value) };
  // With exemplars on, prom-client's observe takes one object.
  const observe = histogram.observe as unknown as (o: { labels: Record<L, string>; value: number; exemplarLabels?: Record<string, string> }) => void;
  return { record: (labels, value, exemplarLabels) => observe.call(histogram, { labels, value, exemplarLabels }) };
}

export interface MetricsOptions {
  /** prom-client's inc() and observe() for the per-request metrics instead of the tallies (a benchmark's control). */
  plain?: boolean;
}

/**
 * The Node process's own metrics (prom-client's defaults: CPU, memory, garbage collection, event
 * loop lag), collected once per process and shown in every registry the process makes. They are
 * facts about the process, not about one service in it, and prom-client's collectors cannot be
 * stopped: its GC histogram is a PerformanceObserver that stays registered for good. Collected
 * into each service's own registry, every service a process ever started stayed reachable from
 * that observer through its registry's gauges (their collect callbacks hold the service): a test
 * worker running file after file kept all of them, over 1 GB of heap after 25 files.
 */
let processRegistry: Registry<OpenMetricsContentType> | undefined;
function processMetrics(): Registry<OpenMetricsContentType> {
  if (processRegistry === undefined) {
    processRegistry = new Registry<OpenMetricsContentType>();
    processRegistry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    collectDefaultMetrics({ register: processRegistry, prefix: 'cryptomcp_', eventLoopMonitoringPrecision: EVENT_LOOP_RESOLUTION_MS });
  }
  return processRegistry;
}

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const counterOf = <L extends string>(config: Omit<CounterConfiguration<L>, 'collect'> & { labelNames: readonly L[] }): TallyOf<L> =>
    options.plain ? plainCounter(config) : new TalliedCounter(config);
  const histogramOf = <L extends string>(config: HistogramConfiguration<L> & { labelNames: readonly L[]; buckets: number[] }): RecordOf<L> =>
    options.plain ? plainHistogram(config) : new TalliedHistogram(config);
  const registry = new Registry<OpenMetricsContentType>();
  registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  // getMetricsAsArray() gives the metric objects themselves (registry.js), typed as their JSON form.
  for (const metric of processMetrics().getMetricsAsArray() as unknown as Metric[]) registry.registerMetric(metric);
  const registers = [registry];

  const keyCacheLookups = counterOf({
    name: 'cryptomcp_key_cache_lookups_total',
    help: 'API key lookups by the gateway, answered from the in-process cache (hit) or the database (miss).',
    labelNames: ['result'],
    registers,
  });
  const upstreamDuration = new Histogram({
    name: 'cryptomcp_upstream_request_duration_seconds',
    help: 'Duration of one attempt at an upstream provider (HTTP API or JSON-RPC), by provider and outcome.',
    labelNames: ['provider', 'outcome'],
    buckets: UPSTREAM_BUCKETS,
    registers,
  });
  // Every HTTP client in the process publishes its attempts on one channel (providers/http.ts,
  // the viem transport); a channel without subscribers costs the publisher nothing.
  const onUpstream = (message: unknown) => {
    const event = message as UpstreamEvent;
    upstreamDuration.observe({ provider: event.provider, outcome: event.outcome }, event.seconds);
  };
  diagnostics.subscribe(UPSTREAM_CHANNEL, onUpstream);

  const pools: { pool: pg.Pool; max: number }[] = [];
  new Gauge({
    name: 'cryptomcp_db_pool_connections',
    help: 'PostgreSQL pool connections by state: in_use (checked out by a query) or idle.',
    labelNames: ['state'],
    registers,
    collect() {
      this.reset();
      for (const { pool } of pools) {
        this.inc({ state: 'idle' }, pool.idleCount);
        this.inc({ state: 'in_use' }, pool.totalCount - pool.idleCount);
      }
    },
  });
  new Gauge({
    name: 'cryptomcp_db_pool_waiting',
    help: 'Queries waiting for a free PostgreSQL pool connection.',
    registers,
    collect() {
      this.set(pools.reduce((n, { pool }) => n + pool.waitingCount, 0));
    },
  });
  new Gauge({
    name: 'cryptomcp_db_pool_max',
    help: 'Most connections the PostgreSQL pool may open (DATABASE_POOL_MAX).',
    registers,
    collect() {
      this.set(pools.reduce((n, { max }) => n + max, 0));
    },
  });

  let computeStats: (() => ComputeStats) | undefined;
  let runningTasks: (() => number) | undefined;
  new Gauge({
    name: 'cryptomcp_tasks_running',
    help: 'MCP tasks this process is running in the background (docs/tasks.md).',
    registers,
    collect() {
      this.set(runningTasks?.() ?? 0);
    },
  });
  new Gauge({
    name: 'cryptomcp_compute_inflight',
    help: 'Compute-pool jobs (CPU-bound tool work) by state: running on a worker thread, or waiting for one.',
    labelNames: ['state'],
    registers,
    collect() {
      const s = computeStats?.();
      this.set({ state: 'running' }, s?.running ?? 0);
      this.set({ state: 'waiting' }, s?.waiting ?? 0);
    },
  });
  new Gauge({
    name: 'cryptomcp_compute_threads_max',
    help: 'Most compute-pool jobs running at once (COMPUTE_WORKERS; 0 = inline on the event loop).',
    registers,
    collect() {
      this.set(computeStats?.().threads ?? 0);
    },
  });
  const computeJobs = new Counter({
    name: 'cryptomcp_compute_jobs_total',
    help: 'Compute-pool jobs ended, by task and outcome: completed, failed, cancelled (the call was aborted: client gone or timeout) or refused (queue full).',
    labelNames: ['task', 'outcome'],
    registers,
  });
  const computeWait = new Histogram({
    name: 'cryptomcp_compute_wait_seconds',
    help: 'Time a compute-pool job waited for a thread (its account share or a free thread).',
    labelNames: ['task'],
    buckets: [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const computeRun = new Histogram({
    name: 'cryptomcp_compute_run_seconds',
    help: 'Time a compute-pool job ran on its thread, by task.',
    labelNames: ['task'],
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });

  const jobRuns = new Counter({
    name: 'cryptomcp_jobs_total',
    help: 'Background jobs run by this pod (server/jobs, graphile-worker), by task and outcome (ok, error: retried with backoff).',
    labelNames: ['task', 'outcome'],
    registers,
  });
  const jobDuration = new Histogram({
    name: 'cryptomcp_job_duration_seconds',
    help: 'Time one background job ran, by task.',
    labelNames: ['task'],
    buckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120],
    registers,
  });
  const alertsDelivered = new Counter({
    name: 'cryptomcp_alerts_delivered_total',
    help: 'Alerts delivered, by channel: webhook (a 2xx answer), listen (written to a subscriptions/listen stream) or pull (returned by get_alerts).',
    labelNames: ['channel'],
    registers,
  });
  const alertDeliveryLag = new Histogram({
    name: 'cryptomcp_alert_delivery_lag_seconds',
    help: 'Time from an alert firing (stored) to its delivery, by channel.',
    labelNames: ['channel'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200, 36000, 100000],
    registers,
  });

  const HIT = { result: 'hit' } as const;
  const MISS = { result: 'miss' } as const;

  return {
    registry,
    mcpRequests: counterOf({
      name: 'cryptomcp_mcp_requests_total',
      help: 'MCP HTTP requests answered, by server, JSON-RPC method, tool, outcome (ok or the error code) and HTTP status.',
      labelNames: ['server', 'method', 'tool', 'outcome', 'status'],
      registers,
    }),
    mcpRequestDuration: histogramOf({
      name: 'cryptomcp_mcp_request_duration_seconds',
      help: 'Time from receiving an MCP request to the end of its answer, by server, method, tool and outcome.',
      labelNames: ['server', 'method', 'tool', 'outcome'],
      buckets: REQUEST_BUCKETS,
      // Each bucket keeps the trace id of its latest sampled request (tracing on): a latency
      // spike on a dashboard links to a trace that shows it.
      enableExemplars: true,
      registers,
    }),
    mcpOperationDuration: histogramOf({
      name: 'mcp_server_operation_duration_seconds',
      help: 'OpenTelemetry MCP semantic conventions: mcp.server.operation.duration, by mcp.method.name, gen_ai.tool.name and error.type.',
      labelNames: ['mcp_method_name', 'gen_ai_tool_name', 'error_type'],
      buckets: MCP_SEMCONV_BUCKETS,
      registers,
    }),
    rejections: new Counter({
      name: 'cryptomcp_gateway_rejections_total',
      help: 'Requests refused by the gateway before a tool ran: auth (401 by reason), 403, 429 and 402, by error code.',
      labelNames: ['server', 'code', 'plan'],
      registers,
    }),
    creditsConsumed: new Counter({
      name: 'cryptomcp_credits_consumed_total',
      help: 'Credits charged for successful tool results, by server, tool and plan.',
      labelNames: ['server', 'tool', 'plan'],
      registers,
    }),
    revenue: new Counter({
      name: 'cryptomcp_payments_revenue_usd_micros_total',
      help: 'Money received, in millionths of a USD, by source (plan, pack, x402) and chain (or x402 network).',
      labelNames: ['source', 'chain'],
      registers,
    }),
    x402Calls: new Counter({
      name: 'cryptomcp_x402_calls_total',
      help: 'x402 pay-per-call tools/call requests by server, tool and outcome (ok, an error code, SETTLEMENT_FAILED when the payment could not be settled).',
      labelNames: ['server', 'tool', 'outcome'],
      registers,
    }),
    paymentVerifyErrors: new Counter({
      name: 'cryptomcp_payments_verification_errors_total',
      help: "On-chain payment checks that could not reach the chain's node, by chain (the order is checked again later).",
      labelNames: ['chain'],
      registers,
    }),
    creditsRefunded: new Counter({
      name: 'cryptomcp_credits_refunded_total',
      help: 'Credits reserved for a tool call and given back because the call failed, by server, tool and plan.',
      labelNames: ['server', 'tool', 'plan'],
      registers,
    }),
    meterReserveDuration: new Histogram({
      name: 'cryptomcp_metering_reserve_duration_seconds',
      help: 'Time a request spends in metering (waiting for a round trip and the round trip itself).',
      buckets: [0.00025, 0.0005, 0.00075, 0.001, 0.0015, 0.002, 0.003, 0.004, 0.006, 0.008, 0.012, 0.016, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    }),
    meterBatchCalls: new Histogram({
      name: 'cryptomcp_metering_batch_calls',
      help: 'Calls carried by one metering round trip (calls arriving during a round trip share the next).',
      buckets: [1, 2, 4, 8, 16, 32, 64],
      registers,
    }),
    meterBatchDuration: new Histogram({
      name: 'cryptomcp_metering_batch_duration_seconds',
      help: 'Time of one metering round trip to PostgreSQL.',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    }),
    meterErrors: new Counter({
      name: 'cryptomcp_metering_errors_total',
      help: 'Metering statements that failed, by operation (reserve, settle, refund, sweep).',
      labelNames: ['operation'],
      registers,
    }),
    renewals: new Counter({
      name: 'cryptomcp_metering_renewals_total',
      help: 'Monthly renewals applied by this pod: lazily by the metering statement, or by the periodic sweep.',
      registers,
    }),
    keyCacheHit: { inc: () => keyCacheLookups.add(HIT) },
    keyCacheMiss: { inc: () => keyCacheLookups.add(MISS) },
    upstreamDuration,
    watchPool(pool, max) {
      pools.push({ pool, max });
    },
    computeJob(task, outcome, waitSeconds, runSeconds) {
      computeJobs.inc({ task, outcome });
      if (outcome === 'refused') return;
      computeWait.observe({ task }, waitSeconds);
      if (runSeconds > 0) computeRun.observe({ task }, runSeconds);
    },
    watchCompute(stats) {
      computeStats = stats;
    },
    jobRun(task, outcome, seconds) {
      jobRuns.inc({ task, outcome });
      jobDuration.observe({ task }, seconds);
    },
    tasks: new Counter({
      name: 'cryptomcp_tasks_total',
      help: 'MCP tasks reaching a state, by server, tool and state: created, completed, failed, cancelled, orphaned (its replica stopped; failed and refunded by the sweep, counted by the replica that swept it, under tool "").',
      labelNames: ['server', 'tool', 'state'],
      registers,
    }),
    watchTasks(running) {
      runningTasks = running;
    },
    alertRulesEvaluated: new Counter({
      name: 'cryptomcp_alert_rules_evaluated_total',
      help: 'Alert rules evaluated, by kind (price, whale, social) and outcome (ok, error: the provider failed).',
      labelNames: ['kind', 'outcome'],
      registers,
    }),
    alertsFired: new Counter({
      name: 'cryptomcp_alerts_fired_total',
      help: 'Alerts stored (a rule met by a new event; each event of a rule is stored once), by kind.',
      labelNames: ['kind'],
      registers,
    }),
    alertDelivered(channel, lagSeconds) {
      alertsDelivered.inc({ channel });
      alertDeliveryLag.observe({ channel }, lagSeconds);
    },
    webhookAttempts: new Counter({
      name: 'cryptomcp_webhook_attempts_total',
      help: 'Webhook delivery attempts, by outcome: ok (2xx), http_error, network_error, timeout, refused_address (not a public address).',
      labelNames: ['outcome'],
      registers,
    }),
    close() {
      diagnostics.unsubscribe(UPSTREAM_CHANNEL, onUpstream);
    },
  };
}

/**
 * METRICS_ENABLED=false: nothing is recorded and no port is opened (for a deployment without
 * Prometheus, and for bench:gateway's observability-off run).
 */
export function disabledMetrics(): Metrics {
  const counter = { inc() {} };
  const histogram = { observe() {} };
  const tally = { add() {} };
  const record = { record() {} };
  return {
    registry: new Registry<OpenMetricsContentType>(),
    mcpRequests: tally,
    mcpRequestDuration: record,
    mcpOperationDuration: record,
    rejections: counter,
    creditsConsumed: counter,
    creditsRefunded: counter,
    revenue: counter,
    x402Calls: counter,
    paymentVerifyErrors: counter,
    meterReserveDuration: histogram,
    meterBatchCalls: histogram,
    meterBatchDuration: histogram,
    meterErrors: counter,
    renewals: counter,
    keyCacheHit: counter,
    keyCacheMiss: counter,
    upstreamDuration: histogram,
    watchPool() {},
    computeJob() {},
    watchCompute() {},
    jobRun() {},
    alertRulesEvaluated: counter,
    alertsFired: counter,
    alertDelivered() {},
    webhookAttempts: counter,
    tasks: counter,
    watchTasks() {},
    close() {},
  };
}

/** GET /metrics on its own port. Resolves with the bound port (pass 0 for any free port). */
export async function serveMetrics(metrics: Metrics, port: number, host: string): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    metrics.registry
      .metrics()
      .then((text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text))
      .catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
