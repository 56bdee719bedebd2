// What wallets hold, priced: the scan behind get_portfolio, get_risk_metrics and compare_wallets.
// EVM: one multicall per chain (native balances through Multicall3's getEthBalance, ERC-20
// balanceOf of every listed token of the registry, and the block number), chunked by calldata
// size and sent as one JSON-RPC batch: one HTTP round trip per chain whatever the token count.
// Solana: the SOL balance and the SPL token accounts of each address.
// Only curated ("listed") tokens count, so airdropped spam never enters a portfolio.
import { erc20Abi, formatUnits, getAddress, isAddress, type Address } from 'viem';
import { z } from 'zod';
import { ApiError, toApiError } from '../../errors.ts';
import { EVM_NETWORKS, type EvmNetwork } from '../../providers/evm/types.ts';
import type { Quote } from '../../providers/market/types.ts';
import type { TokenEntry } from '../../providers/tokens.ts';
import { causedBy, rpc } from '../common/evm.ts';
export { walletAddressSchema } from '../common/evm.ts';
import { NATIVE } from '../common/native.ts';
import { failureOf } from '../common/unavailable.ts';
import type { chainFailureShape } from '../common/output-shapes-2.ts';
import type { ServerDeps } from '../deps.ts';

/** Multicall3 (and the devnet's DevMulticall, at the same address): the two reads we use. */
const MULTICALL_ABI = [
  { type: 'function', name: 'getEthBalance', stateMutability: 'view', inputs: [{ name: 'addr', type: 'address' }], outputs: [{ name: 'balance', type: 'uint256' }] },
  { type: 'function', name: 'getBlockNumber', stateMutability: 'view', inputs: [], outputs: [{ name: 'blockNumber', type: 'uint256' }] },
] as const;
export const MULTICALL3: Address = '0xcA11bde05977b3631167028862bE2a173976CA11';
/** Calldata bytes per multicall chunk: ~200 balanceOf calls; the chunks share one HTTP batch. */
const MULTICALL_CHUNK_BYTES = 16_384;

type ChainFailure = z.infer<typeof chainFailureShape>;

export const PORTFOLIO_CHAINS = [...EVM_NETWORKS, 'solana'] as const;
export type PortfolioChain = (typeof PORTFOLIO_CHAINS)[number];

export const chainsSchema = z
  .array(z.enum(PORTFOLIO_CHAINS))
  .min(1)
  .max(5)
  .optional()
  .describe('Chains to scan (default: ethereum, base, polygon and bsc for 0x addresses; solana for Solana addresses).');

export const holdingShape = z.object({
  chain: z.enum(PORTFOLIO_CHAINS),
  token: z.string().nullable().describe('Contract or mint; null for the native coin.'),
  symbol: z.string(),
  name: z.string(),
  asset_id: z.string().nullable(),
  balance: z.string().describe('Whole units, decimal.'),
  balance_raw: z.string().describe('Smallest unit, integer.'),
  price_usd: z.number().nullable(),
  price_as_of: z.string().nullable(),
  value_usd: z.number().nullable(),
});
export type Holding = z.infer<typeof holdingShape>;

export const walletHoldingsShape = z.object({ address: z.string(), holdings: z.array(holdingShape), value_usd: z.number() });
export type WalletHoldings = z.infer<typeof walletHoldingsShape>;

/** Per chain: the block (EVM) or slot (Solana) read at, and how many listed tokens were checked. */
export const chainsReadShape = z.array(z.object({ chain: z.enum(PORTFOLIO_CHAINS), at: z.number().int().describe('Block, or slot on Solana.'), tokens_checked: z.number().int() }));

export interface PortfolioScan {
  wallets: WalletHoldings[];
  chains: z.infer<typeof chainsReadShape>;
  /** Chains that could not be read: the call still answers with the others. */
  unavailable: ChainFailure[];
  /** Solana token accounts of mints no curated list carries (not counted). */
  unlisted_solana_tokens: number;
  prices: { as_of: string | null; source: string | null; dates: { symbol: string; as_of: string }[] };
}

interface RawHolding {
  chain: PortfolioChain;
  address: string;
  token: TokenEntry | null;
  raw: bigint;
  decimals: number;
}

