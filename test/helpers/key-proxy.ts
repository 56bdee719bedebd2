// A loopback HTTP proxy that adds an x-api-key header to every request it forwards: the way to
// point a tool that cannot send headers (the MCP conformance CLI) at the keyed service.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface KeyProxy {
  url: string;
  close: () => Promise<void>;
}

export async function startKeyProxy(target: string, key: string): Promise<KeyProxy> {
  const upstream = new URL(target);
  const server = http.createServer((req, res) => {
    const forward = http.request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host, 'x-api-key': key } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
