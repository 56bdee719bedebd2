// The live DefiLlama adapter (https://api.llama.fi, no key): protocols, a protocol's TVL history,
// chains and a chain's TVL history, through the one HTTP client (timeouts, retries with backoff)
// and a TTL cache. Responses are parsed with zod at this boundary.
// (FallbackProjectSource, in fallback.ts, answers from the offline data when it fails.)
import { z } from 'zod';
import { getJson, TtlCache } from '../http.ts';
import { ProviderError } from '../../errors.ts';
import { slugOf, type ChainTvl, type ProjectSource, type Protocol, type ProtocolList, type TvlHistory, type TvlPoint } from './types.ts';

const PROVIDER = 'live:defillama';

// Shapes as documented at api-docs.defillama.com (fields we read; others are ignored).
const ProtocolsSchema = z.array(
  z.object({
    name: z.string(),
    slug: z.string().optional(),
    category: z.string().nullish(),
    tvl: z.number().nullish(),
    chains: z.array(z.string()).default([]),
    chainTvls: z.record(z.string(), z.number()).nullish(),
    oracles: z.array(z.string()).nullish(),
    url: z.string().nullish(),
    gecko_id: z.string().nullish(),
  }),
);
const DatedTvl = z.array(z.object({ date: z.number(), totalLiquidityUSD: z.number() }));
const ProtocolDetailSchema = z.object({ name: z.string(), tvl: DatedTvl });
const ChainsSchema = z.array(z.object({ name: z.string(), tvl: z.number() }));
const ChainHistorySchema = z.array(z.object({ date: z.number(), tvl: z.number() }));

const day = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString().slice(0, 10);

/** One point per UTC day (DefiLlama's last point of a series is often today's intraday value: the last one of a day wins). */
function daily(points: { date: number; value: number }[]): TvlPoint[] {
  const byDay = new Map<string, number>();
  for (const p of [...points].sort((a, b) => a.date - b.date)) byDay.set(day(p.date), p.value);
  return [...byDay.entries()].map(([date, tvl_usd]) => ({ date, tvl_usd }));
}

function parse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const r = schema.safeParse(value);
  if (!r.success) throw new ProviderError(PROVIDER, 'error', `${what}: unexpected response shape`);
  return r.data;
}

export interface DefiLlamaOptions {
  baseUrl: string;
  timeoutMs?: number;
  retries?: number;
  /** All attempts and waits of one call together (GetJsonOptions.deadlineMs). */
  deadlineMs?: number;
  /** How long answers are reused (default 10 minutes: DefiLlama updates TVL about hourly). */
  cacheTtlMs?: number;
  now?: () => number;
}

export class DefiLlamaSource implements ProjectSource {
  readonly name = PROVIDER;
  readonly #opts: DefiLlamaOptions;
  readonly #cache: TtlCache<unknown>;

  constructor(opts: DefiLlamaOptions) {
    this.#opts = { ...opts, baseUrl: opts.baseUrl.replace(/\/+$/, '') };
    this.#cache = new TtlCache({ ttlMs: opts.cacheTtlMs ?? 600_000, maxEntries: 200, now: opts.now });
  }

  #get(path: string, signal?: AbortSignal): Promise<unknown> {
    return this.#cache.getOrLoad(
      path,
      () => getJson(`${this.#opts.baseUrl}${path}`, { provider: PROVIDER, timeoutMs: this.#opts.timeoutMs, retries: this.#opts.retries, deadlineMs: this.#opts.deadlineMs }),
      signal,
    );
  }

  async protocols(signal?: AbortSignal): Promise<ProtocolList> {
    const rows = parse(ProtocolsSchema, await this.#get('/protocols', signal), '/protocols');
    const today = new Date(this.#opts.now?.() ?? Date.now()).toISOString().slice(0, 10);
    return {
      protocols: rows.map(
        (r): Protocol => ({
          name: r.name,
          slug: r.slug ?? slugOf(r.name),
          category: r.category ?? null,
          tvl_usd: r.tvl ?? null,
          chains: r.chains,
          oracles: r.oracles ?? [],
          url: r.url ?? null,
          gecko_id: r.gecko_id ?? null,
          // chainTvls also holds variants such as "Ethereum-borrowed" and "staking": only plain chains count.
          chain_tvls: r.chainTvls ? Object.fromEntries(Object.entries(r.chainTvls).filter(([k]) => r.chains.includes(k))) : null,
        }),
      ),
      as_of: today,
      source: PROVIDER,
    };
  }

  async protocolTvl(protocol: Protocol, signal?: AbortSignal): Promise<TvlHistory | undefined> {
    try {
      const detail = parse(ProtocolDetailSchema, await this.#get(`/protocol/${encodeURIComponent(protocol.slug)}`, signal), '/protocol');
      return { subject: detail.name, points: daily(detail.tvl.map((p) => ({ date: p.date, value: p.totalLiquidityUSD }))), source: PROVIDER };
    } catch (err) {
      if (err instanceof ProviderError && err.kind === 'not_found') return undefined;
      throw err;
    }
  }

  async chains(signal?: AbortSignal): Promise<{ chains: ChainTvl[]; source: string }> {
    const rows = parse(ChainsSchema, await this.#get('/v2/chains', signal), '/v2/chains');
    const today = new Date(this.#opts.now?.() ?? Date.now()).toISOString().slice(0, 10);
    return { chains: rows.map((r) => ({ name: r.name, tvl_usd: r.tvl, as_of: today })).sort((a, b) => b.tvl_usd - a.tvl_usd), source: PROVIDER };
  }

  async chainTvl(chain: string, signal?: AbortSignal): Promise<TvlHistory | undefined> {
    try {
      const rows = parse(ChainHistorySchema, await this.#get(`/v2/historicalChainTvl/${encodeURIComponent(chain)}`, signal), '/v2/historicalChainTvl');
      return { subject: chain, points: daily(rows.map((r) => ({ date: r.date, value: r.tvl }))), source: PROVIDER };
    } catch (err) {
      if (err instanceof ProviderError && err.kind === 'not_found') return undefined;
      throw err;
    }
  }
}
