// A keyed, deduplicating work queue with per-key exponential backoff, after client-go's
// workqueue: a key waits at most once however many events name it; a key being processed is
// never handed to a second worker, and one that changes meanwhile is processed again after.
// Retries after errors are bounded twice over, as client-go's default controller rate limiter:
// per key, a jittered delay doubling up to maxDelayMs; across all keys, a token bucket
// (retryRate per second, retryBurst at once), so a thousand failing keys cannot retry faster
// than one bucket allows.

export interface QueueOptions {
  /** First retry delay after an error; doubles per consecutive failure of the key. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Random share (0..1) added to each delay so many failing keys do not retry in lockstep. */
  jitter?: number;
  /** Retries per second across every key, and how many may go at once. */
  retryRate?: number;
  retryBurst?: number;
  onDepth?: (depth: number) => void;
  random?: () => number;
}

export const QUEUE_DEFAULTS = { baseDelayMs: 500, maxDelayMs: 60_000, jitter: 0.2, retryRate: 10, retryBurst: 100 } as const;

export type BackoffSettings = Required<Pick<QueueOptions, 'baseDelayMs' | 'maxDelayMs' | 'jitter' | 'retryRate' | 'retryBurst'>>;

/**
 * The backoff settings to use: each given value if it is a finite number in range, else the
 * default. An undefined, NaN or negative setting (a missing config field, a bad env value) can
 * never turn into a zero or NaN delay, which setTimeout would run at once: a retry storm.
 */
export function backoffSettings(opts: Partial<BackoffSettings>): BackoffSettings {
  const pick = (v: number | undefined, fallback: number, ok: (n: number) => boolean) => (typeof v === 'number' && Number.isFinite(v) && ok(v) ? v : fallback);
  const baseDelayMs = pick(opts.baseDelayMs, QUEUE_DEFAULTS.baseDelayMs, (n) => n >= 1);
  return {
    baseDelayMs,
    maxDelayMs: pick(opts.maxDelayMs, Math.max(baseDelayMs, QUEUE_DEFAULTS.maxDelayMs), (n) => n >= baseDelayMs),
    jitter: pick(opts.jitter, QUEUE_DEFAULTS.jitter, (n) => n >= 0 && n <= 1),
    retryRate: pick(opts.retryRate, QUEUE_DEFAULTS.retryRate, (n) => n > 0),
    retryBurst: pick(opts.retryBurst, QUEUE_DEFAULTS.retryBurst, (n) => n >= 1),
  };
}

/** The delay before retry number failures+1: doubling from the base, jittered, never above the maximum. */
export function backoffDelay(settings: BackoffSettings, failures: number, random: () => number = Math.random): number {
  const { baseDelayMs, maxDelayMs, jitter } = settings;
  return Math.round(Math.min(maxDelayMs, baseDelayMs * 2 ** Math.min(failures, 52) * (1 + jitter * random())));
}

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly waiters: ((key: string | undefined) => void)[] = [];
  private shuttingDown = false;
  private readonly settings: BackoffSettings;
  private readonly random: () => number;
  private readonly onDepth: ((depth: number) => void) | undefined;
  /** The overall bucket: when its next token is free (ms since epoch, fractional). */
  private bucketNextFree = 0;

  constructor(opts: QueueOptions = {}) {
    this.settings = backoffSettings(opts);
    this.random = opts.random ?? Math.random;
    this.onDepth = opts.onDepth;
  }

  get depth(): number {
    return this.queue.length;
  }

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return; // re-queued by done()
    const waiter = this.waiters.shift();
    if (waiter) {
      this.dirty.delete(key);
      this.processing.add(key);
      waiter(key);
      return;
    }
    this.queue.push(key);
    this.onDepth?.(this.queue.length);
  }

  /** Adds the key after a delay; a later call for the same key replaces a longer pending one. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) return this.add(key);
    const existing = this.timers.get(key);
    if (existing) clearTimeout(existing);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    timer.unref();
    this.timers.set(key, timer);
  }

  /** Retries the key with exponential backoff; returns the delay chosen. */
  addRateLimited(key: string): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    const delay = Math.max(1, Math.round(Math.max(backoffDelay(this.settings, n, this.random), this.bucketDelay())));
    this.addAfter(key, delay);
    return delay;
  }

  /** Takes one token from the overall bucket; returns how long until it is due. */
  private bucketDelay(): number {
    const { retryRate, retryBurst } = this.settings;
    const interval = 1000 / retryRate;
    const now = Date.now();
    // A full bucket holds retryBurst tokens: the next free slot is never further back than that.
    this.bucketNextFree = Math.max(this.bucketNextFree, now - (retryBurst - 1) * interval);
    const wait = this.bucketNextFree - now;
    this.bucketNextFree += interval;
    return Math.max(0, wait);
  }

  /** Clears the key's failure count after a success. */
  forget(key: string): void {
    this.failures.delete(key);
  }

  failuresOf(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** The next key to process, or undefined once the queue shuts down. */
  get(): Promise<string | undefined> {
    const key = this.queue.shift();
    if (key !== undefined) {
      this.dirty.delete(key);
      this.processing.add(key);
      this.onDepth?.(this.queue.length);
      return Promise.resolve(key);
    }
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key)) {
      this.dirty.delete(key);
      this.add(key);
    }
  }

  shutdown(): void {
    this.shuttingDown = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    for (const w of this.waiters.splice(0)) w(undefined);
    this.queue.length = 0;
    this.dirty.clear();
    this.onDepth?.(0);
  }
}
