// The offline DefiLlama data in data/raw/projects (see data/README.md), read on first use:
// protocols as of 2025-12-19, TVL histories of 38 protocols (2021-2025), chain TVL histories
// (2018-06-28 .. 2023-07-25), DeFi's total, and the 2023 protocol/chain, stablecoin and bridge lists.
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { slugOf, type ChainTvl, type ProjectSource, type Protocol, type ProtocolList, type TvlHistory, type TvlPoint } from './types.ts';

export const PROJECTS_DIR = path.resolve(import.meta.dirname, '../../../data/raw/projects');

export const FILES = {
  protocols: 'defillama_protocols_2025-12-19.csv',
  protocolTvl: 'defillama_protocol_tvl_history_solana_move_lending.csv',
  chainTvl: 'defillama_chain_tvl_daily_2018_2023.csv',
  totalTvl: 'defillama_total_defi_tvl_daily_2018_2023.csv',
  listing2023: 'defillama_protocol_chain_category_2023.csv',
  stablecoins: 'defillama_stablecoins_list_2023.csv',
  bridges: 'defillama_bridges_list_2023.csv',
} as const;

/** The day the protocol list was captured (its file name says so; the CSV has no date column). */
export const PROTOCOLS_AS_OF = '2025-12-19';

function readCsv(dir: string, file: string): Record<string, string>[] {
  return parse(gunzipSync(fs.readFileSync(path.join(dir, `${file}.gz`))).toString('utf8'), { columns: true, skip_empty_lines: true }) as Record<string, string>[];
}

const list = (s: string | undefined, sep: string) => (s ?? '').split(sep).map((x) => x.trim()).filter(Boolean);

/**
 * The offline DefiLlama files, each read on first access: the protocol list (small) answers most
 * questions, while the chain TVL history (92,000 rows) is parsed only when a chain is asked about.
 */
export class ProjectsData {
  readonly #dir: string;
  #protocols?: Protocol[];
  #protocolTvl?: Map<string, TvlPoint[]>;
  #chainTvl?: Map<string, TvlPoint[]>;
  #totalTvl?: TvlPoint[];
  #listing2023?: Map<string, { chains: string[]; category: string }>;
  #stablecoins?: { symbol: string; id: string; peg: string }[];
  #bridges?: { name: string; id: string; chains: string[] }[];

  constructor(dir = PROJECTS_DIR) {
    this.#dir = dir;
  }

  get protocols(): Protocol[] {
    return (this.#protocols ??= readCsv(this.#dir, FILES.protocols).map(
      (r): Protocol => ({
        name: r.name!,
        slug: slugOf(r.name!),
        category: r.category || null,
        tvl_usd: r.tvl_usd ? Number(r.tvl_usd) : null,
        chains: list(r.chains, ';'),
        oracles: list(r.oracles, ';'),
        url: r.url || null,
      }),
    ));
  }

  /** Protocol name → daily TVL, oldest first (38 protocols, 2021-2025). */
  get protocolTvl(): Map<string, TvlPoint[]> {
    return (this.#protocolTvl ??= series(readCsv(this.#dir, FILES.protocolTvl), 'protocol'));
  }

  /** DefiLlama chain name → daily TVL, oldest first (2018-06-28 .. 2023-07-25). */
  get chainTvl(): Map<string, TvlPoint[]> {
    return (this.#chainTvl ??= series(readCsv(this.#dir, FILES.chainTvl), 'chain'));
  }

  get totalTvl(): TvlPoint[] {
    return (this.#totalTvl ??= readCsv(this.#dir, FILES.totalTvl).map((r) => ({ date: r.date!, tvl_usd: Number(r.tvl_usd) })));
  }

  /** 2023 listing: protocol name (lower case) → its chains and category then. */
  get listing2023(): Map<string, { chains: string[]; category: string }> {
    if (!this.#listing2023) {
      const m = new Map<string, { chains: string[]; category: string }>();
      for (const r of readCsv(this.#dir, FILES.listing2023)) {
        const k = r.Name!.toLowerCase();
        const e = m.get(k) ?? { chains: [], category: r.Category! };
        e.chains.push(r.Chain!);
        m.set(k, e);
      }
      this.#listing2023 = m;
    }
    return this.#listing2023;
  }

  get stablecoins(): { symbol: string; id: string; peg: string }[] {
    return (this.#stablecoins ??= readCsv(this.#dir, FILES.stablecoins).map((r) => ({ symbol: r.Symbol!, id: r.ID!, peg: r['Peg Type']! })));
  }

  get bridges(): { name: string; id: string; chains: string[] }[] {
    return (this.#bridges ??= readCsv(this.#dir, FILES.bridges).map((r) => ({ name: r.Name!, id: r.ID!, chains: list(r.Chains, ',') })));
  }
}

function series(rows: Record<string, string>[], key: string): Map<string, TvlPoint[]> {
  const out = new Map<string, TvlPoint[]>();
  for (const r of rows) {
    const k = r[key]!;
    const points = out.get(k) ?? [];
    points.push({ date: r.date!, tvl_usd: Number(r.tvl_usd) });
    out.set(k, points);
  }
  for (const points of out.values()) points.sort((a, b) => (a.date < b.date ? -1 : 1));
  return out;
}

export function lazyProjectsData(dir = PROJECTS_DIR): () => ProjectsData {
  const data = new ProjectsData(dir);
  return () => data;
}

export class SnapshotProjectSource implements ProjectSource {
  readonly name = 'snapshot';
  readonly data: () => ProjectsData;

  constructor(data: () => ProjectsData) {
    this.data = data;
  }

  async protocols(): Promise<ProtocolList> {
    const d = this.data();
    // Protocols whose history is in the data but which the 2025 list names differently (parents
    // such as "Drift" of "Drift Trade") are listed too, without TVL or category, so their history
    // can be asked for by name.
    const known = new Set(d.protocols.map((p) => p.name.toLowerCase()));
    const historyOnly = [...d.protocolTvl.keys()]
      .filter((n) => !known.has(n.toLowerCase()))
      .map((name): Protocol => ({ name, slug: slugOf(name), category: null, tvl_usd: null, chains: [], oracles: [], url: null }));
    return { protocols: [...d.protocols, ...historyOnly], as_of: PROTOCOLS_AS_OF, source: `snapshot:defillama-protocols-${PROTOCOLS_AS_OF}` };
  }

  async protocolTvl(protocol: Protocol): Promise<TvlHistory | undefined> {
    const points = this.data().protocolTvl.get(protocol.name);
    return points ? { subject: protocol.name, points, source: 'snapshot:defillama-protocol-tvl' } : undefined;
  }

  async chains(): Promise<{ chains: ChainTvl[]; source: string }> {
    const out: ChainTvl[] = [];
    for (const [name, points] of this.data().chainTvl) {
      const last = points[points.length - 1]!;
      out.push({ name, tvl_usd: last.tvl_usd, as_of: last.date });
    }
    return { chains: out.sort((a, b) => b.tvl_usd - a.tvl_usd), source: 'snapshot:defillama-chain-tvl' };
  }

  async chainTvl(chain: string): Promise<TvlHistory | undefined> {
    const d = this.data();
    const name = [...d.chainTvl.keys()].find((c) => c.toLowerCase() === chain.toLowerCase());
    return name ? { subject: name, points: d.chainTvl.get(name)!, source: 'snapshot:defillama-chain-tvl' } : undefined;
  }
}
