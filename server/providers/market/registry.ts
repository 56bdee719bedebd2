// The asset registry: resolves what users type (ids, tickers, names, aliases) to assets,
// case-insensitively, ranking ambiguous tickers by whether prices exist and by market cap.
import { distance } from 'fastest-levenshtein';
import type { AssetEntry, AssetRegistry } from './types.ts';

export interface RegistryEntry extends AssetEntry {
  /** Market-cap rank on the last day caps are known; null when unknown. */
  market_cap_rank: number | null;
}

const norm = (s: string) => s.trim().toLowerCase();

export class SnapshotRegistry implements AssetRegistry {
  readonly #byId = new Map<string, RegistryEntry>();
  readonly #bySymbol = new Map<string, RegistryEntry[]>();
  readonly #byName = new Map<string, RegistryEntry[]>();
  readonly #all: RegistryEntry[];

  constructor(entries: RegistryEntry[]) {
    this.#all = [...entries].sort(rankOrder);
    for (const e of this.#all) {
      this.#byId.set(e.id, e);
      push(this.#bySymbol, norm(e.symbol), e);
      push(this.#byName, norm(e.name), e);
      for (const a of e.aliases) push(this.#byName, norm(a), e);
    }
  }

  /** Every asset, best-ranked first. */
  entries(): readonly AssetEntry[] {
    return this.#all;
  }

  get(id: string): AssetEntry | undefined {
    return this.#byId.get(norm(id));
  }

  resolve(query: string): AssetEntry[] {
    const q = norm(query);
    if (q === '') return [];
    const seen = new Set<string>();
    const out: AssetEntry[] = [];
    const take = (e: RegistryEntry | undefined) => {
      if (e && !seen.has(e.id)) {
        seen.add(e.id);
        out.push(e);
      }
    };
    take(this.#byId.get(q));
    for (const e of this.#bySymbol.get(q) ?? []) take(e);
    for (const e of this.#byName.get(q) ?? []) take(e);
    return out;
  }

  suggest(query: string, limit = 5): AssetEntry[] {
    const q = norm(query);
    if (q === '') return [];
    const scored: { e: RegistryEntry; d: number }[] = [];
    for (const e of this.#all) {
      const d = Math.min(distance(q, e.id), distance(q, norm(e.symbol)), distance(q, norm(e.name)));
      // Close enough to be a typo of it: at most a third of the query's letters differ.
      if (d <= Math.max(1, Math.floor(q.length / 3))) scored.push({ e, d });
    }
    return scored
      .sort((a, b) => a.d - b.d || rankOrder(a.e, b.e))
      .slice(0, limit)
      .map((s) => s.e);
  }

  search(query: string, limit: number): AssetEntry[] {
    const q = norm(query);
    if (q === '') return [];
    const hits: { e: RegistryEntry; tier: number }[] = [];
    for (const e of this.#all) {
      const fields = [e.id, norm(e.symbol), norm(e.name), ...e.aliases.map(norm)];
      let tier = -1;
      if (fields.some((f) => f === q)) tier = 0;
      else if (fields.some((f) => f.startsWith(q))) tier = 1;
      else if (fields.some((f) => f.includes(q))) tier = 2;
      if (tier >= 0) hits.push({ e, tier });
    }
    // Market relevance: assets with a market-cap rank whose id, ticker or name is or starts with the
    // query, by rank; then ranked ones that only contain it ("tether" for "eth"); then the unranked,
    // by how well they match. So "bitcoin" lists Bitcoin, Bitcoin Cash, ... before an unranked
    // token that calls itself BITCOIN.
    const group = (h: { e: RegistryEntry; tier: number }) => (h.e.market_cap_rank == null ? 2 : h.tier <= 1 ? 0 : 1);
    return hits
      .sort((a, b) => group(a) - group(b) || (group(a) === 2 ? a.tier - b.tier || rankOrder(a.e, b.e) : rankOrder(a.e, b.e)))
      .slice(0, limit)
      .map((h) => h.e);
  }
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** Priced assets first, then by market-cap rank (unknown last), then by id. */
function rankOrder(a: RegistryEntry, b: RegistryEntry): number {
  if (a.has_prices !== b.has_prices) return a.has_prices ? -1 : 1;
  const ra = a.market_cap_rank ?? Number.MAX_SAFE_INTEGER;
  const rb = b.market_cap_rank ?? Number.MAX_SAFE_INTEGER;
  if (ra !== rb) return ra - rb;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
