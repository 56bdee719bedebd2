// get_token_transfers and get_transaction: ERC-20 activity decoded from logs and calldata.
import { decodeEventLog, decodeFunctionData, erc20Abi, formatEther, getAddress, type Address, type Hash, type Hex, type Log } from 'viem';
import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import { addressSchema, anyChainSchema, chainSchema, evmNetwork, gwei, requireFamily, rpc, txIdSchema } from '../common/evm.ts';
import { MAX_BLOCK_RANGE, resolveBlockRange, transferLogs } from '../common/onchain.ts';
import { cursorSchema, limitSchema, page } from '../common/paging.ts';
import type { ServerDeps } from '../deps.ts';
import { solanaTransaction, solanaTransactionOutput } from './solana.ts';
import { NATIVE } from '../common/native.ts';
import { evmChain, nativeFee } from '../common/outputs.ts';


/** Blocks one call scans for every token's transfers (neither token nor address given). */
const UNFILTERED_BLOCKS = 10;

export function transferTools(deps: ServerDeps): ToolDefinition[] {
  const { evm, labels, market, chainCache } = deps;
  const labelOf = (a: string | null | undefined) => (a ? (labels.get(a)?.label ?? null) : null);
  return [
    defineTool({
      name: 'get_token_transfers',
      title: 'Token transfers',
      description: `Returns the ERC-20 transfers of a token and/or an address over at most ${MAX_BLOCK_RANGE} blocks (with neither, every token's transfers over at most ${UNFILTERED_BLOCKS} blocks), oldest first, labelled, paginated. Values in the token's smallest unit.`,
      input: z
        .object({
          chain: chainSchema,
          token: addressSchema.optional().describe('The token contract.'),
          address: addressSchema.optional().describe('Transfers from or to this address.'),
          from_block: z.number().int().min(0).optional().describe(`Default: ${MAX_BLOCK_RANGE} blocks before to_block (${UNFILTERED_BLOCKS} with neither token nor address).`),
          to_block: z.number().int().min(0).optional().describe('Default: the latest block.'),
          limit: limitSchema,
          cursor: cursorSchema,
        })
        .strict(),
      output: z.object({
        chain: evmChain,
        from_block: z.number(),
        to_block: z.number(),
        total: z.number(),
        transfers: z.array(
          z.object({
            block: z.number(),
            tx_hash: z.string(),
            log_index: z.number(),
            token: z.string(),
            from: z.string(),
            from_label: z.string().nullable(),
            to: z.string(),
            to_label: z.string().nullable(),
            value: z.string(),
          }),
        ),
        note: z.string(),
      }),
      credits: 1,
      handler: async (args) => {
        const network = evmNetwork(args.chain, 'get_token_transfers');
        const client = evm.client(network);
        // Every token's transfers (no filter) are many per block: that scan covers a few blocks only.
        const unfiltered = args.token === undefined && args.address === undefined;
        const { from, to } = await rpc(network, () => resolveBlockRange(client, args, unfiltered ? { max: UNFILTERED_BLOCKS } : {}));
        const token = args.token as Address | undefined;
        const who = args.address as Address | undefined;
        const logs = await rpc(network, () => transferLogs(client, { token, address: who, from, to }));
        // transferLogs answers oldest first without duplicates.
        const rows = logs.map((l) => ({
          block: l.block,
          tx_hash: l.tx_hash,
          log_index: l.log_index,
          token: l.token,
          from: l.from,
          from_label: labelOf(l.from),
          to: l.to,
          to_label: labelOf(l.to),
          value: l.value.toString(),
        }));
        const { items, next_cursor, truncated, share } = page(rows, args.limit, args.cursor);
        return {
          data: { chain: network, from_block: from, to_block: to, total: rows.length, transfers: items, note: 'value is in the token\'s smallest unit' },
          source: `rpc:${network}`,
          data_as_of: null,
          next_cursor,
          truncated,
          page: share,
        };
      },
    }),
    defineTool({
      name: 'get_transaction',
      title: 'Transaction',
      description: 'Returns a transaction: status, fee in the native coin and USD, its ERC-20 call and Transfer/Approval logs decoded, parties labelled.',
      input: z.object({ chain: anyChainSchema, hash: txIdSchema.describe('A 0x transaction hash, or a Solana signature with chain solana.') }).strict(),
      output: z.union([
        z.object({
          chain: evmChain,
          hash: z.string(),
          status: z.enum(['success', 'reverted']),
          block: z.number(),
          from: z.string(),
          from_label: z.string().nullable(),
          to: z.string().nullable(),
          to_label: z.string().nullable(),
          value_wei: z.string(),
          value: z.string(),
          fee: nativeFee.extend({ gas_used: z.string(), effective_gas_price_gwei: z.number() }),
          call: z.object({ function: z.string(), args: z.record(z.string(), z.string()) }).nullable(),
          logs: z.array(
            z.object({
              event: z.string().nullable().describe('null: not an ERC-20 event (raw topics and data then)'),
              contract: z.string(),
              args: z.record(z.string(), z.string()).optional(),
              topics: z.array(z.string()).optional(),
              data: z.string().optional(),
            }),
          ),
        }),
        solanaTransactionOutput,
      ]),
      credits: 1,
      handler: async (args, ctx) => {
        requireFamily(args.chain, args.hash, 'hash');
        if (args.chain === 'solana') return solanaTransaction(deps, args.hash, ctx);
        const network = evmNetwork(args.chain, 'get_transaction');
        const client = evm.client(network);
        const hash = args.hash as Hash;
        // A mined transaction and its receipt never change once final: those come from the cache.
        const [tx, receipt] = await rpc(network, () =>
          chainCache.immutable(
            `${network}:tx:${hash}`,
            () => Promise.all([client.getTransaction({ hash }), client.getTransactionReceipt({ hash }), client.getBlockNumber()]),
            ([, r, head]) => chainCache.isFinal(r.blockNumber, head),
          ),
        );
        const call = decodeErc20Call(tx.input);
        const decodeLog = (l: Log) => {
          try {
            const e = decodeEventLog({ abi: erc20Abi, data: l.data, topics: l.topics });
            const args = Object.fromEntries(Object.entries(e.args).map(([k, v]) => [k, typeof v === 'string' && v.startsWith('0x') && v.length === 42 ? getAddress(v) : String(v)]));
            return { event: e.eventName, contract: getAddress(l.address), args };
          } catch {
            return { event: null, contract: getAddress(l.address), topics: l.topics, data: l.data };
          }
        };
        const fee = receipt.gasUsed * receipt.effectiveGasPrice;
        // The fee in USD at the native coin's latest price (not the price on the day it was paid).
        const native = NATIVE[network];
        const quote = (await market.quotes([native.asset_id], ctx.signal).catch(() => []))[0];
        return {
          data: {
            chain: network,
            hash,
            status: receipt.status,
            block: Number(receipt.blockNumber),
            from: getAddress(tx.from),
            from_label: labelOf(tx.from),
            to: tx.to ? getAddress(tx.to) : null,
            to_label: labelOf(tx.to),
            value_wei: tx.value.toString(),
            value: formatEther(tx.value),
            fee: {
              native: formatEther(fee),
              symbol: native.symbol,
              usd: quote ? Math.round(Number(formatEther(fee)) * quote.price_usd * 1e6) / 1e6 : null,
              usd_price: quote ? { price_usd: quote.price_usd, as_of: quote.as_of, source: quote.source } : null,
              gas_used: receipt.gasUsed.toString(),
              effective_gas_price_gwei: gwei(receipt.effectiveGasPrice),
            },
            call,
            logs: receipt.logs.map(decodeLog),
          },
          source: quote ? `rpc:${network}+${quote.source}` : `rpc:${network}`,
          // The transaction is read now; the fee's USD value rests on a dated price, the answer's oldest figure.
          data_as_of: quote?.as_of ?? null,
          ...(quote ? { notes: [`The fee's USD value uses ${native.symbol}'s price as of ${quote.as_of}, not the price on the day the fee was paid.`] } : {}),
        };
      },
    }),
  ];
}

/** The call as a standard ERC-20 function with named arguments, or null if it is not one. */
function decodeErc20Call(input: Hex): { function: string; args: Record<string, string> } | null {
  try {
    const decoded = decodeFunctionData({ abi: erc20Abi, data: input });
    const names = erc20Abi.find((f) => f.type === 'function' && f.name === decoded.functionName)?.inputs.map((i) => i.name) ?? [];
    return {
      function: decoded.functionName,
      args: Object.fromEntries((decoded.args ?? []).map((v, i) => [names[i] || `arg${i}`, typeof v === 'string' && v.length === 42 ? getAddress(v) : String(v)])),
    };
  } catch {
    return null; // not a standard ERC-20 call (e.g. a plain transfer of the native coin)
  }
}
