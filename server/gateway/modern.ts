// The 2026-07-28 answer (DESIGN.md §3), written here instead of by the SDK's createMcpHandler.
// That handler builds, per exchange, a WHATWG Request, a fresh Server, a per-request transport, a
// Response with its stream and, when the transport closes, an error with its stack; none of it
// depends on the request once the gateway has classified it. This module answers the same
// messages from a method table over answers precomputed per server: a 2026-07-28 request is one
// table lookup, one JSON frame, and for tools/call one JSON.stringify of the result the gateway
// already computed.
//
// What the SDK does with a classified 2026-07-28 message, and where it is here:
//   - a notification: 202, no body (its handlers run after the answer and send nothing back);
//   - a request whose method the Server has no handler for in this revision (ping, initialize and
//     logging/setLevel are gone from it; resources, prompts, completions are not served): JSON-RPC
//     -32601 "Method not found", HTTP 404 (the dispatch ladder's status);
//   - server/discover and tools/list: a result stamped by the revision's encoder (resultType
//     'complete', ttlMs and cacheScope for cacheable results, the server's identity in
//     _meta['io.modelcontextprotocol/serverInfo']), fields the revision deleted dropped
//     (a tool's `execution`, `capabilities.tasks`);
//   - tools/call: the gateway's result, validated, stamped the same way (not cacheable).
// The SDK also validates each request's params against the revision's wire schema and answers a
// failure with its zod message. The table answers only params of the shapes it knows to be valid;
// any other shape (a non-object `arguments`, a retry's `inputResponses`, an odd progress token)
// is left to the SDK (answer.ts), so that rare request still gets the SDK's own answer.
//
// test/gateway/modern-differential.test.ts holds every answer of this table equal to the SDK's.
import { METHOD_NOT_FOUND, SERVER_INFO_META_KEY, type CallToolResult, type Implementation, type RequestId, type ServerCapabilities } from '@modelcontextprotocol/server';
import type { RegisteredServer } from '../mcp/registry.ts';
import { TASKS_EXTENSION, type TaskAnswer } from '../tasks/protocol.ts';
import { plainFrame, type ProtocolAnswer } from './answer.ts';
import { MODERN_PROTOCOL_VERSIONS } from './classify.ts';
import type { Classified } from './context.ts';

/**
 * What every hosted server (and all-in-one view) declares: tools, whose list never changes, and
 * tasks for the long ones (docs/tasks.md): 2025-11-25's experimental `tasks`, 2026-07-28's
 * extension (the revision drops `tasks` from its answers).
 */
export const SERVER_CAPABILITIES: ServerCapabilities = {
  tools: { listChanged: false },
  tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
  extensions: { [TASKS_EXTENSION]: {} },
};

/** What a path that runs no task declares (x402: a task belongs to an account). */
export const NO_TASK_CAPABILITIES: ServerCapabilities = { tools: { listChanged: false } };

/** How long a client may cache a server's tools/list (2026-07-28 ttlMs): costs change only on restart. */
export const TOOLS_LIST_TTL_MS = 5 * 60_000;

/** The implementation identity a server answers with (initialize's serverInfo, 2026-07-28's _meta stamp). */
export function serverIdentity(server: RegisteredServer, version: string): Implementation {
  return { name: `cryptomcp-${server.name}`, title: server.title, version, icons: server.icons };
}

/** A server's answers that depend on nothing but the server, as JSON, built on its first request. */
export interface ServedServer {
  /** `"_meta":{…serverInfo}` — the stamp every result ends with. */
  metaMember: string;
  /** The server/discover result. */
  discover: string;
  /** The tools/list result. */
  toolsList: string;
}

/** One 2026-07-28 request as a method of the table sees it. */
export interface ModernRequest {
  served: ServedServer;
  /** The request's params (an object, or absent: classify.ts checked). */
  params: Record<string, unknown> | undefined;
  /** For tools/call: the result the gateway computed (and reserved credits for). */
  result: CallToolResult | undefined;
}

/** A method's answer: its result as JSON, or undefined when the request is not of a shape it knows (the SDK answers it). */
export type ModernMethod = (request: ModernRequest) => string | undefined;

/**
 * The 2026-07-28 methods answered here. Adding one (subscriptions/listen, tasks/*) is one entry;
 * a method absent from this table is answered "Method not found", as the SDK's Server answers a
 * method it has no handler for.
 */
export const MODERN_METHODS: Readonly<Record<string, ModernMethod>> = {
  'server/discover': ({ served, params }) => (onlyMeta(params) ? served.discover : undefined),
  // The cursor is not read: one page holds every tool (the SDK's handler ignores it too).
  'tools/list': ({ served, params }) => (onlyMeta(params, 'cursor') && isOptionalString(params?.cursor) ? served.toolsList : undefined),
  'tools/call': ({ served, params, result }) => (result && isPlainCall(params) ? toolResult(result, served.metaMember) : undefined),
};

export class ModernProtocol {
  readonly #version: string;
  readonly #served = new Map<string, ServedServer>();

  readonly #capabilities: ServerCapabilities;

  constructor(version: string, capabilities: ServerCapabilities = SERVER_CAPABILITIES) {
    this.#version = version;
    this.#capabilities = capabilities;
  }

