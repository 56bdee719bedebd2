// What the servers receive by injection (they never construct providers themselves).
import type { ComputePool } from '../compute/types.ts';
import type { ChainCache } from '../providers/evm/cache.ts';
import type { EvmClients } from '../providers/evm/chains.ts';
import type { ExplorerApi } from '../providers/evm/explorer.ts';
import type { ForecastLog } from '../forecasts/store.ts';
import type { LabelBook } from '../providers/labels.ts';
import type { SnapshotProvider } from '../providers/market/snapshot.ts';
import type { MarketDataProvider } from '../providers/market/types.ts';
import type { GitHubClient } from '../providers/github/live.ts';
import type { ProjectsData } from '../providers/projects/snapshot.ts';
import type { ProjectSource } from '../providers/projects/types.ts';
import type { SocialDataset } from '../providers/social/snapshot.ts';
import type { SocialSource } from '../providers/social/types.ts';
import type { SolanaRpc } from '../providers/solana/live.ts';
import type { TokenRegistry } from '../providers/tokens.ts';
import type { WatchStore } from '../watchlists/types.ts';
import type { AlertStore } from '../alerts/types.ts';

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
  /** Which contracts are which tokens, per network (curated lists, label clouds, the devnet). */
  tokens: TokenRegistry;
  /** Solana JSON-RPC. */
  solana: SolanaRpc;
  /** The block-explorer API, when a key is configured (address histories). */
  explorer: ExplorerApi | undefined;
  /** Final blocks, receipts and token metadata, kept across calls. */
  chainCache: ChainCache;
  /** Per-account alert rules and the alert feed (price-prediction, whale-intelligence, social-intelligence). */
  alerts: AlertStore;
  /** Per-account address watchlists (whale-intelligence). */
  watches: WatchStore;
  /** Posts with sentiment and mentions: the offline dataset, or live Reddit (social-intelligence). */
  social: SocialSource;
  /** The offline social dataset, loaded on first use (kol-analytics reads its account histories). */
  socialData: () => SocialDataset;
  /** DeFi protocols, TVL histories, chains: the offline DefiLlama data, or the live API. */
  projects: ProjectSource;
  /** The offline DefiLlama data, loaded on first use: what only it has (2023 listing, bridges, DeFi total). */
  projectsData: () => ProjectsData;
  /** GitHub REST for developer activity, when configured (due_diligence_report). */
  github: GitHubClient | undefined;
  /** Worker threads for CPU-bound work (forecasts, backtests, GARCH, signal replays): off the event loop. */
  compute: ComputePool;
}
