// What the whale tools share: block windows, scans of native and ERC-20 transfers, token facts,
// USD valuation and the exchange direction of a transfer.
import { formatUnits, getAddress, type Address, type Hash, type PublicClient } from 'viem';
import { ApiError } from '../../errors.ts';
import type { EvmNetwork } from '../../providers/evm/types.ts';
import type { AddressLabel, LabelBook } from '../../providers/labels.ts';
import type { Quote } from '../../providers/market/types.ts';
import { rpc } from '../common/evm.ts';
import { NATIVE } from '../common/native.ts';
import { erc20Metadata, resolveBlockRange, TRANSFER_EVENT, type BlockRange } from '../common/onchain.ts';
import type { ServerDeps } from '../deps.ts';

/**
 * The widest block window one whale-tool call scans. Native transfers are only visible in each
 * block's transaction list, so every block of the window is fetched in full; one bound for all
 * the whale tools keeps that work (and the answer) bounded and the rule simple.
 */
export const WHALE_MAX_BLOCKS = 1_000;
/** The window when none is given: recent enough to answer well within the tool timeout on a busy chain. */
export const WHALE_DEFAULT_BLOCKS = 100;
/** Blocks fetched at once: viem batches them into one HTTP request. */
const BLOCK_CHUNK = 25;

export type Window = BlockRange;

/**
 * The chain's current block, asked of the node on every call (the EVM clients never cache
 * eth_blockNumber): a stale head would make a watch miss the blocks mined since.
 */
export function headBlock(client: PublicClient, network: EvmNetwork): Promise<number> {
  return rpc(network, () => client.getBlockNumber()).then(Number);
}

/** from_block..to_block as asked (default: the last WHALE_DEFAULT_BLOCKS blocks), checked against the bound. */
export function resolveWindow(client: PublicClient, network: EvmNetwork, args: { from_block?: number; to_block?: number }, bound: number): Promise<Window> {
  return rpc(network, () => resolveBlockRange(client, args, { max: bound, defaultBlocks: WHALE_DEFAULT_BLOCKS }));
}

/** A movement of value: a successful transaction's native value, or an ERC-20 Transfer log. */
export interface Movement {
  block: number;
  tx_hash: Hash;
  /** Orders movements inside a block: the log index, or the transaction index for native ones. */
  position: number;
  /** null: the native coin. */
  token: Address | null;
  from: Address;
  to: Address;
  value: bigint;
}

const byChainOrder = (a: Movement, b: Movement) => a.block - b.block || a.position - b.position;

/**
 * Successful native-value transactions in [from, to] that `keep` accepts (top-level value only:
 * value moved by contract internals needs tracing, which public JSON-RPC does not offer).
 * With `stopAt` (epoch ms), the scan ends at the first chunk boundary past that time (after at
 * least one chunk, so a caller always progresses) and says which block it reached.
 */
export async function scanNative(
  client: PublicClient,
  network: EvmNetwork,
  range: { from: number; to: number },
  keep: (m: Movement) => boolean,
  signal: AbortSignal,
  opts: { stopAt?: number } = {},
): Promise<{ movements: Movement[]; to: number }> {
  const found: Movement[] = [];
  let reached = range.from - 1;
  for (let start = range.from; start <= range.to; start += BLOCK_CHUNK) {
    if (signal.aborted) throw new ApiError('UPSTREAM_TIMEOUT', undefined, { provider: `evm:${network}` });
    if (opts.stopAt !== undefined && start > range.from && Date.now() > opts.stopAt) break;
    const numbers = Array.from({ length: Math.min(BLOCK_CHUNK, range.to - start + 1) }, (_, i) => BigInt(start + i));
    const blocks = await rpc(network, () => Promise.all(numbers.map((blockNumber) => client.getBlock({ blockNumber, includeTransactions: true }))));
    for (const b of blocks) {
      for (const tx of b.transactions) {
        if (tx.value === 0n || !tx.to) continue;
        const m: Movement = { block: Number(b.number), tx_hash: tx.hash, position: tx.transactionIndex ?? 0, token: null, from: getAddress(tx.from), to: getAddress(tx.to), value: tx.value };
        if (keep(m)) found.push(m);
      }
    }
    reached = start + numbers.length - 1;
  }
  // A reverted transaction moves no value: keep only the successful ones (receipts of the few kept).
  const receipts = await rpc(network, () => Promise.all(found.map((m) => client.getTransactionReceipt({ hash: m.tx_hash }))));
  return { movements: found.filter((_, i) => receipts[i]!.status === 'success').sort(byChainOrder), to: reached };
}

/** ERC-20 Transfer logs in [from, to] of a token (or any), sent by and/or received by the given addresses. */
export async function scanTransfers(
  client: PublicClient,
  network: EvmNetwork,
  range: { from: number; to: number },
  filter: { token?: Address | Address[]; parties?: Address[] },
): Promise<Movement[]> {
  const base = { address: filter.token, event: TRANSFER_EVENT, fromBlock: BigInt(range.from), toBlock: BigInt(range.to) } as const;
  const logs = await rpc(network, async () => {
    if (!filter.parties) return client.getLogs(base);
    if (filter.parties.length === 0) return [];
    const [sent, received] = await Promise.all([client.getLogs({ ...base, args: { from: filter.parties } }), client.getLogs({ ...base, args: { to: filter.parties } })]);
    return [...sent, ...received];
  });
  const seen = new Set<string>();
  const out: Movement[] = [];
  for (const l of logs) {
    const id = `${l.transactionHash}:${l.logIndex}`;
    if (seen.has(id) || !l.args.from || !l.args.to || l.args.value === undefined) continue;
    seen.add(id);
    out.push({ block: Number(l.blockNumber), tx_hash: l.transactionHash!, position: l.logIndex ?? 0, token: getAddress(l.address), from: getAddress(l.args.from), to: getAddress(l.args.to), value: l.args.value });
  }
  return out.sort(byChainOrder);
}

