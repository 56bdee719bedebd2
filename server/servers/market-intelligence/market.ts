// get_market_overview and get_top_movers: the market as a whole on its latest common day.
import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import type { Quote } from '../../providers/market/types.ts';
import { datedAnswer } from '../common/dating.ts';
import { day, volumeSourceField } from '../common/outputs.ts';
import { mixedVolumeNote, quoteVolume } from '../common/volume.ts';
import type { ServerDeps } from '../deps.ts';

/**
 * Quotes of every priced asset on the market's latest common day: the as-of day most assets
 * share. Assets whose data ends earlier (or later) are left out and counted, so a comparison
 * never mixes days.
 */
async function marketQuotes({ market, snapshot }: ServerDeps, signal: AbortSignal) {
  // Every asset the snapshot prices (live mode quotes the same ids: its registry is the snapshot's).
  const quotes = await market.quotes(Object.keys(snapshot.data.series), signal);
  const byDay = new Map<string, number>();
  for (const q of quotes) byDay.set(q.as_of.slice(0, 10), (byDay.get(q.as_of.slice(0, 10)) ?? 0) + 1);
  const day = [...byDay.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? 1 : -1))[0]?.[0] ?? '';
  const onDay = quotes.filter((q) => q.as_of.slice(0, 10) === day);
  return { day, quotes: onDay, left_out: quotes.length - onDay.length };
}

const brief = (q: Quote, change: number | null) => ({
  id: q.asset_id,
  symbol: q.symbol,
  name: q.name,
  price_usd: q.price_usd,
  change_pct: change,
  ...quoteVolume(q),
});

const moverSchema = z.object({
  id: z.string(),
  symbol: z.string(),
  name: z.string(),
  price_usd: z.number(),
  change_pct: z.number().nullable(),
  volume_24h_usd: z.number().nullable(),
  volume_source: volumeSourceField,
});

const WINDOWS = { '24h': 'change_24h_pct', '7d': 'change_7d_pct', '30d': 'change_30d_pct' } as const;

