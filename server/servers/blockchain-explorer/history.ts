// get_address_transactions: an address's transactions, from the block-explorer API when one is
// configured (its whole history, newest first), otherwise by scanning a bounded range of recent
// blocks over JSON-RPC. The answer says which it did.
import { formatEther, getAddress, type Address, type Block, type Transaction } from 'viem';
import { z } from 'zod';
import { ApiError } from '../../errors.ts';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import { anyChainSchema, evmNetwork, requireFamily, rpc, walletAddressSchema } from '../common/evm.ts';
import { pastHead } from '../common/onchain.ts';
import { cursorSchema, decodeCursor, encodeCursor, limitSchema, page } from '../common/paging.ts';
import { evmChain } from '../common/outputs.ts';
import type { ServerDeps } from '../deps.ts';
import { solanaHistory, solanaHistoryOutput } from './solana.ts';

/** Blocks one scan reads in full: each can carry hundreds of transactions on a busy chain. */
export const MAX_SCAN_BLOCKS = 200;
const DEFAULT_SCAN_BLOCKS = 50;

/** Rows read from the block-explorer API per request (its page size). */
const EXPLORER_PAGE = 100;

const party = { from: z.string(), from_label: z.string().nullable(), to: z.string().nullable(), to_label: z.string().nullable() };

