// The alert feed as subscriptions/listen streams read it (docs/alerts.md, "Listening"): one LISTEN
// connection per process on the channel 'alerts' (alert_insert announces each new alert there as
// '<account id>:<alert id>'), fanned out in memory to the streams of that account. A notification
// is only a wake-up: a stream then reads the feed after its own cursor, so a notification lost
// while the connection was down costs nothing — on every (re)connect each stream reads again.
import type pg from 'pg';
import type { Database } from '../db/pool.ts';
import { alertMessage } from './jobs.ts';
import { ALERT_DELIVERY_CREDITS } from './types.ts';

/** One alert as a listen stream sends it: the webhook's body plus its idempotency id and cursor. */
export interface FeedNotice {
  /** The idempotency id, the same as the webhook's `webhook-id`: `alert_<cursor>`. */
  id: string;
  cursor: number;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

export interface AlertListenerOptions {
  /** Delay before reconnecting after the LISTEN connection failed (doubles up to 30 s). */
  retryMs?: number;
  onDelivered?: (lagSeconds: number) => void;
  log?: (line: string) => void;
}

type AlertRow = { id: string; rule_id: string | null; kind: string; event_id: string; title: string; data: Record<string, unknown>; fired_at: Date };

/** The feed as the gateway's listen streams read it (server/gateway/subscriptions.ts, ListenFeed). */
export class AlertListener {
  /** Credits one alert written to a stream costs. */
  readonly credits = ALERT_DELIVERY_CREDITS;
  readonly #db: Database;
  readonly #opts: AlertListenerOptions;
  readonly #watchers = new Map<string, Set<() => void>>();
  #client: pg.PoolClient | undefined;
  #connecting: Promise<void> | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #retryMs: number;
  #closed = false;

  constructor(db: Database, opts: AlertListenerOptions = {}) {
    this.#db = db;
    this.#opts = opts;
    this.#retryMs = opts.retryMs ?? 500;
  }

  /** The account's alerts after the cursor, oldest first, and the account's balance now. */
  async since(accountId: string, cursor: number, limit: number): Promise<{ notices: FeedNotice[]; balance: number }> {
    const res = await this.#db.query<AlertRow & { balance: number }>(
      `SELECT a.id, a.rule_id, a.kind, a.event_id, a.title, a.data, a.fired_at, acc.balance
         FROM accounts acc LEFT JOIN LATERAL (
           SELECT * FROM alerts WHERE account_id = acc.id AND id > $2 ORDER BY id LIMIT $3) a ON true
        WHERE acc.id = $1`,
      [accountId, cursor, limit],
    );
    const balance = res.rows[0]?.balance ?? 0;
    const notices = res.rows.filter((r) => r.id !== null).map((r) => ({ id: `alert_${r.id}`, cursor: Number(r.id), ...alertMessage({ ...r, alert_id: r.id }) }));
    return { notices, balance };
  }

  /** The newest cursor of the account's feed (0: none yet). */
  async head(accountId: string): Promise<number> {
    const res = await this.#db.query<{ id: string | null }>('SELECT max(id) AS id FROM alerts WHERE account_id = $1', [accountId]);
    return Number(res.rows[0]?.id ?? 0);
  }

  /** Charges one alert written to a stream, once per alert however many streams got it; the balance after. */
  async charge(accountId: string, cursor: number, server: string): Promise<number> {
    const res = await this.#db.query<{ balance: number | null }>('SELECT alert_delivery_charge($1, $2, $3, $4) AS balance', [
      accountId,
      `alert-listen:${cursor}`,
      ALERT_DELIVERY_CREDITS,
      server,
    ]);
    return res.rows[0]?.balance ?? 0;
  }

  /** Reports a delivered alert's lag (fired_at to written). */
  delivered(firedAt: string): void {
    this.#opts.onDelivered?.((Date.now() - Date.parse(firedAt)) / 1000);
  }

  /** Calls wake whenever the account may have alerts a stream has not read (a notification, or a reconnect). */
  watch(accountId: string, wake: () => void): () => void {
    let set = this.#watchers.get(accountId);
    if (!set) this.#watchers.set(accountId, (set = new Set()));
    set.add(wake);
    this.#ensureConnected();
    return () => {
      set.delete(wake);
      if (set.size === 0) this.#watchers.delete(accountId);
    };
  }

  /** Streams watching now (all accounts). */
  get watching(): number {
    let n = 0;
    for (const set of this.#watchers.values()) n += set.size;
    return n;
  }

  /** Whether the LISTEN connection is up (tests wait for it across a database restart). */
  get listening(): boolean {
    return this.#client !== undefined;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    await this.#connecting?.catch(() => {});
    const client = this.#client;
    this.#client = undefined;
    client?.release(true);
  }

  #ensureConnected(): void {
    if (this.#client || this.#connecting || this.#retryTimer || this.#closed) return;
    this.#connecting = this.#connect().finally(() => {
      this.#connecting = undefined;
    });
  }

  async #connect(): Promise<void> {
    let client: pg.PoolClient | undefined;
    try {
      client = await this.#db.pool.connect();
      const lost = (err?: Error) => this.#lost(client!, err);
      client.on('notification', (n) => this.#notified(n.payload));
      client.once('error', lost);
      client.once('end', () => lost());
      await client.query('LISTEN alerts');
      if (this.#closed) {
        client.release(true);
        return;
      }
      this.#client = client;
      this.#retryMs = this.#opts.retryMs ?? 500;
      // What was announced while no connection listened is read now, from each stream's cursor.
      this.#wakeAll();
    } catch (err) {
      client?.release(true);
      this.#retry(err as Error);
    }
  }

  #lost(client: pg.PoolClient, err?: Error): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    client.release(true);
    this.#retry(err);
  }

  #retry(err?: Error): void {
    if (this.#closed) return;
    this.#opts.log?.(`alert LISTEN connection lost${err ? `: ${err.message}` : ''}; reconnecting in ${this.#retryMs} ms`);
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      if (this.#watchers.size > 0) this.#ensureConnected();
    }, this.#retryMs);
    this.#retryTimer.unref();
    this.#retryMs = Math.min(this.#retryMs * 2, 30_000);
  }

  #notified(payload: string | undefined): void {
    const account = payload?.split(':')[0];
    if (!account) return;
    for (const wake of this.#watchers.get(account) ?? []) wake();
  }

  #wakeAll(): void {
    for (const set of this.#watchers.values()) for (const wake of set) wake();
  }
}

