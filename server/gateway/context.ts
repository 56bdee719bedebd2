// What each stage of the gateway hands to the next (DESIGN.md §3). Every stage takes the context
// the previous one produced and returns a wider one, so a later stage can only run with what the
// earlier checks proved: a tool never runs without a grant, a reservation never without a call.
import type { Span } from '@opentelemetry/api';
import type { KeyGrant } from '../keys/store.ts';
import type { RegisteredServer, RegisteredTool } from '../mcp/registry.ts';
import type { MeterDecision } from '../metering/meter.ts';

/** Stage 1: the path names one of the hosted servers. */
export interface Routed {
  requestId: string;
  server: RegisteredServer;
}

/** Stages 2-3: a valid key whose scope and plan include this server, on an active account. */
export interface Authorized extends Routed {
  grant: KeyGrant;
}

/** The protocol generation a message belongs to (the SDK's "era"). */
export type Era = 'modern' | 'legacy';

/** What the message asks for; only tools/call is metered and rate-counted against the plan. */
export type Call =
  | { kind: 'tools/call'; tool: RegisteredTool; args: Record<string, unknown> }
  /** Discovery, handshake, listing, ping, notifications and anything else: free. */
  | { kind: 'connect'; method: string };

/** Stage 5: one JSON-RPC message of a known era, and for tools/call a known tool with valid arguments. */
export interface Classified extends Authorized {
  call: Call;
  era: Era;
  /** The protocol version the message claims (header or per-request _meta), when it claims one. */
  protocolVersion: string | undefined;
  message: Record<string, unknown>;
}

/** Stages 6-7: admitted by the rate limit and, for tools/call, its credits reserved. */
export interface Reserved extends Classified {
  decision: MeterDecision;
  /** Credits reserved for this call (0 for free methods). */
  cost: number;
}

/**
 * What the request's observers (headers, metrics, span, error handler) know so far. Stages write
 * it as they pass; nothing reads a field of it to make a decision.
 */
export interface Trail {
  server?: string;
  grant?: KeyGrant;
  decision?: MeterDecision;
  method?: string;
  tool?: string;
  /**
   * The tool a tools/call body names, known or not, and the size of its arguments: what the
   * request log records for a call refused before classify found the tool (UNKNOWN_TOOL,
   * INVALID_PARAMS, KEY_SCOPE_FORBIDDEN). Never a metric label (a client chooses it).
   */
  named?: { tool: string; argsBytes: number };
  /** The public message the request ended with (an error's), for the request log. */
  message?: string;
  era?: Era;
  creditsUsed: number;
  /** Balance after this request, once known. */
  remaining?: number;
  /** The public error code the request ended with; undefined: ok. */
  outcome?: string;
  /** The MCP server span (tracing on, body classified). */
  span?: Span;
}
