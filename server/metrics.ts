// The process's Prometheus registry (DESIGN.md §8). Names: cryptomcp_<subsystem>_<thing>_<unit>,
// bounded labels only (server, method, status; never key or account ids). The observability
// issue extends this; it is served on METRICS_PORT, never behind the ingress.
import http from 'node:http';
import { Counter, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  mcpRequests: Counter<'server' | 'method' | 'status'>;
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
