import type { ServerSpec } from '../spec.ts';

// Data tools arrive with this server's own issue; until then it offers the three free tools.
export const tokenIntelligence: ServerSpec = {
  name: 'token-intelligence',
  title: 'Token Intelligence',
  description: 'Token metadata, supply, holder concentration and contract analysis.',
  chains: ['ethereum', 'base', 'polygon', 'bsc', 'solana'],
  dataFreshness: 'No data tools are deployed on this server yet; only the free account tools answer.',
  tools: [],
};