  /** The answer to a classified 2026-07-28 message, or undefined for a request the SDK must answer. */
  answer(call: Classified, result: CallToolResult | undefined): ProtocolAnswer | undefined {
    const { id, method, params } = call.message as { id?: RequestId; method?: unknown; params?: Record<string, unknown> };
    if (id === undefined) return ACCEPTED;
    const handler = typeof method === 'string' && Object.hasOwn(MODERN_METHODS, method) ? MODERN_METHODS[method] : undefined;
    if (!handler) return methodNotFound(id);
    const answered = handler({ served: this.#servedOf(call.server), params, result });
    if (answered === undefined) return undefined;
    return { status: 200, contentType: 'application/json', body: `{"result":${answered},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`, jsonrpcError: false };
  }

  /**
   * A task's answer (gateway/tasks.ts): a tools/call answered with a task (resultType 'task'), a
   * tasks/* result (resultType 'complete'), each stamped with the server's identity as every
   * result is; or the JSON-RPC error the extension names.
   */
  frameTask(call: Classified, task: TaskAnswer): ProtocolAnswer {
    if ('error' in task) return plainFrame(call.message.id, task);
    const id = JSON.stringify(call.message.id ?? null);
    // The SDK's encoder appends resultType to a handler's result; a task's creation names its own.
    const result = 'resultType' in task.result ? task.result : { ...task.result, resultType: 'complete' };
    const { metaMember } = this.#servedOf(call.server);
    return { status: 200, contentType: 'application/json', body: `{"result":${JSON.stringify(result).slice(0, -1)},${metaMember}},"jsonrpc":"2.0","id":${id}}`, jsonrpcError: false };
  }

  #servedOf(server: RegisteredServer): ServedServer {
    let served = this.#served.get(server.id);
    if (!served) {
      served = servedServer(server, this.#version, this.#capabilities);
      this.#served.set(server.id, served);
    }
    return served;
  }
}

/** The answer to a notification: taken, nothing to say. */
const ACCEPTED: ProtocolAnswer = { status: 202, contentType: null, body: '', jsonrpcError: false };

function methodNotFound(id: RequestId): ProtocolAnswer {
  return {
    status: 404,
    contentType: 'application/json',
    body: `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":{"code":${METHOD_NOT_FOUND},"message":"Method not found"}}`,
    jsonrpcError: true,
  };
}

function servedServer(server: RegisteredServer, version: string, declared: ServerCapabilities): ServedServer {
  const metaMember = `"_meta":${JSON.stringify({ [SERVER_INFO_META_KEY]: serverIdentity(server, version) })}`;
  // The revision deleted `capabilities.tasks` and a tool's `execution` (tasks are negotiated otherwise).
  const capabilities: Record<string, unknown> = { ...declared };
  delete capabilities.tasks;
  const discover = {
    supportedVersions: [...MODERN_PROTOCOL_VERSIONS],
    capabilities,
    ...(server.description ? { instructions: server.description } : {}),
  };
  const tools = server.toolList.map((tool) => {
    if (!('execution' in tool)) return tool;
    const rest: Record<string, unknown> = { ...tool };
    delete rest.execution;
    return rest;
  });
  return {
    metaMember,
    discover: cacheable(discover, 0, 'private', metaMember),
    toolsList: cacheable({ tools }, TOOLS_LIST_TTL_MS, 'public', metaMember),
  };
}

/** A cacheable result as the revision's encoder writes it: resultType, the cache fields, the identity stamp. */
function cacheable(result: Record<string, unknown>, ttlMs: number, cacheScope: 'public' | 'private', metaMember: string): string {
  const fields = JSON.stringify({ ...result, resultType: 'complete', ttlMs, cacheScope });
  return `${fields.slice(0, -1)},${metaMember}}`;
}

/** The tools/call result, stamped: resultType 'complete' and the server's identity (never cached). */
function toolResult(result: CallToolResult, metaMember: string): string | undefined {
  // A result that sets these itself, or has no content, takes the SDK's own rules.
  if (result._meta !== undefined || 'resultType' in result || !Array.isArray(result.content) || result.content.length === 0) return undefined;
  return `${JSON.stringify(result).slice(0, -1)},"resultType":"complete",${metaMember}}`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isOptionalString(value: unknown): boolean {
  return value === undefined || typeof value === 'string';
}

/** Params of nothing but _meta (and the keys named), whose _meta the wire schema accepts. */
function onlyMeta(params: Record<string, unknown> | undefined, ...allowed: string[]): boolean {
  if (params === undefined) return true;
  for (const key in params) {
    if (key !== '_meta' && !allowed.includes(key)) return false;
  }
  return plainMeta(params._meta);
}

/** A request _meta the wire schema takes as is: no progress token, or one of the usual kinds. */
function plainMeta(meta: unknown): boolean {
  if (meta === undefined) return true;
  if (!isPlainObject(meta)) return false;
  const token = meta.progressToken;
  return token === undefined || typeof token === 'string' || Number.isSafeInteger(token);
}

/** tools/call params of the usual shape: a name, arguments as an object, no retry members. */
function isPlainCall(params: Record<string, unknown> | undefined): boolean {
  if (params === undefined || typeof params.name !== 'string') return false;
  if (params.arguments !== undefined && !isPlainObject(params.arguments)) return false;
  if ('inputResponses' in params || 'requestState' in params) return false;
  return plainMeta(params._meta);
}
