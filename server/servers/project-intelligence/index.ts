import type { ServerDeps } from '../deps.ts';
import type { ServerSpec } from '../spec.ts';
import { projectTools } from './tools.ts';
import { serverIcon } from '../icons.ts';

export function projectIntelligence(deps: ServerDeps): ServerSpec {
  return {
    name: 'project-intelligence',
    icon: serverIcon('project-intelligence'),
    title: 'Project Intelligence',
    description: 'DeFi projects: search, profiles, TVL histories, comparisons, category and chain overviews, and due-diligence flags.',
    chains: [],
    freshness: 'daily',
    dataFreshness:
      deps.projects.name === 'snapshot'
        ? 'Offline DefiLlama data: 6,686 protocols as of 2025-12-19, TVL histories of 38 protocols (2021-08-12 to 2025-12-19), chain TVL histories (2018-06-28 to 2023-07-25), DeFi total TVL (2018-2023). Every answer states its as-of date.'
        : `Live from ${deps.projects.name}, falling back to the offline DefiLlama data when it fails (answers then say so in their source).`,
    tools: projectTools(deps),
  };
}
