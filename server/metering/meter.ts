// Credits and rate limits, enforced in PostgreSQL (DESIGN.md §5). `reserve` is the one database
// round trip on the hot path (meter_reserve: GCRA, lazy renewal, reservation and ledger row under
// one row lock). Calls that arrive while `maxInflight` round trips are already under way wait for
// the next one and share it (meter_reserve_batch), the way group commit shares a WAL flush: at low
// load every call goes alone and at once; under load PostgreSQL runs one statement and one commit
// for many calls. Answered reservations are marked charged in batches; failed ones are refunded
// at once; ones nobody resolved (the pod died) are refunded by a sweep.
import type { Database } from '../db/pool.ts';

export type MeterOutcome =
  | 'ok'
  | 'replayed'
  | 'rate_limited'
  | 'insufficient_credits'
  | 'suspended'
  | 'account_not_found'
  /** The key's own controls (migration 0016): paused, its credit cap for the period, its rate limit. */
  | 'key_paused'
  | 'key_cap_reached'
  | 'key_rate_limited';

/** The key's controls as the metering statement saw them (null where the key has none). */
export interface KeyControlDecision {
  cap: number | null;
  /** Credits the key has spent in the cap's current period (after this call, if it was admitted). */
  spent: number | null;
  period: 'day' | 'month' | null;
  rateLimitPerMinute: number | null;
}

export interface MeterDecision {
  outcome: MeterOutcome;
  /** Balance after this request (what `remaining_credits` reports). */
  balance: number;
  plan: string;
  requestsPerMinute: number;
  burst: number;
  /** Requests still admitted right now under the rate limit. */
  rateRemaining: number;
  /** Seconds until the rate limit is fully replenished. */
  rateResetSeconds: number;
  /** For 'rate_limited' and 'key_rate_limited': seconds until one more request is admitted. */
  retryAfterSeconds: number;
  /** Absent where no key controls apply (x402, the free meter). */
  key?: KeyControlDecision;
}

export interface ReserveInput {
  accountId: string;
  requestId: string;
  cost: number;
  /** Write a ledger row (every tools/call). Other methods only count toward the rate limit. */
  record: boolean;
  server: string;
  tool: string | null;
  keyId: string;
}

/** What the gateway needs of metering: reserve before the tool, then settle or refund. */
export interface CreditMeter {
  reserve(input: ReserveInput): Promise<MeterDecision>;
  /** Gives the reservation back (idempotent). Returns the new balance, or null if nothing was due. */
  refund(requestId: string, note: string): Promise<number | null>;
  /** The answer reached the client: the reservation is charged for good. */
  settle(requestId: string): void;
  /**
   * The answer reached the client and is charged `credits`, less than was reserved (a page cut
   * for size): the rest is given back at once (a refund row) and the reservation resolved as
   * charged. Returns the balance after, or null if the reservation was already resolved.
   */
  settlePart(requestId: string, credits: number, note: string): Promise<number | null>;
}

export interface MeterOptions {
  /** The clock metering uses; undefined means the database's clock (all pods agree). */
  now?: () => Date;
  settleIntervalMs: number;
  /** Reservations unresolved for longer than this are refunded by the sweep. */
  staleAfterMs: number;
  onError?: (what: string, err: unknown) => void;
  /** Reservation round trips under way at once (default 4). */
  maxInflight?: number;
  /** Most calls in one round trip (default 64). */
  maxBatch?: number;
  /** Observes each reservation round trip: how many calls it carried and how long it took. */
  onBatch?: (calls: number, seconds: number) => void;
  /** Told of every failed metering statement (for the error counter; onError has the details). */
  onFailure?: (operation: 'reserve' | 'settle' | 'refund' | 'sweep') => void;
  /** Told how many accounts were renewed: by the periodic sweep, or lazily by a reservation. */
  onRenewals?: (count: number) => void;
}

interface Waiting {
  input: ReserveInput;
  resolve: (d: MeterDecision) => void;
  reject: (err: unknown) => void;
}

interface ReserveRow {
  idx: number;
  outcome: MeterOutcome;
  balance: number;
  plan: string;
  requests_per_minute: number;
  burst: number;
  rl_remaining: number | null;
  rl_reset_seconds: number | null;
  retry_after_seconds: number | null;
  /** This statement renewed the account (set on one row per renewed account). */
  renewed: boolean;
  key_cap: number | null;
  key_spent: number | null;
  key_cap_period: 'day' | 'month' | null;
  key_rate_limit: number | null;
}

