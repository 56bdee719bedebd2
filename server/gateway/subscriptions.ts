// subscriptions/listen (2026-07-28) for the alert feed (docs/alerts.md, "Listening"). The feed is
// a resource, `alerts://feed`, whose updates are notified: a client lists it in the listen
// filter's resourceSubscriptions (optionally `alerts://feed?after=<cursor>` to be sent first what
// came after the last alert it saw), and each alert its rules fire arrives on the stream as
// notifications/resources/updated for that URI, carrying the alert itself in
// `_meta["dev.cryptomcp/alert"]` (the webhook's body, its idempotency id `alert_<cursor>` and its
// cursor), so the agent can act without another call.
//
// The stream answers the SDK's way (its listen router): SSE, first
// notifications/subscriptions/acknowledged with the honored filter, then the notifications, each
// stamped with the subscription id (the listen request's id); keep-alive comments; on shutdown
// the empty listen result (the graceful close). Only alerting servers (and the all-in-one
// endpoint where it lists get_alerts) honor the feed; nothing else changes here
// (listChanged: false), so a filter with nothing honored is acknowledged empty and closed.
//
// Delivery is at least once: alerts are read from the feed after the stream's cursor whenever
// the account's LISTEN wake-up comes (and when the LISTEN connection comes back), in order, each
// written once per stream. An alert is charged (once per alert, however many streams got it) only
// after its frame was handed to the socket; one the account has no credit for is not sent (it
// stays in the feed for get_alerts or a later listen with a cursor).
import type { ServerResponse } from 'node:http';
import { SERVER_INFO_META_KEY, SUBSCRIPTION_ID_META_KEY, type RequestId } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { ProtocolAnswer } from './answer.ts';
import type { Classified } from './context.ts';
import { serverIdentity } from './modern.ts';

/** The resource whose updates a listen stream carries: the account's alert feed. */
export const ALERT_FEED_URI = 'alerts://feed';
/** Where each notification carries its alert. */
export const ALERT_META_KEY = 'dev.cryptomcp/alert';
/** Open streams per account (across its keys); one more is refused as the SDK's router refuses one over its limit. */
export const MAX_STREAMS_PER_ACCOUNT = 10;
const KEEP_ALIVE_MS = 15_000;
const PAGE = 100;

/** One alert as the stream sends it (alerts/listen.ts builds it). */
export interface ListenNotice {
  id: string;
  cursor: number;
  timestamp: string;
}

/** The feed as a stream reads it (alerts/listen.ts's AlertListener). */
export interface ListenFeed {
  since(accountId: string, cursor: number, limit: number): Promise<{ notices: ListenNotice[]; balance: number }>;
  head(accountId: string): Promise<number>;
  charge(accountId: string, cursor: number, server: string): Promise<number>;
  delivered(firedAt: string): void;
  watch(accountId: string, wake: () => void): () => void;
  readonly credits: number;
}

const FilterSchema = z.object({
  toolsListChanged: z.boolean().optional(),
  promptsListChanged: z.boolean().optional(),
  resourcesListChanged: z.boolean().optional(),
  resourceSubscriptions: z.array(z.string()).optional(),
});
const ParamsSchema = z.object({ notifications: FilterSchema });

/** The cursor an `alerts://feed[?after=N]` URI asks to start after; null: "from now"; undefined: not the feed. */
export function feedCursor(uri: string): number | null | undefined {
  if (uri === ALERT_FEED_URI) return null;
  const m = /^alerts:\/\/feed\?after=(\d{1,15})$/.exec(uri);
  return m ? Number(m[1]) : undefined;
}

function frame(message: Record<string, unknown>): string {
  return `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', ...message })}\n\n`;
}

export class ListenStreams {
  readonly #feed: ListenFeed | undefined;
  readonly #version: string;
  readonly #writeTimeoutMs: number;
  readonly #open = new Set<(graceful: boolean) => void>();
  readonly #perAccount = new Map<string, number>();

  constructor(feed: ListenFeed | undefined, opts: { version: string; writeTimeoutMs: number }) {
    this.#feed = feed;
    this.#version = opts.version;
    this.#writeTimeoutMs = opts.writeTimeoutMs;
  }

  get openCount(): number {
    return this.#open.size;
  }

