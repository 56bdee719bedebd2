// Guarantee (issue 35, items 6 and 10): `metadata.stale` is judged by the called tool's stated
// freshness, one mechanism for every tool (mcp/envelope.ts FRESHNESS, the gateway's envelope):
// daily prices are stale after 2 days, social posts after 7, the token registry after 180; each
// tool's kind and limit are stated by get_capabilities. Over the real gateway and the MCP SDK client
// on the offline snapshot, whose data (2025) is older than every limit on any clock after 2026-06.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpClient } from '../helpers/service.ts';
import { toolSuite, type ToolSuite } from '../helpers/tools.ts';

type Meta = { metadata: { stale: boolean; notes?: string[]; data_as_of: string | null } };
let suite: ToolSuite;
let social: Client;
let tokens: Client;

beforeAll(async () => {
  suite = await toolSuite('market-intelligence', 10_000);
  social = await mcpClient(suite.svc.url, 'social-intelligence', suite.key);
  tokens = await mcpClient(suite.svc.url, 'token-intelligence', suite.key);
});
afterAll(async () => {
  await social?.close();
  await tokens?.close();
  await suite?.close();
});

const firstNote = async (client: Client, name: string, args: Record<string, unknown>) => {
  const meta = ((await client.callTool({ name, arguments: args })).structuredContent as Meta).metadata;
  expect(meta.stale, name).toBe(true);
  return meta.notes![0]!;
};

describe("stale by the tool's own freshness", () => {
  it('each answer says which freshness it missed: 2 days for prices, 7 for posts, 180 for the token registry', async () => {
    expect(await firstNote(suite.client, 'get_prices', { assets: ['bitcoin'] })).toMatch(/older than the 2 days within which this tool's data \(daily figures/);
    expect(await firstNote(social, 'get_social_sentiment', { asset: 'bitcoin' })).toMatch(/older than the 7 days within which this tool's data \(social posts/);
    expect(await firstNote(tokens, 'search_token', { query: 'USDC' })).toMatch(/older than the 180 days within which this tool's data \(token lists/);
  });

  it('get_capabilities states each tool\'s kind of data, and each kind\'s days after which answers are stale', async () => {
    type Caps = { data: { freshness: Record<string, { stale_after_days: number }>; tools: { name: string; freshness: string }[] } };
    const s = ((await social.callTool({ name: 'get_capabilities', arguments: {} })).structuredContent as Caps).data;
    expect(s.freshness).toMatchObject({ daily: { stale_after_days: 2 }, posts: { stale_after_days: 7 }, registry: { stale_after_days: 180 } });
    expect(s.tools.find((t) => t.name === 'get_social_sentiment')).toMatchObject({ freshness: 'posts' });
    const t = ((await tokens.callTool({ name: 'get_capabilities', arguments: {} })).structuredContent as Caps).data;
    expect(t.tools.find((x) => x.name === 'search_token')).toMatchObject({ freshness: 'registry' });
    expect(t.tools.find((x) => x.name === 'get_token_profile')).toMatchObject({ freshness: 'daily' });
  });
});
