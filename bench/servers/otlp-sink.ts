// The OTLP/HTTP endpoint of bench:gateway's traced run (f), in its own process as a collector
// would be: it takes every export (200, `{}`), counts the bytes, and answers GET /bytes with the
// count. Kept out of the load generator's process, whose CPU it would otherwise take.
import http from 'node:http';

let bytes = 0;
const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/bytes') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ bytes }));
    return;
  }
  req.on('data', (chunk: Buffer) => (bytes += chunk.length));
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
});
