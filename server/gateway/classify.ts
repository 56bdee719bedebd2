// Stage 5 (DESIGN.md §3 row 5): one JSON-RPC message, of a protocol generation this service
// speaks, whose headers agree with its body; for tools/call, a tool of this server with arguments
// that pass its input schema. The generation is decided by the SDK's own classifier (the one its
// createMcpHandler routes by), so this stage and the SDK never disagree about a message.
import type { IncomingHttpHeaders } from 'node:http';
import { classifyInboundRequest, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import { ApiError } from '../errors.ts';
import { refuseNul } from '../lib/text.ts';
import { singleHeader } from './authenticate.ts';
import type { Authorized, Call, Classified, Era } from './context.ts';

/** The 2026 revisions served (the SDK's modern era); the 2025 ones are SUPPORTED_PROTOCOL_VERSIONS. */
export const MODERN_PROTOCOL_VERSIONS: readonly string[] = ['2026-07-28'];
export const LEGACY_PROTOCOL_VERSIONS: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS;

/** Methods whose Mcp-Name header mirrors a body field (SEP-2243). */
const NAMED_METHODS: Record<string, 'name' | 'uri'> = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' };

export function classify(authorized: Authorized, body: unknown, headers: IncomingHttpHeaders): Classified {
  const message = jsonRpcMessage(body);
  const protocolHeader = singleHeader(headers['mcp-protocol-version']);
  const methodHeader = singleHeader(headers['mcp-method']);
  const nameHeader = singleHeader(headers['mcp-name']);
  const outcome = classifyInboundRequest({
    httpMethod: 'POST',
    body: message,
    ...(protocolHeader !== undefined && { protocolVersionHeader: protocolHeader }),
    ...(methodHeader !== undefined && { mcpMethodHeader: methodHeader }),
    ...(nameHeader !== undefined && { mcpNameHeader: nameHeader }),
  });
  if (outcome.kind === 'reject') {
    throw new ApiError('INVALID_REQUEST', outcome.message, { jsonrpc_code: outcome.code });
  }
  const method = typeof message.method === 'string' ? message.method : undefined;
  const isRequest = method !== undefined && message.id !== undefined;
  let era: Era;
  let protocolVersion: string | undefined;
  if (outcome.kind === 'modern') {
    era = 'modern';
    protocolVersion = outcome.classification.revision;
    if (protocolVersion === undefined || !MODERN_PROTOCOL_VERSIONS.includes(protocolVersion)) {
      throw new ApiError('INVALID_REQUEST', `Unsupported protocol version ${protocolVersion ?? '(none)'}.`, {
        supported: [...MODERN_PROTOCOL_VERSIONS, ...LEGACY_PROTOCOL_VERSIONS],
      });
    }
    // The 2026-07-28 transport requires the standard headers on every request (SEP-2243).
    if (isRequest) {
      if (protocolHeader === undefined) throw headerError('MCP-Protocol-Version', 'is required on a 2026-07-28 request');
      if (methodHeader === undefined) throw headerError('Mcp-Method', 'is required on a 2026-07-28 request');
      if (method in NAMED_METHODS && nameHeader === undefined) throw headerError('Mcp-Name', `is required on ${method}`);
    }
  } else {
    era = 'legacy';
    protocolVersion = protocolHeader;
    if (protocolHeader !== undefined && !LEGACY_PROTOCOL_VERSIONS.includes(protocolHeader)) {
      throw new ApiError('INVALID_REQUEST', `Unsupported MCP-Protocol-Version ${protocolHeader}.`, {
        supported: [...MODERN_PROTOCOL_VERSIONS, ...LEGACY_PROTOCOL_VERSIONS],
      });
    }
  }
  if (methodHeader !== undefined && method !== undefined && methodHeader !== method) {
    throw headerError('Mcp-Method', `names ${methodHeader} but the body's method is ${method}`);
  }
  const field = method !== undefined ? NAMED_METHODS[method] : undefined;
  if (nameHeader !== undefined && field !== undefined) {
    const value = (message.params as Record<string, unknown> | undefined)?.[field];
    if (value !== nameHeader) throw headerError('Mcp-Name', `names ${nameHeader} but the body's params.${field} is ${JSON.stringify(value)}`);
  }
  return { ...authorized, call: callOf(authorized, message, method, era), era, protocolVersion, message };
}

function headerError(header: string, problem: string): ApiError {
  return new ApiError('INVALID_REQUEST', `The ${header} header ${problem}.`, { header });
}

/** A structural check of one JSON-RPC message; the SDK's classifier then checks its full shape. */
function jsonRpcMessage(body: unknown): Record<string, unknown> {
  if (Array.isArray(body)) {
    throw new ApiError('INVALID_REQUEST', 'JSON-RPC batches are not supported; send one message per request.');
  }
  if (typeof body !== 'object' || body === null || (body as { jsonrpc?: unknown }).jsonrpc !== '2.0') {
    throw new ApiError('INVALID_REQUEST');
  }
  const message = body as Record<string, unknown>;
  const id = message.id;
  if (id !== undefined && typeof id !== 'string' && !(typeof id === 'number' && Number.isInteger(id))) {
    throw new ApiError('INVALID_REQUEST', 'The JSON-RPC id must be a string or an integer.');
  }
  const params = message.params;
  if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params))) {
    throw new ApiError('INVALID_REQUEST', 'JSON-RPC params must be an object.');
  }
  if (message.method === undefined) {
    if (id !== undefined && ('result' in message || 'error' in message)) return message;
    throw new ApiError('INVALID_REQUEST');
  }
  if (typeof message.method !== 'string' || message.method === '') throw new ApiError('INVALID_REQUEST');
  return message;
}

/**
 * Methods that hold the HTTP exchange open as a stream: 2026-07-28 only (subscriptions.ts serves
 * subscriptions/listen); a 2025 client has no such method.
 */
const STREAMING_METHODS: ReadonlySet<string> = new Set(['subscriptions/listen']);

function callOf(authorized: Authorized, message: Record<string, unknown>, method: string | undefined, era: Era): Call {
  if (era === 'legacy' && method !== undefined && STREAMING_METHODS.has(method)) {
    throw new ApiError('INVALID_REQUEST', `${method} is a 2026-07-28 method: a 2025 client receives nothing unsolicited from these stateless servers.`, {
      method,
    });
  }
  if (method !== 'tools/call') return { kind: 'connect', method: method ?? 'response' };
  if (message.id === undefined) throw new ApiError('INVALID_REQUEST', 'tools/call must be a request with an id.');
  const params = message.params as { name?: unknown; arguments?: unknown } | undefined;
  if (typeof params?.name !== 'string') throw new ApiError('INVALID_REQUEST', 'tools/call needs params.name.');
  const server = authorized.server;
  const tool = server.tools.get(params.name);
  if (!tool) throw new ApiError('UNKNOWN_TOOL', undefined, { tool: params.name, available: [...server.tools.keys()] });
  // Tools store what they are given (a watch's note), and PostgreSQL text cannot hold a NUL.
  refuseNul(params.arguments);
  const result = tool.input.safeParse(params.arguments ?? {});
  if (!result.success) {
    throw new ApiError('INVALID_PARAMS', undefined, {
      issues: result.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
  return { kind: 'tools/call', tool, args: result.data as Record<string, unknown> };
}
