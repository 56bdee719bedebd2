// The token registry: which contracts are which tokens, per network. Sources, in order of trust:
//  - a devnet manifest's tokens (on the networks whose RPC URL is the devnet's);
//  - the Uniswap default token list (curated; symbols, names, decimals), data/raw/coins/;
//  - the Etherscan-family token label clouds (names, symbols, websites, category slugs; no
//    decimals), data/raw/coins/;
//  - the market snapshot's asset platforms, which tie a contract to a priced asset.
// "Listed" tokens (the curated list and the devnet's) are what get_portfolio scans balances of:
// a wallet's airdropped spam never enters a portfolio, because spam is not on a curated list.
// Files are parsed on first use, not at boot.
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import type { AssetEntry } from './market/types.ts';

export interface TokenEntry {
  network: string;
  /** EVM: lower-case hex. Solana: the base58 mint as published. */
  address: string;
  symbol: string;
  name: string;
  /** Null when no source states it (the label clouds do not); read it on chain then. */
  decimals: number | null;
  /** On a curated list (the Uniswap default list, or the devnet's own tokens). */
  listed: boolean;
  /** Explorer category slugs (defi, stablecoin, meme, ...). */
  tags: string[];
  website: string | null;
  /** The market-data asset this contract is, when the snapshot ties them. */
  asset_id: string | null;
  sources: string[];
}

export interface TokenRegistry {
  get(network: string, address: string): TokenEntry | undefined;
  /** Candidates for a symbol or name: exact symbol first (listed before unlisted), then names. */
  search(query: string, network?: string): TokenEntry[];
  /** The curated tokens of a network (what a portfolio scan covers). */
  listed(network: string): TokenEntry[];
}

const RAW = path.resolve(import.meta.dirname, '../../data/raw/coins');
export const TOKEN_FILES = {
  uniswap: path.join(RAW, 'uniswap_default_tokenlist_by_chain.csv.gz'),
  etherscan: path.join(RAW, 'etherscan_token_labels.csv.gz'),
};
const NETWORKS = new Set(['ethereum', 'base', 'polygon', 'bsc', 'solana']);
const SOURCE_UNISWAP = 'Uniswap default token list v22.10.0';
const SOURCE_ETHERSCAN = 'etherscan token labels (2024-07)';

export interface DevnetTokenSpec {
  address: string;
  symbol: string;
  name: string;
  decimals: number;
}

export interface TokenRegistryOptions {
  /** Assets of the market snapshot (their platforms tie contracts to prices). */
  assets?: readonly AssetEntry[];
  /** Devnet tokens and the networks the devnet answers for. */
  devnet?: { tokens: readonly DevnetTokenSpec[]; networks: readonly string[] };
  files?: { uniswap: string; etherscan: string };
}

/** Rows keyed by column name, parsed as arrays first (about twice as fast as csv-parse's objects). */
function readCsv(file: string): Record<string, string>[] {
  const [header, ...rows] = parse(gunzipSync(fs.readFileSync(file)), { skip_empty_lines: true }) as string[][];
  return rows.map((r) => Object.fromEntries(header!.map((h, i) => [h, r[i] ?? ''])));
}
const keyOf = (network: string, address: string) => `${network}:${network === 'solana' ? address : address.toLowerCase()}`;

