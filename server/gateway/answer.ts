// The answer (DESIGN.md §3): the SDK frames every reply, for both protocol generations.
// - 2026-07-28 messages go through the SDK's own createMcpHandler (legacy: 'reject'; a JSON
//   body, as no handler here streams), which answers server/discover, reads the per-request _meta envelope, adds the
//   cache fields and checks the standard headers. One handler per hosted server, built once.
// - 2025 messages (stateless initialize) go to a fresh low-level Server per request over
//   ExchangeTransport below, which hands it the parsed body and takes its answer back as an
//   object instead of wrapping the exchange in a WHATWG Request, Response and SSE stream.
// Either way the factory builds a low-level Server whose tools/list answer is precomputed and
// whose tools/call returns the result the gateway already computed (and reserved credits for),
// so no per-request schema conversion or validator is built.
import type { IncomingHttpHeaders } from 'node:http';
import {
  createMcpHandler,
  isJSONRPCRequest,
  Server,
  type CallToolResult,
  type JSONRPCMessage,
  type McpHttpHandler,
  type RequestId,
  type Transport,
} from '@modelcontextprotocol/server';
import type { RegisteredServer } from '../mcp/registry.ts';
import type { Classified } from './context.ts';

export interface ProtocolAnswer {
  status: number;
  contentType: string | null;
  body: string;
  /** The answer is a JSON-RPC error (with HTTP 200 or not). */
  jsonrpcError: boolean;
}

/** How long a client may cache a server's tools/list (2026-07-28 ttlMs): costs change only on restart. */
const TOOLS_LIST_TTL_MS = 5 * 60_000;

/**
 * Methods whose result depends only on the server and the protocol version, never on the caller:
 * the SDK's first answer to each is kept (as JSON) and re-framed with the next request's id, so a
 * connect costs the SDK's work once per process instead of once per client.
 */
const CONSTANT_METHODS: ReadonlySet<string> = new Set(['tools/list', 'server/discover']);

/** The headers the SDK's modern path reads; nothing else of the HTTP request reaches it. */
const FORWARDED_HEADERS = ['content-type', 'accept', 'mcp-protocol-version', 'mcp-method', 'mcp-name'];

export class ProtocolAnswerer {
  readonly #version: string;
  readonly #modern = new Map<string, McpHttpHandler>();
  readonly #onError: (error: Error) => void;
  /** The tools/call result for the request a modern factory call serves (keyed by its Request). */
  readonly #results = new WeakMap<Request, CallToolResult>();
  /** SDK results of CONSTANT_METHODS, as JSON, by era, server, method and protocol version. */
  readonly #constant = new Map<string, string>();

  constructor(version: string, onError: (error: Error) => void) {
    this.#version = version;
    this.#onError = onError;
  }