export async function scanPortfolio(deps: ServerDeps, addresses: string[], chains: PortfolioChain[] | undefined, signal: AbortSignal): Promise<PortfolioScan> {
  const evmAddresses = addresses.filter((a) => a.startsWith('0x')).map((a) => getAddress(a));
  const solAddresses = addresses.filter((a) => !a.startsWith('0x'));
  const wanted = chains ?? [...(evmAddresses.length ? EVM_NETWORKS : []), ...(solAddresses.length ? (['solana'] as const) : [])];
  if (wanted.includes('solana') && solAddresses.length === 0 && chains) {
    throw new ApiError('INVALID_PARAMS', 'solana was asked for but no Solana address was given.', { issues: [{ path: 'chains', message: 'solana needs a base58 address' }] });
  }
  // An address no chain asked for can read (a Solana address on ethereum) would answer $0 from nothing read.
  const unreadable = chains
    ? [...(wanted.some((c) => c !== 'solana') ? [] : evmAddresses.map((a) => ({ a, kind: 'an EVM address', needs: 'an EVM chain (ethereum, base, polygon, bsc)' }))), ...(wanted.includes('solana') ? [] : solAddresses.map((a) => ({ a, kind: 'a Solana address', needs: 'solana' })))]
    : [];
  if (unreadable.length > 0) {
    throw new ApiError('INVALID_PARAMS', `${unreadable.map((u) => `${u.a} is ${u.kind}, which none of the chains asked for (${wanted.join(', ')}) can read: add ${u.needs}`).join('; ')}.`, {
      issues: unreadable.map((u) => ({ path: 'chains', message: `${u.a}: add ${u.needs}` })),
    });
  }
  const raws: RawHolding[] = [];
  const chainInfo: PortfolioScan['chains'] = [];
  const unavailable: PortfolioScan['unavailable'] = [];
  let unlisted = 0;
  let firstError: unknown;

  await Promise.all(
    wanted.map(async (chain) => {
      try {
        if (chain === 'solana') {
          const r = await scanSolana(deps, solAddresses, signal);
          raws.push(...r.raws);
          unlisted += r.unlisted;
          chainInfo.push({ chain, at: r.slot, tokens_checked: r.tokensChecked });
        } else if (evmAddresses.length > 0) {
          const r = await scanEvm(deps, chain, evmAddresses);
          raws.push(...r.raws);
          chainInfo.push({ chain, at: r.block, tokens_checked: r.tokensChecked });
        }
      } catch (err) {
        firstError ??= err;
        unavailable.push({ chain, ...failureOf(err, chain) });
      }
    }),
  );
  // Nothing could be read at all: the call fails (and is not charged) rather than answer empty.
  if (chainInfo.length === 0 && firstError !== undefined) throw firstError;

  const ids = [...new Set(raws.map((r) => (r.token ? r.token.asset_id : NATIVE[r.chain].asset_id)).filter((x): x is string => Boolean(x)))];
  const quotes = ids.length ? await deps.market.quotes(ids, signal) : [];
  const quoteOf = new Map<string, Quote>(quotes.map((q) => [q.asset_id, q]));

  const byWallet = new Map<string, WalletHoldings>();
  for (const a of [...evmAddresses, ...solAddresses]) byWallet.set(a, { address: a, holdings: [], value_usd: 0 });
  for (const r of raws) {
    const native = NATIVE[r.chain];
    const assetId = r.token ? r.token.asset_id : native.asset_id;
    const q = assetId ? quoteOf.get(assetId) : undefined;
    const units = formatUnits(r.raw, r.decimals);
    const value = q ? Number(units) * q.price_usd : null;
    const w = byWallet.get(r.address)!;
    w.holdings.push({
      chain: r.chain,
      token: r.token ? (r.chain === 'solana' ? r.token.address : getAddress(r.token.address)) : null,
      symbol: r.token ? r.token.symbol : native.symbol,
      name: r.token ? r.token.name : native.name,
      asset_id: assetId,
      balance: units,
      balance_raw: r.raw.toString(),
      price_usd: q?.price_usd ?? null,
      price_as_of: q?.as_of ?? null,
      value_usd: value === null ? null : round2(value),
    });
    if (value !== null) w.value_usd += value;
  }
  for (const w of byWallet.values()) {
    w.value_usd = round2(w.value_usd);
    w.holdings.sort((a, b) => (b.value_usd ?? -1) - (a.value_usd ?? -1) || a.chain.localeCompare(b.chain) || a.symbol.localeCompare(b.symbol));
  }
  // The valuation is as old as its oldest price; which price is of which day is in `dates`.
  const asOf = quotes.map((q) => q.as_of).sort()[0] ?? null;
  return {
    wallets: [...byWallet.values()],
    chains: chainInfo.sort((a, b) => a.chain.localeCompare(b.chain)),
    unavailable: unavailable.sort((a, b) => a.chain.localeCompare(b.chain)),
    unlisted_solana_tokens: unlisted,
    prices: { as_of: asOf, source: quotes[0]?.source ?? null, dates: quotes.map((q) => ({ symbol: q.symbol.toUpperCase(), as_of: q.as_of })) },
  };
}

