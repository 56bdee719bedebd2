// A process-wide cache of chain data that cannot change: blocks and receipts once they are deep
// enough below the head that no reorganisation will replace them, and token metadata (name,
// symbol, decimals), which contracts do not change in practice. Bounded by entry count with
// lru-cache (the maintained LRU for Node, with per-entry TTLs) so a busy pod's memory stays flat.
import { LRUCache } from 'lru-cache';

export interface ChainCacheOptions {
  /** Blocks below the head after which data is treated as final. Default 64 (two Ethereum epochs). */
  finalityDepth?: number;
  maxEntries?: number;
  /** How long token metadata is kept. Default one hour. */
  metadataTtlMs?: number;
}

export class ChainCache {
  readonly finalityDepth: number;
  readonly #lru: LRUCache<string, { value: unknown }>;
  readonly #metadataTtlMs: number;
  hits = 0;
  misses = 0;

  constructor(opts: ChainCacheOptions = {}) {
    this.finalityDepth = opts.finalityDepth ?? 64;
    this.#metadataTtlMs = opts.metadataTtlMs ?? 3_600_000;
    this.#lru = new LRUCache({ max: opts.maxEntries ?? 5000, ttlAutopurge: false });
  }

  /** True when a block this far below the head is final for caching purposes. */
  isFinal(block: bigint | number, head: bigint | number): boolean {
    return BigInt(head) - BigInt(block) >= BigInt(this.finalityDepth);
  }

  /** Loads through the cache; keeps the value only when `keep(value)` says it is final. */
  async immutable<T>(key: string, load: () => Promise<T>, keep: (value: T) => boolean): Promise<T> {
    const hit = this.#lru.get(key);
    if (hit) {
      this.hits += 1;
      return hit.value as T;
    }
    this.misses += 1;
    const value = await load();
    if (keep(value)) this.#lru.set(key, { value });
    return value;
  }

  /** Loads through the cache and keeps the value for the metadata TTL. */
  async metadata<T>(key: string, load: () => Promise<T>): Promise<T> {
    const hit = this.#lru.get(key);
    if (hit) {
      this.hits += 1;
      return hit.value as T;
    }
    this.misses += 1;
    const value = await load();
    this.#lru.set(key, { value }, { ttl: this.#metadataTtlMs });
    return value;
  }
}
