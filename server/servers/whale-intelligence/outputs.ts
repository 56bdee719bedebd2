// The shapes whale-intelligence answers with. Amounts are decimal strings in whole token units
// (null when the token reports no decimals), *_raw in the smallest unit; USD values are null for
// assets without a market price.
import { z } from 'zod';
import { EVM_NETWORKS } from '../../providers/evm/types.ts';
import { chainShape } from '../common/output-shapes-2.ts';

export const evmChainShape = z.enum(EVM_NETWORKS);

export const labelShape = z.object({ label: z.string(), kind: z.string().describe('exchange, fund, wallet, ...') }).nullable();

export const directionShape = z.enum(['to_exchange', 'from_exchange', 'between_exchanges', 'within_exchange', 'none']);

export const amountShape = z.string().nullable();
export const usdShape = z.number().nullable();

/** The market prices the answer used, each with its day. */
export const pricesShape = z.array(z.object({ asset_id: z.string(), symbol: z.string(), price_usd: z.number(), source: z.string(), as_of: z.string() }));

export const blockRangeFields = { from_block: z.number().int(), to_block: z.number().int() };

export const watchShape = z.object({
  chain: chainShape,
  address: z.string(),
  note: z.string().nullable(),
  created_at: z.string(),
  last_checked_at: z.string().nullable(),
  last_checked_block: z.number().int().nullable().describe('Block, or slot on Solana.'),
});

export const activityRowShape = z.object({
  chain: chainShape,
  watched: z.string(),
  watched_label: labelShape,
  direction: z.enum(['in', 'out']),
  block: z.number().int().describe('Block, or slot on Solana.'),
  tx_hash: z.string().describe('Hash, or signature on Solana.'),
  asset: z.string().nullable(),
  token: z.string().nullable().describe('Contract or SPL mint; null for the native coin.'),
  amount: amountShape,
  amount_raw: z.string(),
  usd: usdShape,
  counterparty: z.string().nullable(),
  counterparty_label: labelShape,
});
export type ActivityRow = z.infer<typeof activityRowShape>;
