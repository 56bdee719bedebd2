import type { ServerSpec } from '../spec.ts';

// Data tools arrive with this server's own issue; until then it offers the three free tools.
export const blockchainExplorer: ServerSpec = {
  name: 'blockchain-explorer',
  title: 'Blockchain Explorer',
  description: 'Decoded blocks, transactions, balances and address activity on Ethereum, Base, Polygon, BSC and Solana.',
  chains: ['ethereum', 'base', 'polygon', 'bsc', 'solana'],
  dataFreshness: 'No data tools are deployed on this server yet; only the free account tools answer.',
  tools: [],
};
