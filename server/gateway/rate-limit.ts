// Stage 6 (DESIGN.md §3 row 6). Two rules:
// - tools/call counts against the plan's rate (GCRA per account, shared by all keys and pods).
//   That check runs in PostgreSQL inside the same statement as the credit reservation (DESIGN.md
//   §5: one atomic statement), so the meter stage asks and this file turns a refusal into the 429.
// - Every other method (server/discover, initialize, notifications, tools/list, ping, ...) is free
//   and never counts against the plan, so connecting can never lock a user out. It is bounded by
//   a per-key connect bucket in this process (GCRA, CONNECT_REQUESTS_PER_MINUTE / CONNECT_BURST),
//   which keeps a looping client from hammering the service without a database round trip.
import { ApiError } from '../errors.ts';
import { Limiter, retryAfterSeconds } from '../lib/limiter.ts';
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

/** The connect bucket: the shared in-memory limiter (lib/limiter.ts), refusing with the connect bucket's 429. */
export class ConnectLimiter {
  readonly #limiter: Limiter;
  readonly #limit: ConnectLimit;

  constructor(limit: ConnectLimit, opts: { maxKeys?: number; now?: () => number } = {}) {
    this.#limit = limit;
    this.#limiter = new Limiter(limit, opts);
  }

  /** Admits one request of `key`, or throws RATE_LIMITED. */
  admit(key: string): ConnectAdmission {
    const taken = this.#limiter.take(key);
    if (!taken.ok) {
      const retryAfter = retryAfterSeconds(taken.retryAfterMs);
      throw new ApiError(
        'RATE_LIMITED',
        'Too many connection requests (discovery, listing, ping) for this key; retry later.',
        { limit_per_minute: this.#limit.requestsPerMinute, retry_after_seconds: retryAfter, bucket: 'connect' },
        { 'retry-after': String(retryAfter) },
      );
    }
    return { requestsPerMinute: this.#limit.requestsPerMinute, remaining: taken.remaining, resetSeconds: taken.resetMs / 1000 };
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

/** The key's own rate limit (set in the dashboard) refuses a tools/call, decided by the metering statement. */
export function keyRateLimited(decision: MeterDecision): ApiError {
  const retryAfter = Math.max(1, Math.ceil(decision.retryAfterSeconds));
  return new ApiError(
    'RATE_LIMITED',
    'Too many requests for this API key (its own rate limit); retry later.',
    { limit_per_minute: decision.key?.rateLimitPerMinute ?? null, retry_after_seconds: retryAfter, bucket: 'key' },
    { 'retry-after': String(retryAfter) },
  );
}
