// The nine servers on the offline snapshot, without a database or a chain: for documents generated
// from the registry (docs/tools.md) and for tests that call handlers directly. Only the snapshot
// providers are real; what a tool would need beyond them is absent (undefined).
import { createComputePool } from '../server/compute/pool.ts';
import { buildRegistry, type Registry } from '../server/mcp/registry.ts';
import { SERVER_NAMES } from '../server/mcp/names.ts';
import { loadSnapshot, SnapshotProvider } from '../server/providers/market/snapshot.ts';
import { lazyProjectsData, SnapshotProjectSource } from '../server/providers/projects/snapshot.ts';
import { lazySocialDataset, SnapshotSocialSource } from '../server/providers/social/snapshot.ts';
import { createTokenRegistry } from '../server/providers/tokens.ts';
import type { ServerDeps } from '../server/servers/deps.ts';
import { serverModules } from '../server/servers/index.ts';

let deps: ServerDeps | undefined;

export function offlineDeps(): ServerDeps {
  if (deps) return deps;
  const snapshot = new SnapshotProvider(loadSnapshot());
  const socialData = lazySocialDataset();
  const projectsData = lazyProjectsData();
  const partial: Partial<ServerDeps> = {
    market: snapshot,
    snapshot,
    social: new SnapshotSocialSource(socialData),
    socialData,
    projects: new SnapshotProjectSource(projectsData),
    projectsData,
    tokens: createTokenRegistry({ assets: snapshot.registry.entries() }),
    explorer: undefined,
    github: undefined,
    // Inline: documents and direct handler tests need the answers, not threads.
    compute: createComputePool({ workers: 0, accountShare: 1, accountQueue: 0, queue: 0 }),
  };
  deps = partial as ServerDeps;
  return deps;
}

/** The registry of all nine servers at their default costs. */
export function offlineRegistry(): Registry {
  return buildRegistry(serverModules({ servers: SERVER_NAMES, deps: offlineDeps() }));
}