export function historyTools(deps: ServerDeps): ToolDefinition[] {
  const { evm, labels, explorer, chainCache } = deps;
  const labelOf = (a: string | null | undefined) => (a ? (labels.get(a)?.label ?? null) : null);
  return [
    defineTool({
      name: 'get_address_transactions',
      title: 'Address transactions',
      description: `Returns an address's transactions, newest first, paginated: its whole history from a block-explorer API when configured, else a scan of at most ${MAX_SCAN_BLOCKS} recent blocks (default ${DEFAULT_SCAN_BLOCKS}); on Solana, its signatures. Values in the native coin.`,
      input: z
        .object({
          chain: anyChainSchema,
          address: walletAddressSchema,
          from_block: z.number().int().min(0).optional().describe(`Scan only: default ${DEFAULT_SCAN_BLOCKS} blocks before to_block.`),
          to_block: z.number().int().min(0).optional().describe('Default: the latest block.'),
          limit: limitSchema,
          cursor: cursorSchema,
        })
        .strict(),
      output: z.union([
        z.object({
          chain: evmChain,
          address: z.string(),
          method: z.literal('explorer'),
          transactions: z.array(
            z.object({
              hash: z.string(),
              block: z.number(),
              timestamp: z.string(),
              ...party,
              value_wei: z.string(),
              value: z.string(),
              fee_wei: z.string(),
              status: z.enum(['success', 'failed']),
              method_id: z.string().nullable(),
              function_name: z.string().nullable(),
              created_contract: z.string().nullable(),
            }),
          ),
        }),
        z.object({
          chain: evmChain,
          address: z.string(),
          method: z.literal('block-scan'),
          scanned: z.object({ from_block: z.number(), to_block: z.number(), head: z.number() }),
          total: z.number(),
          transactions: z.array(
            z.object({ hash: z.string(), block: z.number(), timestamp: z.string(), ...party, value_wei: z.string(), value: z.string(), method_id: z.string().nullable() }),
          ),
          note: z.string(),
        }),
        solanaHistoryOutput,
      ]),
      credits: 1,
      handler: async (args, ctx) => {
        requireFamily(args.chain, args.address, 'address');
        if (args.chain === 'solana') return solanaHistory(deps, args.address, args.limit, args.cursor, ctx);
        const network = evmNetwork(args.chain, 'get_address_transactions');
        const address = getAddress(args.address);
        if (explorer) {
          // The cursor is an item offset; the explorer is read in fixed pages of EXPLORER_PAGE (1-based)
          // and a page of ours never crosses one, so it resumes exactly at the first row not returned.
          const offset = decodeCursor(args.cursor);
          const pageNo = Math.floor(offset / EXPLORER_PAGE) + 1;
          const rows = await explorer.transactions(network, address, { page: pageNo, pageSize: EXPLORER_PAGE, sort: 'desc', startBlock: args.from_block, endBlock: args.to_block }, ctx.signal);
          const views = rows.map((t) => ({ ...t, from: getAddress(t.from), from_label: labelOf(t.from), to: t.to ? getAddress(t.to) : null, to_label: labelOf(t.to), value: formatEther(BigInt(t.value_wei)) }));
          const within = offset % EXPLORER_PAGE;
          const fitted = page(views, args.limit, encodeCursor(within));
          const next = offset + fitted.items.length;
          const more = fitted.next_cursor !== undefined || rows.length === EXPLORER_PAGE;
          return {
            data: { chain: network, address, method: 'explorer' as const, transactions: fitted.items },
            source: 'explorer',
            data_as_of: null,
            next_cursor: more ? encodeCursor(next) : undefined,
            truncated: fitted.truncated,
            page: { ...fitted.share, offset },
          };
        }

        const client = evm.client(network);
        const { from, to, head, blocks } = await rpc(network, async () => {
          const head = Number(await client.getBlockNumber());
          const requestedTo = args.to_block ?? head;
          const from = args.from_block ?? Math.max(0, requestedTo - DEFAULT_SCAN_BLOCKS + 1);
          if (from > requestedTo) throw new ApiError('INVALID_PARAMS', 'from_block is after to_block.', { issues: [{ path: 'from_block', message: 'must not be after to_block' }] });
          if (requestedTo - from + 1 > MAX_SCAN_BLOCKS) {
            throw new ApiError('INVALID_PARAMS', `Without a block-explorer API a scan covers at most ${MAX_SCAN_BLOCKS} blocks.`, {
              issues: [{ path: 'from_block', message: `at most ${MAX_SCAN_BLOCKS} blocks from from_block to to_block` }],
            });
          }
          pastHead(args, head);
          const to = Math.min(requestedTo, head);
          const numbers = Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => BigInt(to - i));
          // One batched request for the range; final blocks come from the cache.
          const blocks = await Promise.all(
            numbers.map((n) =>
              chainCache.immutable(
                `${network}:block-full:${n}`,
                () => client.getBlock({ blockNumber: n, includeTransactions: true }) as Promise<Block<bigint, true>>,
                (b) => b.number !== null && chainCache.isFinal(b.number, head),
              ),
            ),
          );
          return { from, to, head, blocks };
        });
        const mine = (t: Transaction) => t.from.toLowerCase() === address.toLowerCase() || t.to?.toLowerCase() === address.toLowerCase();
        const rows = blocks.flatMap((b) =>
          b.transactions
            .filter(mine)
            .sort((x, y) => (y.transactionIndex ?? 0) - (x.transactionIndex ?? 0))
            .map((t) => ({
              hash: t.hash,
              block: Number(b.number),
              timestamp: new Date(Number(b.timestamp) * 1000).toISOString(),
              from: getAddress(t.from),
              from_label: labelOf(t.from),
              to: t.to ? getAddress(t.to as Address) : null,
              to_label: labelOf(t.to),
              value_wei: t.value.toString(),
              value: formatEther(t.value),
              method_id: t.input.length >= 10 ? t.input.slice(0, 10) : null,
            })),
        );
        const { items, next_cursor, truncated, share } = page(rows, args.limit, args.cursor);
        return {
          data: {
            chain: network,
            address,
            method: 'block-scan' as const,
            scanned: { from_block: from, to_block: to, head },
            total: rows.length,
            transactions: items,
            note: 'No block-explorer API is configured (EXPLORER_API_KEY): only the scanned blocks are covered, and status and fees need get_transaction.',
          },
          source: `rpc:${network}`,
          data_as_of: null,
          next_cursor,
          truncated,
          page: share,
        };
      },
    }),
  ];
}
