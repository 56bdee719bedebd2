// The Grafana dashboards of cryptomcp, as code. `npm run dashboards:build` writes them to
// dashboards/grafana/*.json (and the Kubernetes ConfigMaps); test/observability checks every
// query against a real Prometheus and against the metrics the service exports.
// Conventions: $__rate_interval for rates, $__range for "in the selected time range" totals.
import { dashboard, type RowSpec } from './panels.ts';

const R = '$__rate_interval';

const AUTH_CODES = 'MISSING_API_KEY|INVALID_API_KEY|API_KEY_EXPIRED|API_KEY_REVOKED';

const quantiles = (metric: string, by: string, legendPrefix = '') =>
  [0.5, 0.95, 0.99].map((q) => ({
    expr: `histogram_quantile(${q}, sum by (le${by ? `, ${by}` : ''}) (rate(${metric}_bucket[${R}])))`,
    legend: `${legendPrefix}p${Math.round(q * 100)}${by ? ` {{${by}}}` : ''}`,
  }));

const overviewRows: RowSpec[] = [
  {
    title: 'Traffic',
    panels: [
      { kind: 'stat', title: 'Requests in range', description: 'MCP requests answered in the selected time range, every outcome.', unit: 'short', width: 6, queries: [{ expr: 'sum(increase(cryptomcp_mcp_requests_total[$__range]))', legend: 'requests' }] },
      { kind: 'stat', title: 'Tool calls in range', description: 'tools/call requests answered in the selected time range, every outcome.', unit: 'short', width: 6, queries: [{ expr: 'sum(increase(cryptomcp_mcp_requests_total{method="tools/call"}[$__range]))', legend: 'tool calls' }] },
      { kind: 'stat', title: 'Successful tool calls in range', description: 'tools/call requests answered with a result.', unit: 'short', width: 6, queries: [{ expr: 'sum(increase(cryptomcp_mcp_requests_total{method="tools/call",outcome="ok"}[$__range]))', legend: 'ok' }] },
      { kind: 'stat', title: 'Request rate', description: 'MCP requests per second, all servers and pods.', unit: 'reqps', width: 6, queries: [{ expr: `sum(rate(cryptomcp_mcp_requests_total[${R}]))`, legend: 'req/s' }] },
      { title: 'Requests by server', description: 'MCP requests per second by server.', unit: 'reqps', width: 12, stack: true, queries: [{ expr: `sum by (server) (rate(cryptomcp_mcp_requests_total[${R}]))`, legend: '{{server}}' }] },
      { title: 'Requests by outcome', description: 'MCP requests per second by outcome: ok or the public error code.', unit: 'reqps', width: 12, stack: true, queries: [{ expr: `sum by (outcome) (rate(cryptomcp_mcp_requests_total[${R}]))`, legend: '{{outcome}}' }] },
    ],
  },
  {
    title: 'Errors and refusals',
    panels: [
      { title: 'Server error ratio', description: 'Share of requests answered 5xx (internal, upstream, database): what the availability SLO counts.', unit: 'percentunit', queries: [{ expr: `sum(rate(cryptomcp_mcp_requests_total{status=~"5.."}[${R}])) / sum(rate(cryptomcp_mcp_requests_total[${R}]))`, legend: '5xx ratio' }] },
      { title: 'Tool failures by code', description: 'tools/call requests that failed, by error code (tool-level failures, whatever the HTTP status).', unit: 'reqps', queries: [{ expr: `sum by (outcome) (rate(cryptomcp_mcp_requests_total{method="tools/call",outcome!="ok"}[${R}]))`, legend: '{{outcome}}' }] },
      { title: 'Refusals by code', description: 'Requests refused before a tool ran: 401 by reason, 403, 429, 402.', unit: 'reqps', queries: [{ expr: `sum by (code) (rate(cryptomcp_gateway_rejections_total[${R}]))`, legend: '{{code}}' }] },
      { kind: 'stat', title: 'Auth failures in range', description: 'Requests refused with 401 (missing, invalid, expired or revoked key).', unit: 'short', width: 6, queries: [{ expr: `sum(increase(cryptomcp_gateway_rejections_total{code=~"${AUTH_CODES}"}[$__range]))`, legend: '401' }] },
      { kind: 'stat', title: 'Rate limited in range', description: 'Requests refused with 429 RATE_LIMITED.', unit: 'short', width: 6, queries: [{ expr: 'sum(increase(cryptomcp_gateway_rejections_total{code="RATE_LIMITED"}[$__range]))', legend: '429' }] },
      { kind: 'stat', title: 'Out of credits in range', description: 'Requests refused with 402 INSUFFICIENT_CREDITS.', unit: 'short', width: 6, queries: [{ expr: 'sum(increase(cryptomcp_gateway_rejections_total{code="INSUFFICIENT_CREDITS"}[$__range]))', legend: '402' }] },
      { kind: 'stat', title: 'Forbidden in range', description: 'Requests refused with 403 (key scope, plan, suspended account).', unit: 'short', width: 6, queries: [{ expr: 'sum(increase(cryptomcp_gateway_rejections_total{code=~"KEY_SCOPE_FORBIDDEN|PLAN_FORBIDDEN|ACCOUNT_SUSPENDED"}[$__range]))', legend: '403' }] },
    ],
  },
  {
    title: 'Latency',
    panels: [
      { title: 'Request latency', description: 'Percentiles of the time to answer an MCP request, all servers.', unit: 's', queries: quantiles('cryptomcp_mcp_request_duration_seconds', '') },
      { title: 'Tool call latency by server (p95)', description: '95th percentile of successful tools/call latency by server.', unit: 's', queries: [{ expr: `histogram_quantile(0.95, sum by (le, server) (rate(cryptomcp_mcp_request_duration_seconds_bucket{method="tools/call",outcome="ok"}[${R}])))`, legend: '{{server}}' }] },
      { title: 'MCP operation duration (p95, semantic conventions)', description: 'mcp.server.operation.duration of the OpenTelemetry MCP conventions, by mcp.method.name.', unit: 's', queries: [{ expr: `histogram_quantile(0.95, sum by (le, mcp_method_name) (rate(mcp_server_operation_duration_seconds_bucket[${R}])))`, legend: '{{mcp_method_name}}' }] },
    ],
  },
  {
    title: 'Credits',
    panels: [
      { kind: 'stat', title: 'Credits consumed in range', description: 'Credits charged for successful tool results.', unit: 'short', width: 6, queries: [{ expr: 'sum(increase(cryptomcp_credits_consumed_total[$__range]))', legend: 'consumed' }] },
      { kind: 'stat', title: 'Credits refunded in range', description: 'Credits reserved for calls that failed and given back.', unit: 'short', width: 6, queries: [{ expr: 'sum(increase(cryptomcp_credits_refunded_total[$__range]))', legend: 'refunded' }] },
      { title: 'Credits consumed by plan', description: 'Credits charged per second, by plan.', unit: 'short', width: 12, stack: true, queries: [{ expr: `sum by (plan) (rate(cryptomcp_credits_consumed_total[${R}]))`, legend: '{{plan}}' }] },
    ],
  },
  {
    title: 'Payments',
    panels: [
      { title: 'Revenue by source', description: 'Money received per second, in USD, by source (plan, pack, x402) and chain or x402 network.', unit: 'short', queries: [{ expr: `sum by (source, chain) (rate(cryptomcp_payments_revenue_usd_micros_total[${R}])) / 1e6`, legend: '{{source}} {{chain}}' }] },
      { title: 'x402 calls by outcome', description: 'x402 pay-per-call tools/call requests per second by outcome: ok, PAYMENT_REQUIRED, PAYMENT_INVALID (the payer), SETTLEMENT_FAILED (ours: key, node or facilitator).', unit: 'reqps', stack: true, queries: [{ expr: `sum by (outcome) (rate(cryptomcp_x402_calls_total[${R}]))`, legend: '{{outcome}}' }] },
      { title: 'Payment checks failing by chain', description: "On-chain payment checks per second that could not reach the chain's node (orders wait and are checked again).", unit: 'ops', queries: [{ expr: `sum by (chain) (rate(cryptomcp_payments_verification_errors_total[${R}]))`, legend: '{{chain}}' }] },
    ],
  },
  {
    title: 'SLOs',
    panels: [
      { title: 'Availability: error budget burn (1h)', description: 'Server error ratio over 1h divided by the budget (0.5%): 1 spends the 30-day budget exactly in 30 days.', unit: 'short', width: 12, queries: [{ expr: 'cryptomcp:mcp_availability_errors:ratio_rate1h / 0.005', legend: 'burn rate' }] },
      { title: 'Latency: error budget burn (1h)', description: 'Share of successful requests slower than 0.5 s over 1h divided by the budget (1%).', unit: 'short', width: 12, queries: [{ expr: 'cryptomcp:mcp_latency_slow:ratio_rate1h / 0.01', legend: 'burn rate' }] },
    ],
  },
];