async function scanEvm(deps: ServerDeps, chain: EvmNetwork, addresses: Address[]): Promise<{ raws: RawHolding[]; block: number; tokensChecked: number }> {
  const tokens = deps.tokens.listed(chain).filter((t) => t.decimals !== null && isAddress(t.address, { strict: false }));
  const client = deps.evm.client(chain);
  const contracts = [
    { address: MULTICALL3, abi: MULTICALL_ABI, functionName: 'getBlockNumber' } as const,
    ...addresses.flatMap((a) => [
      { address: MULTICALL3, abi: MULTICALL_ABI, functionName: 'getEthBalance', args: [a] } as const,
      ...tokens.map((t) => ({ address: t.address as Address, abi: erc20Abi, functionName: 'balanceOf', args: [a] }) as const),
    ]),
  ];
  const results = await rpc(chain, () => client.multicall({ contracts, allowFailure: true, batchSize: MULTICALL_CHUNK_BYTES }));
  const head = results[0]!;
  if (head.status !== 'success') {
    // With allowFailure, multicall reports a transport failure (a node that never answered) as
    // failed calls rather than throwing it.
    if (causedBy(head.error, 'TimeoutError')) throw new ApiError('UPSTREAM_TIMEOUT', undefined, { provider: `evm:${chain}` });
    if (causedBy(head.error, 'HttpRequestError')) throw new ApiError('UPSTREAM_ERROR', undefined, { provider: `evm:${chain}` });
    throw new ApiError('UPSTREAM_ERROR', 'The chain has no Multicall3 contract to batch reads with.', { provider: `evm:${chain}` });
  }
  const raws: RawHolding[] = [];
  let i = 1;
  for (const a of addresses) {
    const native = results[i++]!;
    if (native.status === 'success' && (native.result as bigint) > 0n) raws.push({ chain, address: a, token: null, raw: native.result as bigint, decimals: NATIVE[chain].decimals });
    for (const t of tokens) {
      const r = results[i++]!;
      // A failed balanceOf (no code there on this chain, a reverting token) is no holding.
      if (r.status === 'success' && (r.result as bigint) > 0n) raws.push({ chain, address: a, token: t, raw: r.result as bigint, decimals: t.decimals! });
    }
  }
  return { raws, block: Number(head.result as bigint), tokensChecked: tokens.length };
}

async function scanSolana(deps: ServerDeps, addresses: string[], signal: AbortSignal): Promise<{ raws: RawHolding[]; slot: number; unlisted: number; tokensChecked: number }> {
  const raws: RawHolding[] = [];
  let slot = 0;
  let unlisted = 0;
  let checked = 0;
  try {
    await Promise.all(
      addresses.map(async (a) => {
        const [balance, accounts] = await Promise.all([deps.solana.balance(a, signal), deps.solana.tokenAccounts(a, signal)]);
        slot = Math.max(slot, balance.slot);
        if (balance.lamports > 0) raws.push({ chain: 'solana', address: a, token: null, raw: BigInt(balance.lamports), decimals: 9 });
        // Token accounts of one mint add up (an owner may hold several).
        const byMint = new Map<string, { raw: bigint; decimals: number }>();
        for (const acc of accounts) {
          checked += 1;
          const prev = byMint.get(acc.mint);
          byMint.set(acc.mint, { raw: (prev?.raw ?? 0n) + BigInt(acc.amount), decimals: acc.decimals });
        }
        for (const [mint, h] of byMint) {
          if (h.raw === 0n) continue;
          const entry = deps.tokens.get('solana', mint);
          if (!entry?.listed) {
            unlisted += 1;
            continue;
          }
          raws.push({ chain: 'solana', address: a, token: entry, raw: h.raw, decimals: h.decimals });
        }
      }),
    );
  } catch (err) {
    // ProviderError('solana', ...) becomes the coded upstream error naming Solana.
    throw toApiError(err);
  }
  return { raws, slot, unlisted, tokensChecked: checked };
}

const round2 = (x: number) => Math.round(x * 100) / 100;
