import type { ServerDeps } from '../deps.ts';
import type { ServerSpec } from '../spec.ts';
import { marketTools } from './market.ts';
import { metricTools } from './metrics.ts';
import { priceTools } from './prices.ts';
import { serverIcon } from '../icons.ts';

export function marketIntelligence(deps: ServerDeps): ServerSpec {
  return {
    name: 'market-intelligence',
    icon: serverIcon('market-intelligence'),
    title: 'Market Intelligence',
    description: 'Prices, candles, market overview, movers and asset search across the covered crypto assets.',
    chains: ['ethereum', 'base', 'polygon', 'bsc', 'solana'],
    freshness: 'daily',
    dataFreshness:
      deps.market.name === 'snapshot'
        ? 'Offline snapshot of real public data: each asset is current to its own last day (BTC 2025-12-09, the majors 2025-02-11, Binance-listed assets 2024-11-22); market caps as of 2021-12-31; every answer states its as-of date.'
        : `Live from ${deps.market.name}, falling back to the offline snapshot when it fails (answers then say so in their source).`,
    tools: [...priceTools(deps), ...marketTools(deps), ...metricTools(deps)],
  };
}
