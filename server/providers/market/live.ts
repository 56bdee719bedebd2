// The live market data provider: a CoinGecko-compatible REST API (public/demo or pro) behind
// MarketDataProvider. Every upstream answer is parsed with a schema, cached in process for
// cacheTtlMs, and fetched through the one HTTP client (timeouts, retries, 429 handling).
//
// Endpoints: /coins/markets (quotes), /coins/{id}/market_chart?interval=daily and
// /coins/{id}/ohlc (candles), /global.
import { daysBetween } from '../../lib/dates.ts';
import { toWeekly } from './weekly.ts';
import { z } from 'zod';
import { getJson, TtlCache } from '../http.ts';
import type { GetJsonOptions } from '../http.ts';
import { ProviderError } from '../../errors.ts';
import type {
  AssetRegistry,
  Candle,
  CandleQuery,
  CandleSeries,
  GlobalMetrics,
  MarketDataProvider,
  Quote,
} from './types.ts';

const NAME = 'live:coingecko';
const DEFAULT_BASE_URL = 'https://api.coingecko.com/api/v3';
const PRO_HOST = 'pro-api.coingecko.com';
/** /coins/markets answers at most 250 rows per page. */
const MARKETS_BATCH = 250;
/** The public (demo) API serves the past 365 days of history only. */
const PUBLIC_MAX_DAYS = 365;
/** /ohlc `days` values whose candles are shorter than a day (30 min up to 2 days, 4 h up to 30). */
const SUB_DAILY_OHLC_DAYS = [1, 7, 14, 30] as const;
const DAY_MS = 86_400_000;

export type CoinGeckoKeyHeader = 'x-cg-demo-api-key' | 'x-cg-pro-api-key';

export interface CoinGeckoOptions {
  /** The snapshot's registry; live ids are CoinGecko ids, the same ids the registry uses. */
  registry: AssetRegistry;
  baseUrl?: string;
  apiKey?: string;
  /** Default: the pro header for pro-api.coingecko.com, the demo header otherwise. */
  apiKeyHeader?: CoinGeckoKeyHeader;
  timeoutMs?: number;
  retries?: number;
  /** All attempts and waits of one call together (GetJsonOptions.deadlineMs). */
  deadlineMs?: number;
  cacheTtlMs?: number;
  cacheMaxEntries?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Test seams: the clock (cache expiry and "today") and the wait between retries. */
  now?: () => number;
  sleep?: GetJsonOptions['sleep'];
  random?: () => number;
}

/** The key header CoinGecko expects for a base URL: pro keys only work on the pro host. */
export function keyHeaderFor(baseUrl: string): CoinGeckoKeyHeader {
  return new URL(baseUrl).hostname === PRO_HOST ? 'x-cg-pro-api-key' : 'x-cg-demo-api-key';
}

const nullableNumber = z.number().nullish();

const simplePriceSchema = z.record(
  z.string(),
  z.object({
    usd: z.number().nullable().optional(),
    usd_market_cap: z.number().nullable().optional(),
    usd_24h_vol: z.number().nullable().optional(),
    usd_24h_change: z.number().nullable().optional(),
    last_updated_at: z.number().nullable().optional(),
  }),
);

const marketsSchema = z.array(
  z.object({
    id: z.string(),
    symbol: z.string(),
    name: z.string(),
    current_price: nullableNumber,
    market_cap: nullableNumber,
    total_volume: nullableNumber,
    price_change_percentage_24h: nullableNumber,
    price_change_percentage_24h_in_currency: nullableNumber,
    price_change_percentage_7d_in_currency: nullableNumber,
    price_change_percentage_30d_in_currency: nullableNumber,
    last_updated: z.string().nullish(),
  }),
);

const pointSchema = z.tuple([z.number(), z.number()]);
const marketChartSchema = z.object({
  prices: z.array(pointSchema),
  total_volumes: z.array(pointSchema).default([]),
});
const ohlcSchema = z.array(z.tuple([z.number(), z.number(), z.number(), z.number(), z.number()]));

