// The live CoinGecko provider and the live→snapshot fallback, over real HTTP against a loopback
// server that replays CoinGecko's documented response shapes, errors, slow answers and 429s.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { FallbackProvider } from '../../server/providers/market/fallback.ts';
import { CoinGeckoProvider, keyHeaderFor } from '../../server/providers/market/live.ts';
import type { CoinGeckoOptions } from '../../server/providers/market/live.ts';
import { ProviderError } from '../../server/errors.ts';
import type {
  AssetEntry,
  AssetRegistry,
  CandleQuery,
  CandleSeries,
  GlobalMetrics,
  MarketDataProvider,
  Quote,
} from '../../server/providers/market/types.ts';

// ---------------------------------------------------------------------------------------------
// Fixtures, written by hand from docs.coingecko.com (v3.0.1 reference: /coins/markets,
// /coins/{id}/market_chart, /coins/{id}/ohlc, /global, "Common Errors & Rate Limit"). The
// bitcoin market row, the first two market_chart points and the /global field set are the docs'
// examples; the other values are illustrative of early April 2024 and chosen so that the
// expected candles below can be checked by hand.
// ---------------------------------------------------------------------------------------------

/** The replay clock: 2024-04-10 11:47 UTC, so "today" is 2024-04-10. */
const NOW = Date.parse('2024-04-10T11:47:00Z');
const at = (iso: string) => Date.parse(iso);

const MARKETS = [
  {
    id: 'bitcoin',
    symbol: 'btc',
    name: 'Bitcoin',
    image: 'https://assets.coingecko.com/coins/images/1/large/bitcoin.png?1696501400',
    current_price: 70187,
    market_cap: 1381651251183,
    market_cap_rank: 1,
    fully_diluted_valuation: 1474623675796,
    total_volume: 20154184933,
    high_24h: 70215,
    low_24h: 68060,
    price_change_24h: 2126.88,
    price_change_percentage_24h: 3.12502,
    market_cap_change_24h: 44287678051,
    market_cap_change_percentage_24h: 3.31157,
    circulating_supply: 19675987,
    total_supply: 21000000,
    max_supply: 21000000,
    ath: 73738,
    ath_change_percentage: -4.77063,
    ath_date: '2024-03-14T07:10:36.635Z',
    atl: 67.81,
    atl_change_percentage: 103455.83335,
    atl_date: '2013-07-06T00:00:00.000Z',
    roi: null,
    last_updated: '2024-04-07T16:49:31.736Z',
    price_change_percentage_24h_in_currency: 3.1250213,
    price_change_percentage_30d_in_currency: 4.7191201,
    price_change_percentage_7d_in_currency: 0.8466812,
  },
  {
    id: 'ethereum',
    symbol: 'eth',
    name: 'Ethereum',
    image: 'https://assets.coingecko.com/coins/images/279/large/ethereum.png?1696501628',
    current_price: 3462.41,
    market_cap: 415869015385,
    market_cap_rank: 2,
    fully_diluted_valuation: 415869015385,
    total_volume: 11523484570,
    high_24h: 3473.87,
    low_24h: 3372.22,
    price_change_24h: 81.62,
    price_change_percentage_24h: 2.41183,
    market_cap_change_24h: 9582413325,
    market_cap_change_percentage_24h: 2.35853,
    circulating_supply: 120074521.6,
    total_supply: 120074521.6,
    max_supply: null,
    ath: 4878.26,
    ath_change_percentage: -29.0163,
    ath_date: '2021-11-10T14:24:19.604Z',
    atl: 0.432979,
    atl_change_percentage: 799456.47186,
    atl_date: '2015-10-20T00:00:00.000Z',
    roi: { times: 65.49, currency: 'btc', percentage: 6549.0 },
    last_updated: '2024-04-07T16:49:43.290Z',
    price_change_percentage_24h_in_currency: 2.4118342,
    price_change_percentage_30d_in_currency: -11.5371904,
    price_change_percentage_7d_in_currency: -3.1011288,
  },
  {
    // A listed coin without a current price (CoinGecko sends nulls when no market trades it).
    id: 'bitconnect',
    symbol: 'bcc',
    name: 'Bitconnect',
    image: 'https://assets.coingecko.com/coins/images/834/large/bitconnect.png?1696501984',
    current_price: null,
    market_cap: 0,
    market_cap_rank: null,
    fully_diluted_valuation: null,
    total_volume: 0,
    high_24h: null,
    low_24h: null,
    price_change_24h: null,
    price_change_percentage_24h: null,
    market_cap_change_24h: null,
    market_cap_change_percentage_24h: null,
    circulating_supply: 0,
    total_supply: 28099971,
    max_supply: 28000000,
    ath: 463.01,
    ath_change_percentage: -100,
    ath_date: '2017-12-29T00:00:00.000Z',
    atl: 0.0018,
    atl_change_percentage: -100,
    atl_date: '2019-03-05T00:00:00.000Z',
    roi: null,
    last_updated: null,
    price_change_percentage_24h_in_currency: null,
    price_change_percentage_30d_in_currency: null,
    price_change_percentage_7d_in_currency: null,
  },
];