export class Meter implements CreditMeter {
  readonly #db: Database;
  readonly #opts: MeterOptions;
  #settleQueue: string[] = [];
  #waiting: Waiting[] = [];
  #inflight = 0;
  #pumpScheduled = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(db: Database, opts: MeterOptions) {
    this.#db = db;
    this.#opts = opts;
  }

  reserve(input: ReserveInput): Promise<MeterDecision> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ input, resolve, reject });
      // Send at the end of this event-loop turn, so every call parsed in the same turn shares
      // the round trip (costs microseconds; under load it makes the batches several times bigger).
      if (!this.#pumpScheduled) {
        this.#pumpScheduled = true;
        setImmediate(() => {
          this.#pumpScheduled = false;
          this.#pump();
        });
      }
    });
  }

  #pump(): void {
    const maxInflight = this.#opts.maxInflight ?? 4;
    while (this.#inflight < maxInflight && this.#waiting.length > 0) {
      const batch = this.#waiting.splice(0, this.#opts.maxBatch ?? 64);
      this.#inflight++;
      this.#reserveBatch(batch)
        .catch((err: unknown) => {
          this.#opts.onFailure?.('reserve');
          for (const w of batch) w.reject(err);
        })
        .finally(() => {
          this.#inflight--;
          this.#pump();
        });
    }
  }

  async #reserveBatch(unsorted: Waiting[]): Promise<void> {
    // Sorted by account id: meter_reserve_batch locks rows in this order, so batches on other
    // connections and pods can never deadlock.
    const batch = [...unsorted].sort((x, y) => (x.input.accountId < y.input.accountId ? -1 : x.input.accountId > y.input.accountId ? 1 : 0));
    const started = performance.now();
    const column = <T>(pick: (i: ReserveInput) => T) => batch.map((w) => pick(w.input));
    // Each reservation carries its own deadline, from this pod's tool timeout: the sweep (run by
    // any replica, whatever its own timeout) refunds it only once that has passed.
    const res = await this.#db.query<ReserveRow>('SELECT * FROM meter_reserve_batch($1, $2, $3, $4, $5, $6, $7, $8, make_interval(secs => $9))', [
      column((i) => i.accountId),
      column((i) => i.requestId),
      column((i) => i.cost),
      column((i) => i.record),
      column((i) => i.server),
      column((i) => i.tool),
      column((i) => i.keyId),
      this.#opts.now?.() ?? null,
      this.#opts.staleAfterMs / 1000,
    ]);
    this.#opts.onBatch?.(batch.length, (performance.now() - started) / 1000);
    let renewed = 0;
    for (const row of res.rows) {
      if (row.renewed) renewed++;
      batch[row.idx - 1]!.resolve({
        outcome: row.outcome,
        balance: row.balance,
        plan: row.plan,
        requestsPerMinute: row.requests_per_minute,
        burst: row.burst,
        rateRemaining: row.rl_remaining ?? 0,
        rateResetSeconds: row.rl_reset_seconds ?? 0,
        retryAfterSeconds: row.retry_after_seconds ?? 0,
        key: { cap: row.key_cap, spent: row.key_spent, period: row.key_cap_period, rateLimitPerMinute: row.key_rate_limit },
      });
    }
    if (renewed > 0) this.#opts.onRenewals?.(renewed);
  }

  /** Gives the reservation back (idempotent). Returns the new balance, or null if nothing was due. */
  async refund(requestId: string, note: string): Promise<number | null> {
    try {
      const res = await this.#db.query<{ balance: number | null }>('SELECT meter_refund($1, $2) AS balance', [requestId, note]);
      return res.rows[0]?.balance ?? null;
    } catch (err) {
      this.#opts.onFailure?.('refund');
      throw err;
    }
  }

  async settlePart(requestId: string, credits: number, note: string): Promise<number | null> {
    try {
      // One statement (meter_settle_part, top-up credits given back first): the reservation resolved, the balance and the refund
      // row change together or not at all; task_finish charges a task's cut page with it too.
      const res = await this.#db.query<{ balance: number | null }>('SELECT meter_settle_part($1, $2, $3) AS balance', [requestId, credits, note]);
      return res.rows[0]?.balance ?? null;
    } catch (err) {
      this.#opts.onFailure?.('settle');
      throw err;
    }
  }

  /** Queues an answered reservation to be marked charged with the next batch. */
  settle(requestId: string): void {
    this.#settleQueue.push(requestId);
  }

  async flushSettled(): Promise<number> {
    if (this.#settleQueue.length === 0) return 0;
    const batch = this.#settleQueue;
    this.#settleQueue = [];
    try {
      const res = await this.#db.query<{ n: number }>('SELECT meter_settle($1) AS n', [batch]);
      return res.rows[0]?.n ?? 0;
    } catch (err) {
      this.#settleQueue.unshift(...batch);
      this.#opts.onFailure?.('settle');
      throw err;
    }
  }

  /**
   * Refunds reservations that were never resolved (their pod died mid-call): each once its own
   * deadline has passed; one without a deadline (reserved by a pod of the previous version) once
   * it is older than this pod's threshold.
   */
  async refundStale(): Promise<number> {
    const res = await this.#db.query<{ n: number }>('SELECT meter_refund_stale(make_interval(secs => $1)) AS n', [
      this.#opts.staleAfterMs / 1000,
    ]);
    return res.rows[0]?.n ?? 0;
  }

  /** The periodic renewal sweep (renewal also happens lazily on each metered request). */
  async renewDue(): Promise<number> {
    const res = await this.#db.query<{ n: number }>('SELECT accounts_renew_due($1) AS n', [this.#opts.now?.() ?? null]);
    const renewed = res.rows[0]?.n ?? 0;
    if (renewed > 0) this.#opts.onRenewals?.(renewed);
    return renewed;
  }

  /**
   * The periodic sweep, run as a job (server/jobs): refunds stale reservations and renews the
   * accounts whose period ended. It works on the whole database, so one replica runs it at a time.
   */
  async sweep(): Promise<void> {
    try {
      await this.refundStale();
      await this.renewDue();
    } catch (err) {
      this.#opts.onFailure?.('sweep');
      throw err;
    }
  }

  /**
   * Starts writing settlements in batches. This stays a timer in each process: the queue it
   * drains is this process's memory.
   */
  start(): void {
    let running = false;
    this.#timer = setInterval(() => {
      if (running) return;
      running = true;
      this.flushSettled()
        .catch((err: unknown) => this.#opts.onError?.('settle', err))
        .finally(() => {
          running = false;
        });
    }, this.#opts.settleIntervalMs);
    this.#timer.unref();
  }

  /** Stops the timer and writes what is queued. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flushSettled();
  }
}