export interface AssetFacts {
  /** null: the native coin. */
  token: Address | null;
  symbol: string | null;
  /** null when the contract does not answer decimals(): amounts then stay in the smallest unit. */
  decimals: number | null;
  /** The market quote valuing it, when the asset has one. */
  quote: Quote | null;
}

/**
 * Facts and prices of the assets movements involve. A token is priced when the token registry
 * ties its contract on this network to a market asset; the native coin by the network's coin.
 * Anything else has no quote: it is not valued in USD.
 */
export async function assetFacts(deps: ServerDeps, network: EvmNetwork, tokens: readonly (Address | null)[], signal: AbortSignal): Promise<Map<Address | null, AssetFacts>> {
  const client = deps.evm.client(network);
  const unique = [...new Set(tokens)];
  // Symbol and decimals through the shared chain cache (read once per TTL, batched into one request).
  const erc20 = unique.filter((t): t is Address => t !== null);
  const metadata = await rpc(network, () => Promise.all(erc20.map((address) => erc20Metadata(client, address, { cache: deps.chainCache, network }))));
  const meta = new Map(erc20.map((address, i) => [address, { symbol: metadata[i]!.symbol, decimals: metadata[i]!.decimals }]));
  const assetIds = new Map<Address | null, string>();
  for (const t of unique) {
    const id = t === null ? NATIVE[network].asset_id : assetOfContract(deps, network, t);
    if (id) assetIds.set(t, id);
  }
  const quotes = assetIds.size ? await deps.market.quotes([...new Set(assetIds.values())], signal) : [];
  const out = new Map<Address | null, AssetFacts>();
  for (const t of unique) {
    const facts = t === null ? { symbol: NATIVE[network].symbol, decimals: NATIVE[network].decimals } : meta.get(t)!;
    out.set(t, { token: t, ...facts, quote: quotes.find((q) => q.asset_id === assetIds.get(t)) ?? null });
  }
  return out;
}

/** The market asset a token contract is, as the token registry ties them (snapshot platforms, curated lists). */
function assetOfContract(deps: ServerDeps, network: EvmNetwork, token: Address): string | undefined {
  return deps.tokens.get(network, token)?.asset_id ?? undefined;
}

/** Curated token contracts of a network that the market data can value: what a whale scan without a token covers. */
export function pricedTokens(deps: ServerDeps, network: EvmNetwork): Address[] {
  return deps.tokens
    .listed(network)
    .filter((t) => t.asset_id !== null)
    .map((t) => getAddress(t.address));
}

/** The amount in whole units (a decimal string), or null if the decimals are unknown. */
export function units(value: bigint, facts: AssetFacts): string | null {
  return facts.decimals === null ? null : formatUnits(value, facts.decimals);
}

/** USD value at the quote's price, or null for an unpriced asset. */
export function usd(value: bigint, facts: AssetFacts): number | null {
  if (!facts.quote || facts.decimals === null) return null;
  return Math.round(Number(formatUnits(value, facts.decimals)) * facts.quote.price_usd * 100) / 100;
}

/** The prices used, as the answer reports them (asset, price, source, as-of). */
export function pricesUsed(facts: Iterable<AssetFacts>): { asset_id: string; symbol: string; price_usd: number; source: string; as_of: string }[] {
  const seen = new Map<string, Quote>();
  for (const f of facts) if (f.quote) seen.set(f.quote.asset_id, f.quote);
  return [...seen.values()].map((q) => ({ asset_id: q.asset_id, symbol: q.symbol, price_usd: q.price_usd, source: q.source, as_of: q.as_of }));
}

/** The latest as-of of the prices used, for metadata.data_as_of (null when none was needed). */
/** The oldest day among the prices used: an answer is as old as its oldest figure. */
export function pricesAsOf(facts: Iterable<AssetFacts>): string | null {
  const dates = pricesUsed(facts).map((p) => p.as_of).sort();
  return dates[0] ?? null;
}

export type Direction = 'to_exchange' | 'from_exchange' | 'between_exchanges' | 'within_exchange' | 'none';

/** Which way a transfer moves relative to labelled exchanges. */
export function direction(from: AddressLabel | undefined, to: AddressLabel | undefined): Direction {
  const fromEx = from?.kind === 'exchange';
  const toEx = to?.kind === 'exchange';
  if (fromEx && toEx) return exchangeName(from) === exchangeName(to) ? 'within_exchange' : 'between_exchanges';
  if (toEx) return 'to_exchange';
  if (fromEx) return 'from_exchange';
  return 'none';
}

/**
 * The venue an exchange label belongs to. Public label clouds name an exchange's many wallets
 * "Binance 14", "Coinbase: Cold Migration 5", "Coinbase: LINK Hot 12": the part before a colon,
 * without a trailing wallet number, is the venue.
 */
export function exchangeName(label: AddressLabel): string {
  return label.label.split(':')[0]!.replace(/\s+\d+$/, '').trim();
}

/** Labels of one network's addresses, looked up once per call. */
export function labeller(labels: LabelBook, network: EvmNetwork) {
  const cache = new Map<string, AddressLabel | undefined>();
  return (address: string): AddressLabel | undefined => {
    if (!cache.has(address)) cache.set(address, labels.get(address, network));
    return cache.get(address);
  };
}

export const labelView = (l: AddressLabel | undefined) => (l ? { label: l.label, kind: l.kind } : null);