export function createTokenRegistry(opts: TokenRegistryOptions = {}): TokenRegistry {
  let built: { byKey: Map<string, TokenEntry>; all: TokenEntry[]; listed: Map<string, TokenEntry[]> } | undefined;
  const build = () => {
    if (built) return built;
    const byKey = new Map<string, TokenEntry>();
    const assetOf = new Map<string, string>();
    for (const a of opts.assets ?? []) for (const p of a.platforms) assetOf.set(keyOf(p.chain, p.address), a.id);
    const upsert = (network: string, address: string, patch: Partial<TokenEntry> & { source: string }) => {
      const key = keyOf(network, address);
      let e = byKey.get(key);
      if (!e) {
        e = {
          network,
          address: network === 'solana' ? address : address.toLowerCase(),
          symbol: '',
          name: '',
          decimals: null,
          listed: false,
          tags: [],
          website: null,
          asset_id: assetOf.get(key) ?? null,
          sources: [],
        };
        byKey.set(key, e);
      }
      // Earlier (more trusted) sources keep their fields; later ones only fill gaps.
      if (!e.symbol && patch.symbol) e.symbol = patch.symbol;
      if (!e.name && patch.name) e.name = patch.name;
      if (e.decimals === null && patch.decimals !== undefined) e.decimals = patch.decimals;
      if (patch.listed) e.listed = true;
      if (patch.tags) e.tags = [...new Set([...e.tags, ...patch.tags])];
      if (!e.website && patch.website) e.website = patch.website;
      e.sources.push(patch.source);
    };
    for (const network of opts.devnet?.networks ?? []) {
      for (const t of opts.devnet!.tokens) upsert(network, t.address, { symbol: t.symbol, name: t.name, decimals: t.decimals, listed: true, source: 'devnet manifest' });
    }
    const files = opts.files ?? TOKEN_FILES;
    for (const r of readCsv(files.uniswap)) {
      if (!NETWORKS.has(r.chain!)) continue;
      const decimals = Number(r.decimals);
      upsert(r.chain!, r.address!, { symbol: r.symbol, name: r.name, decimals: Number.isInteger(decimals) ? decimals : undefined, listed: true, source: SOURCE_UNISWAP });
    }
    for (const r of readCsv(files.etherscan)) {
      if (!NETWORKS.has(r.chain!)) continue;
      upsert(r.chain!, r.address!, {
        symbol: r.symbol,
        name: r.name,
        tags: r.labels ? r.labels.split(';').filter(Boolean) : [],
        website: r.website || undefined,
        source: SOURCE_ETHERSCAN,
      });
    }
    // A curated token the snapshot did not tie to an asset (its list spells the name differently,
    // "USDCoin" for "USD Coin") is tied by symbol when exactly one priced asset has that symbol.
    const pricedBySymbol = new Map<string, string[]>();
    for (const a of opts.assets ?? []) {
      if (!a.has_prices) continue;
      const list = pricedBySymbol.get(a.symbol.toLowerCase()) ?? [];
      list.push(a.id);
      pricedBySymbol.set(a.symbol.toLowerCase(), list);
    }
    for (const e of byKey.values()) {
      if (e.asset_id || !e.listed || e.sources.includes('devnet manifest')) continue;
      const ids = pricedBySymbol.get(e.symbol.toLowerCase());
      if (ids?.length === 1) e.asset_id = ids[0]!;
    }
    // Listed tokens per network, kept: get_portfolio asks for them on every call.
    const listed = new Map<string, TokenEntry[]>();
    for (const e of byKey.values()) {
      if (!e.listed) continue;
      const list = listed.get(e.network);
      if (list) list.push(e);
      else listed.set(e.network, [e]);
    }
    built = { byKey, all: [...byKey.values()], listed };
    return built;
  };
  return {
    get: (network, address) => build().byKey.get(keyOf(network, address)),
    listed: (network) => build().listed.get(network) ?? [],
    search(query, network) {
      const q = query.trim().toLowerCase().replace(/^\$/, '');
      if (!q) return [];
      const pool = build().all.filter((t) => !network || t.network === network);
      const rank = (t: TokenEntry) => (t.listed ? 0 : 1) + (t.asset_id ? 0 : 0.5);
      const bySymbol = pool.filter((t) => t.symbol.toLowerCase().replace(/^\$/, '') === q).sort((a, b) => rank(a) - rank(b));
      const seen = new Set(bySymbol);
      const byName = pool
        .filter((t) => !seen.has(t) && t.name.toLowerCase().includes(q))
        .sort((a, b) => rank(a) - rank(b) || a.name.length - b.name.length);
      return [...bySymbol, ...byName];
    },
  };
}
