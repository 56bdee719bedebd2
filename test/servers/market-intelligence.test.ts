// market-intelligence over the real gateway and the SDK client, on the snapshot. Every number
// checked here is recomputed independently from the raw CSVs in data/raw (not from the built
// snapshot), so a build or tool bug that changes a number fails the test.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawCsv } from '../helpers/raw-csv.ts';
import { toolSuite, type Envelope, type ToolSuite } from '../helpers/tools.ts';
import { balanceOf, mcpClient, post, startTestService, toolCall } from '../helpers/service.ts';

/** Rows of a raw CSV, each with its day. */
const rawRows = (file: string) => rawCsv(file) as (Record<string, string> & { date: string })[];

let suite: ToolSuite;
let db: ToolSuite['db'];
let svc: ToolSuite['svc'];
let key: string;
let accountId: string;
let call: ToolSuite['call'];

beforeAll(async () => {
  suite = await toolSuite('market-intelligence', 1000);
  ({ db, svc, key, accountId, call } = suite);
});
afterAll(async () => {
  await suite?.close();
});

describe('get_prices', () => {
  it("BTC's price is CryptoCompare's last close, with the 7-day change computed from the raw CSV", async () => {
    const btc = rawRows('ohlcv/btc_usd_daily_2010_2025.csv');
    const last = btc[btc.length - 1]!;
    const weekAgo = btc.find((r) => r.date === '2025-12-02')!;
    const env = await call<{ prices: { asset_id: string; price_usd: number; change_7d_pct: number; as_of: string; source: string }[] }>('get_prices', {
      assets: ['BTC'],
    });
    const q = env.data.prices[0]!;
    expect(last.date).toBe('2025-12-09');
    expect(q).toMatchObject({ asset_id: 'bitcoin', price_usd: Number(last.close), as_of: '2025-12-09', source: 'snapshot:cryptocompare' });
    expect(q.change_7d_pct).toBeCloseTo(((Number(last.close) - Number(weekAgo.close)) / Number(weekAgo.close)) * 100, 9);
    // The answer is as old as its oldest figure: BTC's market cap is the 2021-12-31 list's.
    expect(env.metadata).toMatchObject({ source: 'snapshot', data_as_of: '2021-12-31', credits_used: 1 });
  });

  it("ETH's price and 24h change come from Yahoo's rows for 2025-02-11 and 2025-02-10", async () => {
    const eth = rawRows('ohlcv/yahoo_usd_daily_2014_2025.csv').filter((r) => r.symbol === 'ETH');
    const d1 = eth.find((r) => r.date === '2025-02-11')!;
    const d0 = eth.find((r) => r.date === '2025-02-10')!;
    const env = await call<{ prices: { price_usd: number; change_24h_pct: number; volume_24h_usd: number }[] }>('get_prices', { assets: ['ethereum'] });
    expect(env.data.prices[0]!.price_usd).toBe(Number(d1.close));
    expect(env.data.prices[0]!.volume_24h_usd).toBe(Number(d1.volume_usd));
    expect(env.data.prices[0]!.change_24h_pct).toBeCloseTo(((Number(d1.close) - Number(d0.close)) / Number(d0.close)) * 100, 9);
  });

  it('an unknown asset is 404 NOT_FOUND with close matches, and costs nothing', async () => {
    const before = await balanceOf(db, accountId);
    const res = await post(`${svc.url}/mcp/market-intelligence`, toolCall('get_prices', { assets: ['bitcoinn'] }), { 'x-api-key': key });
    expect(res.status).toBe(404);
    const err = (res.body as { error: { code: string; details: { missing: { close_matches: { id: string }[] }[] } } }).error;
    expect(err.code).toBe('NOT_FOUND');
    expect(err.details.missing[0]!.close_matches.map((m) => m.id)).toContain('bitcoin');
    expect(await balanceOf(db, accountId)).toBe(before);
  });

  it('more than 50 assets is 400 INVALID_PARAMS', async () => {
    const res = await post(`${svc.url}/mcp/market-intelligence`, toolCall('get_prices', { assets: Array.from({ length: 51 }, () => 'btc') }), {
      'x-api-key': key,
    });
    expect(res.status).toBe(400);
    expect((res.body as { error: { code: string } }).error.code).toBe('INVALID_PARAMS');
  });
});

