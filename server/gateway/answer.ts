// The answer (DESIGN.md §3): the JSON-RPC frame of every reply, for both protocol generations.
// - 2026-07-28 messages are answered by modern.ts: a method table over answers precomputed per
//   server, with none of the SDK's per-exchange machinery. The SDK's own createMcpHandler
//   (legacy: 'reject'; a JSON body, as no handler here streams) still answers what that table
//   leaves to it (request params of a shape it does not know), the whole modern path when
//   `modernViaSdk` is set (a benchmark's before-and-after, CRYPTOMCP_BENCH_MODERN_SDK), and
//   sdkAnswer(), which the differential test holds the table's answers equal to.
// - 2025 messages (stateless initialize) go to a fresh low-level Server per request over
//   ExchangeTransport below, which hands it the parsed body and takes its answer back as an
//   object instead of wrapping the exchange in a WHATWG Request, Response and SSE stream.
// The SDK's factory builds a low-level Server whose tools/list answer is precomputed and whose
// tools/call returns the result the gateway already computed (and reserved credits for), so no
// per-request schema conversion or validator is built.
import type { IncomingHttpHeaders } from 'node:http';
import {
  createMcpHandler,
  isJSONRPCRequest,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type CallToolResult,
  type JSONRPCMessage,
  type McpHttpHandler,
  type RequestId,
  type ServerCapabilities,
  type Transport,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { RegisteredServer } from '../mcp/registry.ts';
import { TASK_METHODS, type TaskAnswer } from '../tasks/protocol.ts';
import type { Classified } from './context.ts';
import { ModernProtocol, NO_TASK_CAPABILITIES, SERVER_CAPABILITIES, serverIdentity, TOOLS_LIST_TTL_MS } from './modern.ts';

export interface ProtocolAnswer {
  status: number;
  contentType: string | null;
  body: string;
  /** The answer is a JSON-RPC error (with HTTP 200 or not). */
  jsonrpcError: boolean;
}

/**
 * Methods whose result depends only on the server and the protocol version, never on the caller:
 * the SDK's first answer to each is kept (as JSON) and re-framed with the next request's id, so a
 * connect costs the SDK's work once per process instead of once per client.
 */
const CONSTANT_METHODS: ReadonlySet<string> = new Set(['tools/list', 'server/discover']);

/** The headers the SDK's modern path reads; nothing else of the HTTP request reaches it. */
const FORWARDED_HEADERS = ['content-type', 'accept', 'mcp-protocol-version', 'mcp-method', 'mcp-name'];

export interface ProtocolAnswererOptions {
  /** Answer every 2026-07-28 message through the SDK's createMcpHandler (the path before modern.ts; benchmarks compare the two). */
  modernViaSdk?: boolean;
  /** false: this path runs no task (x402), and declares none. */
  tasks?: boolean;
}

export class ProtocolAnswerer {
  readonly #version: string;
  readonly #capabilities: ServerCapabilities;
  readonly #direct: ModernProtocol | undefined;
  readonly #modern = new Map<string, McpHttpHandler>();
  readonly #onError: (error: Error) => void;
  /** The tools/call result for the request a modern factory call serves (keyed by its Request). */
  readonly #results = new WeakMap<Request, { result?: CallToolResult; task?: TaskAnswer }>();
  /** SDK results of CONSTANT_METHODS, as JSON, by era, server, method and protocol version. */
  readonly #constant = new Map<string, string>();

  constructor(version: string, onError: (error: Error) => void, options: ProtocolAnswererOptions = {}) {
    this.#version = version;
    this.#onError = onError;
    this.#capabilities = options.tasks === false ? NO_TASK_CAPABILITIES : SERVER_CAPABILITIES;
    this.#direct = options.modernViaSdk === true ? undefined : new ModernProtocol(version, this.#capabilities);
  }

  /** The modern path's handler for a server (or an all-in-one view), made on its first request. */
  #handlerOf(server: RegisteredServer): McpHttpHandler {
    let handler = this.#modern.get(server.id);
    if (!handler) {
      handler = createMcpHandler(({ requestInfo }) => {
        const precomputed = requestInfo && this.#results.get(requestInfo);
        return this.#protocolServer(server, precomputed?.result, precomputed?.task);
      }, {
        legacy: 'reject',
        responseMode: 'auto',
        onerror: this.#onError,
      });
      this.#modern.set(server.id, handler);
    }
    return handler;
  }

  /**
   * `task`: the answer the task runner computed (server/gateway/tasks.ts) for a tasks/* request,
   * or a tools/call it answered with a task (CreateTaskResult).
   */
  async answer(call: Classified, headers: IncomingHttpHeaders, result: CallToolResult | undefined, task?: TaskAnswer): Promise<ProtocolAnswer> {
    if (task) {
      if (call.era === 'modern') return this.#modernTask(call, task);
      // The SDK's Server refuses a tools/call result without content (a CreateTaskResult) on
      // every revision, tasks or not: that one answer is framed here, the task methods by the SDK.
      return call.call.kind === 'tools/call' ? plainFrame(call.message.id, task) : this.#answerLegacy(call, undefined, task);
    }
    if (call.era === 'modern' && this.#direct) {
      return this.#direct.answer(call, result) ?? this.#answerModern(call, headers, result);
    }
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
  sdkAnswer(call: Classified, headers: IncomingHttpHeaders, result: CallToolResult | undefined, task?: TaskAnswer): Promise<ProtocolAnswer> {
    return call.era === 'modern' ? this.#answerModern(call, headers, result, task) : this.#answerLegacy(call, result, task);
  }

  async close(): Promise<void> {
    await Promise.all([...this.#modern.values()].map((h) => h.close()));
  }

  async #answerModern(call: Classified, headers: IncomingHttpHeaders, result: CallToolResult | undefined, task?: TaskAnswer): Promise<ProtocolAnswer> {
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
    if (result || task) this.#results.set(request, { result, task });
    const response = await handler.fetch(request, { parsedBody: call.message });
    const body = await response.text();
    return {
      status: response.status,
      contentType: response.headers.get('content-type'),
      body,
      jsonrpcError: response.status >= 400 || isJsonRpcError(body),
    };
  }

  /** A task's 2026-07-28 answer: the extension's results are stamped as the table stamps any (modern.ts). */
  #modernTask(call: Classified, task: TaskAnswer): ProtocolAnswer {
    const modern = this.#direct ?? (this.#taskFramer ??= new ModernProtocol(this.#version));
    return modern.frameTask(call, task);
  }

  #taskFramer: ModernProtocol | undefined;

  async #answerLegacy(call: Classified, result: CallToolResult | undefined, task?: TaskAnswer): Promise<ProtocolAnswer> {
    const mcp = this.#protocolServer(call.server, result, task);
    const transport = new ExchangeTransport();
    await mcp.connect(transport);
    // No close() afterwards: once the answer is out, a stateless exchange holds no timer or
    // socket, and the GC frees it; close() would only abort the finished handler's controller.
    const answer = await transport.exchange(call.message as JSONRPCMessage);
    // As the Streamable HTTP transport does: 202 with no body for notifications and responses.
    if (answer === undefined) return { status: 202, contentType: null, body: '', jsonrpcError: false };
    return { status: 200, contentType: 'application/json', body: JSON.stringify(answer), jsonrpcError: 'error' in answer };
  }

  #protocolServer(server: RegisteredServer, result: CallToolResult | undefined, task?: TaskAnswer): Server {
    const mcp = new Server(serverIdentity(server, this.#version), {
      capabilities: this.#capabilities,
      instructions: server.description,
      cacheHints: { 'tools/list': { ttlMs: TOOLS_LIST_TTL_MS, cacheScope: 'public' } },
    });
    mcp.setRequestHandler('tools/list', () => ({ tools: server.toolList }));
    mcp.setRequestHandler('tools/call', () => {
      if (!result) throw new Error('tools/call reached the protocol layer without a result');
      return result;
    });
    // Tasks: answered from the task store (gateway/tasks.ts), framed here (2025-11-25) or compared
    // with the table's frame (2026-07-28, test/tasks/differential.test.ts).
    for (const method of new Set([...TASK_METHODS.legacy, ...TASK_METHODS.modern])) {
      mcp.setRequestHandler(method, { params: ANY_PARAMS }, () => {
        if (!task) throw new ProtocolError(ProtocolErrorCode.MethodNotFound, 'Method not found');
        return taskResult(task);
      });
    }
    return mcp;
  }
}

/** A JSON-RPC answer of a task, as the SDK frames one on the 2025 revisions. */
export function plainFrame(id: unknown, task: TaskAnswer): ProtocolAnswer {
  const head = `{"jsonrpc":"2.0","id":${JSON.stringify(id ?? null)},`;
  if ('error' in task) return { status: 200, contentType: 'application/json', body: `${head}"error":${JSON.stringify(task.error)}}`, jsonrpcError: true };
  return { status: 200, contentType: 'application/json', body: `${head}"result":${JSON.stringify(task.result)}}`, jsonrpcError: false };
}

/** The task methods' params were read by the task runner; the SDK only frames its answer. */
const ANY_PARAMS = z.looseObject({});

/** A task answer as the SDK's handler gives it: the result, or a thrown JSON-RPC error. */
function taskResult(task: TaskAnswer): Record<string, unknown> {
  if ('error' in task) throw new ProtocolError(task.error.code, task.error.message, task.error.data);
  return task.result;
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
