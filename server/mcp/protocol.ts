// The MCP protocol side of one request, done by the SDK: a fresh low-level Server and a fresh
// transport per request (DESIGN.md §3), answering in JSON. The Server does the protocol work —
// message dispatch, initialize and version negotiation, ping, method-not-found and invalid-params
// errors, the tools/call result check. What made the SDK's usual per-request pattern slow is done
// once or not at all: the tools/list answer is precomputed, the JSON Schema validator is shared,
// arguments are already validated by the gateway, and the transport is ExchangeTransport below,
// which hands Fastify's parsed body to the Server and takes its answer back as an object. The
// SDK's web-standard HTTP transport would wrap the same exchange in a WHATWG Request, Response and
// stream per call; that wrapping measured ~40% of the SDK's share of a request (bench/gateway.ts,
// and the note on issue 2). The HTTP checks that transport made (Accept, Content-Type, JSON,
// protocol version header, batches) are made by the gateway before it gets here.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  isJSONRPCRequest,
  JSONRPCMessageSchema,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type JSONRPCMessage,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { RegisteredServer } from './registry.ts';

const sharedValidator = new AjvJsonSchemaValidator();

export interface ProtocolAnswer {
  status: number;
  contentType: string | null;
  body: string;
  /** The answer is a JSON-RPC error (HTTP status 200 or not). */
  jsonrpcError: boolean;
}

export interface ProtocolRequest {
  server: RegisteredServer;
  body: unknown;
  /** The tools/call result, computed (and charged) by the gateway before the SDK frames it. */
  callResult: CallToolResult | undefined;
  version: string;
}

/** What the SDK's Streamable HTTP transport answers for a body that is not one JSON-RPC message. */
const INVALID_MESSAGE: ProtocolAnswer = {
  status: 400,
  contentType: 'application/json',
  body: JSON.stringify({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: Invalid JSON-RPC message' }, id: null }),
  jsonrpcError: true,
};

export async function answerWithSdk({ server, body, callResult, version }: ProtocolRequest): Promise<ProtocolAnswer> {
  const parsed = JSONRPCMessageSchema.safeParse(body);
  if (!parsed.success) return INVALID_MESSAGE;
  const mcp = new Server(
    { name: `cryptomcp-${server.name}`, title: server.title, version },
    { capabilities: { tools: { listChanged: false } }, instructions: server.description, jsonSchemaValidator: sharedValidator },
  );
  mcp.setRequestHandler(ListToolsRequestSchema, () => ({ tools: server.toolList }));
  mcp.setRequestHandler(CallToolRequestSchema, () => {
    if (!callResult) throw new McpError(ErrorCode.InternalError, 'no result');
    return callResult;
  });
  const transport = new ExchangeTransport();
  await mcp.connect(transport);
  // No close() afterwards: once the answer is out, a stateless exchange holds no timer or
  // socket, and the GC frees it. close() would only build a ConnectionClosed error and abort the
  // finished handler's controller, which measured ~8% of CPU under load.
  const answer = await transport.exchange(parsed.data);
  // As the Streamable HTTP transport does: 202 with no body for notifications and responses.
  if (answer === undefined) return { status: 202, contentType: null, body: '', jsonrpcError: false };
  return { status: 200, contentType: 'application/json', body: JSON.stringify(answer), jsonrpcError: 'error' in answer };
}

/**
 * The SDK's Transport interface for one JSON-RPC message that has already been read: exchange()
 * delivers it to the connected Server and resolves with the Server's answer to it (a request), or
 * at once with undefined (a notification or a response, which get no answer).
 */
export class ExchangeTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  sessionId: string | undefined = undefined;
  #pending: { id: RequestId; resolve: (message: JSONRPCMessage) => void } | undefined;

  start(): Promise<void> {
    return Promise.resolve();
  }

  exchange(message: JSONRPCMessage): Promise<JSONRPCMessage | undefined> {
    if (!this.onmessage) return Promise.reject(new Error('ExchangeTransport: not connected to a server'));
    if (!isJSONRPCRequest(message)) {
      this.onmessage(message);
      return Promise.resolve(undefined);
    }
    return new Promise((resolve) => {
      this.#pending = { id: message.id, resolve };
      this.onmessage!(message);
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    // Only the answer to the pending request is awaited; a stateless server sends nothing else
    // (no sampling, elicitation or progress: it declares no such capability and has no stream).
    const pending = this.#pending;
    if (pending && ('result' in message || 'error' in message) && message.id === pending.id) {
      this.#pending = undefined;
      pending.resolve(message);
    }
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.onclose?.();
    return Promise.resolve();
  }
}
