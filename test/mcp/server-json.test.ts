// server.json, the MCP Registry's entry for the all-in-one endpoint, is the registry written out:
// it fails here the moment a server, tool or cost changes without `npm run registry:server-json`,
// and when it breaks the Registry schema's (2025-12-11) rules for the fields it uses.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { offlineRegistry, offlineServerJson } from '../../scripts/offline-registry.ts';

const FILE = path.resolve(import.meta.dirname, '../../server.json');

interface ServerJson {
  $schema: string;
  name: string;
  title: string;
  description: string;
  version: string;
  remotes: { type: string; url: string; variables: Record<string, { isRequired: boolean }> }[];
  _meta: Record<string, Record<string, { servers: { name: string; url: string; tools: { name: string; credits: number }[] }[] }>>;
}

describe('server.json', () => {
  const committed = fs.readFileSync(FILE, 'utf8');

  it('equals what the registry renders (run npm run registry:server-json after changing a tool)', () => {
    expect(committed).toBe(offlineServerJson());
  });

  it('keeps the Registry schema’s rules for its fields', () => {
    const doc = JSON.parse(committed) as ServerJson;
    expect(doc.$schema).toBe('https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json');
    expect(doc.name).toMatch(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
    expect(doc.description.length).toBeGreaterThanOrEqual(1);
    expect(doc.description.length).toBeLessThanOrEqual(100);
    expect(doc.title.length).toBeLessThanOrEqual(100);
    expect(doc.version).not.toMatch(/^[\^~>=<]|\.x$|\*|^latest$/);
    for (const remote of doc.remotes) {
      expect(remote.type).toBe('streamable-http');
      expect(remote.url).toMatch(/^https?:\/\/[^\s]+$/);
      // Every {variable} of the URL is declared.
      for (const [, name] of remote.url.matchAll(/\{([^}]+)\}/g)) expect(remote.variables[name!]).toMatchObject({ isRequired: true });
    }
    expect(remote(doc)).toBe('https://{host}/mcp');
  });

  it('names every server and every tool with its cost', () => {
    const doc = JSON.parse(committed) as ServerJson;
    const servers = doc._meta['io.modelcontextprotocol.registry/publisher-provided']!['dev.cryptomcp/endpoint']!.servers;
    const registry = offlineRegistry();
    expect(servers.map((s) => s.name)).toEqual([...registry.keys()]);
    for (const s of servers) {
      expect(s.url).toBe(`https://{host}/mcp/${s.name}`);
      expect(s.tools).toEqual([...registry.get(s.name as never)!.tools.values()].map((t) => ({ name: t.name, credits: t.credits })));
    }
  });
});

function remote(doc: ServerJson): string {
  return doc.remotes[0]!.url;
}
