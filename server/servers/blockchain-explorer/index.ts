// blockchain-explorer over EVM JSON-RPC and Solana: chain state (chain.ts), token transfers,
// address history and contract reads, each in its own file.
import type { ServerDeps } from '../deps.ts';
import { serverIcon } from '../icons.ts';
import type { ServerSpec } from '../spec.ts';
import { chainTools } from './chain.ts';
import { contractTools } from './contracts.ts';
import { historyTools } from './history.ts';
import { transferTools } from './transfers.ts';

export function blockchainExplorer(deps: ServerDeps): ServerSpec {
  return {
    name: 'blockchain-explorer',
    icon: serverIcon('blockchain-explorer'),
    title: 'Blockchain Explorer',
    description: 'Decoded blocks, transactions, balances and address activity on Ethereum, Base, Polygon, BSC and Solana.',
    chains: ['ethereum', 'base', 'polygon', 'bsc'],
    freshness: 'daily',
    dataFreshness: 'Live from each network over JSON-RPC (the RPC URLs are configured per network); every answer names its chain and block.',
    tools: [...chainTools(deps), ...transferTools(deps), ...historyTools(deps), ...contractTools(deps)],
  };
}
