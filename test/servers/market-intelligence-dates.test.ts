// What market-intelligence hands the gateway about dates: data_as_of is the oldest date any figure
// rests on, each quote has its own as_of, and mixed dates are stated in one note (metadata.notes).
// Handlers are called directly on the snapshot (the gateway copies `notes` to metadata.notes).
import { describe, expect, it } from 'vitest';
import { callHandler } from '../helpers/handlers.ts';

describe('dates on market answers', () => {
  it('get_prices for BTC, ETH and SOL is as of the oldest quote (ETH/SOL 2025-02-11, not BTC\'s 2025-12-09), and says so', async () => {
    const out = await callHandler('market-intelligence', 'get_prices', { assets: ['BTC', 'ETH', 'SOL'] });
    const prices = (out.data as { prices: { symbol: string; as_of: string }[] }).prices;
    expect(Object.fromEntries(prices.map((p) => [p.symbol.toUpperCase(), p.as_of]))).toEqual({ BTC: '2025-12-09', ETH: '2025-02-11', SOL: '2025-02-11' });
    expect(out.data_as_of).toBe('2025-02-11');
    expect(out.notes).toHaveLength(1);
    expect(out.notes![0]).toMatch(/BTC as of 2025-12-09; ETH, SOL as of 2025-02-11/);
  });

  it('one asset, one date: no note', async () => {
    const out = await callHandler('market-intelligence', 'get_prices', { assets: ['BTC'] });
    expect(out.data_as_of).toBe('2025-12-09');
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