/**
 * bitcoin /market_chart?interval=daily: one point per day at 00:00 UTC, then the latest price
 * ("now") as the last point; market caps and volumes at the same instants.
 */
const CHART_POINTS: [string, number, number, number][] = [
  // instant, price, market cap, 24 h volume
  ['2024-03-31T00:00:00Z', 69702.3087473573, 1370247487960.09, 16408802301.8374],
  ['2024-04-01T00:00:00Z', 71246.9514406015, 1401370211582.37, 19723005998.215],
  ['2024-04-02T00:00:00Z', 69649.8, 1370305117201.5, 34712133112.5],
  ['2024-04-03T00:00:00Z', 65463.0, 1288115660380.2, 45013440228.1],
  ['2024-04-04T00:00:00Z', 65980.81, 1298433185544.6, 35145618371.0],
  ['2024-04-05T00:00:00Z', 68508.84, 1348235513370.9, 36431052553.3],
  ['2024-04-06T00:00:00Z', 67837.64, 1335086411201.4, 30541712432.9],
  ['2024-04-07T00:00:00Z', 68896.11, 1355958719804.7, 16871264133.4],
  ['2024-04-08T00:00:00Z', 69362.55, 1365176410922.1, 14923811017.6],
  ['2024-04-09T00:00:00Z', 71631.1, 1409873540199.0, 31436781145.2],
  ['2024-04-10T00:00:00Z', 69139.02, 1360869372215.8, 39230485712.0],
  ['2024-04-10T11:47:00Z', 70612.44, 1389871402733.5, 36127703315.7],
];
const MARKET_CHART = {
  prices: CHART_POINTS.map(([iso, price]) => [at(iso), price]),
  market_caps: CHART_POINTS.map(([iso, , cap]) => [at(iso), cap]),
  total_volumes: CHART_POINTS.map(([iso, , , volume]) => [at(iso), volume]),
};

/**
 * bitcoin /ohlc with 4-hour candles (what 3–30 days gives); each timestamp is the candle's
 * close time. The first candle (20:00–24:00 on 2024-04-08) covers only the end of that day.
 */
const OHLC = [
  [at('2024-04-09T00:00:00Z'), 69380.0, 71700.0, 69300.0, 71631.1],
  [at('2024-04-09T04:00:00Z'), 71631.1, 71742.0, 71180.5, 71290.4],
  [at('2024-04-09T08:00:00Z'), 71290.4, 71415.0, 70630.2, 70702.9],
  [at('2024-04-09T12:00:00Z'), 70702.9, 70915.3, 69980.0, 70110.6],
  [at('2024-04-09T16:00:00Z'), 70110.6, 70340.1, 69410.8, 69522.7],
  [at('2024-04-09T20:00:00Z'), 69522.7, 69890.0, 68960.3, 69340.2],
  [at('2024-04-10T00:00:00Z'), 69340.2, 69455.0, 69010.4, 69139.02],
  [at('2024-04-10T04:00:00Z'), 69139.02, 69610.0, 69020.1, 69580.3],
  [at('2024-04-10T08:00:00Z'), 69580.3, 70120.0, 69470.0, 69998.7],
];

