// Reference (d) of bench:gateway: a bare Fastify JSON POST route, the ceiling of the HTTP stack.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.post('/mcp/:server', async (request) => ({ jsonrpc: '2.0', id: 1, result: { echo: request.body } }));
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
