// A keyed, deduplicating work queue with per-key exponential backoff, after client-go's
// workqueue: a key waits at most once however many events name it; a key being processed is
// never handed to a second worker, and one that changes meanwhile is processed again after.

export interface QueueOptions {
  /** First retry delay after an error; doubles per consecutive failure of the key. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Random share added to each delay so many failing keys do not retry in lockstep. */
  jitter?: number;
  onDepth?: (depth: number) => void;
  random?: () => number;
}

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly waiters: ((key: string | undefined) => void)[] = [];
  private shuttingDown = false;
  private readonly opts: Required<Omit<QueueOptions, 'onDepth'>> & Pick<QueueOptions, 'onDepth'>;

  constructor(opts: QueueOptions = {}) {
    this.opts = { baseDelayMs: 200, maxDelayMs: 120_000, jitter: 0.2, random: Math.random, ...opts };
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
    this.opts.onDepth?.(this.queue.length);
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
    const base = Math.min(this.opts.maxDelayMs, this.opts.baseDelayMs * 2 ** n);
    const delay = Math.round(base * (1 + this.opts.jitter * this.opts.random()));
    this.addAfter(key, delay);
    return delay;
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
      this.opts.onDepth?.(this.queue.length);
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
    this.opts.onDepth?.(0);
  }
}
