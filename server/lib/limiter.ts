// The one in-memory limiter (GCRA) for every per-key bucket kept in a process: the connect bucket
// per API key, x402 per client address and per payer, dashboard nonces per address, sign-ins per
// wallet and per pod, OAuth client registrations and metadata-document fetches per address. Plans'
// rate limits are not here: they are enforced in PostgreSQL, in the metering statement, so every
// pod shares them.
//
// Each key keeps one number, its theoretical arrival time (TAT). A bucket of `burst` at `rate`
// admits `burst` requests at once and then one per 1/rate. The keys live in an LRU: forgetting
// one only ever lets it through, never refuses it, so the bound holds per process.
import { LRUCache } from 'lru-cache';

export interface Rate {
  /** Sustained admissions per minute. */
  requestsPerMinute: number;
  /** Admissions allowed at once. */
  burst: number;
}

export type Take = { ok: true; remaining: number; resetMs: number } | { ok: false; retryAfterMs: number };

export class Limiter {
  readonly #emissionMs: number;
  readonly #toleranceMs: number;
  readonly #tat: LRUCache<string, number>;
  readonly #now: () => number;

  constructor(rate: Rate, opts: { maxKeys?: number; now?: () => number } = {}) {
    if (!(rate.requestsPerMinute > 0) || !(rate.burst >= 1)) throw new Error('limiter: requestsPerMinute > 0 and burst >= 1');
    this.#emissionMs = 60_000 / rate.requestsPerMinute;
    this.#toleranceMs = this.#emissionMs * (rate.burst - 1);
    // Bounded by maxSize (each key counts 1), not max: lru-cache allocates its arrays for `max`
    // entries up front (some 3 MB for 100,000 keys per limiter, and a service makes seven), while
    // with maxSize they grow with the keys actually seen. The bound is the same.
    this.#tat = new LRUCache({ maxSize: opts.maxKeys ?? 100_000, sizeCalculation: () => 1 });
    this.#now = opts.now ?? Date.now;
  }

  /** "At most `max` per `windowMs`": the whole allowance at once, refilled evenly over the window. */
  static perWindow(max: number, windowMs: number, opts: { maxKeys?: number; now?: () => number } = {}): Limiter {
    return new Limiter({ requestsPerMinute: (max * 60_000) / windowMs, burst: max }, opts);
  }

  /** Admits one request of `key`, or says how long until one would be admitted. */
  take(key: string): Take {
    const now = this.#now();
    const tat = Math.max(this.#tat.get(key) ?? now, now);
    const allowAt = tat - this.#toleranceMs;
    if (now < allowAt) return { ok: false, retryAfterMs: allowAt - now };
    const next = tat + this.#emissionMs;
    this.#tat.set(key, next);
    return {
      ok: true,
      remaining: Math.max(0, Math.floor((now + this.#toleranceMs + this.#emissionMs - next) / this.#emissionMs)),
      resetMs: Math.max(0, next - now),
    };
  }
}

/** Whole seconds to wait, at least one (the Retry-After header's unit). */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
