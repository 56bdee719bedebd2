// profile_wallet: who an address is (its label) and how it behaves over a block window, with the
// evidence behind the class.
import { getAddress, zeroAddress, type Address } from 'viem';
import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import { addressSchema, chainSchema, evmNetwork, rpc } from '../common/evm.ts';
import type { ServerDeps } from '../deps.ts';
import { amountShape, blockRangeFields, evmChainShape, labelShape, pricesShape, usdShape } from './outputs.ts';
import { assetFacts, labeller, labelView, pricesAsOf, pricesUsed, resolveWindow, scanNative, scanTransfers, units, usd, WHALE_DEFAULT_BLOCKS, WHALE_MAX_BLOCKS } from './scan.ts';

/** A flow score at or beyond ±this is accumulation / distribution; between, the wallet is balanced. */
export const FLOW_SCORE_BAR = 0.2;
/** An unlabelled address dealing with at least this many distinct senders and receivers behaves like an exchange. */
export const EXCHANGE_LIKE_COUNTERPARTIES = 10;

const behaviourClassShape = z.enum(['contract', 'exchange-like', 'accumulator', 'distributor', 'balanced', 'inactive']);
export type BehaviourClass = z.infer<typeof behaviourClassShape>;

export const CLASS_RULES =
  `In order: "contract" if the address holds bytecode; "exchange-like" if it is labelled an exchange, or deals with at least ${EXCHANGE_LIKE_COUNTERPARTIES} distinct senders and ${EXCHANGE_LIKE_COUNTERPARTIES} distinct receivers in the window; ` +
  `"inactive" if it moved nothing; otherwise by the flow score in [-1, 1]: (received - sent) / (received + sent) in USD when every asset it moved is priced, else the mean of that ratio per asset; ` +
  `"accumulator" at or above ${FLOW_SCORE_BAR}, "distributor" at or below -${FLOW_SCORE_BAR}, "balanced" between. Mints (from the zero address) and burns are issuance, not trading, and are left out of the score.`;

