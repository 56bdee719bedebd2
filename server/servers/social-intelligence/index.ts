import type { ServerSpec } from '../spec.ts';

// Data tools arrive with this server's own issue; until then it offers the three free tools.
export const socialIntelligence: ServerSpec = {
  name: 'social-intelligence',
  title: 'Social Intelligence',
  description: 'Social mentions, sentiment and trending topics for crypto assets.',
  chains: [],
  dataFreshness: 'No data tools are deployed on this server yet; only the free account tools answer.',
  tools: [],
};
