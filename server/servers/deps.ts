// What the servers receive by injection (they never construct providers themselves).
import type { EvmClients } from '../providers/evm/chains.ts';
import type { ForecastLog } from '../providers/forecast-log.ts';
import type { LabelBook } from '../providers/labels.ts';
import type { SnapshotProvider } from '../providers/market/snapshot.ts';
import type { MarketDataProvider } from '../providers/market/types.ts';

export interface ServerDeps {
  /** Quotes, candles, global metrics: the snapshot, or live with the snapshot as fallback. */
  market: MarketDataProvider;
  /** The offline dataset itself, for what only it has (DeFi TVL, full histories). */
  snapshot: SnapshotProvider;
  /** Where forecast_price answers are logged for the track record. */
  forecasts: ForecastLog;
  /** JSON-RPC clients of the EVM networks. */
  evm: EvmClients;
  /** Who addresses belong to (exchanges, funds, wallets). */
  labels: LabelBook;
}