describe('get_ohlcv', () => {
  it('daily SOL candles equal the raw Yahoo rows, oldest first, paginated with a cursor', async () => {
    const sol = rawRows('ohlcv/yahoo_usd_daily_2014_2025.csv').filter((r) => r.symbol === 'SOL' && r.date >= '2024-01-01' && r.date <= '2024-01-31');
    const first = await call<{ total: number; candles: { date: string; open: number; close: number; source: string }[] }>('get_ohlcv', {
      asset: 'sol',
      from: '2024-01-01',
      to: '2024-01-31',
      limit: 20,
    });
    expect(first.data.total).toBe(31);
    expect(first.data.candles.map((c) => c.date)).toEqual(sol.slice(0, 20).map((r) => r.date));
    expect(first.data.candles[0]).toMatchObject({ open: Number(sol[0]!.open), close: Number(sol[0]!.close), source: 'snapshot:yahoo' });
    const second = await call<{ candles: { date: string }[] }>('get_ohlcv', {
      asset: 'sol',
      from: '2024-01-01',
      to: '2024-01-31',
      limit: 20,
      cursor: first.metadata.next_cursor,
    });
    expect(second.data.candles.map((c) => c.date)).toEqual(sol.slice(20).map((r) => r.date));
    expect(second.metadata.next_cursor).toBeUndefined();
  });

  it('weekly candles aggregate Monday-to-Sunday: first open, max high, min low, last close', async () => {
    const btc = rawRows('ohlcv/yahoo_usd_daily_2014_2025.csv').filter((r) => r.symbol === 'BTC' && r.date >= '2025-01-06' && r.date <= '2025-01-12');
    const env = await call<{ candles: { date: string; open: number; high: number; low: number; close: number }[] }>('get_ohlcv', {
      asset: 'bitcoin',
      interval: 'weekly',
      from: '2025-01-06',
      to: '2025-01-12',
    });
    expect(env.data.candles).toHaveLength(1);
    expect(env.data.candles[0]).toMatchObject({
      date: '2025-01-06',
      open: Number(btc[0]!.open),
      high: Math.max(...btc.map((r) => Number(r.high))),
      low: Math.min(...btc.map((r) => Number(r.low))),
      close: Number(btc[6]!.close),
    });
  });

  it('a day that is not on the calendar (2025-02-30) is 400 INVALID_PARAMS naming `from`, and costs nothing', async () => {
    const before = await balanceOf(db, accountId);
    const res = await post(`${svc.url}/mcp/market-intelligence`, toolCall('get_ohlcv', { asset: 'bitcoin', from: '2025-02-30' }), { 'x-api-key': key });
    expect(res.status).toBe(400);
    const err = (res.body as { error: { code: string; details: { issues: { path: unknown; message: string }[] } } }).error;
    expect(err.code).toBe('INVALID_PARAMS');
    expect(JSON.stringify(err.details.issues)).toContain('from');
    expect(await balanceOf(db, accountId)).toBe(before);
  });

  it('a range where from is after to is 400 INVALID_PARAMS', async () => {
    const res = await post(`${svc.url}/mcp/market-intelligence`, toolCall('get_ohlcv', { asset: 'btc', from: '2024-02-01', to: '2024-01-01' }), {
      'x-api-key': key,
    });
    expect(res.status).toBe(400);
  });
});

