// Reference (c) of bench:gateway: the SDK's documented stateless pattern, done naively — a new
// McpServer (with its own JSON Schema validator) and tool registration on every request, and the
// Node transport adapter. No auth, no metering: only the protocol cost.
import Fastify from 'fastify';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const app = Fastify({ logger: false });
app.post('/mcp/:server', async (request, reply) => {
  const server = new McpServer({ name: 'naive', version: '1.0.0' });
  server.registerTool(
    'bench_echo',
    { description: 'Returns its input unchanged.', inputSchema: { message: z.string().max(200).default('ping') } },
    async ({ message }) => {
      const envelope = { success: true, data: { echo: message }, metadata: { timestamp: new Date().toISOString() } };
      return { content: [{ type: 'text', text: JSON.stringify(envelope) }], structuredContent: envelope };
    },
  );
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  reply.hijack();
  reply.raw.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(request.raw, reply.raw, request.body);
});
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
