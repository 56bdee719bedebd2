import type { ServerSpec } from '../spec.ts';

// Data tools arrive with this server's own issue; until then it offers the three free tools.
export const portfolioAnalytics: ServerSpec = {
  name: 'portfolio-analytics',
  title: 'Portfolio Analytics',
  description: 'Priced wallet portfolios, allocation, performance and risk across chains.',
  chains: ['ethereum', 'base', 'polygon', 'bsc', 'solana'],
  dataFreshness: 'No data tools are deployed on this server yet; only the free account tools answer.',
  tools: [],
};