describe('search_assets, get_market_overview, get_top_movers', () => {
  it('search_assets resolves names, tickers and ids case-insensitively, priced assets first, for free', async () => {
    const env = await call<{ assets: { id: string; has_prices: boolean }[] }>('search_assets', { query: 'SOLANA' });
    expect(env.data.assets[0]).toMatchObject({ id: 'solana', has_prices: true });
    expect(env.metadata.credits_used).toBe(0);
  });

  it('the overview states each part with its own as-of date and the DeFi TVL method', async () => {
    const env = await call<{
      market_cap: { as_of: string; btc_dominance_pct: number; assets_covered: number };
      breadth_24h: { as_of: string; advancers: number; decliners: number; assets: number };
      defi_tvl: { as_of: string; total_usd: number };
    }>('get_market_overview', {});
    expect(env.data.market_cap.as_of).toBe('2021-12-31');
    expect(env.data.market_cap.assets_covered).toBeGreaterThan(100);
    expect(env.data.market_cap.btc_dominance_pct).toBeGreaterThan(30);
    expect(env.data.breadth_24h.advancers + env.data.breadth_24h.decliners).toBeLessThanOrEqual(env.data.breadth_24h.assets);
    expect(env.data.defi_tvl.as_of).toBe('2025-12-19');
    expect(env.metadata.data_as_of).toBe(env.data.market_cap.as_of);
  });

  it('top movers are sorted, all on one day, and respect the volume floor', async () => {
    const env = await call<{ as_of: string; gainers: { change_pct: number; volume_24h_usd: number }[]; losers: { change_pct: number }[] }>('get_top_movers', {
      window: '7d',
      min_volume_usd: 5_000_000,
      limit: 5,
    });
    const g = env.data.gainers.map((x) => x.change_pct);
    expect(g).toEqual([...g].sort((a, b) => b - a));
    expect(env.data.gainers.every((x) => x.volume_24h_usd >= 5_000_000)).toBe(true);
    expect(env.data.losers[0]!.change_pct).toBeLessThanOrEqual(env.data.gainers[env.data.gainers.length - 1]!.change_pct);
  });

  it('a gainer rose and a loser fell: no asset with a positive 7d change is listed under losers (FLOKI +0.50% was)', async () => {
    for (const window of ['24h', '7d', '30d']) {
      const env = await call<{ gainers: { change_pct: number }[]; losers: { id: string; change_pct: number }[] }>('get_top_movers', { window, limit: 50, min_volume_usd: 0 });
      expect(env.data.gainers.every((x) => x.change_pct > 0)).toBe(true);
      expect(env.data.losers.every((x) => x.change_pct < 0), `${window} losers: ${JSON.stringify(env.data.losers.filter((x) => x.change_pct >= 0))}`).toBe(true);
      const l = env.data.losers.map((x) => x.change_pct);
      expect(l).toEqual([...l].sort((a, b) => a - b));
    }
  });
});

