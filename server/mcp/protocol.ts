// The MCP protocol side of one request, done by the SDK: a fresh low-level Server and a stateless
// Streamable HTTP transport per request (DESIGN.md §3), answering in JSON. What made the SDK's
// usual per-request pattern slow is done once instead: the tools/list answer is precomputed,
// the JSON Schema validator is shared, arguments are already validated by the gateway, and the
// Node adapter (which builds a request listener per transport) is skipped for the web-standard
// transport fed with the body Fastify already parsed.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { RegisteredServer } from './registry.ts';

const sharedValidator = new AjvJsonSchemaValidator();

export interface ProtocolAnswer {
  status: number;
  contentType: string | null;
  body: string;
}

export interface ProtocolRequest {
  server: RegisteredServer;
  body: unknown;
  protocolVersion: string | undefined;
  /** The tools/call result, computed (and charged) by the gateway before the SDK frames it. */
  callResult: CallToolResult | undefined;
  version: string;
}

export async function answerWithSdk({ server, body, protocolVersion, callResult, version }: ProtocolRequest): Promise<ProtocolAnswer> {
  const mcp = new Server(
    { name: `cryptomcp-${server.name}`, title: server.title, version },
    { capabilities: { tools: { listChanged: false } }, instructions: server.description, jsonSchemaValidator: sharedValidator },
  );
  mcp.setRequestHandler(ListToolsRequestSchema, () => ({ tools: server.toolList }));
  mcp.setRequestHandler(CallToolRequestSchema, () => {
    if (!callResult) throw new McpError(ErrorCode.InternalError, 'no result');
    return callResult;
  });
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await mcp.connect(transport);
  // No close() afterwards: once the JSON answer is out, a stateless exchange holds no timer or
  // socket, and the GC frees it. close() would only build a ConnectionClosed error and abort the
  // finished handler's controller, which measured ~8% of CPU under load.
  {
    const headers: Record<string, string> = {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
    };
    if (protocolVersion) headers['mcp-protocol-version'] = protocolVersion;
    const response = await transport.handleRequest(new Request(`http://localhost/mcp/${server.name}`, { method: 'POST', headers }), {
      parsedBody: body,
    });
    return { status: response.status, contentType: response.headers.get('content-type'), body: await response.text() };
  }
}