export function profileTools(deps: ServerDeps): ToolDefinition[] {
  return [
    defineTool({
      name: 'profile_wallet',
      title: 'Wallet profile',
      description: `Returns an address's entity label and behaviour class (contract, exchange-like, accumulator, distributor, balanced or inactive) with the evidence: bytecode, label, and per-asset amounts received and sent (whole units and USD) over a window of at most ${WHALE_MAX_BLOCKS} blocks.`,
      input: z
        .object({
          chain: chainSchema,
          address: addressSchema,
          from_block: z.number().int().min(0).optional().describe(`Default: ${WHALE_DEFAULT_BLOCKS} blocks up to to_block; at most ${WHALE_MAX_BLOCKS}.`),
          to_block: z.number().int().min(0).optional().describe('Default: the latest block.'),
        })
        .strict(),
      output: z.object({
        chain: evmChainShape,
        address: z.string(),
        label: z.object({ label: z.string(), kind: z.string(), source: z.string() }).nullable(),
        class: behaviourClassShape,
        evidence: z.array(z.string()),
        is_contract: z.boolean(),
        ...blockRangeFields,
        flow_score: z.number().nullable().describe('-1 (only sent) to 1 (only received).'),
        flow_score_basis: z.enum(['usd', 'mean_per_asset']).nullable(),
        counterparties: z.object({ senders: z.number().int(), receivers: z.number().int() }).describe('Distinct addresses.'),
        assets: z.array(
          z.object({
            asset: z.string().nullable(),
            token: z.string().nullable().describe('null: the native coin.'),
            received: amountShape,
            sent: amountShape,
            net: amountShape,
            received_usd: usdShape,
            sent_usd: usdShape,
            minted: amountShape,
            burned: amountShape,
            transfers_in: z.number().int(),
            transfers_out: z.number().int(),
            flow_score: z.number().nullable(),
          }),
        ),
        top_counterparties: z.array(z.object({ address: z.string(), label: labelShape, transfers: z.number().int() })),
        prices: pricesShape,
        rules: z.string(),
      }),
      credits: 3,
      handler: async (args, ctx) => {
        const network = evmNetwork(args.chain, 'profile_wallet');
        const client = deps.evm.client(network);
        const address = getAddress(args.address);
        const window = await resolveWindow(client, network, args, WHALE_MAX_BLOCKS);
        const [code, native, erc20] = await Promise.all([
          rpc(network, () => client.getCode({ address, blockNumber: BigInt(window.to) })),
          scanNative(client, network, window, (m) => m.from === address || m.to === address, ctx.signal).then((r) => r.movements),
          scanTransfers(client, network, window, { parties: [address] }),
        ]);
        const movements = [...native, ...erc20];
        const facts = await assetFacts(deps, network, movements.map((m) => m.token), ctx.signal);
        const label = labeller(deps.labels, network);
        const own = label(address);

        type Tally = { received: bigint; sent: bigint; minted: bigint; burned: bigint; transfers_in: number; transfers_out: number };
        const tallies = new Map<Address | null, Tally>();
        const senders = new Set<Address>();
        const receivers = new Set<Address>();
        for (const m of movements) {
          let t = tallies.get(m.token);
          if (!t) tallies.set(m.token, (t = { received: 0n, sent: 0n, minted: 0n, burned: 0n, transfers_in: 0, transfers_out: 0 }));
          // A transfer to itself moves nothing.
          if (m.from === m.to) continue;
          if (m.to === address) {
            if (m.from === zeroAddress) t.minted += m.value;
            else {
              t.received += m.value;
              t.transfers_in += 1;
              senders.add(m.from);
            }
          } else {
            if (m.to === zeroAddress) t.burned += m.value;
            else {
              t.sent += m.value;
              t.transfers_out += 1;
              receivers.add(m.to);
            }
          }
        }
        const assets = [...tallies.entries()].map(([token, t]) => {
          const f = facts.get(token)!;
          const moved = t.received + t.sent;
          return {
            asset: f.symbol,
            token,
            received: units(t.received, f),
            sent: units(t.sent, f),
            net: units(t.received - t.sent, f),
            received_usd: usd(t.received, f),
            sent_usd: usd(t.sent, f),
            minted: units(t.minted, f),
            burned: units(t.burned, f),
            transfers_in: t.transfers_in,
            transfers_out: t.transfers_out,
            // Exact integer ratio first, then to a float: amounts can exceed 2^53.
            flow_score: moved === 0n ? null : Number(((t.received - t.sent) * 1_000_000n) / moved) / 1_000_000,
          };
        });
        const traded = assets.filter((a) => a.flow_score !== null);
        const allPriced = traded.length > 0 && traded.every((a) => a.received_usd !== null);
        let flowScore: number | null = null;
        let scoreBasis: 'usd' | 'mean_per_asset' | null = null;
        if (allPriced) {
          const inUsd = traded.reduce((s, a) => s + a.received_usd!, 0);
          const outUsd = traded.reduce((s, a) => s + a.sent_usd!, 0);
          if (inUsd + outUsd > 0) {
            flowScore = (inUsd - outUsd) / (inUsd + outUsd);
            scoreBasis = 'usd';
          }
        }
        if (flowScore === null && traded.length > 0) {
          flowScore = traded.reduce((s, a) => s + a.flow_score!, 0) / traded.length;
          scoreBasis = 'mean_per_asset';
        }

        const isContract = code !== undefined && code !== '0x';
        const evidence: string[] = [];
        let cls: BehaviourClass;
        if (isContract) {
          cls = 'contract';
          evidence.push(`holds ${(code.length - 2) / 2} bytes of contract code at block ${window.to}`);
        } else if (own?.kind === 'exchange') {
          cls = 'exchange-like';
          evidence.push(`labelled "${own.label}" (${own.kind}) by ${own.source}`);
        } else if (senders.size >= EXCHANGE_LIKE_COUNTERPARTIES && receivers.size >= EXCHANGE_LIKE_COUNTERPARTIES) {
          cls = 'exchange-like';
          evidence.push(`${senders.size} distinct senders and ${receivers.size} distinct receivers in the window`);
        } else if (flowScore === null) {
          cls = 'inactive';
          evidence.push(`no transfers in or out in blocks ${window.from}-${window.to}`);
        } else {
          cls = flowScore >= FLOW_SCORE_BAR ? 'accumulator' : flowScore <= -FLOW_SCORE_BAR ? 'distributor' : 'balanced';
          evidence.push(`flow score ${flowScore.toFixed(3)} (${scoreBasis === 'usd' ? 'in USD' : `mean over ${traded.length} asset(s)`})`);
        }
        if (own && !(cls === 'exchange-like' && own.kind === 'exchange')) evidence.push(`labelled "${own.label}" (${own.kind}) by ${own.source}`);
        for (const a of assets) {
          if (a.transfers_in + a.transfers_out > 0) evidence.push(`${a.asset ?? a.token}: received ${a.received ?? '?'} in ${a.transfers_in} transfer(s), sent ${a.sent ?? '?'} in ${a.transfers_out}`);
          if (a.minted !== '0' && a.minted !== null) evidence.push(`${a.asset ?? a.token}: minted ${a.minted} to it (left out of the score)`);
        }
        return {
          data: {
            chain: network,
            address,
            label: own ? { label: own.label, kind: own.kind, source: own.source } : null,
            class: cls,
            evidence,
            is_contract: isContract,
            from_block: window.from,
            to_block: window.to,
            flow_score: flowScore,
            flow_score_basis: scoreBasis,
            counterparties: { senders: senders.size, receivers: receivers.size },
            assets,
            top_counterparties: topCounterparties(movements, address, label),
            prices: pricesUsed(facts.values()),
            rules: CLASS_RULES,
          },
          source: `rpc:${network}`,
          data_as_of: pricesAsOf(facts.values()),
        };
      },
    }),
  ];
}

/** The five addresses it dealt with most often, labelled: who it trades with says who it is. */
function topCounterparties(movements: { from: Address; to: Address }[], self: Address, label: ReturnType<typeof labeller>) {
  const counts = new Map<Address, number>();
  for (const m of movements) {
    const other = m.from === self ? m.to : m.from;
    if (other === self || other === zeroAddress) continue;
    counts.set(other, (counts.get(other) ?? 0) + 1);
  }
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, 5)
    .map(([address, transfers]) => ({ address, label: labelView(label(address)), transfers }));
}
