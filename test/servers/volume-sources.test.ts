// Guarantee (issue 35, item 7): one volume source per figure, named beside it. BTC's snapshot
// volumes come from Yahoo's aggregate over exchanges until 2025-02-11 and from CryptoCompare's
// USD-quoted markets only from 2025-02-12 (about a tenth of the aggregate): every answer that
// carries a volume says what it counts, from the one rule (server/servers/common/volume.ts), and a
// figure that sums volumes (the volume profile) sums one source's only. Over the real gateway and
// the MCP SDK client; expectations recomputed here from the snapshot.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays } from '../../server/lib/dates.ts';
import { SERVER_NAMES } from '../../server/mcp/names.ts';
import { SnapshotProvider } from '../../server/providers/market/snapshot.ts';
import { mcpClient, post } from '../helpers/service.ts';
import { toolSuite, type Envelope, type ToolSuite } from '../helpers/tools.ts';

type Noted<T> = Envelope<T> & { metadata: { notes?: string[] } };
const CRYPTOCOMPARE = 'CryptoCompare daily BTC/USD volume: USD-quoted markets only';
const AGGREGATE = 'an aggregate over exchanges';

let suite: ToolSuite;
let prediction: Client;
const snapshot = new SnapshotProvider();

beforeAll(async () => {
  suite = await toolSuite('market-intelligence', 100_000);
  prediction = await mcpClient(suite.svc.url, 'price-prediction', suite.key);
});
afterAll(async () => {
  await prediction?.close();
  await suite?.close();
});

describe('every volume figure names what it counts', () => {
  it('every output schema that declares a volume_24h_usd declares volume_source beside it', async () => {
    const bare: string[] = [];
    const walk = (tool: string, node: unknown, path: string) => {
      if (Array.isArray(node)) node.forEach((n, i) => walk(tool, n, `${path}[${i}]`));
      else if (node !== null && typeof node === 'object') {
        const props = (node as { properties?: Record<string, unknown> }).properties;
        if (props && 'volume_24h_usd' in props && !('volume_source' in props)) bare.push(`${tool} ${path}`);
        for (const [k, v] of Object.entries(node)) walk(tool, v, `${path}.${k}`);
      }
    };
    let declaring = 0;
    for (const server of SERVER_NAMES) {
      const res = await post(`${suite.svc.url}/mcp/${server}`, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'x-api-key': suite.key });
      for (const t of (res.body as { result: { tools: { name: string; outputSchema?: unknown }[] } }).result.tools) {
        if (JSON.stringify(t.outputSchema ?? {}).includes('"volume_24h_usd"')) declaring++;
        walk(t.name, t.outputSchema, '');
      }
    }
    // get_prices, get_market_overview, get_top_movers, get_token_profile.
    expect(declaring).toBeGreaterThanOrEqual(4);
    expect(bare).toEqual([]);
  });

  it('get_top_movers and get_market_overview name each mover\'s volume source', async () => {
    const movers = await suite.call<{ gainers: { id: string; volume_24h_usd: number | null; volume_source: string | null }[]; losers: { volume_24h_usd: number | null; volume_source: string | null }[] }>('get_top_movers', { limit: 50, min_volume_usd: 0 });
    const overview = await suite.call<{ top_gainers_24h: { volume_24h_usd: number | null; volume_source: string | null }[] }>('get_market_overview', {});
    const rows = [...movers.data.gainers, ...movers.data.losers, ...overview.data.top_gainers_24h];
    expect(rows.length).toBeGreaterThan(10);
    for (const r of rows) expect(r.volume_source === null).toBe(r.volume_24h_usd === null);
    expect(rows.filter((r) => r.volume_source !== null).every((r) => /aggregate|only/.test(r.volume_source!))).toBe(true);
  });

  it('get_ohlcv names each candle source\'s volume and says where the source changes (BTC, February 2025)', async () => {
    const daily = (await suite.call<{ candles: { date: string; source: string }[]; volume_sources: Record<string, string> }>('get_ohlcv', { asset: 'btc', from: '2025-02-01', to: '2025-02-28' })) as Noted<{ candles: { date: string; source: string }[]; volume_sources: Record<string, string> }>;
    expect(Object.keys(daily.data.volume_sources).sort()).toEqual(['snapshot:cryptocompare', 'snapshot:yahoo']);
    expect(daily.data.volume_sources['snapshot:cryptocompare']).toContain(CRYPTOCOMPARE);
    expect(daily.data.volume_sources['snapshot:yahoo']).toContain(AGGREGATE);
    expect(daily.metadata.notes?.join(' ')).toContain('from 2025-02-12 snapshot:cryptocompare');

    // The week of 2025-02-10 sums Yahoo days and CryptoCompare days: its volume says so.
    const weekly = await suite.call<{ candles: { date: string; source: string }[]; volume_sources: Record<string, string> }>('get_ohlcv', { asset: 'btc', interval: 'weekly', from: '2025-02-10', to: '2025-02-16' });
    expect(weekly.data.candles[0]!.source).toBe('snapshot:yahoo+snapshot:cryptocompare');
    expect(weekly.data.volume_sources[weekly.data.candles[0]!.source]).toMatch(/^a sum of days that count different things: Yahoo.*; then CryptoCompare/);
  });

  it('get_support_resistance sums one source\'s volumes: BTC\'s last year is CryptoCompare\'s days only', async () => {
    const res = await prediction.callTool({ name: 'get_support_resistance', arguments: { asset: 'btc', window_days: 365 } });
    const env = res.structuredContent as Noted<{ volume_profile: { total_volume: number; volume_source: string; candles_of_other_volume_sources: number } }>;
    const all = (await snapshot.candles('bitcoin', { interval: 'daily' })).candles;
    const window = all.filter((c) => c.date >= addDays(all.at(-1)!.date, -365));
    const yahoo = window.filter((c) => c.source === 'snapshot:yahoo');
    const cc = window.filter((c) => c.source === 'snapshot:cryptocompare');
    expect(yahoo.length).toBeGreaterThan(0);
    expect(env.data.volume_profile.volume_source).toContain(CRYPTOCOMPARE);
    expect(env.data.volume_profile.candles_of_other_volume_sources).toBe(yahoo.length);
    expect(env.data.volume_profile.total_volume).toBeCloseTo(cc.reduce((a, c) => a + (c.volume_usd ?? 0), 0), -2);
    expect(env.metadata.notes?.join(' ')).toContain(`the ${yahoo.length} days from ${yahoo[0]!.date} to ${yahoo.at(-1)!.date} come from snapshot:yahoo`);
  });
});
