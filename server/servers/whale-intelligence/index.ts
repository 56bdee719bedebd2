// whale-intelligence over EVM JSON-RPC: large transfers, exchange flows, wallet profiles, and
// per-account watchlists kept in PostgreSQL.
import type { ServerDeps } from '../deps.ts';
import type { ServerSpec } from '../spec.ts';
import { profileTools } from './profile.ts';
import { watchTools } from './watches.ts';
import { whaleAlertTools } from './alerts.ts';
import { whaleTools } from './whales.ts';
import { serverIcon } from '../icons.ts';

export function whaleIntelligence(deps: ServerDeps): ServerSpec {
  return {
    name: 'whale-intelligence',
    icon: serverIcon('whale-intelligence'),
    title: 'Whale Intelligence',
    description: 'Large transfers and flows between exchanges, funds and wallets, with address labels; wallet profiles and per-account watchlists.',
    chains: ['ethereum', 'base', 'polygon', 'bsc', 'solana'],
    freshness: 'daily',
    dataFreshness:
      'Transfers live from each EVM network over JSON-RPC (windows of at most 1,000 blocks; Solana for watchlists); USD values from the market data, each price with its as-of date; watchlists in the service database.',
    tools: [...whaleTools(deps), ...profileTools(deps), ...watchTools(deps), ...whaleAlertTools(deps)],
  };
}
