// The all-in-one endpoint's discovery mode ({base_url}/mcp/discover, servers/common/discovery-tools.ts)
// lists only meta-tools. A tools/call of its relay (call_tool { name, arguments }) is rewritten,
// before any check of row 5 runs, into the tools/call of the tool it names on the endpoint the
// discovery view stands for: from there on it is that tool's call in every stage — refused outside
// the grant (403), unknown (400 UNKNOWN_TOOL) or invalid (400 INVALID_PARAMS) as that tool, metered,
// rate-limited, logged and refunded under its server and name. A call of any other tool of the
// endpoint is served as the endpoint would serve it.
import type { IncomingHttpHeaders } from 'node:http';
import { RELAY_TOOL, type AllInOne } from '../mcp/registry.ts';
import { singleHeader } from './authenticate.ts';
import type { Authorized } from './context.ts';

/** What the later stages see of one request. */
export interface Exchange {
  authorized: Authorized;
  body: unknown;
  headers: IncomingHttpHeaders;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route is the all-in-one endpoint's discovery mode. */
    discovery?: boolean;
  }
}

/** The exchange as the later stages must see it: relayed to the endpoint when discovery mode calls a tool. */
export function relay(allInOne: AllInOne, exchange: Exchange): Exchange {
  const { authorized, body, headers } = exchange;
  const endpoint = allInOne.endpointOf(authorized.server);
  if (!endpoint) return exchange;
  const message = body as { method?: unknown; params?: { name?: unknown; arguments?: unknown } } | null;
  if (message?.method !== 'tools/call' || typeof message.params?.name !== 'string') return exchange;
  const name = message.params.name;
  const onEndpoint = { ...authorized, server: endpoint };
  if (name !== RELAY_TOOL) return authorized.server.tools.has(name) ? exchange : { ...exchange, authorized: onEndpoint };
  // Arguments the relay itself refuses, or an Mcp-Name that disagrees with the body, stay the relay's
  // call: classify refuses them as such.
  const parsed = authorized.server.tools.get(RELAY_TOOL)?.input.safeParse(message.params.arguments ?? {});
  const nameHeader = singleHeader(headers['mcp-name']);
  if (!parsed?.success || (nameHeader !== undefined && nameHeader !== RELAY_TOOL)) return exchange;
  const inner = parsed.data as { name: string; arguments?: Record<string, unknown> };
  return {
    authorized: onEndpoint,
    body: { ...message, params: { ...message.params, name: inner.name, arguments: inner.arguments ?? {} } },
    headers: nameHeader === undefined ? headers : { ...headers, 'mcp-name': inner.name },
  };
}
