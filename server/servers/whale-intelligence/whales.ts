// get_whale_transactions and get_exchange_flows: large transfers, and what labelled exchanges
// took in and sent out, over a bounded block window.
import { getAddress, parseUnits, zeroAddress, type Address } from 'viem';
import { z } from 'zod';
import { ApiError } from '../../errors.ts';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import { addressSchema, chainSchema, evmNetwork } from '../common/evm.ts';
import { cursorSchema, limitSchema, page } from '../common/paging.ts';
import type { ServerDeps } from '../deps.ts';
import {
  assetFacts,
  direction,
  exchangeName,
  labeller,
  labelView,
  pricesAsOf,
  pricedTokens,
  pricesUsed,
  resolveWindow,
  scanNative,
  scanTransfers,
  units,
  usd,
  WHALE_DEFAULT_BLOCKS,
  WHALE_MAX_BLOCKS,
  type Movement,
} from './scan.ts';
import { amountShape, blockRangeFields, directionShape, evmChainShape, labelShape, pricesShape, usdShape } from './outputs.ts';

/** Inflow, outflow and net of one asset, in whole units and USD. */
const flowAmounts = {
  inflow: amountShape,
  outflow: amountShape,
  net: amountShape,
  inflow_usd: usdShape,
  outflow_usd: usdShape,
  net_usd: usdShape,
  net_raw: z.string(),
};

export const USD_RULE =
  'USD values use the market price of the asset (the native coin of the network, or a token whose contract the market data ties to an asset), as of the date each price states. Tokens without a market price are not valued: name the token and give min_amount in whole token units to find their large transfers.';

const windowArgs = {
  from_block: z.number().int().min(0).optional().describe(`Default: ${WHALE_DEFAULT_BLOCKS} blocks up to to_block; at most ${WHALE_MAX_BLOCKS}.`),
  to_block: z.number().int().min(0).optional().describe('Default: the latest block.'),
};
const tokenArg = z.union([z.literal('native'), addressSchema]);
const amountSchema = z.string().trim().regex(/^\d{1,30}(\.\d{1,30})?$/, 'a positive decimal number of whole tokens, e.g. "1000000" or "2.5"');

