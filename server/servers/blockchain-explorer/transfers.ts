// get_token_transfers and get_transaction: ERC-20 activity decoded from logs and calldata.
import { decodeEventLog, decodeFunctionData, erc20Abi, formatEther, getAddress, parseAbiItem, type Address, type Hash, type Hex, type Log } from 'viem';
import { z } from 'zod';
import { ApiError } from '../../errors.ts';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import { addressSchema, chainSchema, evmNetwork, gwei, requireFamily, rpc, txIdSchema } from '../common/evm.ts';
import { cursorSchema, limitSchema, page } from '../common/paging.ts';
import type { ServerDeps } from '../deps.ts';
import { solanaTransaction } from './solana.ts';
import { NATIVE } from '../common/native.ts';

/** The widest block range one call scans: bounds the node's work and the answer's size. */
export const MAX_BLOCK_RANGE = 10_000;
const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

export function transferTools(deps: ServerDeps): ToolDefinition[] {
  const { evm, labels, market, chainCache } = deps;
  const labelOf = (a: string | null | undefined) => (a ? (labels.get(a)?.label ?? null) : null);
  return [
    defineTool({
      name: 'get_token_transfers',
      description: `Returns ERC-20 Transfer events of a token and/or an address (as sender or receiver) over a block range of at most ${MAX_BLOCK_RANGE} blocks, oldest first, labelled and paginated.`,
      input: z
        .object({
          chain: chainSchema,
          token: addressSchema.optional().describe('The token contract.'),
          address: addressSchema.optional().describe('Transfers from or to this address.'),
          from_block: z.number().int().min(0).optional().describe(`Default: ${MAX_BLOCK_RANGE} blocks before to_block.`),
          to_block: z.number().int().min(0).optional().describe('Default: the latest block.'),
          limit: limitSchema,
          cursor: cursorSchema,
        })
        .strict()
        .refine((a) => a.token !== undefined || a.address !== undefined, { message: 'give a token, an address, or both', path: ['token'] }),
      credits: 1,
      handler: async (args) => {
        const network = evmNetwork(args.chain, 'get_token_transfers');
        const client = evm.client(network);
        const latest = Number(await rpc(network, () => client.getBlockNumber()));
        const requestedTo = args.to_block ?? latest;
        const from = args.from_block ?? Math.max(0, requestedTo - MAX_BLOCK_RANGE + 1);
        if (from > requestedTo) throw new ApiError('INVALID_PARAMS', 'from_block is after to_block.', { issues: [{ path: 'from_block', message: 'must not be after to_block' }] });
        // The bound applies to the range asked for; blocks past the chain's head are then dropped.
        const to = Math.min(requestedTo, latest);
        if (requestedTo - from + 1 > MAX_BLOCK_RANGE) {
          throw new ApiError('INVALID_PARAMS', `A block range covers at most ${MAX_BLOCK_RANGE} blocks.`, {
            issues: [{ path: 'from_block', message: `at most ${MAX_BLOCK_RANGE} blocks from from_block to to_block` }],
          });
        }
        const token = args.token as Address | undefined;
        const who = args.address as Address | undefined;
        const range = { fromBlock: BigInt(from), toBlock: BigInt(to) };
        const logs = await rpc(network, async () => {
          if (!who) return client.getLogs({ address: token, event: TRANSFER, ...range });
          const [sent, received] = await Promise.all([
            client.getLogs({ address: token, event: TRANSFER, args: { from: who }, ...range }),
            client.getLogs({ address: token, event: TRANSFER, args: { to: who }, ...range }),
          ]);
          const seen = new Set<string>();
          return [...sent, ...received].filter((l) => {
            const id = `${l.transactionHash}:${l.logIndex}`;
            if (seen.has(id)) return false;
            seen.add(id);
            return true;
          });
        });
        const rows = logs
          .sort((a, b) => Number((a.blockNumber ?? 0n) - (b.blockNumber ?? 0n)) || (a.logIndex ?? 0) - (b.logIndex ?? 0))
          .map((l) => ({
            block: Number(l.blockNumber),
            tx_hash: l.transactionHash,
            log_index: l.logIndex,
            token: getAddress(l.address),
            from: l.args.from ? getAddress(l.args.from) : null,
            from_label: labelOf(l.args.from),
            to: l.args.to ? getAddress(l.args.to) : null,
            to_label: labelOf(l.args.to),
            value: l.args.value?.toString() ?? null,
          }));
        const { items, next_cursor } = page(rows, args.limit, args.cursor);
        return {
          data: { chain: network, from_block: from, to_block: to, total: rows.length, transfers: items, note: 'value is in the token\'s smallest unit' },
          source: `rpc:${network}`,
          data_as_of: null,
          next_cursor,
        };
      },
    }),
    defineTool({
      name: 'get_transaction',
      description: 'Returns a transaction with its status, fee in the native coin and in USD, the decoded call when it is a standard ERC-20 call, its decoded Transfer/Approval logs, and labels of the parties.',
      input: z.object({ chain: chainSchema, hash: txIdSchema.describe('A 0x transaction hash, or a Solana signature with chain solana.') }).strict(),
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
          source: `rpc:${network}`,
          data_as_of: null,
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
