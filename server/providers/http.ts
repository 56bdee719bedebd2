// The one HTTP client for upstream JSON APIs (DESIGN.md §6): per-attempt timeout, retries with
// exponential backoff and full jitter on network errors, timeouts, 5xx and 429 (honouring
// Retry-After), and every failure turned into a ProviderError. Plus the TTL cache adapters put
// in front of it. Node's global fetch; no dependency. Every attempt is measured by provider and
// outcome (cryptomcp_upstream_request_duration_seconds) and traced as a client span.
import { setTimeout as delay } from 'node:timers/promises';
import { publishUpstream, type UpstreamEvent } from '../telemetry/channels.ts';
import { upstreamSpan } from '../telemetry/tracing.ts';
import { ProviderError } from '../errors.ts';

export interface GetJsonOptions {
  /** Names the upstream in errors ('live:coingecko'). */
  provider: string;
  headers?: Record<string, string>;
  /** A JSON body: the request becomes a POST (JSON-RPC). Only send reads: failures are retried. */
  body?: unknown;
  /** Per attempt, covering the headers and the body. Default 8000. */
  timeoutMs?: number;
  /** Attempts after the first one. Default 2. */
  retries?: number;
  /**
   * All attempts and the waits between them, together: past it the call fails as a timeout
   * naming the provider, well before the tool's own time is up. Default 10000.
   */
  deadlineMs?: number;
  /** Backoff before retry n (0-based) is random() * min(maxDelayMs, baseDelayMs * 2^n). */
  baseDelayMs?: number;
  /** Also the longest Retry-After we wait for; a longer one ends the retries. Default 5000. */
  maxDelayMs?: number;
  /** The caller's cancellation: aborts the request and the waits, and rethrows its reason. */
  signal?: AbortSignal;
  /** Test seams. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
  now?: () => number;
}

/** The default deadline of one upstream call, retries included: well under the tool timeout (30 s). */
export const DEFAULT_DEADLINE_MS = 10_000;

async function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  try {
    await delay(ms, undefined, { signal });
  } catch (error) {
    // Surface the caller's own reason, as an abort during a request does.
    throw signal?.aborted ? signal.reason : error;
  }
}

interface Failure {
  error: ProviderError;
  retryable: boolean;
  /** Milliseconds the upstream asked us to wait (Retry-After), when it said. */
  retryAfterMs: number | undefined;
}

/**
 * GETs a URL and parses its JSON body. Resolves with the parsed value (untyped: parse it with a
 * schema at the call site); rejects with a ProviderError ('timeout', 'rate_limited', 'not_found'
 * for 404, 'error' otherwise), or with the caller's abort reason when `signal` aborts.
 */
export async function getJson(url: string, options: GetJsonOptions): Promise<unknown> {
  const retries = options.retries ?? 2;
  const baseDelayMs = options.baseDelayMs ?? 250;
  const maxDelayMs = options.maxDelayMs ?? 5000;
  const sleep = options.sleep ?? defaultSleep;
  const random = options.random ?? Math.random;
  const now = options.now ?? Date.now;
  const deadlineMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
  const deadline = now() + deadlineMs;
  const perAttempt = options.timeoutMs ?? 8000;

  for (let attempt = 0; ; attempt++) {
    const remaining = deadline - now();
    const outcome = await observedAttempt(url, { ...options, timeoutMs: Math.max(1, Math.min(perAttempt, remaining)) }, attempt);
    if (outcome.ok) return outcome.value;
    const { error, retryable, retryAfterMs } = outcome.failure;
    if (!retryable || attempt >= retries) throw error;
    // A Retry-After beyond what we are willing to wait means retrying now would only fail again.
    if (retryAfterMs !== undefined && retryAfterMs > maxDelayMs) throw error;
    const waitMs = retryAfterMs ?? random() * Math.min(maxDelayMs, baseDelayMs * 2 ** attempt);
    if (now() + waitMs >= deadline) {
      throw error.kind === 'timeout' ? new ProviderError(options.provider, 'timeout', `no answer within the ${deadlineMs} ms deadline`) : error;
    }
    await sleep(waitMs, options.signal);
  }
}

async function observedAttempt(
  url: string,
  options: GetJsonOptions,
  attempt: number,
): Promise<{ ok: true; value: unknown } | { ok: false; failure: Failure }> {
  const started = performance.now();
  const span = upstreamSpan(options.provider, options.body !== undefined ? 'POST' : 'GET', url, attempt);
  let result: UpstreamEvent['outcome'] = 'aborted';
  let status: number | undefined;
  try {
    const outcome = await attemptOnce(url, options);
    if (outcome.ok) result = 'ok';
    else {
      const kind = outcome.failure.error.kind;
      result = kind === 'timeout' || kind === 'rate_limited' || kind === 'not_found' ? kind : 'error';
      status = outcome.failure.error.status;
    }
    return outcome;
  } finally {
    publishUpstream({ provider: options.provider, outcome: result, seconds: (performance.now() - started) / 1000 });
    span?.end(result, status);
  }
}

