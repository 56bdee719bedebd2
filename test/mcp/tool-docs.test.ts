// docs/tools.md is the tool registry written out: it fails here the moment a tool, cost,
// description or argument changes without `npm run docs:tools`.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderToolDocs } from '../../server/mcp/tool-docs.ts';
import { offlineRegistry } from '../../scripts/offline-registry.ts';

const FILE = path.resolve(import.meta.dirname, '../../docs/tools.md');

describe('docs/tools.md', () => {
  const registry = offlineRegistry();
  const doc = fs.readFileSync(FILE, 'utf8');

  it('equals what the registry renders (run npm run docs:tools after changing a tool)', () => {
    expect(doc).toBe(renderToolDocs(registry));
  });

  it('lists every tool of every server with its cost and each of its arguments', () => {
    let tools = 0;
    for (const s of registry.values()) {
      for (const t of s.tools.values()) {
        tools++;
        expect(doc).toContain(`| [\`${t.name}\`](#${s.name}-${t.name.replace(/_/g, '-')}) | ${t.credits} |`);
        const section = doc.slice(doc.indexOf(`### ${s.name}: ${t.name}\n`), doc.indexOf('\n### ', doc.indexOf(`### ${s.name}: ${t.name}\n`) + 1));
        for (const arg of Object.keys((t.inputSchema as { properties?: object }).properties ?? {})) expect(section).toContain(`| \`${arg}\` |`);
      }
    }
    // 82 data and free tools, and the alert rule tools: create_*_alert and five to manage rules on each of three servers.
    expect(tools).toBe(82 + 3 * 6);
  });
});
