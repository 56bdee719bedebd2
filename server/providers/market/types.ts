import type { DailyCandle } from '../../analytics/candles.ts';

// The market data provider interface (DESIGN.md §6). Tools depend on this, never on where the
// numbers come from: the snapshot provider answers from data/ relative to each asset's last date;
// the live provider calls a CoinGecko-compatible API. Every number carries its source and as-of.

/** An entry of the asset registry. Ids are CoinGecko ids ("bitcoin", "ethereum"). */
export interface AssetEntry {
  id: string;
  symbol: string;
  name: string;
  /** Other names it is known by (e.g. ticker variants, former names). */
  aliases: string[];
  /** Token contracts where known: chain (ethereum, base, polygon, bsc, solana, ...) and address. */
  platforms: { chain: string; address: string }[];
  /** True when the snapshot holds a daily price series for it. */
  has_prices: boolean;
}

export interface Quote {
  asset_id: string;
  symbol: string;
  name: string;
  price_usd: number;
  /** Percent changes over 24 h / 7 d / 30 d; null when the history is too short. */
  change_24h_pct: number | null;
  change_7d_pct: number | null;
  change_30d_pct: number | null;
  volume_24h_usd: number | null;
  market_cap_usd: number | null;
  /** The day market_cap_usd is for when it is not `as_of` (the snapshot's caps are of 2021-12-31). */
  market_cap_as_of?: string | null;
  /** Where the market cap comes from, or why there is none. */
  market_cap_note?: string;
  /** The UTC day (YYYY-MM-DD) or instant (ISO 8601) the quote is for. */
  as_of: string;
  /** 'snapshot:<dataset>' or 'live:<provider>'. */
  source: string;
}

/** A daily candle (for weekly candles, `date` is the Monday starting the week) and its source. */
export interface Candle extends DailyCandle {
  /** The dataset this row came from (snapshot) or the provider (live). */
  source: string;
}

export interface CandleQuery {
  /** Inclusive UTC days; undefined means from the start / to the last day available. */
  from?: string;
  to?: string;
  interval: 'daily' | 'weekly';
}

export interface CandleSeries {
  asset_id: string;
  candles: Candle[];
  /** Last day the provider has for this asset. */
  as_of: string;
  source: string;
}

export interface GlobalMetrics {
  total_market_cap_usd: number;
  btc_dominance_pct: number;
  eth_dominance_pct: number;
  /** How many assets the totals cover. */
  assets_covered: number;
  as_of: string;
  source: string;
}

export interface AssetRegistry {
  /** Exact id (case-insensitive). */
  get(id: string): AssetEntry | undefined;
  /**
   * Resolves a user's name, symbol or id, case-insensitively, best match first: exact id, then
   * exact symbol, then exact name or alias, each ranked by whether prices exist and market cap.
   */
  resolve(query: string): AssetEntry[];
  /** Close matches for a query that resolved to nothing (for NOT_FOUND details). */
  suggest(query: string, limit?: number): AssetEntry[];
  /** Substring search over ids, symbols, names and aliases, best first. */
  search(query: string, limit: number): AssetEntry[];
}

export interface MarketDataProvider {
  /** 'snapshot' or 'live:<name>'. */
  readonly name: string;
  readonly registry: AssetRegistry;
  /** Quotes for assets by id; ids without data are left out. */
  quotes(ids: string[], signal?: AbortSignal): Promise<Quote[]>;
  /** Daily (or weekly) candles; throws ProviderError 'not_found' if the asset has no prices. */
  candles(id: string, query: CandleQuery, signal?: AbortSignal): Promise<CandleSeries>;
  global(signal?: AbortSignal): Promise<GlobalMetrics>;
}
