// The snapshot provider: answers from data/snapshot/market.json.gz (built by `npm run
// data:build` from the real public CSVs in data/raw). Time-relative answers ("24h change") are
// relative to each asset's own last day, which every answer reports as its as-of date.
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { addDays } from '../../lib/dates.ts';
import { SnapshotRegistry, type RegistryEntry } from './registry.ts';
import { toWeekly } from './weekly.ts';
import { ProviderError } from '../../errors.ts';
import {
  type Candle,
  type CandleQuery,
  type CandleSeries,
  type GlobalMetrics,
  type MarketDataProvider,
  type Quote,
} from './types.ts';

export const DEFAULT_SNAPSHOT_FILE = path.resolve(import.meta.dirname, '../../../data/snapshot/market.json.gz');

interface SeriesJson {
  dates: string[];
  open: number[];
  high: number[];
  low: number[];
  close: number[];
  volume_usd: (number | null)[];
  market_cap_usd: (number | null)[];
  source: number[];
}

export interface SnapshotJson {
  format: number;
  sources: { id: string; file: string; quote: string }[];
  /** Market caps of every asset CoinGecko covered on its last day (the basis of global totals). */
  market_caps: { source: string; as_of: string; usd: Record<string, number> };
  assets: RegistryEntry[];
  series: Record<string, SeriesJson>;
  defi_tvl: {
    daily: { source: string; dates: string[]; tvl_usd: number[] };
    protocols_total: { source: string; as_of: string; tvl_usd: number; excluded_categories: string[]; protocols: number };
  };
}

const loaded = new Map<string, SnapshotJson>();

/** Loads (once per process and file) the built snapshot. */
export function loadSnapshot(file = DEFAULT_SNAPSHOT_FILE): SnapshotJson {
  const cached = loaded.get(file);
  if (cached) return cached;
  let raw: Buffer;
  try {
    raw = fs.readFileSync(file);
  } catch (err) {
    throw new Error(`snapshot data not found at ${file}: run \`npm run data:build\``, { cause: err });
  }
  const snapshot = JSON.parse(gunzipSync(raw).toString('utf8')) as SnapshotJson;
  if (snapshot.format !== 1) throw new Error(`snapshot ${file} has format ${snapshot.format}; this server reads format 1`);
  loaded.set(file, snapshot);
  return snapshot;
}


/** Index of `date` in a sorted date list, or -1. */
function indexOf(dates: string[], date: string): number {
  let lo = 0;
  let hi = dates.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const d = dates[mid]!;
    if (d === date) return mid;
    if (d < date) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

export class SnapshotProvider implements MarketDataProvider {
  readonly name = 'snapshot';
  readonly registry: SnapshotRegistry;
  readonly data: SnapshotJson;

  constructor(data: SnapshotJson = loadSnapshot()) {
    this.data = data;
    this.registry = new SnapshotRegistry(data.assets);
  }


  sourceName(index: number): string {
    return `snapshot:${this.data.sources[index]?.id ?? 'unknown'}`;
  }

  async quotes(ids: string[]): Promise<Quote[]> {
    const out: Quote[] = [];
    for (const id of ids) {
      const s = this.data.series[id];
      const entry = this.registry.get(id);
      if (!s || !entry || s.dates.length === 0) continue;
      const last = s.dates.length - 1;
      const lastDate = s.dates[last]!;
      const close = s.close[last]!;
      const change = (days: number): number | null => {
        const i = indexOf(s.dates, addDays(lastDate, -days));
        return i < 0 ? null : ((close - s.close[i]!) / s.close[i]!) * 100;
      };
      out.push({
        asset_id: id,
        symbol: entry.symbol,
        name: entry.name,
        price_usd: close,
        change_24h_pct: change(1),
        change_7d_pct: change(7),
        change_30d_pct: change(30),
        volume_24h_usd: s.volume_usd[last] ?? null,
        ...this.#marketCap(id, s.market_cap_usd[last] ?? null, lastDate),
        as_of: lastDate,
        source: this.sourceName(s.source[last]!),
      });
    }
    return out;
  }

  /**
   * The market cap on the price's own day where the series has one, else the snapshot's market-cap
   * list (CoinMarketCap's top 150 of 2021-12-31) with that day, else none, said so.
   */
  #marketCap(id: string, sameDay: number | null, day: string): Pick<Quote, 'market_cap_usd' | 'market_cap_as_of' | 'market_cap_note'> {
    if (sameDay !== null) return { market_cap_usd: sameDay, market_cap_as_of: day };
    const caps = this.data.market_caps;
    const cap = caps.usd[id];
    if (cap !== undefined) {
      return { market_cap_usd: cap, market_cap_as_of: caps.as_of, market_cap_note: `from ${caps.source} as of ${caps.as_of}, not the price's day` };
    }
    return { market_cap_usd: null, market_cap_as_of: null, market_cap_note: `not covered: the snapshot's market caps are ${caps.source} as of ${caps.as_of}, which does not list this asset` };
  }

  async candles(id: string, query: CandleQuery): Promise<CandleSeries> {
    const s = this.data.series[id];
    if (!s || s.dates.length === 0) throw new ProviderError('snapshot', 'not_found', `no price history for ${id}`);
    const daily: Candle[] = [];
    for (let i = 0; i < s.dates.length; i++) {
      const date = s.dates[i]!;
      if ((query.from && date < query.from) || (query.to && date > query.to)) continue;
      daily.push({
        date,
        open: s.open[i]!,
        high: s.high[i]!,
        low: s.low[i]!,
        close: s.close[i]!,
        volume_usd: s.volume_usd[i] ?? null,
        source: this.sourceName(s.source[i]!),
      });
    }
    return {
      asset_id: id,
      candles: query.interval === 'weekly' ? toWeekly(daily) : daily,
      as_of: s.dates[s.dates.length - 1]!,
      source: 'snapshot',
    };
  }

  /** Totals over the assets whose market cap the snapshot knows, on the last day caps exist. */
  async global(): Promise<GlobalMetrics> {
    const caps = this.data.market_caps;
    const values = Object.values(caps.usd);
    if (values.length === 0) throw new ProviderError('snapshot', 'not_found', 'no market caps in the snapshot');
    const total = values.reduce((a, b) => a + b, 0);
    return {
      total_market_cap_usd: total,
      btc_dominance_pct: ((caps.usd.bitcoin ?? 0) / total) * 100,
      eth_dominance_pct: ((caps.usd.ethereum ?? 0) / total) * 100,
      assets_covered: values.length,
      as_of: caps.as_of,
      source: caps.source,
    };
  }
}
