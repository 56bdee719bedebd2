// A server's tool handlers called directly on the offline snapshot, without the gateway: for what
// a tool hands the gateway beyond data (notes, the empty flag) before the gateway shows it.
// Only the snapshot providers are real here; a tool needing a chain, the database or the forecast
// log is tested through the real service instead (test/helpers/tools.ts).
import type { ToolContext, ToolOutput } from '../../server/mcp/tool.ts';
import { serverModules } from '../../server/servers/index.ts';
import type { ServerName } from '../../server/mcp/names.ts';
import { offlineDeps } from '../../scripts/offline-registry.ts';

/** Calls one tool's handler with its arguments parsed by its own schema, as the gateway would. */
export async function callHandler(server: ServerName, tool: string, args: Record<string, unknown>): Promise<ToolOutput> {
  const [mod] = serverModules({ servers: [server], deps: offlineDeps() });
  const def = mod!.tools.find((t) => t.name === tool);
  if (!def) throw new Error(`no tool ${tool} on ${server}`);
  const ctx = { requestId: 'test', server, account: { id: 'test', plan: 'test' }, signal: new AbortController().signal, tools: [] } as unknown as ToolContext;
  return def.handler(def.input.parse(args), ctx);
}
