// What the project-intelligence tools share: finding a project or chain by what the user typed.
import { distance } from 'fastest-levenshtein';
import { ApiError } from '../../errors.ts';
import type { AssetEntry, AssetRegistry } from '../../providers/market/types.ts';
import { slugOf, type Protocol } from '../../providers/projects/types.ts';

/** Chain names differ between DefiLlama's lists ("BSC" now, "Binance" in 2023) and our API. */
const CHAIN_ALIASES: Record<string, string> = {
  binance: 'bsc',
  'bnb chain': 'bsc',
  bnb: 'bsc',
  'op mainnet': 'optimism',
  xdai: 'gnosis',
  avax: 'avalanche',
  matic: 'polygon',
  'zksync era': 'zksync era',
};

export function canonicalChain(name: string): string {
  const n = name.trim().toLowerCase();
  return CHAIN_ALIASES[n] ?? n;
}

export function sameChain(a: string, b: string): boolean {
  return canonicalChain(a) === canonicalChain(b);
}

export function findProject(protocols: readonly Protocol[], query: string): Protocol {
  const q = query.trim().toLowerCase();
  const hit = protocols.find((p) => p.name.toLowerCase() === q) ?? protocols.find((p) => p.slug === slugOf(q));
  if (hit) return hit;
  const close = protocols
    .map((p) => ({ p, d: p.name.toLowerCase().includes(q) ? 0 : Math.min(distance(q, p.name.toLowerCase()), distance(q, baseName(p).toLowerCase())) }))
    .filter((x) => x.d <= Math.max(2, Math.floor(q.length / 3)))
    .sort((a, b) => a.d - b.d || (b.p.tvl_usd ?? 0) - (a.p.tvl_usd ?? 0))
    .slice(0, 5)
    .map((x) => ({ name: x.p.name, category: x.p.category, tvl_usd: x.p.tvl_usd }));
  throw new ApiError('NOT_FOUND', `No DeFi project matches "${query}".`, { project: query, close_matches: close });
}

/** The chain of a list by canonical name, or NOT_FOUND with close matches. */
export function findChain(names: readonly string[], query: string): string {
  const hit = names.find((n) => sameChain(n, query));
  if (hit) return hit;
  const q = query.trim().toLowerCase();
  const close = names.filter((n) => distance(q, n.toLowerCase()) <= Math.max(1, Math.floor(q.length / 3)) || n.toLowerCase().includes(q)).slice(0, 5);
  throw new ApiError('NOT_FOUND', `No chain matches "${query}".`, { chain: query, close_matches: close });
}

/**
 * The project's token when it can be told: the live API's CoinGecko id, else a registry asset whose
 * name is the project's name without a version suffix ("Aave V3" → Aave). Only priced assets count.
 */
export function projectToken(registry: AssetRegistry, p: Protocol): AssetEntry | undefined {
  if (p.gecko_id) {
    const e = registry.get(p.gecko_id);
    if (e?.has_prices) return e;
  }
  const base = p.name.replace(/\s+v\d+(\.\d+)?$/i, '').trim();
  return registry.resolve(base).find((e) => e.has_prices && e.name.toLowerCase() === base.toLowerCase());
}

/** The project's name as people write it in posts: its name without version or product suffix. */
export function baseName(p: Protocol): string {
  return p.name.replace(/\s+v\d+(\.\d+)?$/i, '').replace(/\s+(lend|lending|liquid staking|protocol|finance|markets?|dex|perps)$/i, '').trim();
}
