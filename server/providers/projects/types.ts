// What project-intelligence reads: DeFi protocols with TVL, category, chains and oracles, and TVL
// histories of protocols, chains and DeFi as a whole. From the offline DefiLlama data or the live
// DefiLlama API (live.ts beside this file).

export interface Protocol {
  name: string;
  /** DefiLlama's slug (lower-case, dashes), the key of its protocol endpoint. */
  slug: string;
  category: string | null;
  /** Total TVL across chains in USD; null when DefiLlama reports none. */
  tvl_usd: number | null;
  chains: string[];
  oracles: string[];
  url: string | null;
  /** The protocol's token, when the source names it (the live API's gecko_id; not in the snapshot). */
  gecko_id?: string | null;
  /** TVL per chain, when the source splits it (the live API; not in the snapshot). */
  chain_tvls?: Record<string, number> | null;
}

export interface TvlPoint {
  date: string;
  tvl_usd: number;
}

export interface TvlHistory {
  /** What the series is of: a protocol's name, a chain's name, or "DeFi total". */
  subject: string;
  points: TvlPoint[];
  source: string;
}

export interface ProtocolList {
  protocols: Protocol[];
  as_of: string;
  source: string;
}

export interface ChainTvl {
  name: string;
  tvl_usd: number;
  as_of: string;
}

export interface ProjectSource {
  /** 'snapshot' or 'live:defillama'. */
  readonly name: string;
  protocols(signal?: AbortSignal): Promise<ProtocolList>;
  /** The protocol's TVL history, or undefined when the source has none for it. */
  protocolTvl(protocol: Protocol, signal?: AbortSignal): Promise<TvlHistory | undefined>;
  /** Current TVL per chain. */
  chains(signal?: AbortSignal): Promise<{ chains: ChainTvl[]; source: string }>;
  /** A chain's TVL history (DefiLlama chain names: "Ethereum", "Binance", "Solana"), or undefined. */
  chainTvl(chain: string, signal?: AbortSignal): Promise<TvlHistory | undefined>;
}

/** DefiLlama's slug rule: lower case, spaces to dashes. */
export function slugOf(name: string): string {
  return name.trim().toLowerCase().replace(/\s+/g, '-');
}