describe('MARKET_DATA=live', () => {
  it('answers from a CoinGecko-compatible API, and from the snapshot (saying so) when the API fails', async () => {
    const http = await import('node:http');
    let failing = false;
    const upstream = http.createServer((req, res) => {
      if (failing) return void res.writeHead(500).end('{}');
      if (req.url?.startsWith('/coins/markets')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify([
            {
              id: 'bitcoin', symbol: 'btc', name: 'Bitcoin', current_price: 101234.5, market_cap: 2.0e12, total_volume: 3.1e10,
              price_change_percentage_24h_in_currency: 1.5, price_change_percentage_7d_in_currency: -2.25, price_change_percentage_30d_in_currency: 10,
              last_updated: '2026-11-21T10:00:00.000Z',
            },
          ]),
        );
        return;
      }
      res.writeHead(404).end('{}');
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
    const port = (upstream.address() as { port: number }).port;
    const live = await startTestService(db.url, { MARKET_DATA: 'live', COINGECKO_BASE_URL: `http://127.0.0.1:${port}`, COINGECKO_TIMEOUT_MS: '2000' });
    try {
      const c = await mcpClient(live.url, 'market-intelligence', key);
      const ok = (await c.callTool({ name: 'get_prices', arguments: { assets: ['btc'] } })).structuredContent as Envelope<{ prices: { price_usd: number; source: string }[] }>;
      expect(ok.data.prices[0]).toMatchObject({ price_usd: 101234.5, source: 'live:coingecko' });
      expect(ok.metadata.source).toBe('live:coingecko');
      failing = true;
      const fb = (await c.callTool({ name: 'get_prices', arguments: { assets: ['eth'] } })).structuredContent as Envelope<{ prices: { price_usd: number; source: string; as_of: string }[] }>;
      expect(fb.data.prices[0]!.as_of).toBe('2025-02-11');
      expect(fb.data.prices[0]!.source).toMatch(/^snapshot:yahoo \(fallback: live:coingecko /);
      expect(fb.metadata.source).toMatch(/fallback: live:coingecko/);
      await c.close();
    } finally {
      await live.close();
      await new Promise((r) => upstream.close(r));
    }
  });
});

describe('get_asset_metrics and get_correlation_matrix', () => {
  /** Independent reference: log returns of Yahoo closes between two days (inclusive). */
  function yahooCloses(symbol: string, from: string, to: string): Map<string, number> {
    return new Map(
      rawRows('ohlcv/yahoo_usd_daily_2014_2025.csv')
        .filter((r) => r.symbol === symbol && r.date >= from && r.date <= to)
        .map((r) => [r.date, Number(r.close)] as const),
    );
  }
  const logReturns = (closes: number[]) => closes.slice(1).map((c, i) => Math.log(c / closes[i]!));
  const std = (xs: number[]) => {
    const m = xs.reduce((a, b) => a + b, 0) / xs.length;
    return Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1));
  };
  const corr = (a: number[], b: number[]) => {
    const ma = a.reduce((x, y) => x + y, 0) / a.length;
    const mb = b.reduce((x, y) => x + y, 0) / b.length;
    let sab = 0, saa = 0, sbb = 0;
    for (let i = 0; i < a.length; i++) {
      sab += (a[i]! - ma) * (b[i]! - mb);
      saa += (a[i]! - ma) ** 2;
      sbb += (b[i]! - mb) ** 2;
    }
    return sab / Math.sqrt(saa * sbb);
  };

  it("ETH's 365-day volatility, drawdown and BTC correlation match the raw Yahoo closes; costs 2 credits", async () => {
    const eth = yahooCloses('ETH', '2024-02-12', '2025-02-11');
    const btc = yahooCloses('BTC', '2024-02-12', '2025-02-11');
    const ethCloses = [...eth.values()];
    const days = [...eth.keys()];
    let peak = -Infinity, worst = 0;
    for (const c of ethCloses) {
      peak = Math.max(peak, c);
      worst = Math.min(worst, c / peak - 1);
    }
    const env = await call<{
      realised_volatility: { annualised: number };
      max_drawdown: { depth: number };
      vs_benchmark: { correlation: number; beta: number };
    }>('get_asset_metrics', { asset: 'eth', window_days: 365 });
    expect(env.metadata).toMatchObject({ credits_used: 2, data_as_of: '2025-02-11' });
    expect(env.data.realised_volatility.annualised).toBeCloseTo(std(logReturns(ethCloses)) * Math.sqrt(365), 9);
    expect(-Math.abs(env.data.max_drawdown.depth)).toBeCloseTo(worst, 9);
    const rb = logReturns(days.map((d) => btc.get(d)!));
    expect(env.data.vs_benchmark.correlation).toBeCloseTo(corr(logReturns(ethCloses), rb), 9);
  });

  // Issue 35 item 6: ETH fell 2.6% over the year; the answer said "+18.9% annualised return" (a mean
  // of simple returns × 365, not named so) and Sharpe +0.29 on a second volatility (of simple returns).
  it("ETH's return over the year is its geometric return (-2.6%), its Sharpe ratio is negative and divides by the one volatility of the answer (log returns)", async () => {
    const eth = [...yahooCloses('ETH', '2024-02-12', '2025-02-11').values()];
    const total = eth[eth.length - 1]! / eth[0]! - 1;
    const env = await call<{
      realised_volatility: { daily: number; annualised: number };
      returns: { total: number; annualised_geometric: number; mean_daily_log: number };
      sharpe: Record<string, unknown> & { sharpe: number };
    }>('get_asset_metrics', { asset: 'eth', window_days: 365 });
    expect(env.data.returns.total).toBeCloseTo(total, 12);
    expect(env.data.returns.total).toBeCloseTo(-0.0257, 4);
    // 365 days spanned: the annualised geometric return is the total.
    expect(env.data.returns.annualised_geometric).toBeCloseTo(total, 12);
    const meanLog = logReturns(eth).reduce((a, b) => a + b, 0) / (eth.length - 1);
    expect(env.data.returns.mean_daily_log).toBeCloseTo(meanLog, 14);
    expect(env.data.sharpe.sharpe).toBeCloseTo((meanLog / env.data.realised_volatility.daily) * Math.sqrt(365), 12);
    expect(env.data.sharpe.sharpe).toBeLessThan(0);
    // One volatility per answer: the Sharpe block carries none of its own.
    expect(Object.keys(env.data.sharpe).sort()).toEqual(['method', 'risk_free_rate', 'sharpe']);
  });

  it('data_as_of is the oldest figure: BTC against an ETH benchmark ending 2025-02-11 is as of 2025-02-11, with a note', async () => {
    const env = await call<{ window: { to: string }; vs_benchmark: { to: string } }>('get_asset_metrics', { asset: 'btc', benchmark: 'eth', window_days: 365 });
    expect(env.data.window.to).toBe('2025-12-09');
    expect(env.data.vs_benchmark.to).toBe('2025-02-11');
    expect(env.metadata.data_as_of).toBe('2025-02-11');
    expect((env.metadata as { notes?: string[] }).notes?.join(' ')).toContain('beta and correlation to ethereum stop at 2025-02-11');
  });

  it('the correlation matrix is symmetric with a unit diagonal and ends on the last common day', async () => {
    const env = await call<{ ids: string[]; matrix: number[][]; window: { to: string } }>('get_correlation_matrix', {
      assets: ['btc', 'eth', 'sol'],
      window_days: 90,
    });
    expect(env.data.ids).toEqual(['bitcoin', 'ethereum', 'solana']);
    expect(env.data.window.to).toBe('2025-02-11');
    for (let i = 0; i < 3; i++) {
      expect(env.data.matrix[i]![i]).toBeCloseTo(1, 12);
      for (let j = 0; j < 3; j++) expect(env.data.matrix[i]![j]).toBeCloseTo(env.data.matrix[j]![i]!, 12);
    }
  });

  it('a window longer than the common history is 400 INVALID_PARAMS and costs nothing', async () => {
    const before = await balanceOf(db, accountId);
    const res = await post(`${svc.url}/mcp/market-intelligence`, toolCall('get_correlation_matrix', { assets: ['btc', 'pepe'], window_days: 1000 }), {
      'x-api-key': key,
    });
    expect(res.status).toBe(400);
    expect(await balanceOf(db, accountId)).toBe(before);
  });
});

