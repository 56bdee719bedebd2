// The nine servers on the offline snapshot, without a database or a chain: for documents generated
// from the registry (docs/tools.md) and for tests that call handlers directly. Only the snapshot
// providers are real; what a tool would need beyond them is absent (undefined).
import { createComputePool } from '../server/compute/pool.ts';
import { registryServerJson } from '../server/mcp/cards.ts';
import { AllInOne, buildRegistry, type Registry } from '../server/mcp/registry.ts';
import { LEGACY_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS } from '../server/gateway/classify.ts';
import { VERSION } from '../server/version.ts';
import { SERVER_NAMES } from '../server/mcp/names.ts';
import { loadSnapshot, SnapshotProvider } from '../server/providers/market/snapshot.ts';
import { lazyProjectsData, SnapshotProjectSource } from '../server/providers/projects/snapshot.ts';
import { lazySocialDataset, SnapshotSocialSource } from '../server/providers/social/snapshot.ts';
import { createTokenRegistry } from '../server/providers/tokens.ts';
import type { ServerDeps } from '../server/servers/deps.ts';
import { allInOneModule, serverModules } from '../server/servers/index.ts';

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

/** The all-in-one endpoint over offlineRegistry(), as the gateway builds it. */
export function offlineAllInOne(): AllInOne {
  const deps = offlineDeps();
  const modules = serverModules({ servers: SERVER_NAMES, deps });
  return new AllInOne(buildRegistry(modules), allInOneModule(modules, deps));
}

/** server.json for the MCP Registry, as `npm run registry:server-json` writes it. */
export function offlineServerJson(): string {
  const deps = offlineDeps();
  const modules = serverModules({ servers: SERVER_NAMES, deps });
  const source = {
    registry: buildRegistry(modules),
    allInOne: allInOneModule(modules, deps),
    version: VERSION,
    protocolVersions: [...MODERN_PROTOCOL_VERSIONS, ...LEGACY_PROTOCOL_VERSIONS],
  };
  return `${JSON.stringify(registryServerJson(source), null, 2)}\n`;
}
