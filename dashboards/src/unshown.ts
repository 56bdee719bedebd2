// Metrics the service exports that no dashboard or rule shows, on purpose. Checked by
// test/observability/dashboards.test.ts: a new metric must be shown or listed here with a reason.
export const UNSHOWN: { pattern: RegExp; reason: string }[] = [
  {
    pattern: /^cryptomcp_(process|nodejs)_/,
    reason:
      "prom-client's default process and Node.js metrics (GC, heap spaces, handles, file descriptors, version): kept for ad-hoc queries; the Process row shows CPU, resident memory and event-loop lag p99.",
  },
];

// Series Prometheus makes itself for every target it scrapes: the absence alerts (a pod that is
// gone exports nothing) are built on them.
export const SCRAPE_METRICS = ['up'];

// Exported by the operator's own process (operator/metrics.ts), not by the service; the operator
// dashboard is built on exactly these names, and dashboards.test.ts checks both lists agree.
export const OPERATOR_METRICS = [
  'cryptomcp_operator_reconcile_total',
  'cryptomcp_operator_reconcile_duration_seconds_bucket',
  'cryptomcp_operator_reconcile_duration_seconds_count',
  'cryptomcp_operator_reconcile_duration_seconds_sum',
  'cryptomcp_operator_workqueue_depth',
  'cryptomcp_operator_watch_restarts_total',
  'cryptomcp_operator_is_leader',
  'cryptomcp_operator_reconcile_errors_total',
  'cryptomcp_operator_process_cpu_seconds_total',
  'cryptomcp_operator_process_resident_memory_bytes',
];

// The operator's other prom-client default metrics (heap spaces, GC, handles, file descriptors,
// version): kept for ad-hoc queries; its dashboard shows CPU and resident memory.
export const OPERATOR_UNSHOWN = /^cryptomcp_operator_(process|nodejs)_/;
