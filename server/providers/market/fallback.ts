// Live first, snapshot when live fails (DESIGN.md §6). Every answer that comes from the fallback
// says so in its source, e.g. "snapshot:coingecko (fallback: live:coingecko rate_limited)", so
// tools can report it in metadata.source. Only ProviderErrors fall back: a caller's abort or a
// bug propagates.
import { ProviderError } from '../../errors.ts';
import type { AssetRegistry, CandleQuery, CandleSeries, GlobalMetrics, MarketDataProvider, Quote } from './types.ts';

export interface FallbackEvent {
  operation: 'quotes' | 'candles' | 'global';
  kind: ProviderError['kind'];
  message: string;
  /** ISO 8601 instant. */
  at: string;
}

export class FallbackProvider implements MarketDataProvider {
  readonly name: string;
  readonly primary: MarketDataProvider;
  readonly fallback: MarketDataProvider;
  /** The latest time the primary failed (for health and logs; the source labels are per answer). */
  lastFallback: FallbackEvent | undefined;

  constructor(primary: MarketDataProvider, fallback: MarketDataProvider) {
    this.primary = primary;
    this.fallback = fallback;
    this.name = primary.name;
  }

  get registry(): AssetRegistry {
    return this.fallback.registry;
  }

  quotes(ids: string[], signal?: AbortSignal): Promise<Quote[]> {
    return this.#attempt(
      'quotes',
      () => this.primary.quotes(ids, signal),
      async (label) => (await this.fallback.quotes(ids, signal)).map((quote) => ({ ...quote, source: label(quote.source) })),
    );
  }

  candles(id: string, query: CandleQuery, signal?: AbortSignal): Promise<CandleSeries> {
    return this.#attempt(
      'candles',
      () => this.primary.candles(id, query, signal),
      async (label) => {
        const series = await this.fallback.candles(id, query, signal);
        return {
          ...series,
          source: label(series.source),
          candles: series.candles.map((candle) => ({ ...candle, source: label(candle.source) })),
        };
      },
    );
  }

  global(signal?: AbortSignal): Promise<GlobalMetrics> {
    return this.#attempt(
      'global',
      () => this.primary.global(signal),
      async (label) => {
        const metrics = await this.fallback.global(signal);
        return { ...metrics, source: label(metrics.source) };
      },
    );
  }

  async #attempt<T>(
    operation: FallbackEvent['operation'],
    primary: () => Promise<T>,
    fallback: (label: (source: string) => string) => Promise<T>,
  ): Promise<T> {
    try {
      return await primary();
    } catch (error) {
      if (!(error instanceof ProviderError)) throw error;
      this.lastFallback = { operation, kind: error.kind, message: error.message, at: new Date().toISOString() };
      return fallback((source) => `${source} (fallback: ${this.primary.name} ${error.kind})`);
    }
  }
}
