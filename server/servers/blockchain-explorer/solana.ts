// The Solana side of blockchain-explorer, over Solana's JSON-RPC: address summaries (SOL, SPL
// token accounts, last activity), address histories (signatures, paged by signature as the RPC
// does) and parsed transactions with the fee in SOL and USD.
import { toApiError } from '../../errors.ts';
import type { ToolContext, ToolOutput } from '../../mcp/tool.ts';
import { NATIVE } from '../common/native.ts';
import type { ServerDeps } from '../deps.ts';

const SOURCE = 'rpc:solana';

/** Provider failures become the coded upstream errors naming Solana; NOT_FOUND stays NOT_FOUND. */
async function solanaCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toApiError(err);
  }
}

export async function solanaSummary({ solana, tokens }: ServerDeps, address: string, ctx: ToolContext): Promise<ToolOutput> {
  const [balance, accounts, last] = await solanaCall(() =>
    Promise.all([solana.balance(address, ctx.signal), solana.tokenAccounts(address, ctx.signal), solana.signatures(address, { limit: 1 }, ctx.signal)]),
  );
  return {
    data: {
      chain: 'solana',
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

export async function solanaHistory({ solana }: ServerDeps, address: string, limit: number, cursor: string | undefined, ctx: ToolContext): Promise<ToolOutput> {
  // Solana pages by "before this signature": the last signature of a page is the next cursor.
  const rows = await solanaCall(() => solana.signatures(address, { limit, before: cursor }, ctx.signal));
  return {
    data: { chain: 'solana', address, method: 'rpc-signatures', transactions: rows },
    source: SOURCE,
    data_as_of: null,
    next_cursor: rows.length === limit ? rows.at(-1)!.signature : undefined,
  };
}

export async function solanaTransaction({ solana, market }: ServerDeps, signature: string, ctx: ToolContext): Promise<ToolOutput> {
  const tx = await solanaCall(() => solana.transaction(signature, ctx.signal));
  const quote = (await market.quotes([NATIVE.solana.asset_id], ctx.signal).catch(() => []))[0];
  return {
    data: {
      chain: 'solana',
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