const GLOBAL = {
  data: {
    active_cryptocurrencies: 13690,
    upcoming_icos: 0,
    ongoing_icos: 49,
    ended_icos: 3376,
    markets: 1046,
    total_market_cap: { btc: 39003738.0847159, eth: 803832817.039939, usd: 2721226850772.63 },
    total_volume: { btc: 993675.225562481, eth: 20478757.4305252, usd: 69327091133.5457 },
    market_cap_percentage: { btc: 50.4465263233584, eth: 14.9228066918211, usdt: 3.92900641199819 },
    market_cap_change_percentage_24h_usd: 1.72179506060272,
    updated_at: 1712749620,
  },
};

const NOT_FOUND = { error: 'coin not found' };
const RATE_LIMITED = {
  status: {
    error_code: 429,
    error_message:
      "You've exceeded the Rate Limit. Please visit https://www.coingecko.com/en/api/pricing to subscribe to our API plans for higher rate limits.",
  },
};

// ---------------------------------------------------------------------------------------------
// The replay server: routes like CoinGecko's, plus a per-path script of replies for errors.
// ---------------------------------------------------------------------------------------------

interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Never answer: only the client's timeout ends the request. */
  hang?: boolean;
}

interface Seen {
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
}

let server: http.Server;
let baseUrl: string;
let seen: Seen[] = [];
let aborted = 0;
/** Replies to play, per path, before the normal routes answer again. */
let script = new Map<string, Reply[]>();

