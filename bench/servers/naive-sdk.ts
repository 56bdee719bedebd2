// Reference (c) of bench:gateway: the v2 SDK's documented per-request pattern, done naively, as
// docs/serving/fastify.md shows it — createMcpHandler with a factory that builds a new McpServer
// and registers the tool (zod schema) on every request, mounted through toNodeHandler. It serves
// both protocol generations (2026-07-28 on the modern path, 2025 through its stateless legacy
// fallback). No auth, no metering: only the protocol cost.
import Fastify from 'fastify';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';

const handler = createMcpHandler(() => {
  const server = new McpServer({ name: 'naive', version: '1.0.0' });
  server.registerTool(
    'bench_echo',
    { description: 'Returns its input unchanged.', inputSchema: z.object({ message: z.string().max(200).default('ping') }) },
    async ({ message }) => {
      const envelope = { success: true, data: { echo: message }, metadata: { timestamp: new Date().toISOString() } };
      return { content: [{ type: 'text', text: JSON.stringify(envelope) }], structuredContent: envelope };
    },
  );
  return server;
});
const node = toNodeHandler(handler);

const app = Fastify({ logger: false });
app.post('/mcp/:server', (request, reply) => {
  reply.hijack();
  return node(request.raw, reply.raw, request.body);
});
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
