// What market-intelligence hands the gateway about dates: data_as_of is the oldest date any figure
// rests on, each quote has its own as_of, and mixed dates are stated in one note (metadata.notes).
// Handlers are called directly on the snapshot (the gateway copies `notes` to metadata.notes).
import { describe, expect, it } from 'vitest';
import { loadSnapshot } from '../../server/providers/market/snapshot.ts';
import { callHandler } from '../helpers/handlers.ts';

describe('dates on market answers', () => {
  it('get_prices for BTC, ETH and SOL: each quote and market cap carries its own day, data_as_of is the oldest, one note names them', async () => {
    const snap = loadSnapshot();
    const out = await callHandler('market-intelligence', 'get_prices', { assets: ['BTC', 'ETH', 'SOL'] });
    type Q = { symbol: string; as_of: string; market_cap_usd: number | null; market_cap_as_of: string | null };
    const prices = (out.data as { prices: Q[] }).prices;
    expect(Object.fromEntries(prices.map((p) => [p.symbol.toUpperCase(), p.as_of]))).toEqual({ BTC: '2025-12-09', ETH: '2025-02-11', SOL: '2025-02-11' });
    const days = new Set<string>(prices.map((p) => p.as_of));
    for (const p of prices) {
      const id = p.symbol.toUpperCase() === 'BTC' ? 'bitcoin' : p.symbol.toUpperCase() === 'ETH' ? 'ethereum' : 'solana';
      const sameDay = snap.series[id]!.market_cap_usd.at(-1);
      if (sameDay != null) expect(p).toMatchObject({ market_cap_usd: sameDay, market_cap_as_of: p.as_of });
      else expect(p).toMatchObject({ market_cap_usd: snap.market_caps.usd[id], market_cap_as_of: snap.market_caps.as_of });
      if (p.market_cap_as_of) days.add(p.market_cap_as_of);
    }
    expect(out.data_as_of).toBe([...days].sort()[0]);
    // One note names the dates (a second one says the volumes count different things).
    const dated = out.notes!.filter((n) => n.startsWith('Figures rest on different dates'));
    expect(dated).toHaveLength(1);
    expect(dated[0]).toMatch(/BTC as of 2025-12-09/);
    expect(dated[0]).toMatch(/ETH, SOL as of 2025-02-11/);
  });

  it('an asset the 2021 market-cap list does not hold says market cap is not covered', async () => {
    const out = await callHandler('market-intelligence', 'get_prices', { assets: ['aptos'] });
    const q = (out.data as { prices: { market_cap_usd: number | null; market_cap_note: string }[] }).prices[0]!;
    expect(q.market_cap_usd).toBeNull();
    expect(q.market_cap_note).toMatch(/^not covered/);
  });

  it('one asset, one date: no note', async () => {
    const out = await callHandler('market-intelligence', 'get_prices', { assets: ['aptos'] });
    expect(out.notes ?? []).toEqual([]);
  });

  it('get_market_overview is as of its oldest part (market cap 2021-12-31) and names each part\'s date in one note', async () => {
    const out = await callHandler('market-intelligence', 'get_market_overview', {});
    const d = out.data as { market_cap: { as_of: string }; breadth_24h: { as_of: string }; defi_tvl: { as_of: string } };
    expect(out.data_as_of).toBe('2021-12-31');
    expect(out.notes).toHaveLength(1);
    for (const day of [d.market_cap.as_of, d.breadth_24h.as_of, d.defi_tvl.as_of]) expect(out.notes![0]).toContain(day);
  });
});

describe('search_assets by market relevance', () => {
  it('"bitcoin" lists Bitcoin first and every ranked asset named so before an unranked token calling itself BITCOIN', async () => {
    const out = await callHandler('market-intelligence', 'search_assets', { query: 'bitcoin', limit: 20 });
    const ids = (out.data as { assets: { id: string }[] }).assets.map((a) => a.id);
    const snap = loadSnapshot();
    const rank = new Map(snap.assets.map((a) => [a.id, a.market_cap_rank ?? null]));
    expect(ids[0]).toBe('bitcoin');
    expect(rank.get(ids[1]!)).not.toBeNull();
    const firstUnranked = ids.findIndex((id) => rank.get(id) == null);
    expect(ids.slice(firstUnranked).every((id) => rank.get(id) == null)).toBe(true);
  });
});