async function attemptOnce(
  url: string,
  options: GetJsonOptions,
): Promise<{ ok: true; value: unknown } | { ok: false; failure: Failure }> {
  const { provider, signal } = options;
  const timeoutMs = options.timeoutMs ?? 8000;
  signal?.throwIfAborted();
  const timeout = AbortSignal.timeout(timeoutMs);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  const target = describe(url);
  try {
    const response = await fetch(url, {
      ...(options.body !== undefined
        ? { method: 'POST', body: JSON.stringify(options.body), headers: { accept: 'application/json', 'content-type': 'application/json', ...options.headers } }
        : { headers: { accept: 'application/json', ...options.headers } }),
      signal: combined,
    });
    if (response.ok) {
      const text = await response.text();
      try {
        return { ok: true, value: JSON.parse(text) };
      } catch {
        return fail(new ProviderError(provider, 'error', `${target}: response is not JSON`, response.status), false);
      }
    }
    // Drain the body so the connection can be reused.
    await response.body?.cancel();
    const status = response.status;
    if (status === 404) {
      return fail(new ProviderError(provider, 'not_found', `${target}: not found`, status), false);
    }
    const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), options.now ?? Date.now);
    if (status === 429) {
      return fail(new ProviderError(provider, 'rate_limited', `${target}: rate limited`, status), true, retryAfterMs);
    }
    // 5xx is worth another try (a 503 may say when in Retry-After); any other 4xx will not change.
    const retryable = status >= 500;
    return fail(new ProviderError(provider, 'error', `${target}: HTTP ${status}`, status), retryable, retryable ? retryAfterMs : undefined);
  } catch (cause) {
    if (signal?.aborted) throw signal.reason;
    if (timeout.aborted) {
      return fail(new ProviderError(provider, 'timeout', `${target}: no answer within ${timeoutMs} ms`), true);
    }
    // fetch rejects with a TypeError for refused, reset and DNS failures.
    const reason = cause instanceof Error && cause.cause instanceof Error ? cause.cause.message : String(cause);
    return fail(new ProviderError(provider, 'error', `${target}: network error (${reason})`), true);
  }
}

function fail(error: ProviderError, retryable: boolean, retryAfterMs?: number): { ok: false; failure: Failure } {
  return { ok: false, failure: { error, retryable, retryAfterMs } };
}

/** Retry-After is either delay-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | null, now: () => number): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now());
}

/** Host and path only: error messages never carry query strings (they may hold keys). */
function describe(url: string): string {
  const parsed = new URL(url);
  return `GET ${parsed.host}${parsed.pathname}`;
}

export interface TtlCacheOptions {
  ttlMs: number;
  /** The least recently used entry goes first when full. Default 500. */
  maxEntries?: number;
  now?: () => number;
}

/**
 * An in-process cache with expiry and a size bound. `getOrLoad` is single-flight: concurrent
 * calls for one key share one load; a failed load is not cached.
 */
export class TtlCache<V> {
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, { value: V; expiresAt: number }>();
  readonly #loading = new Map<string, Promise<V>>();

  constructor(options: TtlCacheOptions) {
    this.#ttlMs = options.ttlMs;
    this.#maxEntries = options.maxEntries ?? 500;
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.#now()) {
      this.#entries.delete(key);
      return undefined;
    }
    // Re-insert to mark it most recently used (a Map iterates in insertion order).
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, { value, expiresAt: this.#now() + this.#ttlMs });
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done) break;
      this.#entries.delete(oldest.value);
    }
  }

  clear(): void {
    this.#entries.clear();
  }

  /**
   * The cached value, or the result of `load` (cached on success). The load runs without the
   * caller's signal, so one caller giving up neither cancels it for the others nor wastes it;
   * `signal` only stops this caller's wait.
   */
  getOrLoad(key: string, load: () => Promise<V>, signal?: AbortSignal): Promise<V> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const cached = this.get(key);
    if (cached !== undefined) return Promise.resolve(cached);
    let pending = this.#loading.get(key);
    if (!pending) {
      pending = load().then(
        (value) => {
          this.#loading.delete(key);
          this.set(key, value);
          return value;
        },
        (error: unknown) => {
          this.#loading.delete(key);
          throw error;
        },
      );
      this.#loading.set(key, pending);
    }
    return untilAborted(pending, signal);
  }
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * A fetch for clients that bring their own HTTP handling (viem's http transport `fetchFn`):
 * each request is measured and traced like getJson's attempts, under `provider`.
 */
export function observedFetch(provider: string): typeof fetch {
  return async (input, init) => {
    const started = performance.now();
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const span = upstreamSpan(provider, init?.method ?? (typeof input === 'object' && 'method' in input ? input.method : 'GET'), url, 0);
    let result: UpstreamEvent['outcome'] = 'error';
    let status: number | undefined;
    try {
      const response = await fetch(input, init);
      status = response.status;
      result = response.ok ? 'ok' : status === 429 ? 'rate_limited' : status === 404 ? 'not_found' : 'error';
      return response;
    } catch (err) {
      const name = err instanceof Error ? err.name : '';
      result = name === 'TimeoutError' ? 'timeout' : name === 'AbortError' ? 'aborted' : 'error';
      throw err;
    } finally {
      publishUpstream({ provider, outcome: result, seconds: (performance.now() - started) / 1000 });
      span?.end(result, status);
    }
  };
}
