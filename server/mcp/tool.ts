// What a tool is. Each of the nine servers declares its tools with defineTool; they see only this
// contract and their injected providers, never Fastify, pg or each other (DESIGN.md §2).
import type { z } from 'zod';
import type { Freshness } from './envelope.ts';
import type { ServerName } from './names.ts';

/** The account's usage as get_usage reports it; read through this interface, not SQL. */
export interface UsageReport {
  plan: string;
  status: string;
  balance: number;
  renewal: 'one-time' | 'monthly';
  period_start: string;
  /** When the balance next resets to the allowance; null for one-time plans. */
  renews_at: string | null;
  allowance: number;
  calls: number;
  credits_used: number;
  by_server: { server: string; calls: number; credits: number }[];
  by_tool: { server: string; tool: string; calls: number; credits: number }[];
}

export interface UsageReader {
  usage(accountId: string): Promise<UsageReport>;
}

/** A tool as the server's own free tools see its siblings (for capabilities and estimates). */
export interface ToolInfo {
  name: string;
  description: string;
  credits: number;
  input: z.ZodObject;
  /** The kind of data its answers rest on, which says when they are stale (envelope.ts FRESHNESS). */
  freshness: Freshness;
}

export interface ToolContext {
  requestId: string;
  /** The server the tool belongs to ('all' for the all-in-one endpoint's own free tools). */
  server: ServerName | 'all';
  account: { id: string; plan: string };
  /** Aborted when the tool's time is up or the client went away. */
  signal: AbortSignal;
  usage: UsageReader;
  /** Every tool the endpoint that was called offers (one server's, or the all-in-one's), free ones included, with effective costs. */
  tools: readonly ToolInfo[];
}

export interface ToolOutput<D = unknown> {
  data: D;
  /** Where the numbers came from: 'snapshot', 'live:<provider>', 'account', ... */
  source: string;
  /** The date the data is current to (ISO 8601), or null when it is live/now. */
  data_as_of?: string | null;
  truncated?: boolean;
  next_cursor?: string;
  /**
   * One-line statements an agent must read beside the numbers: figures resting on different
   * dates, coverage gaps inside the requested window. The gateway copies them to
   * `metadata.notes` (omitted when absent or empty).
   */
  notes?: string[];
  /**
   * True when the answer holds no data for what was asked (no posts, no calls, no rows, no
   * holders): the gateway charges nothing for it (refund, `metadata.credits_used: 0`).
   */
  empty?: boolean;
  /**
   * A list answer's page (from common/paging.ts): `held` items from `offset` of the `limit` asked
   * for, `cut` when it stopped early to fit the answer's size. The gateway charges a page of no
   * items nothing, and a cut page for what it holds (gateway/delivery.ts, creditsFor).
   */
  page?: PageShare;
}

export interface PageShare {
  offset: number;
  held: number;
  limit: number;
  cut: boolean;
}

/** What a tool that changes state says about itself (MCP tool annotations); reads need nothing. */
export interface WriteAnnotations {
  readOnlyHint: false;
  /** Calling it again with the same arguments has no further effect. */
  idempotentHint: boolean;
  /** It may remove or overwrite something the user made. */
  destructiveHint: boolean;
}

export interface ToolDefinition<S extends z.ZodObject = z.ZodObject, O extends z.ZodType = z.ZodType> {
  name: string;
  /** A short human name, shown by clients in place of the snake_case name. */
  title: string;
  /** First sentence says what it returns. The registry appends "Costs N credits." */
  description: string;
  input: S;
  credits: number;
  /** Present only on tools that write; every other tool is read-only. */
  annotations?: WriteAnnotations;
  /** false: the tool reads only this service's own state or registry, never an upstream provider. */
  openWorld?: boolean;
  /** true: it reads or changes the caller's own account (usage, watchlists), so it is not offered without one (x402). */
  accountBound?: boolean;
  /**
   * true: it can take more than a couple of seconds (heavy computation, a scan of a whole dataset),
   * so a client may run it as an MCP task (docs/tasks.md): answered at once with a task, polled to
   * its result. Published as `execution.taskSupport: 'optional'` and stated in the description.
   */
  longRunning?: boolean;
  /** The kind of data its data_as_of dates, when it is not its server's (ServerModule.freshness). */
  freshness?: Freshness;
  /**
   * The shape of `data` in a successful answer (fields, types, units in .describe(), nullability).
   * The handler's return type is inferred from it, so the shape is written once; the registry
   * publishes it as the `data` part of the tool's outputSchema.
   */
  output?: O;
  handler: (args: z.infer<S>, ctx: ToolContext) => Promise<ToolOutput<z.input<O>>>;
}

export function defineTool<S extends z.ZodObject, O extends z.ZodType = z.ZodType>(def: ToolDefinition<S, O>): ToolDefinition {
  return def as unknown as ToolDefinition;
}

export interface ServerModule {
  name: ServerName;
  title: string;
  /** The server's icon: a small square SVG (sent to clients as a data: URI). */
  icon: string;
  /** What the server answers, in a sentence or two. */
  description: string;
  chains: readonly string[];
  /** Where this server's data comes from and how fresh it is. */
  dataFreshness: string;
  /** The kind of data its tools' answers rest on (envelope.ts FRESHNESS), unless a tool says otherwise. */
  freshness: Freshness;
  tools: ToolDefinition[];
}