  /** The modern path's handler for a server (or an all-in-one view), made on its first request. */
  #handlerOf(server: RegisteredServer): McpHttpHandler {
    let handler = this.#modern.get(server.id);
    if (!handler) {
      handler = createMcpHandler(({ requestInfo }) => this.#protocolServer(server, requestInfo && this.#results.get(requestInfo)), {
        legacy: 'reject',
        responseMode: 'auto',
        onerror: this.#onError,
      });
      this.#modern.set(server.id, handler);
    }
    return handler;
  }

  async answer(call: Classified, headers: IncomingHttpHeaders, result: CallToolResult | undefined): Promise<ProtocolAnswer> {
    const key = constantKey(call);
    const id = call.message.id;
    if (key !== undefined && (typeof id === 'string' || typeof id === 'number')) {
      const known = this.#constant.get(key);
      if (known !== undefined) return { status: 200, contentType: 'application/json', body: `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${known}}`, jsonrpcError: false };
    }
    const answer = await this.sdkAnswer(call, headers, result);
    if (key !== undefined && answer.status === 200 && !answer.jsonrpcError) {
      const parsed = JSON.parse(answer.body) as { result?: unknown };
      if (parsed.result !== undefined) this.#constant.set(key, JSON.stringify(parsed.result));
    }
    return answer;
  }

  /** The SDK's own answer, never a kept one (answer() uses it; tests compare the two). */
  sdkAnswer(call: Classified, headers: IncomingHttpHeaders, result: CallToolResult | undefined): Promise<ProtocolAnswer> {
    return call.era === 'modern' ? this.#answerModern(call, headers, result) : this.#answerLegacy(call, result);
  }

  async close(): Promise<void> {
    await Promise.all([...this.#modern.values()].map((h) => h.close()));
  }

  async #answerModern(call: Classified, headers: IncomingHttpHeaders, result: CallToolResult | undefined): Promise<ProtocolAnswer> {
    const handler = this.#handlerOf(call.server);
    const forwarded = new Headers();
    for (const name of FORWARDED_HEADERS) {
      const value = headers[name];
      if (typeof value === 'string') forwarded.set(name, value);
    }
    for (const [name, value] of Object.entries(headers)) {
      if (name.startsWith('mcp-param-') && typeof value === 'string') forwarded.set(name, value);
    }
    const request = new Request(`http://cryptomcp.internal/mcp/${call.server.name}`, { method: 'POST', headers: forwarded });
    if (result) this.#results.set(request, result);
    const response = await handler.fetch(request, { parsedBody: call.message });
    const body = await response.text();
    return {
      status: response.status,
      contentType: response.headers.get('content-type'),
      body,
      jsonrpcError: response.status >= 400 || isJsonRpcError(body),
    };
  }

  async #answerLegacy(call: Classified, result: CallToolResult | undefined): Promise<ProtocolAnswer> {
    const mcp = this.#protocolServer(call.server, result);
    const transport = new ExchangeTransport();
    await mcp.connect(transport);
    // No close() afterwards: once the answer is out, a stateless exchange holds no timer or
    // socket, and the GC frees it; close() would only abort the finished handler's controller.
    const answer = await transport.exchange(call.message as JSONRPCMessage);
    // As the Streamable HTTP transport does: 202 with no body for notifications and responses.
    if (answer === undefined) return { status: 202, contentType: null, body: '', jsonrpcError: false };
    return { status: 200, contentType: 'application/json', body: JSON.stringify(answer), jsonrpcError: 'error' in answer };
  }

  #protocolServer(server: RegisteredServer, result: CallToolResult | undefined): Server {
    const mcp = new Server(
      { name: `cryptomcp-${server.name}`, title: server.title, version: this.#version, icons: server.icons },
      {
        capabilities: { tools: { listChanged: false } },
        instructions: server.description,
        cacheHints: { 'tools/list': { ttlMs: TOOLS_LIST_TTL_MS, cacheScope: 'public' } },
      },
    );
    mcp.setRequestHandler('tools/list', () => ({ tools: server.toolList }));
    mcp.setRequestHandler('tools/call', () => {
      if (!result) throw new Error('tools/call reached the protocol layer without a result');
      return result;
    });
    return mcp;
  }
}

/** The cache key of a message whose answer is the same for every caller, or undefined. */
function constantKey(call: Classified): string | undefined {
  const method = call.message.method;
  if (typeof method !== 'string' || !CONSTANT_METHODS.has(method)) return undefined;
  // Only the plain request: any parameter but _meta (a cursor, say) could change the answer.
  const params = call.message.params as Record<string, unknown> | undefined;
  if (params !== undefined && Object.keys(params).some((k) => k !== '_meta')) return undefined;
  return `${call.era}|${call.server.id}|${method}|${call.protocolVersion ?? ''}`;
}

function isJsonRpcError(body: string): boolean {
  // The SDK's JSON bodies start with the member it writes first; parse only what may be an error.
  if (!body.includes('"error"')) return false;
  try {
    const parsed = JSON.parse(body) as { error?: unknown };
    return parsed.error !== undefined;
  } catch {
    return false;
  }
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
    const deliver = this.onmessage;
    if (!deliver) return Promise.reject(new Error('ExchangeTransport: not connected to a server'));
    if (!isJSONRPCRequest(message)) {
      deliver(message);
      return Promise.resolve(undefined);
    }
    return new Promise((resolve) => {
      this.#pending = { id: message.id, resolve };
      deliver(message);
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    // Only the answer to the pending request is awaited; a stateless server sends nothing else.
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