const globalSchema = z.object({
  data: z.object({
    active_cryptocurrencies: z.number(),
    total_market_cap: z.object({ usd: z.number() }),
    market_cap_percentage: z.object({ btc: z.number(), eth: z.number() }),
    /** Unix seconds. */
    updated_at: z.number(),
  }),
});

type OhlcRow = z.infer<typeof ohlcSchema>[number];
type Bar = Omit<Candle, 'date' | 'source'>;

export class CoinGeckoProvider implements MarketDataProvider {
  readonly name = NAME;
  readonly registry: AssetRegistry;
  readonly #baseUrl: string;
  readonly #pro: boolean;
  readonly #headers: Record<string, string>;
  readonly #http: Omit<GetJsonOptions, 'signal' | 'headers'>;
  readonly #cache: TtlCache<unknown>;
  readonly #now: () => number;

  constructor(options: CoinGeckoOptions) {
    this.registry = options.registry;
    this.#baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    this.#pro = new URL(this.#baseUrl).hostname === PRO_HOST;
    this.#headers = options.apiKey
      ? { [options.apiKeyHeader ?? keyHeaderFor(this.#baseUrl)]: options.apiKey }
      : {};
    this.#now = options.now ?? Date.now;
    this.#http = {
      provider: NAME,
      timeoutMs: options.timeoutMs ?? 8000,
      retries: options.retries ?? 2,
      deadlineMs: options.deadlineMs,
      baseDelayMs: options.baseDelayMs,
      maxDelayMs: options.maxDelayMs,
      sleep: options.sleep,
      random: options.random,
      now: this.#now,
    };
    this.#cache = new TtlCache<unknown>({
      ttlMs: options.cacheTtlMs ?? 60_000,
      now: this.#now,
      maxEntries: options.cacheMaxEntries,
    });
  }

  async quotes(ids: string[], signal?: AbortSignal): Promise<Quote[]> {
    const wanted = [...new Set(ids.map((id) => id.trim().toLowerCase()).filter((id) => id !== ''))];
    const batches: string[][] = [];
    for (let i = 0; i < wanted.length; i += MARKETS_BATCH) {
      // Sorted, so the same set of ids is one cache entry whatever order it was asked in.
      batches.push(wanted.slice(i, i + MARKETS_BATCH).sort());
    }
    let pages: z.infer<typeof marketsSchema>[];
    try {
      pages = await Promise.all(
        batches.map((batch) =>
          this.#get(
            '/coins/markets',
            {
              vs_currency: 'usd',
              ids: batch.join(','),
              per_page: String(MARKETS_BATCH),
              page: '1',
              price_change_percentage: '24h,7d,30d',
            },
            marketsSchema,
            signal,
          ),
        ),
      );
    } catch (err) {
      // Some CoinGecko-compatible APIs serve only /simple/price; so does CoinGecko when
      // /coins/markets errors. A rate limit or a timeout would hit the same server again: rethrow.
      if (!(err instanceof ProviderError) || (err.kind !== 'not_found' && err.kind !== 'error')) throw err;
      return this.#simpleQuotes(batches, signal);
    }
    const fetchedAt = new Date(this.#now()).toISOString();
    const byId = new Map<string, Quote>();
    for (const row of pages.flat()) {
      if (row.current_price === null || row.current_price === undefined) continue;
      const entry = this.registry.get(row.id);
      byId.set(row.id, {
        asset_id: row.id,
        symbol: entry?.symbol ?? row.symbol.toUpperCase(),
        name: entry?.name ?? row.name,
        price_usd: row.current_price,
        change_24h_pct: row.price_change_percentage_24h_in_currency ?? row.price_change_percentage_24h ?? null,
        change_7d_pct: row.price_change_percentage_7d_in_currency ?? null,
        change_30d_pct: row.price_change_percentage_30d_in_currency ?? null,
        volume_24h_usd: row.total_volume ?? null,
        // CoinGecko reports a market cap of 0 when it does not know the circulating supply.
        market_cap_usd: row.market_cap ? row.market_cap : null,
        as_of: isoOrUndefined(row.last_updated) ?? fetchedAt,
        source: NAME,
      });
    }
    return wanted.flatMap((id) => byId.get(id) ?? []);
  }