const serverRows: RowSpec[] = [
  {
    title: 'Tools',
    panels: [
      { title: 'Tool calls by tool', description: 'tools/call requests per second by server and tool.', unit: 'reqps', width: 12, queries: [{ expr: `sum by (server, tool) (rate(cryptomcp_mcp_requests_total{method="tools/call"}[${R}]))`, legend: '{{server}} {{tool}}' }] },
      { title: 'Tool failures by tool', description: 'Failed tools/call requests per second by server, tool and error code.', unit: 'reqps', width: 12, queries: [{ expr: `sum by (server, tool, outcome) (rate(cryptomcp_mcp_requests_total{method="tools/call",outcome!="ok"}[${R}]))`, legend: '{{server}} {{tool}} {{outcome}}' }] },
      { title: 'Tool latency p95 by tool', description: '95th percentile latency of successful tool calls, by server and tool.', unit: 's', width: 12, queries: [{ expr: `histogram_quantile(0.95, sum by (le, server, tool) (rate(cryptomcp_mcp_request_duration_seconds_bucket{method="tools/call",outcome="ok"}[${R}])))`, legend: '{{server}} {{tool}}' }] },
      { title: 'Credits by tool', description: 'Credits charged per second by server and tool.', unit: 'short', width: 12, queries: [{ expr: `sum by (server, tool) (rate(cryptomcp_credits_consumed_total[${R}]))`, legend: '{{server}} {{tool}}' }] },
    ],
  },
  {
    title: 'Methods',
    panels: [
      { title: 'Requests by method', description: 'MCP requests per second by server and JSON-RPC method.', unit: 'reqps', width: 12, queries: [{ expr: `sum by (server, method) (rate(cryptomcp_mcp_requests_total[${R}]))`, legend: '{{server}} {{method}}' }] },
      { title: 'Refusals by server and plan', description: 'Refusals per second by server, plan and code.', unit: 'reqps', width: 12, queries: [{ expr: `sum by (server, plan, code) (rate(cryptomcp_gateway_rejections_total[${R}]))`, legend: '{{server}} {{plan}} {{code}}' }] },
    ],
  },
];

