// Turning what a user typed into an asset with prices, or a NOT_FOUND with close matches.
import { ApiError } from '../../errors.ts';
import type { AssetEntry, AssetRegistry } from '../../providers/market/types.ts';

export function resolveAsset(registry: AssetRegistry, query: string): AssetEntry {
  const matches = registry.resolve(query);
  const priced = matches.find((e) => e.has_prices);
  if (priced) return priced;
  const suggestions = (matches.length > 0 ? matches : registry.suggest(query, 5)).slice(0, 5);
  throw new ApiError(
    'NOT_FOUND',
    matches.length > 0 ? `"${query}" has no price history in this dataset.` : `No asset matches "${query}".`,
    {
      asset: query,
      close_matches: suggestions.map((e) => ({ id: e.id, symbol: e.symbol, name: e.name, has_prices: e.has_prices })),
    },
  );
}

/** An asset the user named that has no price history here, with the names closest to it. */
export interface UnknownAsset {
  asset: string;
  reason: string;
  close_matches: { id: string; symbol: string; name: string; has_prices: boolean }[];
}

/** Resolves many, keeping those found and listing the unknown ones (a batch answers what it can). */
export function resolveSome(registry: AssetRegistry, queries: string[]): { found: AssetEntry[]; unknown: UnknownAsset[] } {
  const found: AssetEntry[] = [];
  const unknown: UnknownAsset[] = [];
  for (const q of queries) {
    try {
      const e = resolveAsset(registry, q);
      if (!found.some((f) => f.id === e.id)) found.push(e);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      unknown.push({ ...(err.details as Omit<UnknownAsset, 'reason'>), reason: err.message });
    }
  }
  return { found, unknown };
}

/** Resolves many; all unknown ones are reported together (and nothing is charged). */
export function resolveAssets(registry: AssetRegistry, queries: string[]): AssetEntry[] {
  const { found, unknown } = resolveSome(registry, queries);
  if (unknown.length > 0) {
    throw new ApiError('NOT_FOUND', `No price history for ${unknown.map((m) => `"${m.asset}"`).join(', ')}.`, { missing: unknown.map(({ reason: _, ...m }) => m) });
  }
  return found;
}