  /** Quotes from /simple/price: price, 24h change, volume and market cap; no 7d/30d changes. */
  async #simpleQuotes(batches: string[][], signal?: AbortSignal): Promise<Quote[]> {
    const pages = await Promise.all(
      batches.map((batch) =>
        this.#get(
          '/simple/price',
          {
            ids: batch.join(','),
            vs_currencies: 'usd',
            include_market_cap: 'true',
            include_24hr_vol: 'true',
            include_24hr_change: 'true',
            include_last_updated_at: 'true',
          },
          simplePriceSchema,
          signal,
        ),
      ),
    );
    const fetchedAt = new Date(this.#now()).toISOString();
    const out: Quote[] = [];
    for (const id of batches.flat()) {
      const row = pages.find((p) => p[id] !== undefined)?.[id];
      if (!row || row.usd === undefined || row.usd === null) continue;
      const entry = this.registry.get(id);
      out.push({
        asset_id: id,
        symbol: entry?.symbol ?? id,
        name: entry?.name ?? id,
        price_usd: row.usd,
        change_24h_pct: row.usd_24h_change ?? null,
        change_7d_pct: null,
        change_30d_pct: null,
        volume_24h_usd: row.usd_24h_vol ?? null,
        market_cap_usd: row.usd_market_cap ? row.usd_market_cap : null,
        as_of: row.last_updated_at ? new Date(row.last_updated_at * 1000).toISOString() : fetchedAt,
        source: `${NAME} (simple/price)`,
      });
    }
    return out;
  }

  /**
   * Daily candles for UTC days, built from two endpoints:
   *
   * - market_chart?interval=daily gives one price per day at 00:00 UTC, plus the latest price
   *   as a last point, and the rolling 24 h volume at the same instants. The price at D+1 00:00
   *   is the close of day D (and the open of D+1); the latest point is today's close so far. So
   *   every day gets its close and volume here, and its open is the previous day's close.
   * - /ohlc has real opens, highs and lows, but its candles are 30 min (1–2 days), 4 h
   *   (3–30 days) or 4 days (31 days and more) long. We ask for at most 30 days, aggregate the
   *   sub-daily candles per UTC day (timestamps are close times, so a candle closing at 00:00
   *   belongs to the day before), and use them for the days they cover from 00:00. Older days
   *   keep open = previous close and high/low = the larger/smaller of open and close: a 4-day
   *   candle cannot give a daily open.
   *   /ohlc is an improvement, not a requirement: if it fails, every day is derived.
   */
  async candles(id: string, query: CandleQuery, signal?: AbortSignal): Promise<CandleSeries> {
    const assetId = id.trim().toLowerCase();
    const today = utcDay(this.#now());
    // One day more than the range, so the first day has a previous close to open from.
    const span = query.from === undefined ? NaN : daysBetween(query.from, today) + 1;
    const wanted = Number.isFinite(span) ? Math.max(1, span) : undefined;
    const chartDays = wanted === undefined ? this.#historyDays : String(Math.min(wanted, this.#maxDays));
    const ohlcDays = SUB_DAILY_OHLC_DAYS.find((days) => days >= (wanted ?? Infinity)) ?? 30;
    const path = `/coins/${encodeURIComponent(assetId)}`;

    const [chart, ohlc] = await Promise.all([
      this.#get(`${path}/market_chart`, { vs_currency: 'usd', days: chartDays, interval: 'daily' }, marketChartSchema, signal),
      this.#get(`${path}/ohlc`, { vs_currency: 'usd', days: String(ohlcDays) }, ohlcSchema, signal).catch(
        (error: unknown) => {
          if (error instanceof ProviderError && !signal?.aborted) return [];
          throw error;
        },
      ),
    ]);
    if (chart.prices.length === 0) {
      throw new ProviderError(NAME, 'not_found', `no prices for ${assetId}`);
    }

    const daily = dailyCandles(chart.prices, chart.total_volumes, ohlcByDay(ohlc)).filter(
      (candle) =>
        (query.from === undefined || candle.date >= query.from) && (query.to === undefined || candle.date <= query.to),
    );
    const lastMs = Math.max(...chart.prices.map(([ms]) => ms));
    return {
      asset_id: assetId,
      candles: query.interval === 'weekly' ? toWeekly(daily) : daily,
      as_of: new Date(lastMs).toISOString(),
      source: NAME,
    };
  }

  /** Pro plans reach back to the first day; the public API to the past 365 days. */
  get #maxDays(): number {
    return this.#pro ? Infinity : PUBLIC_MAX_DAYS;
  }

  get #historyDays(): string {
    return this.#pro ? 'max' : String(PUBLIC_MAX_DAYS);
  }

  async global(signal?: AbortSignal): Promise<GlobalMetrics> {
    const { data } = await this.#get('/global', {}, globalSchema, signal);
    return {
      total_market_cap_usd: data.total_market_cap.usd,
      btc_dominance_pct: data.market_cap_percentage.btc,
      eth_dominance_pct: data.market_cap_percentage.eth,
      assets_covered: data.active_cryptocurrencies,
      as_of: new Date(data.updated_at * 1000).toISOString(),
      source: NAME,
    };
  }

  /** A cached, schema-checked GET; the cache key is the URL (the key header is not in it). */
  async #get<T>(path: string, params: Record<string, string>, schema: z.ZodType<T>, signal?: AbortSignal): Promise<T> {
    const search = new URLSearchParams(params).toString();
    const url = `${this.#baseUrl}${path}${search ? `?${search}` : ''}`;
    const value = await this.#cache.getOrLoad(
      url,
      async () => {
        const body = await getJson(url, { ...this.#http, headers: this.#headers });
        const parsed = schema.safeParse(body);
        if (!parsed.success) throw new ProviderError(NAME, 'error', `GET ${path}: unexpected response shape`);
        return parsed.data;
      },
      signal,
    );
    // Each URL's entry was produced by the one schema its path selects.
    return value as T;
  }
}

