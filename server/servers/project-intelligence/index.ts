import type { ServerSpec } from '../spec.ts';

// Data tools arrive with this server's own issue; until then it offers the three free tools.
export const projectIntelligence: ServerSpec = {
  name: 'project-intelligence',
  title: 'Project Intelligence',
  description: 'DeFi project profiles: TVL, chains, categories and fundamentals.',
  chains: ['ethereum', 'base', 'polygon', 'bsc', 'solana'],
  dataFreshness: 'No data tools are deployed on this server yet; only the free account tools answer.',
  tools: [],
};