  /** A listen request of the wrong shape, or one over the account's open streams: the JSON-RPC error the SDK's router answers it with. */
  refusal(call: Classified): ProtocolAnswer | undefined {
    const error = !ParamsSchema.safeParse(call.message.params).success
      ? { code: -32602, message: "Invalid params: 'notifications' is required and must be a valid SubscriptionFilter" }
      : (this.#perAccount.get(call.grant.account_id) ?? 0) >= MAX_STREAMS_PER_ACCOUNT
        ? { code: -32603, message: 'Subscription limit reached', data: { limit: MAX_STREAMS_PER_ACCOUNT } }
        : undefined;
    if (!error) return undefined;
    return { status: 200, contentType: 'application/json', body: JSON.stringify({ jsonrpc: '2.0', id: call.message.id, error }), jsonrpcError: true };
  }

  /** Takes the response over as the listen stream of a request refusal() passed. */
  open(call: Classified, res: ServerResponse, headers: Readonly<Record<string, string | number | string[] | undefined>>): void {
    const id = call.message.id as RequestId;
    const requested = ParamsSchema.parse(call.message.params).notifications.resourceSubscriptions ?? [];
    const feedUri = this.#feed && call.server.tools.has('get_alerts') ? requested.find((uri) => feedCursor(uri) !== undefined) : undefined;
    for (const [name, value] of Object.entries(headers)) if (value !== undefined) res.setHeader(name, value);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' });
    this.#stream(call, res, id, feedUri);
  }

  /** Ends every open stream with the graceful close (shutdown). */
  closeAll(): void {
    for (const teardown of this.#open) teardown(true);
  }

  #stream(call: Classified, res: ServerResponse, id: RequestId, feedUri: string | undefined): void {
    const stamp = { [SUBSCRIPTION_ID_META_KEY]: id };
    const write = (text: string): Promise<boolean> =>
      new Promise((resolve) => {
        if (closed || res.destroyed) return resolve(false);
        const timer = setTimeout(() => {
          res.destroy();
          resolve(false);
        }, this.#writeTimeoutMs);
        res.write(text, (err) => {
          clearTimeout(timer);
          resolve(!err);
        });
      });
    let closed = false;
    // What teardown stops, set once the stream is running.
    const running: { unwatch?: () => void; keepAlive?: NodeJS.Timeout } = {};
    const teardown = (graceful: boolean) => {
      if (closed) return;
      if (graceful && !res.destroyed) {
        const meta = { ...stamp, [SERVER_INFO_META_KEY]: serverIdentity(call.server, this.#version) };
        res.write(frame({ id, result: { resultType: 'complete', _meta: meta } }));
      }
      closed = true;
      running.unwatch?.();
      clearInterval(running.keepAlive);
      this.#open.delete(teardown);
      const left = (this.#perAccount.get(account) ?? 1) - 1;
      if (left > 0) this.#perAccount.set(account, left);
      else this.#perAccount.delete(account);
      res.end();
    };
    res.once('close', () => teardown(false));
    this.#open.add(teardown);
    const account = call.grant.account_id;
    this.#perAccount.set(account, (this.#perAccount.get(account) ?? 0) + 1);

    const honored = feedUri === undefined ? {} : { resourceSubscriptions: [feedUri] };
    void write(frame({ method: 'notifications/subscriptions/acknowledged', params: { notifications: honored, _meta: stamp } }));
    if (feedUri === undefined) {
      teardown(true);
      return;
    }
    running.keepAlive = setInterval(() => void write(': keepalive\n\n'), KEEP_ALIVE_MS);
    running.keepAlive.unref();

    const feed = this.#feed!;
    const server = call.server.name;
    let cursor: number | undefined;
    let pumping = false;
    let again = false;
    const pump = async (): Promise<void> => {
      if (pumping) {
        again = true;
        return;
      }
      pumping = true;
      try {
        do {
          again = false;
          cursor ??= feedCursor(feedUri) ?? (await feed.head(account));
          for (;;) {
            const { notices, balance } = await feed.since(account, cursor, PAGE);
            let budget = balance;
            for (const notice of notices) {
              if (closed || budget < feed.credits) return;
              const sent = await write(frame({ method: 'notifications/resources/updated', params: { uri: feedUri, _meta: { ...stamp, [ALERT_META_KEY]: notice } } }));
              if (!sent) return;
              cursor = notice.cursor;
              budget = await feed.charge(account, notice.cursor, server);
              feed.delivered(notice.timestamp);
            }
            if (notices.length < PAGE) break;
          }
        } while (again && !closed);
      } catch {
        // The database is away: the next wake-up (the LISTEN connection coming back) reads again.
      } finally {
        pumping = false;
      }
    };
    running.unwatch = feed.watch(account, () => void pump());
    void pump();
  }
}
