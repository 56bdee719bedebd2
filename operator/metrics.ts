// The operator's Prometheus metrics, on its own registry and port (the dashboards in
// dashboards/ query exactly these names). Labels are bounded: kind is MCPServer or PlanPolicy
// (or a child kind for watch restarts), result and reason are small fixed sets.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export type ReconcileResult = 'success' | 'error' | 'requeue';
export type WatchRestartReason = 'closed' | 'error' | 'expired' | 'idle';

export interface OperatorMetrics {
  registry: Registry;
  reconcileTotal: Counter<'kind' | 'result'>;
  reconcileDuration: Histogram<'kind'>;
  workqueueDepth: Gauge<'kind'>;
  watchRestarts: Counter<'kind' | 'reason'>;
  isLeader: Gauge;
}

export function createOperatorMetrics(): OperatorMetrics {
  const registry = new Registry();
  return {
    registry,
    reconcileTotal: new Counter({ name: 'cryptomcp_operator_reconcile_total', help: 'Reconcile passes by kind and result (success, error, requeue).', labelNames: ['kind', 'result'], registers: [registry] }),
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

/** /metrics, /healthz (the process answers) and /readyz (caches synced, or standing by). */
export async function serveOperatorHttp(metrics: OperatorMetrics, port: number, host: string, ready: () => boolean): Promise<ProbeServer> {
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
      const ok = ready();
      res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' });
      res.end(ok ? 'ok' : 'caches not synced');
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
