// portfolio-analytics: what wallets hold across chains, priced; the risk of holding it; and
// wallets side by side.
import type { ServerDeps } from '../deps.ts';
import { serverIcon } from '../icons.ts';
import type { ServerSpec } from '../spec.ts';
import { portfolioTools } from './portfolio.ts';

export function portfolioAnalytics(deps: ServerDeps): ServerSpec {
  return {
    name: 'portfolio-analytics',
    icon: serverIcon('portfolio-analytics'),
    title: 'Portfolio Analytics',
    description: 'Multi-chain wallet portfolios: priced holdings, allocation, risk metrics and wallet comparison.',
    chains: ['ethereum', 'base', 'polygon', 'bsc', 'solana'],
    freshness: 'daily',
    dataFreshness: 'Balances live over each chain\'s JSON-RPC (block or slot named in the answer); prices from the market data source with their as-of date.',
    tools: [...portfolioTools(deps)],
  };
}
