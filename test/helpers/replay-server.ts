// A loopback HTTP server replaying documented upstream responses, for live-adapter tests: routes
// by method-less path (query included or not), records every request, and can be told to fail
// or never to answer (a route returning 'never' holds the request open until close).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Replay {
  url: string;
  requests: { path: string; headers: http.IncomingHttpHeaders }[];
  /** path (without query) → status and JSON body, or 'never' to hold the request open. */
  routes: Map<string, (url: URL) => { status: number; body?: unknown } | 'never'>;
  close(): Promise<void>;
}

export async function replayServer(): Promise<Replay> {
  const routes: Replay['routes'] = new Map();
  const requests: Replay['requests'] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://loopback');
    requests.push({ path: `${url.pathname}${url.search}`, headers: req.headers });
    const route = routes.get(url.pathname);
    const answer = route ? route(url) : { status: 404, body: { message: 'Not Found' } };
    if (answer === 'never') return;
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    routes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
