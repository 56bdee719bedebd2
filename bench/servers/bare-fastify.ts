// Reference (d) of bench:gateway: a bare Fastify JSON POST route, the ceiling of the HTTP stack.
// With `--database <url>` it is (d+db): each request first makes one PostgreSQL round trip
// (`SELECT 1`, a prepared statement on a pool of 4, as the gateway's own pool), the least any
// check made in the database per request can cost. bench:gateway compares the two at half load:
// that difference is the floor under what metering can add to p99 on this machine.
import Fastify from 'fastify';
import pg from 'pg';

const at = process.argv.indexOf('--database');
const pool = at > 0 ? new pg.Pool({ connectionString: process.argv[at + 1], max: 4 }) : undefined;

const app = Fastify({ logger: false });
app.post('/mcp/:server', async (request) => {
  if (pool) await pool.query({ name: 'one', text: 'SELECT 1' });
  return { jsonrpc: '2.0', id: 1, result: { echo: request.body } };
});
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