function route(path: string, query: URLSearchParams): Reply {
  if (path === '/api/v3/coins/markets') {
    const ids = new Set((query.get('ids') ?? '').split(','));
    const perPage = Number(query.get('per_page') ?? '100');
    return { status: 200, body: MARKETS.filter((row) => ids.has(row.id)).slice(0, perPage) };
  }
  if (path === '/api/v3/coins/bitcoin/market_chart') return { status: 200, body: MARKET_CHART };
  if (path === '/api/v3/coins/bitcoin/ohlc') return { status: 200, body: OHLC };
  if (path === '/api/v3/global') return { status: 200, body: GLOBAL };
  if (path.startsWith('/api/v3/coins/')) return { status: 404, body: NOT_FOUND };
  return { status: 404, body: { error: 'Not Found' } };
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://replay');
    seen.push({ path: url.pathname, query: url.searchParams, headers: req.headers });
    res.on('close', () => {
      if (!res.writableFinished) aborted++;
    });
    const reply = script.get(url.pathname)?.shift() ?? route(url.pathname, url.searchParams);
    if (reply.hang) return;
    res.writeHead(reply.status, { 'content-type': 'application/json; charset=utf-8', ...reply.headers });
    res.end(JSON.stringify(reply.body ?? {}));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v3`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

let clock = NOW;
let sleeps: number[] = [];

beforeEach(() => {
  seen = [];
  aborted = 0;
  script = new Map();
  clock = NOW;
  sleeps = [];
});

const requestsTo = (path: string) => seen.filter((request) => request.path === `/api/v3${path}`);

const ENTRIES: AssetEntry[] = [
  { id: 'bitcoin', symbol: 'BTC', name: 'Bitcoin', aliases: ['xbt'], platforms: [], has_prices: true },
  { id: 'ethereum', symbol: 'ETH', name: 'Ethereum', aliases: ['ether'], platforms: [], has_prices: true },
];
const registry: AssetRegistry = {
  get: (id) => ENTRIES.find((entry) => entry.id === id.toLowerCase()),
  resolve: () => [],
  suggest: () => [],
  search: () => [],
};

function provider(overrides: Partial<CoinGeckoOptions> = {}): CoinGeckoProvider {
  return new CoinGeckoProvider({
    registry,
    baseUrl,
    timeoutMs: 2000,
    retries: 2,
    cacheTtlMs: 60_000,
    now: () => clock,
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...overrides,
  });
}

async function providerError(promise: Promise<unknown>): Promise<ProviderError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

// ---------------------------------------------------------------------------------------------

describe('CoinGeckoProvider: mapping the documented shapes', () => {
  it('maps /coins/markets rows to quotes: price, 24h/7d/30d changes, volume, market cap, ISO as_of', async () => {
    const quotes = await provider().quotes(['ethereum', 'bitcoin']);
    expect(quotes).toEqual([
      {
        asset_id: 'ethereum',
        symbol: 'ETH',
        name: 'Ethereum',
        price_usd: 3462.41,
        change_24h_pct: 2.4118342,
        change_7d_pct: -3.1011288,
        change_30d_pct: -11.5371904,
        volume_24h_usd: 11523484570,
        market_cap_usd: 415869015385,
        as_of: '2024-04-07T16:49:43.290Z',
        source: 'live:coingecko',
      },
      {
        asset_id: 'bitcoin',
        symbol: 'BTC',
        name: 'Bitcoin',
        price_usd: 70187,
        change_24h_pct: 3.1250213,
        change_7d_pct: 0.8466812,
        change_30d_pct: 4.7191201,
        volume_24h_usd: 20154184933,
        market_cap_usd: 1381651251183,
        as_of: '2024-04-07T16:49:31.736Z',
        source: 'live:coingecko',
      },
    ]);
    const [request] = requestsTo('/coins/markets');
    expect(request?.query.get('vs_currency')).toBe('usd');
    expect(request?.query.get('ids')).toBe('bitcoin,ethereum');
    expect(request?.query.get('price_change_percentage')).toBe('24h,7d,30d');
  });

  it('leaves out ids CoinGecko does not know and coins without a current price', async () => {
    const quotes = await provider().quotes(['bitcoin', 'no-such-coin', 'bitconnect']);
    expect(quotes.map((quote) => quote.asset_id)).toEqual(['bitcoin']);
  });

  it('asks /coins/markets for at most 250 ids per call', async () => {
    const ids = ['bitcoin', 'ethereum', ...Array.from({ length: 298 }, (_, i) => `coin-${i}`)];
    const quotes = await provider().quotes(ids);
    expect(quotes.map((quote) => quote.asset_id)).toEqual(['bitcoin', 'ethereum']);
    const calls = requestsTo('/coins/markets');
    expect(calls).toHaveLength(2);
    const sizes = calls.map((call) => (call.query.get('ids') ?? '').split(',').length).sort((a, b) => a - b);
    expect(sizes).toEqual([50, 250]);
    expect(calls.every((call) => call.query.get('per_page') === '250')).toBe(true);
  });

  it('maps /global to total market cap, BTC/ETH dominance, coverage and an ISO as_of', async () => {
    expect(await provider().global()).toEqual({
      total_market_cap_usd: 2721226850772.63,
      btc_dominance_pct: 50.4465263233584,
      eth_dominance_pct: 14.9228066918211,
      assets_covered: 13690,
      as_of: '2024-04-10T11:47:00.000Z',
      source: 'live:coingecko',
    });
  });

  it('builds daily candles: closes and volumes from market_chart, open/high/low from 4-hour ohlc where a day is fully covered', async () => {
    const series = await provider().candles('bitcoin', { from: '2024-04-01', interval: 'daily' });
    expect(series.asset_id).toBe('bitcoin');
    expect(series.source).toBe('live:coingecko');
    expect(series.as_of).toBe('2024-04-10T11:47:00.000Z');
    expect(series.candles.map((candle) => candle.date)).toEqual([
      '2024-04-01', '2024-04-02', '2024-04-03', '2024-04-04', '2024-04-05',
      '2024-04-06', '2024-04-07', '2024-04-08', '2024-04-09', '2024-04-10',
    ]);
    const byDate = new Map(series.candles.map((candle) => [candle.date, candle]));
    // Older days: the close is the price at the next 00:00, the open the previous close.
    expect(byDate.get('2024-04-01')).toEqual({
      date: '2024-04-01',
      open: 71246.9514406015,
      high: 71246.9514406015,
      low: 69649.8,
      close: 69649.8,
      volume_usd: 34712133112.5,
      source: 'live:coingecko',
    });
    // 2024-04-08: the ohlc candles start at 20:00 that day, too late to give its open.
    expect(byDate.get('2024-04-08')).toMatchObject({ open: 69362.55, high: 71631.1, low: 69362.55, close: 71631.1 });
    // 2024-04-09: six 4-hour candles cover the whole day.
    expect(byDate.get('2024-04-09')).toMatchObject({
      open: 71631.1,
      high: 71742.0,
      low: 68960.3,
      close: 69139.02,
      volume_usd: 39230485712.0,
    });
    // Today so far: ohlc until 08:00, the latest price (11:47) as the close, widening the high.
    expect(byDate.get('2024-04-10')).toMatchObject({
      open: 69139.02,
      high: 70612.44,
      low: 69020.1,
      close: 70612.44,
      volume_usd: 36127703315.7,
    });
    for (const candle of series.candles) {
      expect(candle.high).toBeGreaterThanOrEqual(Math.max(candle.open, candle.close));
      expect(candle.low).toBeLessThanOrEqual(Math.min(candle.open, candle.close));
    }

    const [chart] = requestsTo('/coins/bitcoin/market_chart');
    expect(Object.fromEntries(chart?.query ?? [])).toEqual({ vs_currency: 'usd', days: '10', interval: 'daily' });
    const [ohlc] = requestsTo('/coins/bitcoin/ohlc');
    expect(Object.fromEntries(ohlc?.query ?? [])).toEqual({ vs_currency: 'usd', days: '14' });
  });

  it('keeps only the days from..to', async () => {
    const series = await provider().candles('bitcoin', { from: '2024-04-05', to: '2024-04-07', interval: 'daily' });
    expect(series.candles.map((candle) => candle.date)).toEqual(['2024-04-05', '2024-04-06', '2024-04-07']);
    expect(series.as_of).toBe('2024-04-10T11:47:00.000Z');
  });

  it('aggregates weekly candles from Monday to Sunday, dated by the Monday', async () => {
    const series = await provider().candles('bitcoin', { from: '2024-04-01', interval: 'weekly' });
    const sum = (instants: string[]) =>
      instants.reduce((total, iso) => total + (CHART_POINTS.find(([i]) => i === iso)?.[3] ?? NaN), 0);
    expect(series.candles).toHaveLength(2);
    const [first, second] = series.candles;
    // 2024-04-01 is a Monday: its week runs to Sunday 04-07, whose close is the price at 04-08 00:00.
    expect(first).toMatchObject({ date: '2024-04-01', open: 71246.9514406015, high: 71246.9514406015, low: 65463.0, close: 69362.55 });
    expect(first?.volume_usd).toBeCloseTo(
      sum(['02', '03', '04', '05', '06', '07', '08'].map((d) => `2024-04-${d}T00:00:00Z`)),
      2,
    );
    expect(second).toMatchObject({ date: '2024-04-08', open: 69362.55, high: 71742.0, low: 68960.3, close: 70612.44 });
    expect(second?.volume_usd).toBeCloseTo(sum(['2024-04-09T00:00:00Z', '2024-04-10T00:00:00Z', '2024-04-10T11:47:00Z']), 2);
  });

  it('still answers from market_chart alone when /ohlc fails', async () => {
    script.set('/api/v3/coins/bitcoin/ohlc', [{ status: 500 }, { status: 500 }, { status: 500 }]);
    const series = await provider().candles('bitcoin', { from: '2024-04-09', interval: 'daily' });
    expect(series.candles[0]).toMatchObject({ date: '2024-04-09', open: 71631.1, high: 71631.1, low: 69139.02, close: 69139.02 });
  });

  it("throws not_found for a coin CoinGecko doesn't know, and for one without prices", async () => {
    expect((await providerError(provider().candles('no-such-coin', { interval: 'daily' }))).kind).toBe('not_found');
    script.set('/api/v3/coins/bitcoin/market_chart', [{ status: 200, body: { prices: [], market_caps: [], total_volumes: [] } }]);
    expect((await providerError(provider().candles('bitcoin', { interval: 'daily' }))).kind).toBe('not_found');
  });

  it('rejects an answer that does not have the documented shape', async () => {
    script.set('/api/v3/global', [{ status: 200, body: { data: { total_market_cap: {} } } }]);
    const error = await providerError(provider().global());
    expect(error.kind).toBe('error');
  });
});

describe('CoinGeckoProvider: failures, retries and rate limits', () => {
  it('retries a 500 and succeeds on the next attempt', async () => {
    script.set('/api/v3/global', [{ status: 500, body: { error: 'Internal Server Error' } }]);
    const metrics = await provider().global();
    expect(metrics.total_market_cap_usd).toBe(2721226850772.63);
    expect(requestsTo('/global')).toHaveLength(2);
    expect(sleeps).toHaveLength(1);
  });

  it('gives up on a slow answer after timeoutMs with kind timeout, aborting each attempt', async () => {
    script.set('/api/v3/global', [{ status: 200, hang: true }, { status: 200, hang: true }]);
    const error = await providerError(provider({ timeoutMs: 150, retries: 1 }).global());
    expect(error.kind).toBe('timeout');
    expect(requestsTo('/global')).toHaveLength(2);
    await vi.waitFor(() => expect(aborted).toBe(2));
  });

  it('waits as long as Retry-After asks after a 429, then succeeds', async () => {
    script.set('/api/v3/global', [{ status: 429, body: RATE_LIMITED, headers: { 'retry-after': '1' } }]);
    const metrics = await provider().global();
    expect(metrics.btc_dominance_pct).toBe(50.4465263233584);
    expect(sleeps).toEqual([1000]);
    expect(requestsTo('/global')).toHaveLength(2);
  });

  it('throws rate_limited when every attempt gets a 429', async () => {
    script.set('/api/v3/global', Array.from({ length: 3 }, () => ({ status: 429, body: RATE_LIMITED })));
    const error = await providerError(provider({ retries: 2 }).global());
    expect(error).toMatchObject({ kind: 'rate_limited', status: 429, provider: 'live:coingecko' });
    expect(requestsTo('/global')).toHaveLength(3);
    expect(sleeps).toHaveLength(2);
  });

  it('maps a 404 to not_found without retrying', async () => {
    const error = await providerError(provider().candles('no-such-coin', { from: '2024-04-01', interval: 'daily' }));
    expect(error).toMatchObject({ kind: 'not_found', status: 404 });
    expect(requestsTo('/coins/no-such-coin/market_chart')).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });
});

describe('CoinGeckoProvider: API key', () => {
  it('sends the key in x-cg-demo-api-key when configured', async () => {
    await provider({ apiKey: 'CG-demo-key' }).global();
    const [request] = requestsTo('/global');
    expect(request?.headers['x-cg-demo-api-key']).toBe('CG-demo-key');
    expect(request?.headers['x-cg-pro-api-key']).toBeUndefined();
  });

  it('sends no key header when none is configured', async () => {
    await provider().global();
    const [request] = requestsTo('/global');
    expect(request?.headers['x-cg-demo-api-key']).toBeUndefined();
    expect(request?.headers['x-cg-pro-api-key']).toBeUndefined();
  });

  it('uses the pro header when asked, and by default for pro-api.coingecko.com', async () => {
    await provider({ apiKey: 'CG-pro-key', apiKeyHeader: 'x-cg-pro-api-key' }).global();
    expect(requestsTo('/global')[0]?.headers['x-cg-pro-api-key']).toBe('CG-pro-key');
    expect(keyHeaderFor('https://pro-api.coingecko.com/api/v3')).toBe('x-cg-pro-api-key');
    expect(keyHeaderFor('https://api.coingecko.com/api/v3')).toBe('x-cg-demo-api-key');
  });
});

describe('CoinGeckoProvider: cache', () => {
  it('serves a repeated call from the cache until the TTL passes', async () => {
    const live = provider({ cacheTtlMs: 60_000 });
    await live.quotes(['bitcoin']);
    await live.quotes(['bitcoin']);
    expect(requestsTo('/coins/markets')).toHaveLength(1);
    clock += 60_000;
    await live.quotes(['bitcoin']);
    expect(requestsTo('/coins/markets')).toHaveLength(2);
  });

  it('makes one request for concurrent identical calls', async () => {
    const live = provider();
    const results = await Promise.all([live.global(), live.global(), live.global()]);
    expect(new Set(results.map((metrics) => metrics.total_market_cap_usd)).size).toBe(1);
    expect(requestsTo('/global')).toHaveLength(1);
  });

  it('does not cache failures', async () => {
    const live = provider({ retries: 0 });
    script.set('/api/v3/global', [{ status: 503 }]);
    await providerError(live.global());
    await expect(live.global()).resolves.toMatchObject({ assets_covered: 13690 });
    expect(requestsTo('/global')).toHaveLength(2);
  });
});

// ---------------------------------------------------------------------------------------------

/** The snapshot side of the fallback: a tiny in-memory provider that counts its calls. */
class FakeSnapshot implements MarketDataProvider {
  readonly name = 'snapshot';
  readonly registry = registry;
  calls = 0;

  async quotes(ids: string[]): Promise<Quote[]> {
    this.calls++;
    return ids.includes('bitcoin')
      ? [
          {
            asset_id: 'bitcoin',
            symbol: 'BTC',
            name: 'Bitcoin',
            price_usd: 97032.12,
            change_24h_pct: 1.2,
            change_7d_pct: null,
            change_30d_pct: null,
            volume_24h_usd: null,
            market_cap_usd: null,
            as_of: '2025-02-11',
            source: 'snapshot:yahoo',
          },
        ]
      : [];
  }

  async candles(id: string, query: CandleQuery): Promise<CandleSeries> {
    this.calls++;
    const candle = { date: '2025-02-10', open: 96000, high: 98500, low: 95500, close: 97400, volume_usd: 1e10, source: 'snapshot:yahoo' };
    return { asset_id: id, candles: query.interval === 'daily' ? [candle, { ...candle, date: '2025-02-11' }] : [candle], as_of: '2025-02-11', source: 'snapshot:yahoo' };
  }

  async global(): Promise<GlobalMetrics> {
    this.calls++;
    return {
      total_market_cap_usd: 3.2e12,
      btc_dominance_pct: 59.1,
      eth_dominance_pct: 10.2,
      assets_covered: 150,
      as_of: '2025-02-11',
      source: 'snapshot:coingecko',
    };
  }
}

describe('FallbackProvider', () => {
  it("answers from the primary when it works, with the primary's source", async () => {
    const snapshot = new FakeSnapshot();
    const market = new FallbackProvider(provider(), snapshot);
    const metrics = await market.global();
    expect(metrics.source).toBe('live:coingecko');
    expect(metrics.assets_covered).toBe(13690);
    expect(snapshot.calls).toBe(0);
    expect(market.lastFallback).toBeUndefined();
    expect(market.registry).toBe(snapshot.registry);
  });

  it("answers from the fallback when the primary fails, and labels the source with why", async () => {
    script.set('/api/v3/global', [{ status: 503 }]);
    const snapshot = new FakeSnapshot();
    const market = new FallbackProvider(provider({ retries: 0 }), snapshot);
    const metrics = await market.global();
    expect(metrics).toMatchObject({ total_market_cap_usd: 3.2e12, source: 'snapshot:coingecko (fallback: live:coingecko error)' });
    expect(market.lastFallback).toMatchObject({ operation: 'global', kind: 'error' });
  });

  it('labels every quote and every candle that came from the fallback', async () => {
    script.set('/api/v3/coins/markets', [{ status: 429, body: RATE_LIMITED }]);
    script.set('/api/v3/coins/bitcoin/market_chart', [{ status: 200, hang: true }]);
    const market = new FallbackProvider(provider({ retries: 0, timeoutMs: 100 }), new FakeSnapshot());

    const quotes = await market.quotes(['bitcoin']);
    expect(quotes).toEqual([expect.objectContaining({ price_usd: 97032.12, source: 'snapshot:yahoo (fallback: live:coingecko rate_limited)' })]);

    const series = await market.candles('bitcoin', { interval: 'daily' });
    const label = 'snapshot:yahoo (fallback: live:coingecko timeout)';
    expect(series.source).toBe(label);
    expect(series.candles).toHaveLength(2);
    expect(series.candles.every((candle) => candle.source === label)).toBe(true);
    expect(market.lastFallback).toMatchObject({ operation: 'candles', kind: 'timeout' });
  });

  it("does not fall back when the caller aborts: the abort propagates", async () => {
    const snapshot = new FakeSnapshot();
    const market = new FallbackProvider(provider(), snapshot);
    const controller = new AbortController();
    controller.abort(new Error('client went away'));
    await expect(market.global(controller.signal)).rejects.toThrow('client went away');
    expect(snapshot.calls).toBe(0);
    expect(seen).toHaveLength(0);
  });
});
