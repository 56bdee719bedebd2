// Stage 6 (DESIGN.md §3 row 6). Two rules:
// - tools/call counts against the plan's rate (GCRA per account, shared by all keys and pods).
//   That check runs in PostgreSQL inside the same statement as the credit reservation (DESIGN.md
//   §5: one atomic statement), so the meter stage asks and this file turns a refusal into the 429.
// - Every other method (server/discover, initialize, notifications, tools/list, ping, ...) is free
//   and never counts against the plan, so connecting can never lock a user out. It is bounded by
//   a per-key connect bucket in this process (GCRA, CONNECT_REQUESTS_PER_MINUTE / CONNECT_BURST),
//   which keeps a looping client from hammering the service without a database round trip.
import { LRUCache } from 'lru-cache';
import { ApiError } from '../errors.ts';
import type { MeterDecision } from '../metering/meter.ts';

export interface ConnectAdmission {
  requestsPerMinute: number;
  /** Requests still admitted right now. */
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
}

export interface ConnectLimit {
  requestsPerMinute: number;
  burst: number;
}

/**
 * GCRA over an LRU of keys: each key keeps one number, its theoretical arrival time. Forgetting a
 * key (LRU eviction) only ever lets it through, never refuses it, so the bound holds per process.
 */
export class ConnectLimiter {
  readonly #emissionMs: number;
  readonly #toleranceMs: number;
  readonly #limit: ConnectLimit;
  readonly #tat: LRUCache<string, number>;
  readonly #now: () => number;

  constructor(limit: ConnectLimit, opts: { maxKeys?: number; now?: () => number } = {}) {
    if (!(limit.requestsPerMinute > 0) || !(limit.burst >= 1)) throw new Error('connect limit: requestsPerMinute > 0 and burst >= 1');
    this.#limit = limit;
    this.#emissionMs = 60_000 / limit.requestsPerMinute;
    this.#toleranceMs = this.#emissionMs * (limit.burst - 1);
    this.#tat = new LRUCache({ max: opts.maxKeys ?? 100_000 });
    this.#now = opts.now ?? Date.now;
  }

  /** Admits one request of `key`, or throws RATE_LIMITED. */
  admit(key: string): ConnectAdmission {
    const now = this.#now();
    const tat = Math.max(this.#tat.get(key) ?? now, now);
    const allowAt = tat - this.#toleranceMs;
    if (now < allowAt) {
      const retryAfter = Math.max(1, Math.ceil((allowAt - now) / 1000));
      throw new ApiError(
        'RATE_LIMITED',
        'Too many connection requests (discovery, listing, ping) for this key; retry later.',
        { limit_per_minute: this.#limit.requestsPerMinute, retry_after_seconds: retryAfter, bucket: 'connect' },
        { 'retry-after': String(retryAfter) },
      );
    }
    const next = tat + this.#emissionMs;
    this.#tat.set(key, next);
    return {
      requestsPerMinute: this.#limit.requestsPerMinute,
      remaining: Math.max(0, Math.floor((now + this.#toleranceMs + this.#emissionMs - next) / this.#emissionMs)),
      resetSeconds: Math.max(0, (next - now) / 1000),
    };
  }
}

/** The plan's refusal of a tools/call, decided by the metering statement. */
export function planRateLimited(decision: MeterDecision): ApiError {
  const retryAfter = Math.max(1, Math.ceil(decision.retryAfterSeconds));
  return new ApiError(
    'RATE_LIMITED',
    undefined,
    { limit_per_minute: decision.requestsPerMinute, retry_after_seconds: retryAfter, bucket: 'plan' },
    { 'retry-after': String(retryAfter) },
  );
}
