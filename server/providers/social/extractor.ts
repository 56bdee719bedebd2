// The one mention extractor of the service, over the snapshot's priced assets in registry order.
import { MentionExtractor } from '../../analytics/mentions.ts';
import type { RegistryEntry } from '../market/registry.ts';

export function mentionExtractor(assets: readonly RegistryEntry[]): MentionExtractor {
  const priced = assets
    .filter((a) => a.has_prices)
    .sort((a, b) => (a.market_cap_rank ?? Infinity) - (b.market_cap_rank ?? Infinity) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return new MentionExtractor(priced);
}
