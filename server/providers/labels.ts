// Address labels: who an address belongs to (an exchange, a fund, a bridge, a flagged hacker...).
// Two sources, the devnet's overlay winning over the public data:
//  - the public Etherscan-family label clouds in data/raw/labels/address_labels.csv.gz
//    (provenance in data/raw/PROVENANCE.md), for the four EVM networks we serve;
//  - a devnet manifest's labelled accounts (server/devnet), so the offline devnet has exchanges,
//    funds and wallets to find.
// The public file has ~45k rows for our networks; it is parsed on the first lookup, not at boot.
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';

export type LabelKind = 'exchange' | 'fund' | 'bridge' | 'flagged' | 'mev-bot' | 'token' | 'defi' | 'wallet' | 'other';

export interface AddressLabel {
  /** The name tag, e.g. "Binance 14" or "Arbitrum: Bridge". */
  label: string;
  kind: LabelKind | string;
  /** The explorer label slugs behind the kind (public data), e.g. ["exchange", "binance"]. */
  tags?: string[];
  source: string;
}

export interface LabelBook {
  /** The label of an address; with a network, only that network's public label is considered. */
  get(address: string, network?: string): AddressLabel | undefined;
}

export const PUBLIC_LABELS_FILE = path.resolve(import.meta.dirname, '../../data/raw/labels/address_labels.csv.gz');
const NETWORKS = new Set(['ethereum', 'base', 'polygon', 'bsc']);

// Slugs of centralised exchanges in the label clouds. The clouds tag exchange wallets by venue
// ("coinbase", "kraken") more often than with the generic "exchange" slug.
const EXCHANGE_TAGS = new Set([
  'exchange', 'binance', 'coinbase', 'kraken', 'okx', 'okex', 'huobi', 'htx', 'bitfinex', 'kucoin', 'gemini',
  'bybit', 'crypto-com', 'gate-io', 'bitstamp', 'ftx', 'bittrex', 'poloniex', 'upbit', 'bithumb', 'mexc', 'hotbit', 'bitget',
]);
const FLAGGED_TAGS = new Set(['phish-hack', 'heist', 'exploit', 'ofac-sanctions-lists', 'tornado-cash', 'blocked', 'scam']);
const DEFI_TAGS = new Set([
  'defi', 'dex', 'sushiswap', 'uniswap', 'balancer', 'bancor', 'curve-fi', 'aave', 'maker', 'compound', 'yearn',
  'yearn-finance', 'synthetix', 'lido', 'rocket-pool', 'kyberswap', '1inch', 'yield-farming',
]);

/** The kind a list of explorer slugs (and the name tag) stands for; flagged wins over all. */
export function kindOf(tags: readonly string[], name: string): LabelKind {
  const has = (set: Set<string>) => tags.some((t) => set.has(t));
  if (has(FLAGGED_TAGS)) return 'flagged';
  // A "… Deposit" address of a fund at an exchange belongs to the fund, not the exchange.
  if (tags.includes('fund')) return 'fund';
  if (has(EXCHANGE_TAGS)) return 'exchange';
  if (tags.includes('bridge') || /\bbridge\b/i.test(name)) return 'bridge';
  if (tags.includes('mev-bot') || tags.includes('mev-builder')) return 'mev-bot';
  if (tags.includes('token-contract')) return 'token';
  if (has(DEFI_TAGS)) return 'defi';
  return 'other';
}

let publicCache: { file: string; map: Map<string, Map<string, AddressLabel>> } | undefined;

/** network → address → label, from the public file (parsed once per process). */
function publicLabels(file: string): Map<string, Map<string, AddressLabel>> {
  if (publicCache?.file === file) return publicCache.map;
  // Rows as arrays (about twice as fast as csv-parse's keyed objects); columns found by name.
  const [header, ...rows] = parse(gunzipSync(fs.readFileSync(file)), { skip_empty_lines: true }) as string[][];
  const col = (name: string) => header!.indexOf(name);
  const [chainAt, addressAt, nameAt, labelsAt] = [col('chain'), col('address'), col('name'), col('labels')];
  const map = new Map<string, Map<string, AddressLabel>>();
  for (const r of rows) {
    const chain = r[chainAt]!;
    if (!NETWORKS.has(chain)) continue;
    const tags = r[labelsAt] ? r[labelsAt].split(';').filter(Boolean) : [];
    const name = r[nameAt] || tags.join(', ') || 'labelled address';
    let byAddress = map.get(chain);
    if (!byAddress) map.set(chain, (byAddress = new Map()));
    byAddress.set(r[addressAt]!.toLowerCase(), { label: name, kind: kindOf(tags, name), tags, source: 'etherscan label clouds (2023-2024)' });
  }
  publicCache = { file, map };
  return map;
}

export interface LabelBookOptions {
  /** A devnet manifest whose labelled accounts overlay the public labels. */
  devnetManifest?: string;
  /** The public label file; pass null to use the devnet overlay only. */
  publicFile?: string | null;
}

export function createLabelBook(opts: LabelBookOptions = {}): LabelBook {
  const overlay = new Map<string, AddressLabel>();
  if (opts.devnetManifest) {
    const manifest = JSON.parse(fs.readFileSync(opts.devnetManifest, 'utf8')) as { accounts: { address: string; label: string; kind: string }[] };
    for (const a of manifest.accounts) overlay.set(a.address.toLowerCase(), { label: a.label, kind: a.kind, source: 'devnet manifest' });
  }
  const file = opts.publicFile === undefined ? PUBLIC_LABELS_FILE : opts.publicFile;
  return {
    get(address, network) {
      const a = address.toLowerCase();
      const own = overlay.get(a);
      if (own || !file) return own;
      const byNetwork = publicLabels(file);
      if (network) return byNetwork.get(network)?.get(a);
      for (const n of NETWORKS) {
        const hit = byNetwork.get(n)?.get(a);
        if (hit) return hit;
      }
      return undefined;
    },
  };
}