export function marketTools(deps: ServerDeps): ToolDefinition[] {
  return [
    defineTool({
      name: 'get_market_overview',
      title: 'Market overview',
      description:
        'Returns total market cap with BTC/ETH dominance, 24h breadth, top 5 gainers and losers, and total DeFi TVL, each dated.',
      input: z.object({}).strict(),
      output: z.object({
        market_cap: z.object({
          total_usd: z.number(),
          btc_dominance_pct: z.number(),
          eth_dominance_pct: z.number(),
          assets_covered: z.number(),
          as_of: z.string(),
          source: z.string(),
        }),
        breadth_24h: z.object({
          as_of: day,
          assets: z.number(),
          advancers: z.number(),
          decliners: z.number(),
          unchanged: z.number(),
          assets_on_other_days_left_out: z.number(),
        }),
        top_gainers_24h: z.array(moverSchema),
        top_losers_24h: z.array(moverSchema),
        defi_tvl: z.object({
          total_usd: z.number(),
          as_of: z.string(),
          source: z.string(),
          method: z.string(),
          history_last: z.object({ date: z.string().optional(), total_usd: z.number().optional(), source: z.string() }),
        }),
      }),
      credits: 1,
      handler: async (_args, ctx) => {
        const [global, { day, quotes, left_out }] = await Promise.all([deps.market.global(ctx.signal), marketQuotes(deps, ctx.signal)]);
        const withChange = quotes.filter((q) => q.change_24h_pct !== null);
        const sorted = [...withChange].sort((a, b) => b.change_24h_pct! - a.change_24h_pct!);
        const gainers = sorted.filter((q) => q.change_24h_pct! > 0).slice(0, 5);
        const losers = sorted.filter((q) => q.change_24h_pct! < 0).reverse().slice(0, 5);
        const volumes = mixedVolumeNote([...gainers, ...losers]);
        const tvl = deps.snapshot.data.defi_tvl;
        const lastTvl = tvl.daily.dates.length - 1;
        const { data_as_of, notes } = datedAnswer([
          { label: 'market cap and dominance', as_of: global.as_of },
          { label: 'breadth, gainers and losers', as_of: day },
          { label: 'DeFi TVL', as_of: tvl.protocols_total.as_of },
        ]);
        return {
          data: {
            market_cap: {
              total_usd: global.total_market_cap_usd,
              btc_dominance_pct: global.btc_dominance_pct,
              eth_dominance_pct: global.eth_dominance_pct,
              assets_covered: global.assets_covered,
              as_of: global.as_of,
              source: global.source,
            },
            breadth_24h: {
              as_of: day,
              assets: withChange.length,
              advancers: withChange.filter((q) => q.change_24h_pct! > 0).length,
              decliners: withChange.filter((q) => q.change_24h_pct! < 0).length,
              unchanged: withChange.filter((q) => q.change_24h_pct === 0).length,
              assets_on_other_days_left_out: left_out,
            },
            top_gainers_24h: gainers.map((q) => brief(q, q.change_24h_pct)),
            top_losers_24h: losers.map((q) => brief(q, q.change_24h_pct)),
            defi_tvl: {
              total_usd: tvl.protocols_total.tvl_usd,
              as_of: tvl.protocols_total.as_of,
              source: tvl.protocols_total.source,
              method: `sum over ${tvl.protocols_total.protocols} DefiLlama protocols, leaving out ${tvl.protocols_total.excluded_categories.join(', ')} (counted elsewhere)`,
              history_last: { date: tvl.daily.dates[lastTvl], total_usd: tvl.daily.tvl_usd[lastTvl], source: tvl.daily.source },
            },
          },
          source: deps.market.name === 'snapshot' ? 'snapshot' : global.source,
          data_as_of,
          notes: [...notes, ...(volumes ? [volumes] : [])],
        };
      },
    }),
    defineTool({
      name: 'get_top_movers',
      title: 'Top movers',
      description:
        'Returns the assets that rose or fell most over 24h, 7d or 30d on the latest common day, above a minimum 24h USD volume.',
      input: z
        .object({
          window: z.enum(['24h', '7d', '30d']).default('24h'),
          direction: z.enum(['gainers', 'losers', 'both']).default('both'),
          min_volume_usd: z.number().min(0).max(1e12).default(1_000_000).describe('Leave out assets with less 24h volume (illiquid noise).'),
          limit: z.number().int().min(1).max(50).default(10),
        })
        .strict(),
      output: z.object({
        window: z.enum(['24h', '7d', '30d']),
        as_of: day,
        assets_considered: z.number(),
        below_min_volume: z.number(),
        assets_on_other_days_left_out: z.number(),
        rule: z.string(),
        gainers: z.array(moverSchema).optional(),
        losers: z.array(moverSchema).optional(),
        advancers: z.number(),
        decliners: z.number(),
      }),
      credits: 1,
      handler: async (args, ctx) => {
        const { day, quotes, left_out } = await marketQuotes(deps, ctx.signal);
        const field = WINDOWS[args.window];
        const eligible = quotes.filter((q) => q[field] !== null && (q.volume_24h_usd ?? 0) >= args.min_volume_usd);
        const sorted = [...eligible].sort((a, b) => b[field]! - a[field]!);
        const rising = sorted.filter((q) => q[field]! > 0);
        const falling = sorted.filter((q) => q[field]! < 0).reverse();
        const gainers = args.direction !== 'losers' ? rising.slice(0, args.limit) : null;
        const losers = args.direction !== 'gainers' ? falling.slice(0, args.limit) : null;
        // The floor compares each asset's volume as its source counts it: say so when those differ.
        const volumes = mixedVolumeNote([...(gainers ?? []), ...(losers ?? [])]);
        return {
          data: {
            window: args.window,
            as_of: day,
            assets_considered: eligible.length,
            below_min_volume: quotes.filter((q) => q[field] !== null && (q.volume_24h_usd ?? 0) < args.min_volume_usd).length,
            assets_on_other_days_left_out: left_out,
            // A gainer rose and a loser fell: with fewer movers than `limit` on a side, the list is shorter.
            rule: 'gainers: change > 0, largest first; losers: change < 0, largest fall first; unchanged assets are in neither',
            ...(gainers ? { gainers: gainers.map((q) => brief(q, q[field])) } : {}),
            ...(losers ? { losers: losers.map((q) => brief(q, q[field])) } : {}),
            advancers: rising.length,
            decliners: falling.length,
          },
          source: deps.market.name === 'snapshot' ? 'snapshot' : deps.market.name,
          data_as_of: day,
          notes: volumes ? [`${volumes} min_volume_usd applies to each volume as its source counts it.`] : [],
          // No mover on the side(s) asked for (a high volume floor, a flat day): nothing to charge for.
          empty: (args.direction === 'losers' ? 0 : rising.length) + (args.direction === 'gainers' ? 0 : falling.length) === 0,
        };
      },
    }),
  ];
}