export function whaleTools(deps: ServerDeps): ToolDefinition[] {
  return [
    defineTool({
      name: 'get_whale_transactions',
      title: 'Whale transactions',
      description: `Returns native and ERC-20 transfers at or above a USD threshold (or a whole-token threshold for one token) over a window of at most ${WHALE_MAX_BLOCKS} blocks, newest first, in whole units and USD, with both sides' labels and the direction to or from exchanges.`,
      input: z
        .object({
          chain: chainSchema,
          ...windowArgs,
          min_usd: z.number().min(0).max(1e12).default(100_000).describe('USD threshold for priced assets.'),
          token: tokenArg.optional().describe('Only this asset: "native" or an ERC-20 contract. Default: the native coin and every priced token of the network.'),
          min_amount: amountSchema.optional().describe('Threshold in whole units of `token` (instead of min_usd); needed for tokens without a market price.'),
          limit: limitSchema,
          cursor: cursorSchema,
        })
        .strict()
        .refine((a) => a.min_amount === undefined || a.token !== undefined, { message: 'min_amount needs a token', path: ['min_amount'] }),
      output: z.object({
        chain: evmChainShape,
        ...blockRangeFields,
        threshold: z.union([z.object({ min_amount: z.string(), token: z.string().nullable() }), z.object({ min_usd: z.number() })]),
        assets_scanned: z.object({ native: z.boolean(), tokens: z.number().int() }),
        total: z.number().int(),
        total_usd: z.number(),
        by_direction: z.record(directionShape, z.number().int()),
        transactions: z.array(
          z.object({
            block: z.number().int(),
            tx_hash: z.string(),
            kind: z.enum(['transfer', 'mint', 'burn']),
            asset: z.string().nullable(),
            token: z.string().nullable().describe('null: the native coin.'),
            amount: amountShape,
            amount_raw: z.string(),
            usd: usdShape,
            from: z.string(),
            from_label: labelShape,
            to: z.string(),
            to_label: labelShape,
            direction: directionShape,
          }),
        ),
        prices: pricesShape,
        valuation: z.string(),
      }),
      credits: 2,
      handler: async (args, ctx) => {
        const network = evmNetwork(args.chain, 'get_whale_transactions');
        const client = deps.evm.client(network);
        const window = await resolveWindow(client, network, args, WHALE_MAX_BLOCKS);
        const only = args.token === undefined ? undefined : args.token === 'native' ? null : getAddress(args.token);
        // Without a token: the native coin plus the tokens that can be valued (a log scan of every
        // token would be unbounded on a busy chain, and unpriced tokens could not meet a USD bar).
        const scanTokens = only === undefined ? pricedTokens(deps, network) : only === null ? [] : [only];
        const [native, erc20] = await Promise.all([
          only === undefined || only === null ? scanNative(client, network, window, () => true, ctx.signal).then((r) => r.movements) : [],
          scanTokens.length ? scanTransfers(client, network, window, { token: scanTokens }) : [],
        ]);
        const movements = [...native, ...erc20];
        const facts = await assetFacts(deps, network, [...(only === undefined ? [null] : [only]), ...movements.map((m) => m.token)], ctx.signal);

        let unitBar: bigint | undefined;
        if (only !== undefined) {
          const f = facts.get(only)!;
          if (args.min_amount !== undefined) {
            if (f.decimals === null) throw new ApiError('INVALID_PARAMS', 'That contract does not report ERC-20 decimals.', { issues: [{ path: 'token', message: 'not an ERC-20 token' }] });
            unitBar = parseUnits(args.min_amount, f.decimals);
          } else if (!f.quote) {
            throw new ApiError('INVALID_PARAMS', `${f.symbol ?? 'This token'} has no market price, so a USD threshold cannot apply; give min_amount in whole tokens.`, {
              issues: [{ path: 'min_amount', message: 'required for a token without a market price' }],
            });
          }
        }
        const label = labeller(deps.labels, network);
        const rows = movements
          .filter((m) => (unitBar !== undefined ? m.value >= unitBar : (usd(m.value, facts.get(m.token)!) ?? -1) >= args.min_usd))
          .sort((a, b) => b.block - a.block || b.position - a.position)
          .map((m) => {
            const f = facts.get(m.token)!;
            const from = label(m.from);
            const to = label(m.to);
            return {
              block: m.block,
              tx_hash: m.tx_hash,
              // Token issuance and destruction are Transfer events from / to the zero address.
              kind: m.from === zeroAddress ? ('mint' as const) : m.to === zeroAddress ? ('burn' as const) : ('transfer' as const),
              asset: f.symbol,
              token: m.token,
              amount: units(m.value, f),
              amount_raw: m.value.toString(),
              usd: usd(m.value, f),
              from: m.from,
              from_label: labelView(from),
              to: m.to,
              to_label: labelView(to),
              direction: direction(from, to),
            };
          });
        const { items, next_cursor, truncated, share } = page(rows, args.limit, args.cursor);
        const count = (d: string) => rows.filter((r) => r.direction === d).length;
        return {
          data: {
            chain: network,
            from_block: window.from,
            to_block: window.to,
            threshold: unitBar !== undefined && args.min_amount !== undefined ? { min_amount: args.min_amount, token: only ?? null } : { min_usd: args.min_usd },
            assets_scanned: only === undefined ? { native: true, tokens: scanTokens.length } : { native: only === null, tokens: only === null ? 0 : 1 },
            total: rows.length,
            total_usd: round2(rows.reduce((s, r) => s + (r.usd ?? 0), 0)),
            by_direction: { to_exchange: count('to_exchange'), from_exchange: count('from_exchange'), between_exchanges: count('between_exchanges'), within_exchange: count('within_exchange'), none: count('none') },
            transactions: items,
            prices: pricesUsed(facts.values()),
            valuation: USD_RULE,
          },
          source: `rpc:${network}`,
          data_as_of: pricesAsOf(facts.values()),
          next_cursor,
          truncated,
          page: share,
        };
      },
    }),
    defineTool({
      name: 'get_exchange_flows',
      title: 'Exchange flows',
      description: `Returns, for one asset (the native coin or an ERC-20) over a window of at most ${WHALE_MAX_BLOCKS} blocks, each labelled exchange's inflow, outflow and net flow in whole units and (when priced) USD, largest net first; transfers within one exchange are left out.`,
      input: z
        .object({
          chain: chainSchema,
          token: tokenArg.describe('"native" or the ERC-20 contract.'),
          ...windowArgs,
          limit: limitSchema,
          cursor: cursorSchema,
        })
        .strict(),
      output: z.object({
        chain: evmChainShape,
        asset: z.string().nullable(),
        token: z.string().nullable().describe('null: the native coin.'),
        ...blockRangeFields,
        exchanges: z.number().int(),
        totals: z.object(flowAmounts),
        flows: z.array(z.object({ exchange: z.string(), addresses: z.array(z.string()), ...flowAmounts, transfers_in: z.number().int(), transfers_out: z.number().int() })),
        prices: pricesShape,
        valuation: z.string(),
      }),
      credits: 3,
      handler: async (args, ctx) => {
        const network = evmNetwork(args.chain, 'get_exchange_flows');
        const client = deps.evm.client(network);
        const window = await resolveWindow(client, network, args, WHALE_MAX_BLOCKS);
        const token = args.token === 'native' ? null : getAddress(args.token);
        const label = labeller(deps.labels, network);
        const touchesExchange = (m: Movement) => label(m.from)?.kind === 'exchange' || label(m.to)?.kind === 'exchange';
        const movements = token === null ? (await scanNative(client, network, window, touchesExchange, ctx.signal)).movements : await scanTransfers(client, network, window, { token });
        const facts = await assetFacts(deps, network, [token], ctx.signal);
        const f = facts.get(token)!;
        if (token !== null && f.decimals === null) throw new ApiError('INVALID_PARAMS', 'That contract does not report ERC-20 decimals.', { issues: [{ path: 'token', message: 'not an ERC-20 token' }] });

        const flows = new Map<string, { addresses: Set<Address>; inflow: bigint; outflow: bigint; transfers_in: number; transfers_out: number }>();
        const flowOf = (name: string) => {
          let e = flows.get(name);
          if (!e) flows.set(name, (e = { addresses: new Set(), inflow: 0n, outflow: 0n, transfers_in: 0, transfers_out: 0 }));
          return e;
        };
        for (const m of movements) {
          const from = label(m.from);
          const to = label(m.to);
          const d = direction(from, to);
          if (d === 'within_exchange' || d === 'none') continue;
          if (from?.kind === 'exchange') {
            const e = flowOf(exchangeName(from));
            e.addresses.add(m.from);
            e.outflow += m.value;
            e.transfers_out += 1;
          }
          if (to?.kind === 'exchange') {
            const e = flowOf(exchangeName(to));
            e.addresses.add(m.to);
            e.inflow += m.value;
            e.transfers_in += 1;
          }
        }
        const amounts = (inflow: bigint, outflow: bigint) => ({
          inflow: units(inflow, f),
          outflow: units(outflow, f),
          net: units(inflow - outflow, f),
          inflow_usd: usd(inflow, f),
          outflow_usd: usd(outflow, f),
          net_usd: f.quote ? round2((usd(inflow, f) ?? 0) - (usd(outflow, f) ?? 0)) : null,
          net_raw: (inflow - outflow).toString(),
        });
        const abs = (x: bigint) => (x < 0n ? -x : x);
        const rows = [...flows.entries()]
          .sort(([an, a], [bn, b]) => {
            const d = abs(b.inflow - b.outflow) - abs(a.inflow - a.outflow);
            return d > 0n ? 1 : d < 0n ? -1 : an.localeCompare(bn);
          })
          .map(([exchange, e]) => ({
            exchange,
            addresses: [...e.addresses].sort(),
            ...amounts(e.inflow, e.outflow),
            transfers_in: e.transfers_in,
            transfers_out: e.transfers_out,
          }));
        let inflow = 0n;
        let outflow = 0n;
        for (const e of flows.values()) {
          inflow += e.inflow;
          outflow += e.outflow;
        }
        const { items, next_cursor, truncated, share } = page(rows, args.limit, args.cursor);
        return {
          data: {
            chain: network,
            asset: f.symbol,
            token,
            from_block: window.from,
            to_block: window.to,
            exchanges: rows.length,
            totals: amounts(inflow, outflow),
            flows: items,
            prices: pricesUsed(facts.values()),
            valuation: USD_RULE,
          },
          source: `rpc:${network}`,
          data_as_of: pricesAsOf(facts.values()),
          next_cursor,
          truncated,
          page: share,
        };
      },
    }),
  ];
}

const round2 = (x: number) => Math.round(x * 100) / 100;
