// token-intelligence: what a token is (registry + chain + market), who holds it, what its
// contract lets its owner do, and a risk score that itemises why.
import type { ServerDeps } from '../deps.ts';
import { serverIcon } from '../icons.ts';
import type { ServerSpec } from '../spec.ts';
import { tokenTools } from './tokens.ts';

export function tokenIntelligence(deps: ServerDeps): ServerSpec {
  return {
    name: 'token-intelligence',
    icon: serverIcon('token-intelligence'),
    title: 'Token Intelligence',
    description: 'Token metadata, supply, holder concentration and contract analysis.',
    chains: ['ethereum', 'base', 'polygon', 'bsc', 'solana'],
    freshness: 'daily',
    dataFreshness:
      'Registry: Uniswap default token list and Etherscan token labels (2024-07) plus the devnet manifest when configured; on-chain values live over JSON-RPC; prices from the market data source.',
    tools: [...tokenTools(deps)],
  };
}
