// The process's Prometheus registry (DESIGN.md §8). Names: cryptomcp_<subsystem>_<thing>_<unit>,
// bounded labels only (server, method, status; never key or account ids). The observability
// issue extends this; it is served on METRICS_PORT, never behind the ingress.
import http from 'node:http';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  mcpRequests: Counter<'server' | 'method' | 'status'>;
  meterReserveDuration: Histogram;
  meterBatchCalls: Histogram;
  meterBatchDuration: Histogram;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'cryptomcp_' });
  return {
    registry,
    mcpRequests: new Counter({
      name: 'cryptomcp_mcp_requests_total',
      help: 'MCP HTTP requests answered, by server, JSON-RPC method and HTTP status.',
      labelNames: ['server', 'method', 'status'],
      registers: [registry],
    }),
    meterReserveDuration: new Histogram({
      name: 'cryptomcp_metering_reserve_duration_seconds',
      help: 'Time a request spends in metering (waiting for a round trip and the round trip itself).',
      buckets: [0.00025, 0.0005, 0.00075, 0.001, 0.0015, 0.002, 0.003, 0.004, 0.006, 0.008, 0.012, 0.016, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    }),
    meterBatchCalls: new Histogram({
      name: 'cryptomcp_metering_batch_calls',
      help: 'Calls carried by one metering round trip (calls arriving during a round trip share the next).',
      buckets: [1, 2, 4, 8, 16, 32, 64],
      registers: [registry],
    }),
    meterBatchDuration: new Histogram({
      name: 'cryptomcp_metering_batch_duration_seconds',
      help: 'Time of one metering round trip to PostgreSQL.',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    }),
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