function dailyCandles(prices: [number, number][], volumes: [number, number][], ohlc: Map<string, Bar>): Candle[] {
  const volumeAt = new Map(volumes.map(([ms, volume]) => [ms, volume]));
  // The last point at or before D+1 00:00 closes day D.
  const closes = new Map<string, { ms: number; price: number }>();
  for (const [ms, price] of [...prices].sort((a, b) => a[0] - b[0])) {
    closes.set(utcDay(ms - 1), { ms, price });
  }
  const candles: Candle[] = [];
  let previousClose: number | undefined;
  for (const [date, { ms, price: close }] of [...closes].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const bar = ohlc.get(date);
    const open = bar?.open ?? previousClose;
    previousClose = close;
    if (open === undefined) continue;
    candles.push({
      date,
      open,
      high: Math.max(open, close, bar?.high ?? -Infinity),
      low: Math.min(open, close, bar?.low ?? Infinity),
      close,
      volume_usd: volumeAt.get(ms) ?? null,
      source: NAME,
    });
  }
  return candles;
}

/** Sub-daily /ohlc candles aggregated per UTC day, for the days they cover from 00:00. */
function ohlcByDay(rows: OhlcRow[]): Map<string, Bar> {
  const byDay = new Map<string, Bar>();
  const sorted = [...rows].sort((a, b) => a[0] - b[0]);
  const first = sorted[0];
  const second = sorted[1];
  if (!first || !second) return byDay;
  const spacing = second[0] - first[0];
  if (spacing <= 0 || spacing > DAY_MS) return byDay;
  // Timestamps are close times; the first candle opened one spacing earlier.
  const coveredFrom = first[0] - spacing;
  for (const [closeMs, open, high, low, close] of sorted) {
    const date = utcDay(closeMs - 1);
    if (Date.parse(`${date}T00:00:00Z`) < coveredFrom) continue;
    const bar = byDay.get(date);
    byDay.set(
      date,
      bar
        ? { open: bar.open, high: Math.max(bar.high, high), low: Math.min(bar.low, low), close, volume_usd: null }
        : { open, high, low, close, volume_usd: null },
    );
  }
  return byDay;
}

/** Weeks start on Monday (ISO 8601); a week's candle is dated by its Monday. */
function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}


function isoOrUndefined(value: string | null | undefined): string | undefined {
  if (!value) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}
