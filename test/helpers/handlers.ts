// A server's tool handlers called directly on the offline snapshot, without the gateway: for what
// a tool hands the gateway beyond data (notes, the empty flag) before the gateway shows it.
// Only the snapshot providers are real here; a tool needing a chain, the database or the forecast
// log is tested through the real service instead (test/helpers/tools.ts).
import type { ToolContext, ToolOutput } from '../../server/mcp/tool.ts';
import { loadSnapshot, SnapshotProvider } from '../../server/providers/market/snapshot.ts';
import { lazyProjectsData, SnapshotProjectSource } from '../../server/providers/projects/snapshot.ts';
import { lazySocialDataset, SnapshotSocialSource } from '../../server/providers/social/snapshot.ts';
import { createTokenRegistry } from '../../server/providers/tokens.ts';
import type { ServerDeps } from '../../server/servers/deps.ts';
import { serverModules } from '../../server/servers/index.ts';
import type { ServerName } from '../../server/mcp/names.ts';

let deps: ServerDeps | undefined;

function snapshotDeps(): ServerDeps {
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
  };
  deps = partial as ServerDeps;
  return deps;
}

/** Calls one tool's handler with its arguments parsed by its own schema, as the gateway would. */
export async function callHandler(server: ServerName, tool: string, args: Record<string, unknown>): Promise<ToolOutput> {
  const [mod] = serverModules({ servers: [server], deps: snapshotDeps() });
  const def = mod!.tools.find((t) => t.name === tool);
  if (!def) throw new Error(`no tool ${tool} on ${server}`);
  const ctx = { requestId: 'test', server, account: { id: 'test', plan: 'test' }, signal: new AbortController().signal, tools: [] } as unknown as ToolContext;
  return def.handler(def.input.parse(args), ctx);
}
