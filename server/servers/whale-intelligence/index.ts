import type { ServerSpec } from '../spec.ts';

// Data tools arrive with this server's own issue; until then it offers the three free tools.
export const whaleIntelligence: ServerSpec = {
  name: 'whale-intelligence',
  title: 'Whale Intelligence',
  description: 'Large transfers and flows between exchanges, funds and wallets, with address labels.',
  chains: ['ethereum', 'base', 'polygon', 'bsc', 'solana'],
  dataFreshness: 'No data tools are deployed on this server yet; only the free account tools answer.',
  tools: [],
};
