// Chain state: gas, blocks and address summaries, on EVM networks and Solana.
import { formatEther, type Block } from 'viem';
import { z } from 'zod';
import { ApiError } from '../../errors.ts';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import { anyChainSchema, chainSchema, evmNetwork, gwei, hashSchema, requireFamily, rpc, walletAddressSchema } from '../common/evm.ts';
import { addressLabel, evmChain } from '../common/outputs.ts';
import { solanaSummary, solanaSummaryOutput } from './solana.ts';
import type { ServerDeps } from '../deps.ts';

const txRef = z.object({ hash: z.string(), block: z.number(), timestamp: z.string() }).nullable();

export function chainTools(deps: ServerDeps): ToolDefinition[] {
  const { evm, labels, explorer } = deps;
  const blockView = (b: Block) => ({
    number: Number(b.number),
    hash: b.hash,
    timestamp: new Date(Number(b.timestamp) * 1000).toISOString(),
    transactions: b.transactions.length,
    gas_used: b.gasUsed.toString(),
    gas_limit: b.gasLimit.toString(),
    base_fee_gwei: b.baseFeePerGas === null || b.baseFeePerGas === undefined ? null : gwei(b.baseFeePerGas),
    miner: b.miner,
    miner_label: b.miner ? (labels.get(b.miner) ?? null) : null,
  });

  return [
    defineTool({
      name: 'get_gas',
      title: 'Gas prices',
      description: 'Returns the base fee and the 10th/50th/90th priority-fee percentiles over the last 20 blocks, in gwei.',
      input: z.object({ chain: chainSchema }).strict(),
      output: z.object({
        chain: evmChain,
        oldest_block: z.number(),
        blocks: z.number(),
        base_fee_gwei: z.object({ latest: z.number(), next_block: z.number() }),
        priority_fee_gwei: z.object({ p10: z.number().nullable(), p50: z.number().nullable(), p90: z.number().nullable() }),
        gas_used_ratio: z.number().describe('mean over the blocks, 0-1'),
      }),
      credits: 0,
      handler: async (args) => {
        const network = evmNetwork(args.chain, 'get_gas');
        const history = await rpc(network, () =>
          evm.client(network).getFeeHistory({ blockCount: 20, rewardPercentiles: [10, 50, 90], blockTag: 'latest' }),
        );
        const rewards = history.reward ?? [];
        const median = (xs: bigint[]) => {
          const sorted = [...xs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
          return sorted.length ? gwei(sorted[Math.floor(sorted.length / 2)]!) : null;
        };
        const base = history.baseFeePerGas;
        return {
          data: {
            chain: network,
            oldest_block: Number(history.oldestBlock),
            blocks: base.length - 1,
            base_fee_gwei: { latest: gwei(base[base.length - 2] ?? 0n), next_block: gwei(base[base.length - 1] ?? 0n) },
            priority_fee_gwei: { p10: median(rewards.map((r) => r[0] ?? 0n)), p50: median(rewards.map((r) => r[1] ?? 0n)), p90: median(rewards.map((r) => r[2] ?? 0n)) },
            gas_used_ratio: history.gasUsedRatio.reduce((a, b) => a + b, 0) / Math.max(1, history.gasUsedRatio.length),
          },
          source: `rpc:${network}`,
          data_as_of: null,
        };
      },
    }),
    defineTool({
      name: 'get_block',
      title: 'Block',
      description: 'Returns a block by number, by hash, the last one at or before a time, or (with none of them) the latest block.',
      input: z
        .object({
          chain: chainSchema,
          number: z.number().int().min(0).optional().describe('At most one of number, hash or timestamp; none: the latest block.'),
          hash: hashSchema.optional(),
          timestamp: z.string().datetime({ offset: true }).optional().describe('ISO 8601: the last block at or before this time.'),
        })
        .strict()
        .refine((a) => [a.number, a.hash, a.timestamp].filter((x) => x !== undefined).length <= 1, {
          message: 'give at most one of number, hash or timestamp (none: the latest block)',
          path: ['number'],
        }),
      output: z.object({
        chain: evmChain,
        block: z.object({
          number: z.number(),
          hash: z.string().nullable(),
          timestamp: z.string(),
          transactions: z.number(),
          gas_used: z.string(),
          gas_limit: z.string(),
          base_fee_gwei: z.number().nullable(),
          miner: z.string(),
          miner_label: addressLabel.nullable(),
        }),
      }),
      credits: 1,
      handler: async (args) => {
        const network = evmNetwork(args.chain, 'get_block');
        const client = evm.client(network);
        const block = await rpc(network, async () => {
          if (args.number !== undefined) return client.getBlock({ blockNumber: BigInt(args.number) });
          if (args.hash !== undefined) return client.getBlock({ blockHash: args.hash as `0x${string}` });
          if (args.timestamp === undefined) return client.getBlock();
          // The last block at or before the time: binary search on block timestamps.
          const target = BigInt(Math.floor(Date.parse(args.timestamp) / 1000));
          const latest = await client.getBlock();
          if (latest.timestamp <= target) return latest;
          let lo = 0n;
          let hi = latest.number;
          const genesis = await client.getBlock({ blockNumber: 0n });
          if (genesis.timestamp > target) throw new ApiError('NOT_FOUND', 'That time is before the chain began.', { timestamp: args.timestamp, chain: network });
          while (lo < hi) {
            const mid = (lo + hi + 1n) / 2n;
            const b = await client.getBlock({ blockNumber: mid });
            if (b.timestamp <= target) lo = mid;
            else hi = mid - 1n;
          }
          return client.getBlock({ blockNumber: lo });
        });
        return { data: { chain: network, block: blockView(block) }, source: `rpc:${network}`, data_as_of: null };
      },
    }),
    defineTool({
      name: 'get_address_summary',
      title: 'Address summary',
      description:
        "Returns an address's native balance, nonce, whether it is a contract, its label, and its first and last activity (with a block-explorer API); on Solana its SOL, token accounts and last activity.",
      input: z.object({ chain: anyChainSchema, address: walletAddressSchema }).strict(),
      output: z.union([
        z.object({
          chain: evmChain,
          address: z.string(),
          at_block: z.number(),
          balance_wei: z.string(),
          balance: z.string().describe('native coin'),
          nonce: z.number(),
          is_contract: z.boolean(),
          label: addressLabel.nullable(),
          activity: z.object({ first: txRef, last: txRef, source: z.string().optional(), note: z.string().optional() }),
        }),
        solanaSummaryOutput,
      ]),
      credits: 1,
      handler: async (args, ctx) => {
        requireFamily(args.chain, args.address, 'address');
        if (args.chain === 'solana') return solanaSummary(deps, args.address, ctx);
        const network = evmNetwork(args.chain, 'get_address_summary');
        const client = evm.client(network);
        const address = args.address as `0x${string}`;
        const [balance, nonce, code, block] = await rpc(network, () =>
          Promise.all([client.getBalance({ address }), client.getTransactionCount({ address }), client.getCode({ address }), client.getBlockNumber()]),
        );
        // History is the explorer's; when it fails the rest of the summary still answers.
        const activity = explorer
          ? await explorer.activity(network, address, ctx.signal).then(
              ({ first, last }) => ({
                first: first && { hash: first.hash, block: first.block, timestamp: first.timestamp },
                last: last && { hash: last.hash, block: last.block, timestamp: last.timestamp },
                source: 'explorer',
              }),
              (err: unknown) => ({ first: null, last: null, note: `the block-explorer API failed: ${(err as Error).message}` }),
            )
          : { first: null, last: null, note: 'needs a block-explorer API (EXPLORER_API_KEY), which is not configured' };
        return {
          data: {
            chain: network,
            address,
            at_block: Number(block),
            balance_wei: balance.toString(),
            balance: formatEther(balance),
            nonce,
            is_contract: code !== undefined && code !== '0x',
            label: labels.get(address, network) ?? null,
            activity,
          },
          source: `rpc:${network}`,
          data_as_of: null,
        };
      },
    }),
  ];
}