const meteringRows: RowSpec[] = [
  {
    title: 'Metering',
    panels: [
      { title: 'Time in metering', description: 'Percentiles of the time a request waits for and spends in the metering round trip.', unit: 's', queries: quantiles('cryptomcp_metering_reserve_duration_seconds', '') },
      { title: 'Metering round trip', description: 'Percentiles of one metering statement round trip to PostgreSQL.', unit: 's', queries: quantiles('cryptomcp_metering_batch_duration_seconds', '') },
      { title: 'Calls per round trip (p50)', description: 'How many calls share one metering statement (group commit).', unit: 'short', queries: [{ expr: `histogram_quantile(0.5, sum by (le) (rate(cryptomcp_metering_batch_calls_bucket[${R}])))`, legend: 'p50' }] },
      { title: 'Metering errors', description: 'Failed metering statements per second, by operation.', unit: 'ops', queries: [{ expr: `sum by (operation) (rate(cryptomcp_metering_errors_total[${R}]))`, legend: '{{operation}}' }] },
      { title: 'Renewals applied', description: 'Monthly renewals applied in each interval, lazily by the metering statement or by the periodic sweep.', unit: 'short', queries: [{ expr: `sum(increase(cryptomcp_metering_renewals_total[${R}]))`, legend: 'renewals' }] },
      { title: 'Key cache hit ratio', description: 'Share of API key lookups answered from the in-process cache.', unit: 'percentunit', queries: [{ expr: `sum(rate(cryptomcp_key_cache_lookups_total{result="hit"}[${R}])) / sum(rate(cryptomcp_key_cache_lookups_total[${R}]))`, legend: 'hit ratio' }] },
    ],
  },
  {
    title: 'Compute pool',
    panels: [
      { title: 'Compute jobs by outcome', description: 'CPU-bound tool jobs (forecasts, backtests, signals) per second, by task and outcome (completed, failed, cancelled when the client left, refused when a queue was full).', unit: 'ops', width: 12, queries: [{ expr: `sum by (task, outcome) (rate(cryptomcp_compute_jobs_total[${R}]))`, legend: '{{task}} {{outcome}}' }] },
      { title: 'Compute jobs running and waiting', description: 'Jobs on a worker thread and jobs queued for one, all pods, with the threads available.', unit: 'short', width: 12, queries: [{ expr: 'sum by (state) (cryptomcp_compute_inflight)', legend: '{{state}}' }, { expr: 'sum(cryptomcp_compute_threads_max)', legend: 'threads' }] },
      { title: 'Wait for a compute thread', description: 'Percentiles of how long a heavy call waited for a worker thread (its account share or the pool full).', unit: 's', queries: quantiles('cryptomcp_compute_wait_seconds', '') },
      { title: 'Compute job run time', description: 'Percentiles of a job\'s time on a worker thread.', unit: 's', queries: quantiles('cryptomcp_compute_run_seconds', '') },
    ],
  },
  {
    title: 'MCP tasks',
    panels: [
      { title: 'Tasks by state', description: 'MCP tasks of long tools (docs/tasks.md) reaching each state per interval, all pods: created, completed (charged), failed and cancelled (refunded), orphaned (their replica stopped; failed and refunded by the sweep).', unit: 'short', width: 12, queries: [{ expr: `sum by (state) (increase(cryptomcp_tasks_total[${R}]))`, legend: '{{state}}' }] },
      { title: 'Tasks running', description: 'Tasks running in the background, by pod. A pod that stops with tasks running fails them (refunded); one that dies leaves them to the sweep.', unit: 'short', width: 12, queries: [{ expr: 'sum by (instance) (cryptomcp_tasks_running)', legend: '{{instance}}' }] },
    ],
  },
  {
    title: 'Background jobs',
    panels: [
      { title: 'Jobs by task and outcome', description: 'Background jobs (graphile-worker, server/jobs) run per second, all pods, by task and outcome: ok, or error (retried with backoff; a recurring task runs again at its next period).', unit: 'ops', width: 12, queries: [{ expr: `sum by (task, outcome) (rate(cryptomcp_jobs_total[${R}]))`, legend: '{{task}} {{outcome}}' }] },
      { title: 'Job run time (p95)', description: 'p95 of the time one job ran, by task.', unit: 's', width: 12, queries: [{ expr: `histogram_quantile(0.95, sum by (le, task) (rate(cryptomcp_job_duration_seconds_bucket[${R}])))`, legend: '{{task}}' }] },
    ],
  },
  {
    title: 'Alerts and webhooks',
    panels: [
      { title: 'Alert rules evaluated', description: 'Alert rules evaluated per second, by kind (price, whale, social) and outcome (error: the provider failed; the rule is tried again next pass).', unit: 'ops', queries: [{ expr: `sum by (kind, outcome) (rate(cryptomcp_alert_rules_evaluated_total[${R}]))`, legend: '{{kind}} {{outcome}}' }] },
      { title: 'Alerts fired', description: 'Alerts stored per interval, by kind (each event of a rule once).', unit: 'short', queries: [{ expr: `sum by (kind) (increase(cryptomcp_alerts_fired_total[${R}]))`, legend: '{{kind}}' }] },
      { title: 'Alerts delivered by channel', description: 'Alerts delivered per second: by webhook (answered 2xx) or by pull (returned by get_alerts).', unit: 'ops', queries: [{ expr: `sum by (channel) (rate(cryptomcp_alerts_delivered_total[${R}]))`, legend: '{{channel}}' }] },
      { title: 'Webhook attempts by outcome', description: 'Webhook delivery attempts per second: ok, http_error, network_error, timeout, refused_address (the URL resolved to a non-public address).', unit: 'ops', queries: [{ expr: `sum by (outcome) (rate(cryptomcp_webhook_attempts_total[${R}]))`, legend: '{{outcome}}' }] },
      { title: 'Delivery lag', description: 'Percentiles of the time from an alert firing to its delivery, by channel (webhook retries after failures count in full).', unit: 's', width: 16, queries: quantiles('cryptomcp_alert_delivery_lag_seconds', 'channel') },
    ],
  },
  {
    title: 'Database pool',
    panels: [
      { title: 'Pool connections', description: 'PostgreSQL pool connections in use and idle, with the pool maximum, all pods.', unit: 'short', width: 12, queries: [{ expr: 'sum by (state) (cryptomcp_db_pool_connections)', legend: '{{state}}' }, { expr: 'sum(cryptomcp_db_pool_max)', legend: 'max' }] },
      { title: 'Queries waiting for a connection', description: 'Queries queued for a free pool connection (saturation).', unit: 'short', width: 12, queries: [{ expr: 'sum by (instance) (cryptomcp_db_pool_waiting)', legend: '{{instance}}' }] },
    ],
  },
  {
    title: 'Process',
    panels: [
      { title: 'CPU', description: 'CPU seconds per second used by each pod.', unit: 'percentunit', queries: [{ expr: `sum by (instance) (rate(cryptomcp_process_cpu_seconds_total[${R}]))`, legend: '{{instance}}' }] },
      { title: 'Resident memory', description: 'Resident set size of each pod (the heap is capped at 256 MB).', unit: 'bytes', queries: [{ expr: 'sum by (instance) (cryptomcp_process_resident_memory_bytes)', legend: '{{instance}}' }] },
      { title: 'Event loop lag p99', description: 'The 99th percentile event loop delay of each pod.', unit: 's', queries: [{ expr: 'max by (instance) (cryptomcp_nodejs_eventloop_lag_p99_seconds)', legend: '{{instance}}' }] },
    ],
  },
];

