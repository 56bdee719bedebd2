// The operator's Prometheus metrics, on its own registry and port (the dashboards in
// dashboards/ query exactly these names), plus prom-client's default process and Node.js metrics.
// Labels are bounded: kind is MCPServer or PlanPolicy (or a watched kind for watch restarts),
// result and reason are small fixed sets.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type Metric } from 'prom-client';

export type ReconcileResult = 'success' | 'error' | 'requeue';
export type WatchRestartReason = 'closed' | 'error' | 'expired' | 'idle';

export interface OperatorMetrics {
  registry: Registry;
  reconcileTotal: Counter<'kind' | 'result'>;
  reconcileErrors: Counter<'kind' | 'reason'>;
  reconcileDuration: Histogram<'kind'>;
  workqueueDepth: Gauge<'kind'>;
  watchRestarts: Counter<'kind' | 'reason'>;
  isLeader: Gauge;
}

/**
 * cryptomcp_operator_process_cpu_seconds_total, ..._process_resident_memory_bytes and the rest of
 * prom-client's defaults, prefixed so they never mix with a server pod's: the operator dashboard's
 * process row and the CryptomcpOperatorMemoryHigh / CPUHigh alerts read them. Collected once per
 * process, as the service's are (server/metrics.ts, processMetrics): prom-client's collectors
 * cannot be stopped, so one per operator would keep every operator's registry for good.
 */
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, prefix: 'cryptomcp_operator_' });
  }
  return processRegistry;
}

export function createOperatorMetrics(): OperatorMetrics {
  const registry = new Registry();
  // getMetricsAsArray() gives the metric objects themselves (registry.js), typed as their JSON form.
  for (const metric of processMetrics().getMetricsAsArray() as unknown as Metric[]) registry.registerMetric(metric);
  return {
    registry,
    reconcileTotal: new Counter({ name: 'cryptomcp_operator_reconcile_total', help: 'Reconcile passes by kind and result (success, error, requeue).', labelNames: ['kind', 'result'], registers: [registry] }),
    reconcileErrors: new Counter({
      name: 'cryptomcp_operator_reconcile_errors_total',
      help: 'Failed reconcile passes by kind and reason (ApplyFailed, DatabaseError, Conflict, ApiError, Unknown); each is retried with backoff.',
      labelNames: ['kind', 'reason'],
      registers: [registry],
    }),
    reconcileDuration: new Histogram({
      name: 'cryptomcp_operator_reconcile_duration_seconds',
      help: 'Time one reconcile pass took.',
      labelNames: ['kind'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    workqueueDepth: new Gauge({ name: 'cryptomcp_operator_workqueue_depth', help: 'Keys waiting in the work queue.', labelNames: ['kind'], registers: [registry] }),
    watchRestarts: new Counter({ name: 'cryptomcp_operator_watch_restarts_total', help: 'Watch streams restarted, by kind and reason (closed, error, expired = 410 Gone, idle = watchdog).', labelNames: ['kind', 'reason'], registers: [registry] }),
    isLeader: new Gauge({ name: 'cryptomcp_operator_is_leader', help: '1 while this replica holds the leader lease and reconciles.', registers: [registry] }),
  };
}

export interface ProbeServer {
  port: number;
  close(): Promise<void>;
}

export interface ReadinessCheck {
  name: string;
  ok: boolean;
  /** Why it fails (or a note when it passes). */
  detail?: string;
}

/**
 * /metrics; /healthz (the process answers); /readyz runs every check and answers 200 only if
 * all pass, listing each as the API server's own /readyz?verbose does ("[+]name ok",
 * "[-]name failed: why"), so `kubectl describe pod` and a curl both say what is missing.
 */
export async function serveOperatorHttp(metrics: OperatorMetrics, port: number, host: string, checks: () => Promise<ReadinessCheck[]>): Promise<ProbeServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/metrics') {
      metrics.registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': metrics.registry.contentType });
          res.end(text);
        },
        () => {
          res.writeHead(500);
          res.end();
        },
      );
      return;
    }
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
      return;
    }
    if (path === '/readyz') {
      checks().then(
        (results) => {
          const ok = results.every((c) => c.ok);
          const lines = results.map((c) => (c.ok ? `[+]${c.name} ok${c.detail ? ` (${c.detail})` : ''}` : `[-]${c.name} failed: ${c.detail ?? 'not ready'}`));
          res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' });
          res.end(`${lines.join('\n')}\nreadyz check ${ok ? 'passed' : 'failed'}\n`);
        },
        (err: unknown) => {
          res.writeHead(503, { 'content-type': 'text/plain' });
          res.end(`readyz check failed: ${(err as Error).message}\n`);
        },
      );
      return;
    }
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
