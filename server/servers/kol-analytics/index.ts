import type { ServerSpec } from '../spec.ts';

// Data tools arrive with this server's own issue; until then it offers the three free tools.
export const kolAnalytics: ServerSpec = {
  name: 'kol-analytics',
  title: 'KOL Analytics',
  description: 'Key opinion leaders: their reach, the assets they discuss and how their calls performed.',
  chains: [],
  dataFreshness: 'No data tools are deployed on this server yet; only the free account tools answer.',
  tools: [],
};