const upstreamRows: RowSpec[] = [
  {
    title: 'Upstream providers',
    panels: [
      { title: 'Upstream requests by provider and outcome', description: 'Attempts per second at each upstream provider, by outcome.', unit: 'reqps', width: 12, queries: [{ expr: `sum by (provider, outcome) (rate(cryptomcp_upstream_request_duration_seconds_count[${R}]))`, legend: '{{provider}} {{outcome}}' }] },
      { title: 'Upstream error ratio', description: 'Share of attempts that timed out, were rate limited or failed, by provider (404s and our own aborts excluded).', unit: 'percentunit', width: 12, queries: [{ expr: `sum by (provider) (rate(cryptomcp_upstream_request_duration_seconds_count{outcome=~"timeout|rate_limited|error"}[${R}])) / sum by (provider) (rate(cryptomcp_upstream_request_duration_seconds_count[${R}]))`, legend: '{{provider}}' }] },
      { title: 'Upstream latency p95', description: '95th percentile duration of one attempt, by provider.', unit: 's', width: 12, queries: [{ expr: `histogram_quantile(0.95, sum by (le, provider) (rate(cryptomcp_upstream_request_duration_seconds_bucket[${R}])))`, legend: '{{provider}}' }] },
      { kind: 'stat', title: 'Failed upstream attempts in range', description: 'Attempts that timed out, were rate limited or failed, all providers.', unit: 'short', width: 12, queries: [{ expr: 'sum(increase(cryptomcp_upstream_request_duration_seconds_count{outcome=~"timeout|rate_limited|error"}[$__range]))', legend: 'failed' }] },
    ],
  },
];

