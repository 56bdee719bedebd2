// Counts events per key in fixed windows, in this process's memory: the limits that guard a
// table or an outbound fetch against floods, where per-pod bounds are enough.

export type Take = { ok: true } | { ok: false; retryAfterMs: number };

export class WindowCounter {
  readonly #max: number;
  readonly #windowMs: number;
  readonly #maxKeys: number;
  readonly #now: () => number;
  readonly #windows = new Map<string, { start: number; count: number }>();

  /** `maxKeys` bounds the memory: past it, finished windows are dropped, then the oldest. */
  constructor(opts: { max: number; windowMs: number; maxKeys?: number; now?: () => number }) {
    this.#max = opts.max;
    this.#windowMs = opts.windowMs;
    this.#maxKeys = opts.maxKeys ?? 10_000;
    this.#now = opts.now ?? Date.now;
  }

  /** Counts one event for `key`, unless the key has used its window up. */
  take(key: string): Take {
    const now = this.#now();
    let w = this.#windows.get(key);
    if (!w || now - w.start >= this.#windowMs) {
      this.#windows.delete(key);
      w = { start: now, count: 0 };
      this.#windows.set(key, w);
      this.#evict(now);
    }
    if (w.count >= this.#max) return { ok: false, retryAfterMs: w.start + this.#windowMs - now };
    w.count += 1;
    return { ok: true };
  }

  #evict(now: number): void {
    if (this.#windows.size <= this.#maxKeys) return;
    for (const [key, w] of this.#windows) if (now - w.start >= this.#windowMs) this.#windows.delete(key);
    for (const key of this.#windows.keys()) {
      if (this.#windows.size <= this.#maxKeys) break;
      this.#windows.delete(key);
    }
  }
}
