import type { ServerSpec } from '../spec.ts';

// Data tools arrive with this server's own issue; until then it offers the three free tools.
export const marketIntelligence: ServerSpec = {
  name: 'market-intelligence',
  title: 'Market Intelligence',
  description: 'Prices, candles, market overview, movers and asset search across the covered crypto assets.',
  chains: ['ethereum', 'base', 'polygon', 'bsc', 'solana'],
  dataFreshness: 'No data tools are deployed on this server yet; only the free account tools answer.',
  tools: [],
};