// The operator (issue 7) exports these from its own process; the names are agreed with it.
const operatorRows: RowSpec[] = [
  {
    title: 'Reconcile',
    panels: [
      { title: 'Reconciles by result', description: 'Reconciles per second by resource kind and result (success, error, requeue).', unit: 'ops', width: 12, queries: [{ expr: `sum by (kind, result) (rate(cryptomcp_operator_reconcile_total[${R}]))`, legend: '{{kind}} {{result}}' }] },
      { title: 'Reconcile duration p95', description: '95th percentile reconcile duration by kind.', unit: 's', width: 12, queries: [{ expr: `histogram_quantile(0.95, sum by (le, kind) (rate(cryptomcp_operator_reconcile_duration_seconds_bucket[${R}])))`, legend: '{{kind}}' }] },
      { title: 'Reconcile errors by reason', description: 'Failed reconciles per second by kind and reason (ApplyFailed, DatabaseError, Conflict, ApiError); each is retried with backoff.', unit: 'ops', width: 24, queries: [{ expr: `sum by (kind, reason) (rate(cryptomcp_operator_reconcile_errors_total[${R}]))`, legend: '{{kind}} {{reason}}' }] },
    ],
  },
  {
    title: 'Operator process',
    panels: [
      { title: 'Operator CPU', description: 'CPU seconds per second used by each operator replica.', unit: 'percentunit', width: 12, queries: [{ expr: `sum by (instance) (rate(cryptomcp_operator_process_cpu_seconds_total[${R}]))`, legend: '{{instance}}' }] },
      { title: 'Operator memory', description: "Resident set size of each operator replica (the chart's limit is 256Mi).", unit: 'bytes', width: 12, queries: [{ expr: 'sum by (instance) (cryptomcp_operator_process_resident_memory_bytes)', legend: '{{instance}}' }] },
    ],
  },
  {
    title: 'Work queue and watches',
    panels: [
      { title: 'Work queue depth', description: 'Objects waiting to be reconciled, by kind.', unit: 'short', queries: [{ expr: 'sum by (kind) (cryptomcp_operator_workqueue_depth)', legend: '{{kind}}' }] },
      { title: 'Watch restarts', description: 'Watch restarts per interval by kind and reason (410 Gone, idle watchdog, error).', unit: 'short', queries: [{ expr: `sum by (kind, reason) (increase(cryptomcp_operator_watch_restarts_total[${R}]))`, legend: '{{kind}} {{reason}}' }] },
      { kind: 'stat', title: 'Leader', description: 'Operator replicas holding the leader lease (exactly one is healthy).', unit: 'short', queries: [{ expr: 'sum(cryptomcp_operator_is_leader)', legend: 'leaders' }] },
    ],
  },
];