describe('MARKET_DATA=live against an API that serves only /simple/price', () => {
  it('quotes from /simple/price (no 7d/30d changes) and says so in the source', async () => {
    const http = await import('node:http');
    const paths: string[] = [];
    const upstream = http.createServer((req, res) => {
      paths.push(req.url?.split('?')[0] ?? '');
      if (req.url?.startsWith('/simple/price')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({ ethereum: { usd: 3210.5, usd_market_cap: 3.8e11, usd_24h_vol: 1.2e10, usd_24h_change: -1.25, last_updated_at: 1795000000 } }),
        );
        return;
      }
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
    const port = (upstream.address() as { port: number }).port;
    const live = await startTestService(db.url, { MARKET_DATA: 'live', COINGECKO_BASE_URL: `http://127.0.0.1:${port}` });
    try {
      const c = await mcpClient(live.url, 'market-intelligence', key);
      const env = (await c.callTool({ name: 'get_prices', arguments: { assets: ['eth'] } })).structuredContent as Envelope<{
        prices: { price_usd: number; change_24h_pct: number; change_7d_pct: number | null; source: string; as_of: string }[];
      }>;
      expect(env.data.prices[0]).toMatchObject({
        price_usd: 3210.5,
        change_24h_pct: -1.25,
        change_7d_pct: null,
        source: 'live:coingecko (simple/price)',
        as_of: new Date(1795000000 * 1000).toISOString(),
      });
      expect(paths).toEqual(['/coins/markets', '/simple/price']);
      await c.close();
    } finally {
      await live.close();
      await new Promise((r) => upstream.close(r));
    }
  });
});

// Issue 35 items 6 (volume sources) and 8 (validation and messages).
describe('volumes name their source; batches, ranges and weeks say what they hold', () => {
  it('get_prices names what each volume counts, warns when a single-market volume sits beside an aggregate, and answers the known ids beside an unknown one', async () => {
    const env = await call<{ prices: { asset_id: string; volume_source: string | null }[]; unknown: { asset: string; close_matches: unknown[] }[] }>('get_prices', {
      assets: ['bitcoin', 'ethereum', 'notacoin'],
    });
    expect(env.data.prices.map((p) => p.asset_id)).toEqual(['bitcoin', 'ethereum']);
    expect(env.data.prices[0]!.volume_source).toContain('CryptoCompare daily BTC/USD volume: USD-quoted markets only');
    expect(env.data.prices[1]!.volume_source).toContain('an aggregate over exchanges');
    expect(env.data.unknown).toEqual([expect.objectContaining({ asset: 'notacoin' })]);
    const notes = (env.metadata as { notes?: string[] }).notes?.join(' ') ?? '';
    expect(notes).toContain('Volumes count different things: BTC from a single market or pair, ETH aggregated over exchanges');
    expect(notes).toContain('unknown here: notacoin');
  });

  it('get_prices with only unknown ids is still a 404 naming them, free', async () => {
    const res = await post(`${svc.url}/mcp/market-intelligence`, toolCall('get_prices', { assets: ['notacoin'] }), { 'x-api-key': key });
    expect(res.status).toBe(404);
  });

  it('get_ohlcv before the data starts is a 404 giving both ends of the data', async () => {
    const res = await post(`${svc.url}/mcp/market-intelligence`, toolCall('get_ohlcv', { asset: 'bitcoin', from: '2005-01-01', to: '2005-02-01' }), { 'x-api-key': key });
    expect(res.status).toBe(404);
    const error = (res.body as { error: { message: string; details: Record<string, unknown> } }).error;
    expect(error.message).toContain('its data runs from 2010-07-17 to 2025-12-09');
    expect(error.details).toMatchObject({ data_from: '2010-07-17', as_of: '2025-12-09' });
  });

  it('get_ohlcv with a far `to` says where the data stops, and flags the partial last week', async () => {
    const env = await call<{ candles: { date: string; partial_week_days?: number }[] }>('get_ohlcv', { asset: 'bitcoin', interval: 'weekly', from: '2025-11-24', to: '2027-01-01' });
    expect(env.data.candles.map((c) => [c.date, c.partial_week_days])).toEqual([
      ['2025-11-24', undefined],
      ['2025-12-01', undefined],
      ['2025-12-08', 2],
    ]);
    const notes = (env.metadata as { notes?: string[] }).notes ?? [];
    expect(notes).toContain("to 2027-01-01 is after the data's last day: the candles stop at 2025-12-09.");
    expect(notes.join(' ')).toContain('The week of 2025-12-08 holds 2 of its 7 days');
  });
});
