// The Solana side of blockchain-explorer, over Solana's JSON-RPC: address summaries (SOL, SPL
// token accounts, last activity), address histories (signatures, paged by signature as the RPC
// does) and parsed transactions with the fee in SOL and USD.
import { toApiError } from '../../errors.ts';
import { z } from 'zod';
import type { ToolContext, ToolOutput } from '../../mcp/tool.ts';
import { nativeFee } from '../common/outputs.ts';
import { NATIVE } from '../common/native.ts';
import type { ServerDeps } from '../deps.ts';

const SOURCE = 'rpc:solana';

/** What get_address_summary answers on Solana. */
export const solanaSummaryOutput = z.object({
  chain: z.literal('solana'),
  address: z.string(),
  at_slot: z.number(),
  balance_lamports: z.string(),
  balance: z.string().describe('SOL'),
  token_accounts: z.array(
    z.object({ mint: z.string(), symbol: z.string().nullable(), listed: z.boolean(), amount: z.string(), decimals: z.number(), ui_amount: z.string() }),
  ),
  activity: z.object({
    first: z.null(),
    last: z.object({ signature: z.string(), slot: z.number(), timestamp: z.string().nullable() }).nullable(),
    note: z.string(),
  }),
});

/** What get_address_transactions answers on Solana: signatures, newest first. */
export const solanaHistoryOutput = z.object({
  chain: z.literal('solana'),
  address: z.string(),
  method: z.literal('rpc-signatures'),
  transactions: z.array(z.object({ signature: z.string(), slot: z.number(), status: z.enum(['success', 'failed']), block_time: z.string().nullable(), memo: z.string().nullable() })),
});

/** What get_transaction answers on Solana. */
export const solanaTransactionOutput = z.object({
  chain: z.literal('solana'),
  signature: z.string(),
  slot: z.number(),
  block_time: z.string().nullable(),
  status: z.enum(['success', 'failed']),
  fee_sol: z.number(),
  signers: z.array(z.string()),
  sol_changes: z.array(z.object({ account: z.string(), lamports: z.number() })),
  token_changes: z.array(z.object({ owner: z.string().nullable(), mint: z.string(), change: z.string(), decimals: z.number() })),
  fee: nativeFee,
});

/** Provider failures become the coded upstream errors naming Solana; NOT_FOUND stays NOT_FOUND. */
async function solanaCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toApiError(err);
  }
}

export async function solanaSummary({ solana, tokens }: ServerDeps, address: string, ctx: ToolContext): Promise<ToolOutput<z.input<typeof solanaSummaryOutput>>> {
  const [balance, accounts, last] = await solanaCall(() =>
    Promise.all([solana.balance(address, ctx.signal), solana.tokenAccounts(address, ctx.signal), solana.signatures(address, { limit: 1 }, ctx.signal)]),
  );
  return {
    data: {
      chain: 'solana' as const,
      address,
      at_slot: balance.slot,
      balance_lamports: String(balance.lamports),
      balance: String(balance.sol),
      token_accounts: accounts.map((a) => {
        const entry = tokens.get('solana', a.mint);
        return { mint: a.mint, symbol: entry?.symbol ?? null, listed: entry?.listed ?? false, amount: a.amount, decimals: a.decimals, ui_amount: a.ui_amount };
      }),
      activity: {
        first: null,
        last: last[0] ? { signature: last[0].signature, slot: last[0].slot, timestamp: last[0].block_time } : null,
        note: 'first activity would need every page of signatures; only the last is read',
      },
    },
    source: SOURCE,
    data_as_of: null,
  };
}

export async function solanaHistory({ solana }: ServerDeps, address: string, limit: number, cursor: string | undefined, ctx: ToolContext): Promise<ToolOutput<z.input<typeof solanaHistoryOutput>>> {
  // Solana pages by "before this signature": the last signature of a page is the next cursor.
  const rows = await solanaCall(() => solana.signatures(address, { limit, before: cursor }, ctx.signal));
  return {
    data: { chain: 'solana' as const, address, method: 'rpc-signatures' as const, transactions: rows },
    source: SOURCE,
    data_as_of: null,
    next_cursor: rows.length === limit ? rows.at(-1)!.signature : undefined,
  };
}

export async function solanaTransaction({ solana, market }: ServerDeps, signature: string, ctx: ToolContext): Promise<ToolOutput<z.input<typeof solanaTransactionOutput>>> {
  const tx = await solanaCall(() => solana.transaction(signature, ctx.signal));
  const quote = (await market.quotes([NATIVE.solana.asset_id], ctx.signal).catch(() => []))[0];
  return {
    data: {
      chain: 'solana' as const,
      ...tx,
      fee: {
        native: String(tx.fee_sol),
        symbol: 'SOL',
        usd: quote ? Math.round(tx.fee_sol * quote.price_usd * 1e6) / 1e6 : null,
        usd_price: quote ? { price_usd: quote.price_usd, as_of: quote.as_of, source: quote.source } : null,
      },
    },
    source: SOURCE,
    data_as_of: null,
  };
}
