// Solana watches. A Solana watch's mark is a slot (stored in last_checked_block). Its activity is
// the address's successful transactions after the mark (getSignaturesForAddress, newest first,
// paged back to the mark), each read in full for what the address gained or lost.
import { formatUnits } from 'viem';
import type { SolanaTransaction } from '../../providers/solana/live.ts';
import { NATIVE } from '../common/native.ts';
import type { ServerDeps } from '../deps.ts';

export const SOLANA_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const PAGE = 1_000;
/**
 * Signatures read per watch per call. Pages run newest first, so when more than this are new,
 * the oldest of them cannot be reached and are skipped (the answer says so).
 */
export const SOLANA_MAX_SIGNATURES = 5 * PAGE;

/** Where a new watch starts: the slot of the address's newest transaction (0 if it has none). */
export async function solanaMark(deps: ServerDeps, address: string, signal: AbortSignal): Promise<number> {
  const [newest] = await deps.solana.signatures(address, { limit: 1 }, signal);
  return newest?.slot ?? 0;
}

export interface SolanaNews {
  /** Successful transactions after the mark, oldest first. */
  signatures: { signature: string; slot: number }[];
  /** The newest slot seen (the mark when nothing is new). */
  newest: number;
  /** False when more than SOLANA_MAX_SIGNATURES were new and the oldest were not reached. */
  complete: boolean;
}

export async function solanaSince(deps: ServerDeps, address: string, mark: number, signal: AbortSignal): Promise<SolanaNews> {
  const found: { signature: string; slot: number; status: string }[] = [];
  let before: string | undefined;
  let complete = false;
  while (found.length < SOLANA_MAX_SIGNATURES) {
    const page = await deps.solana.signatures(address, { limit: PAGE, before }, signal);
    for (const s of page) {
      if (s.slot <= mark) {
        complete = true;
        break;
      }
      found.push(s);
    }
    if (complete || page.length < PAGE) {
      complete = true;
      break;
    }
    before = page[page.length - 1]!.signature;
  }
  return {
    newest: found[0]?.slot ?? mark,
    // A failed transaction moved nothing but its fee.
    signatures: found.filter((s) => s.status === 'success').reverse(),
    complete,
  };
}

export interface SolanaMove {
  /** null: SOL. */
  mint: string | null;
  /** Positive: received. In the smallest unit. */
  change: bigint;
  decimals: number;
  counterparty: string | null;
}

/** What one transaction moved in and out of the address, per asset, its own fee left out. */
export function solanaMoves(tx: SolanaTransaction, address: string): SolanaMove[] {
  const out: SolanaMove[] = [];
  let lamports = tx.sol_changes.find((c) => c.account === address)?.lamports ?? 0;
  // The fee payer (the first signer) pays the fee: that is not a transfer.
  if (tx.signers[0] === address) lamports += Math.round(tx.fee_sol * 1e9);
  if (lamports !== 0) {
    // The other side: the account whose SOL moved most the opposite way.
    const other = tx.sol_changes.filter((c) => c.account !== address && Math.sign(c.lamports) === -Math.sign(lamports)).sort((a, b) => Math.abs(b.lamports) - Math.abs(a.lamports))[0];
    out.push({ mint: null, change: BigInt(lamports), decimals: NATIVE.solana.decimals, counterparty: other?.account ?? null });
  }
  for (const t of tx.token_changes) {
    if (t.owner !== address) continue;
    const change = BigInt(t.change);
    const other = tx.token_changes.find((o) => o.mint === t.mint && o.owner !== address && (BigInt(o.change) > 0n) !== (change > 0n));
    out.push({ mint: t.mint, change, decimals: t.decimals, counterparty: other?.owner ?? null });
  }
  return out;
}

export interface SolanaPricing {
  symbol(mint: string | null): string | null;
  usd(move: SolanaMove): number | null;
  quotes: { asset_id: string; symbol: string; price_usd: number; source: string; as_of: string }[];
}

/** Symbols and USD prices of SOL and of the SPL mints the token registry ties to market assets. */
export async function solanaPricing(deps: ServerDeps, mints: readonly (string | null)[], signal: AbortSignal): Promise<SolanaPricing> {
  const assetOf = (mint: string | null) => (mint === null ? NATIVE.solana.asset_id : (deps.tokens.get('solana', mint)?.asset_id ?? null));
  const ids = [...new Set(mints.map(assetOf).filter((id): id is string => id !== null))];
  const quotes = ids.length ? await deps.market.quotes(ids, signal) : [];
  const quoteOf = (mint: string | null) => quotes.find((q) => q.asset_id === assetOf(mint));
  return {
    symbol: (mint) => (mint === null ? NATIVE.solana.symbol : deps.tokens.get('solana', mint)?.symbol || null),
    usd: (move) => {
      const q = quoteOf(move.mint);
      const abs = move.change < 0n ? -move.change : move.change;
      return q ? Math.round(Number(formatUnits(abs, move.decimals)) * q.price_usd * 100) / 100 : null;
    },
    quotes: quotes.map((q) => ({ asset_id: q.asset_id, symbol: q.symbol, price_usd: q.price_usd, source: q.source, as_of: q.as_of })),
  };
}
