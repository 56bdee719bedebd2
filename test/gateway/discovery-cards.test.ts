// Found by the clients that look (issue 32 [reach] item 5): the server cards at <mcp-url>/server-card
// and the AI catalog at /.well-known/ai-catalog.json (modelcontextprotocol/experimental-ext-server-card,
// docs/discovery.md), over real HTTP:
// - the catalog lists the all-in-one endpoint's card first, then its discovery mode and each server;
//   every card has the server-card media type and the extension's required fields and bounds;
// - public: no key is asked for, a wrong one is not refused, and the MCP URLs keep their contract
//   (GET /mcp/{server} is still 401/405);
// - every URL comes from PUBLIC_BASE_URL: a forged Host or X-Forwarded-Host never appears;
// - cacheable (Cache-Control, ETag, 304 on If-None-Match) and readable cross-origin (CORS, ETag exposed);
// - a card's remote is the URL that really serves that endpoint, with the version and title it
//   announces when connected.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../server/runtime.ts';
import { SERVER_NAMES } from '../../server/mcp/names.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createAccountWithKey, mcpClient } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';
import { rawRequest } from '../oauth/helpers.ts';

const PUBLIC = 'https://mcp.example.test';
const FORGED = { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http' };
const CARD_TYPE = 'application/mcp-server-card+json';
// The extension's schema.json (v1): required fields and their bounds.
const NAME = /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/;
const REMOTE_URL = /^(https?:\/\/[^\s]+|\{[a-zA-Z_][a-zA-Z0-9_]*\}[^\s]*)$/;

let db: TestDatabase;
let publicService: RunningService;
let localService: RunningService;

beforeAll(async () => {
  db = await createTestDatabase();
  publicService = await startTestService(db.url, { PUBLIC_BASE_URL: PUBLIC });
  localService = await startTestService(db.url);
});
afterAll(async () => {
  await publicService?.close();
  await localService?.close();
  await db?.drop();
});

interface Card {
  $schema: string;
  name: string;
  version: string;
  description: string;
  title: string;
  websiteUrl: string;
  icons: { src: string }[];
  remotes: { type: string; url: string; headers: { name: string; isSecret: boolean }[]; supportedProtocolVersions: string[] }[];
}
interface Catalog {
  specVersion: string;
  host: { displayName: string };
  entries: { identifier: string; type: string; url: string }[];
}

/** GET a document of `s` at the path of a public URL, with forged host headers. */
async function get(s: RunningService, publicUrl: string, headers: Record<string, string> = {}) {
  return rawRequest(`${s.url}${new URL(publicUrl).pathname}`, { headers: { ...FORGED, ...headers } });
}

describe('the AI catalog and the server cards', () => {
  it('the catalog lists the all-in-one card first, then the discovery mode and every server, all at the configured origin', async () => {
    const res = await get(publicService, `${PUBLIC}/.well-known/ai-catalog.json`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('application/ai-catalog+json');
    expect(res.body).not.toContain('evil.example');
    const catalog = JSON.parse(res.body) as Catalog;
    expect(catalog.specVersion).toBe('1.0');
    expect(catalog.entries.map((e) => e.url)).toEqual([
      `${PUBLIC}/mcp/server-card`,
      `${PUBLIC}/mcp/discover/server-card`,
      ...SERVER_NAMES.map((s) => `${PUBLIC}/mcp/${s}/server-card`),
    ]);
    for (const entry of catalog.entries) {
      expect(entry.type).toBe(CARD_TYPE);
      expect(entry.identifier).toMatch(/^urn:air:mcp\.example\.test:mcp:cryptomcp(-[a-z-]+)?$/);
    }
    expect(new Set(catalog.entries.map((e) => e.identifier)).size).toBe(catalog.entries.length);
  });

  it('each card is served keyless with its media type, the extension’s required fields, and only configured URLs', async () => {
    const catalog = JSON.parse((await get(publicService, `${PUBLIC}/.well-known/ai-catalog.json`)).body) as Catalog;
    const names = new Set<string>();
    for (const entry of catalog.entries) {
      const res = await get(publicService, entry.url, { accept: CARD_TYPE });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toContain(CARD_TYPE);
      expect(res.body).not.toContain('evil.example');
      const card = JSON.parse(res.body) as Card;
      expect(card.$schema).toBe('https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json');
      expect(card.name).toMatch(NAME);
      expect(card.name.startsWith('test.example.mcp/')).toBe(true);
      names.add(card.name);
      expect(card.description.length).toBeGreaterThan(0);
      expect(card.description.length).toBeLessThanOrEqual(100);
      expect(card.title.length).toBeLessThanOrEqual(100);
      expect(card.version).toMatch(/^\d+\.\d+\.\d+/);
      expect(card.websiteUrl.startsWith(`${PUBLIC}/`)).toBe(true);
      const [remote] = card.remotes;
      expect(remote!.type).toBe('streamable-http');
      expect(remote!.url).toMatch(REMOTE_URL);
      expect(`${remote!.url}/server-card`).toBe(entry.url);
      expect(remote!.supportedProtocolVersions).toEqual(expect.arrayContaining(['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26']));
      expect(remote!.headers).toEqual([expect.objectContaining({ name: 'x-api-key', isSecret: true })]);
    }
    expect(names.size).toBe(catalog.entries.length);
  });

  it('is public: a wrong key is not refused there, while the MCP URLs keep their own answers to GET', async () => {
    const card = await rawRequest(`${localService.url}/mcp/price-prediction/server-card`, { headers: { 'x-api-key': 'cmcp_wrong' } });
    expect(card.status).toBe(200);
    const allInOne = await rawRequest(`${localService.url}/mcp/server-card`, { headers: { authorization: 'Bearer nonsense' } });
    expect(allInOne.status).toBe(200);
    expect((await rawRequest(`${localService.url}/mcp/price-prediction`)).status).toBe(401);
    const { key } = await createAccountWithKey(db);
    const get = await rawRequest(`${localService.url}/mcp`, { headers: { 'x-api-key': key } });
    expect(get.status).toBe(405);
    const unknown = await rawRequest(`${localService.url}/mcp/no-such-server/server-card`);
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body)).toMatchObject({ success: false, error: { code: 'SERVER_NOT_FOUND' } });
  });

  it('is cacheable and readable from a browser: Cache-Control, an ETag that answers 304, CORS with the ETag exposed', async () => {
    const first = await rawRequest(`${localService.url}/mcp/server-card`, { headers: { origin: 'https://app.example' } });
    expect(first.headers['cache-control']).toBe('public, max-age=3600');
    expect(first.headers['access-control-allow-origin']).toBe('*');
    expect(String(first.headers['access-control-expose-headers'])).toContain('etag');
    const etag = String(first.headers.etag);
    expect(etag).toMatch(/^".+"$/);
    const again = await rawRequest(`${localService.url}/mcp/server-card`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.body).toBe('');
    const catalog = await rawRequest(`${localService.url}/.well-known/ai-catalog.json`);
    expect((await rawRequest(`${localService.url}/.well-known/ai-catalog.json`, { headers: { 'if-none-match': String(catalog.headers.etag) } })).status).toBe(304);
  });

  it('a card’s remote serves that endpoint, with the version and title the card announces', async () => {
    const { key } = await createAccountWithKey(db);
    for (const path of ['', '/market-intelligence']) {
      const card = JSON.parse((await rawRequest(`${localService.url}/mcp${path}/server-card`)).body) as Card;
      expect(card.remotes[0]!.url).toBe(`${localService.url}/mcp${path}`);
      const client = await mcpClient(localService.url, path.slice(1), key);
      const info = client.getServerVersion()!;
      await client.close();
      expect(info.version).toBe(card.version);
      expect(info.title).toBe(card.title);
      expect(card.icons[0]!.src).toBe((info as { icons?: { src: string }[] }).icons?.[0]?.src);
    }
  });
});