export const DASHBOARDS = {
  'cryptomcp-overview': dashboard('cryptomcp-overview', 'cryptomcp / Overview', 'Traffic, error ratio, latency, credits and refusals of all MCP servers.', overviewRows, { source: 'cryptomcp_process_start_time_seconds', server: true }),
  'cryptomcp-servers': dashboard('cryptomcp-servers', 'cryptomcp / Servers and tools', 'Per server and tool: calls, failures, latency and credits.', serverRows, { source: 'cryptomcp_process_start_time_seconds', server: true }),
  'cryptomcp-metering-database': dashboard('cryptomcp-metering-database', 'cryptomcp / Metering, database and process', 'The metering statement, the PostgreSQL pool, the key cache and the process.', meteringRows, { source: 'cryptomcp_process_start_time_seconds', server: false }),
  'cryptomcp-upstream': dashboard('cryptomcp-upstream', 'cryptomcp / Upstream providers', 'Attempts, outcomes and latency of every upstream data provider.', upstreamRows, { source: 'cryptomcp_process_start_time_seconds', server: false }),
  'cryptomcp-operator': dashboard('cryptomcp-operator', 'cryptomcp / Operator', 'The Kubernetes operator: reconciles, work queue, watches and leadership.', operatorRows, { source: 'cryptomcp_operator_process_start_time_seconds', server: false }),
};
