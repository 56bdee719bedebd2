// Turns a presented key into the account's grant. The shape and checksum are checked first, so a
// malformed key never reaches the database. Lookups are cached in-process for `ttlMs`: the hot
// path does not read the key row on every call, and a revocation or suspension takes effect
// within that TTL on every pod. last_used_at is recorded in batches off the hot path. The same
// resolver, given another lookup, turns an OAuth access token into its connection's grant
// (server/oauth/tokens.ts), so a connection is cached and revoked within the same bound as a key.
import type { Database } from '../db/pool.ts';
import { hashKey, isWellFormedKey } from './format.ts';
import { keyGrantByHash, keyTouchMany, type KeyGrant } from './store.ts';

export type KeyCheck =
  | { ok: true; grant: KeyGrant }
  | { ok: false; code: 'MISSING_API_KEY' | 'INVALID_API_KEY' | 'API_KEY_REVOKED' }
  | { ok: false; code: 'API_KEY_EXPIRED'; expiredAt: Date };

interface CacheEntry {
  grant: KeyGrant | null;
  expiresAt: number;
}

/** What a presented credential is and where its grant is read; API keys by default. */
export interface GrantLookup {
  /** Checked offline before any lookup: a malformed credential never reaches the database. */
  wellFormed(presented: string): boolean;
  load(db: Database, hash: Buffer): Promise<KeyGrant | undefined>;
  touch(db: Database, used: Map<string, Date>): Promise<void>;
}

const API_KEYS: GrantLookup = { wellFormed: isWellFormedKey, load: keyGrantByHash, touch: keyTouchMany };

export interface KeyResolverOptions {
  ttlMs: number;
  lookup?: GrantLookup;
  maxEntries?: number;
  now?: () => number;
  /** Told whether each lookup was answered by the cache (for the hit/miss counter). */
  onLookup?: (hit: boolean) => void;
}

export class KeyResolver {
  readonly #db: Database;
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;
  readonly #onLookup: ((hit: boolean) => void) | undefined;
  readonly #lookupOf: GrantLookup;
  readonly #cache = new Map<string, CacheEntry>();
  readonly #inflight = new Map<string, Promise<KeyGrant | null>>();
  /** Each account's balance as the metering statement last answered it here (newer than a cached grant's). */
  readonly #balances = new Map<string, number>();
  #used = new Map<string, Date>();

  constructor(db: Database, { ttlMs, maxEntries = 50_000, now = Date.now, onLookup, lookup = API_KEYS }: KeyResolverOptions) {
    this.#db = db;
    this.#lookupOf = lookup;
    this.#onLookup = onLookup;
    this.#ttlMs = ttlMs;
    this.#maxEntries = maxEntries;
    this.#now = now;
  }

  /**
   * @param around runs the database lookup on a cache miss (the gateway passes one that makes the
   *   request's span the active one, so the query is traced in it); a hit does not call it.
   */
  async resolve(presented: string | undefined, around?: <T>(load: () => T) => T): Promise<KeyCheck> {
    if (presented === undefined || presented === '') return { ok: false, code: 'MISSING_API_KEY' };
    if (!this.#lookupOf.wellFormed(presented)) return { ok: false, code: 'INVALID_API_KEY' };
    // Cached by the presented key itself, so a cache hit costs no hashing.
    const grant = await this.#lookup(presented, around);
    if (!grant) return { ok: false, code: 'INVALID_API_KEY' };
    if (grant.revoked_at) return { ok: false, code: 'API_KEY_REVOKED' };
    if (grant.expires_at && grant.expires_at.getTime() <= this.#now()) {
      return { ok: false, code: 'API_KEY_EXPIRED', expiredAt: grant.expires_at };
    }
    return { ok: true, grant };
  }

  async #lookup(cacheKey: string, around: (<T>(load: () => T) => T) | undefined): Promise<KeyGrant | null> {
    const hit = this.#cache.get(cacheKey);
    if (hit && hit.expiresAt > this.#now()) {
      this.#onLookup?.(true);
      return hit.grant;
    }
    this.#onLookup?.(false);
    const pending = this.#inflight.get(cacheKey);
    if (pending) return pending;
    const query = () => this.#lookupOf.load(this.#db, hashKey(cacheKey));
    const load = (around ? around(query) : query())
      .then((grant) => {
        this.#remember(cacheKey, grant ?? null);
        return grant ?? null;
      })
      .finally(() => this.#inflight.delete(cacheKey));
    this.#inflight.set(cacheKey, load);
    return load;
  }

  #remember(cacheKey: string, grant: KeyGrant | null): void {
    if (this.#ttlMs <= 0) return;
    if (this.#cache.size >= this.#maxEntries) {
      // Maps iterate in insertion order: drop the oldest entry.
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
    this.#cache.delete(cacheKey);
    // Shared by every request of the key until it expires: nobody may change it.
    this.#cache.set(cacheKey, { grant: grant && Object.freeze(grant), expiresAt: this.#now() + this.#ttlMs });
  }

  /** Records the account's balance as metering just answered it (what later refusals report). */
  noteBalance(accountId: string, balance: number): void {
    if (this.#balances.size >= this.#maxEntries && !this.#balances.has(accountId)) {
      const oldest = this.#balances.keys().next().value;
      if (oldest !== undefined) this.#balances.delete(oldest);
    }
    this.#balances.set(accountId, balance);
  }

  /** The account's balance as last seen by this process: metering's latest answer, else the grant's. */
  balanceOf(grant: KeyGrant): number {
    return this.#balances.get(grant.account_id) ?? grant.balance;
  }

  /** Notes that a key was used; written by flushLastUsed. */
  noteUsed(keyId: string): void {
    this.#used.set(keyId, new Date(this.#now()));
  }

  async flushLastUsed(): Promise<void> {
    if (this.#used.size === 0) return;
    const batch = this.#used;
    this.#used = new Map();
    try {
      await this.#lookupOf.touch(this.#db, batch);
    } catch (err) {
      // Keep the newest times for the next flush rather than lose them.
      for (const [id, at] of batch) if (!this.#used.has(id)) this.#used.set(id, at);
      throw err;
    }
  }

  clear(): void {
    this.#cache.clear();
  }
}
