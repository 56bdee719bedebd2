// Real answers against the output schemas the tools declare (ToolDefinition.output): what the
// per-server *-outputs suites share. A call goes through the real service and the SDK client; its
// `data` must parse with the tool's schema, and parsing must drop nothing: an answer carries no
// field its published schema does not document (test/mcp/every-tool.test.ts checks the same on
// the listed JSON Schema, closed).
import { expect } from 'vitest';
import type { ServerName } from '../../server/mcp/names.ts';
import type { ToolDefinition } from '../../server/mcp/tool.ts';
import { freeTools } from '../../server/servers/common/free-tools.ts';
import type { ToolSuite } from './tools.ts';

/** One call of a tool with realistic arguments; `label` tells apart calls of one tool. */
export interface OutputCase {
  tool: string;
  label?: string;
  args: Record<string, unknown>;
  /** What the answer must show, so the case reaches the branch it is there for (e.g. covered: false). */
  shows?: Record<string, unknown>;
}

const FREE = new Set(freeTools({ name: 'all', title: '', description: '', chains: [], dataFreshness: '' }).map((t) => t.name));

/** The server's own tools (the free tools every server carries are checked with the common tools). */
/** The alert rule tools of [push]: the same on every alerting server, each answer checked by test/mcp/every-tool. */
const ALERT_TOOLS = /^(create_[a-z]+_alert|list_alert_rules|pause_alert_rule|resume_alert_rule|delete_alert_rule|get_alerts)$/;

export function ownTools(suite: ToolSuite, server: ServerName): ToolDefinition[] {
  return [...suite.svc.registry.get(server)!.tools.values()].map((t) => t.definition).filter((d) => !FREE.has(d.name) && !ALERT_TOOLS.test(d.name));
}

export const caseName = (c: OutputCase) => `${c.tool}${c.label ? ` (${c.label})` : ''}`;

/** Calls the tool and checks its data against its declared output; returns the data. */
export async function expectAnswerMatchesOutput(suite: ToolSuite, server: ServerName, c: OutputCase): Promise<unknown> {
  const def = suite.svc.registry.get(server)!.tools.get(c.tool)!.definition;
  expect(def.output, `${c.tool} declares an output schema`).toBeDefined();
  const result = await suite.client.callTool({ name: c.tool, arguments: c.args });
  expect(result.isError, JSON.stringify(result.content).slice(0, 500)).toBeFalsy();
  const data = (result.structuredContent as { data: unknown }).data;
  const parsed = def.output!.safeParse(data);
  expect(parsed.error?.issues ?? [], `${caseName(c)}: data fits the schema`).toEqual([]);
  // z.object drops keys it does not list: a difference here is a field the schema does not publish.
  expect(parsed.data, `${caseName(c)}: every field is in the schema`).toEqual(data);
  if (c.shows) expect(data).toMatchObject(c.shows);
  return data;
}
