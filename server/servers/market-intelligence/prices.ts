// search_assets, get_prices, get_ohlcv: the registry, quotes and candles.
import { z } from 'zod';
import { gapsOf } from '../../analytics/candles.ts';
import { ApiError } from '../../errors.ts';
import { addDays, daysBetween, isoDaySchema } from '../../lib/dates.ts';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import { resolveAsset, resolveAssets, resolveSome } from '../common/assets.ts';
import { datedAnswer } from '../common/dating.ts';
import { assetEntry, assetRef, candle, quote, volumeSourcesField } from '../common/outputs.ts';
import { candleVolumeNote, candleVolumeSources, mixedVolumeNote, quoteVolume } from '../common/volume.ts';
import { cursorSchema, limitSchema, page } from '../common/paging.ts';
import type { ServerDeps } from '../deps.ts';

const ISO_DAY = isoDaySchema;
const assetSchema = z.string().trim().min(1).max(100).describe('An asset id, ticker or name, e.g. "bitcoin", "ETH", "Solana".');


export function priceTools({ market }: ServerDeps): ToolDefinition[] {
  return [
    defineTool({
      name: 'search_assets',
      title: 'Search assets',
      openWorld: false,
      description: 'Returns the assets whose name, ticker or id matches, with aliases and token contracts.',
      input: z.object({ query: z.string().trim().min(1).max(100), limit: limitSchema, cursor: cursorSchema }).strict(),
      output: z.object({ query: z.string(), total: z.number(), assets: z.array(assetEntry) }),
      credits: 0,
      handler: async (args) => {
        const hits = market.registry.search(args.query, 500);
        const { items, next_cursor, truncated, share } = page(hits, args.limit, args.cursor);
        return { data: { query: args.query, total: hits.length, assets: items }, source: 'registry', data_as_of: null, next_cursor, truncated, page: share };
      },
    }),
    defineTool({
      name: 'get_prices',
      title: 'Prices',
      description: 'Returns USD price, 24h/7d/30d change, 24h volume (with what it counts) and market cap of up to 50 assets, each dated; names it does not know are listed under unknown, with close matches, and the others answered.',
      input: z.object({ assets: z.array(assetSchema).min(1).max(50) }).strict(),
      output: z.object({
        prices: z.array(quote),
        unknown: z
          .array(z.object({ asset: z.string(), reason: z.string(), close_matches: z.array(z.object({ id: z.string(), symbol: z.string(), name: z.string(), has_prices: z.boolean() })) }))
          .describe('Names asked for that have no price history here (none: empty).'),
      }),
      credits: 1,
      handler: async (args, ctx) => {
        const { found: entries, unknown } = resolveSome(market.registry, args.assets);
        // Only when nothing is known does the call fail (404, not charged); otherwise the known ones are answered.
        if (entries.length === 0) resolveAssets(market.registry, args.assets);
        const quotes = await market.quotes(entries.map((e) => e.id), ctx.signal);
        // Each quote carries its own as_of; the answer is as old as its oldest quote.
        const { data_as_of, notes } = datedAnswer(
          quotes.flatMap((q) => [
            { label: q.symbol.toUpperCase(), as_of: q.as_of },
            ...(q.market_cap_usd !== null && q.market_cap_as_of && q.market_cap_as_of !== q.as_of.slice(0, 10) ? [{ label: `${q.symbol.toUpperCase()} market cap`, as_of: q.market_cap_as_of }] : []),
          ]),
        );
        const volumes = mixedVolumeNote(quotes);
        return {
          data: { prices: quotes.map((q) => ({ ...q, ...quoteVolume(q) })), unknown },
          source: market.name === 'snapshot' ? 'snapshot' : quotes[0]?.source ?? market.name,
          data_as_of,
          notes: [...notes, ...(volumes ? [volumes] : []), ...(unknown.length ? [`Not answered, unknown here: ${unknown.map((u) => u.asset).join(', ')} (see unknown for close matches).`] : [])],
        };
      },
    }),
    defineTool({
      name: 'get_ohlcv',
      title: 'OHLCV candles',
      description: "Returns an asset's daily or weekly USD candles over a date range, oldest first, paginated.",
      input: z
        .object({
          asset: assetSchema,
          interval: z.enum(['daily', 'weekly']).default('daily'),
          from: ISO_DAY.optional().describe('First day (inclusive); default: 90 days before the last day.'),
          to: ISO_DAY.optional().describe("Last day (inclusive); default: the asset's last day."),
          limit: z.number().int().min(1).max(100).default(100).describe('Candles per page (1-100).'),
          cursor: cursorSchema,
        })
        .strict()
        .refine((a) => !a.from || !a.to || a.from <= a.to, { message: 'from must not be after to', path: ['from'] }),
      output: z.object({ asset: assetRef, interval: z.enum(['daily', 'weekly']), total: z.number(), candles: z.array(candle), volume_sources: volumeSourcesField }),
      credits: 1,
      handler: async (args, ctx) => {
        const entry = resolveAsset(market.registry, args.asset);
        const all = await market.candles(entry.id, { interval: args.interval, to: args.to }, ctx.signal);
        const last = all.candles[all.candles.length - 1]?.date;
        const from = args.from ?? (last ? addDays(last, -90) : undefined);
        const inRange = all.candles.filter((c) => !from || c.date >= from);
        if (inRange.length === 0) {
          // Say where the data is: both ends, whichever side of it the range fell.
          const whole = await market.candles(entry.id, { interval: 'daily' }, ctx.signal);
          const start = whole.candles[0]?.date ?? all.as_of;
          throw new ApiError('NOT_FOUND', `No candles for ${entry.id} from ${from ?? start} to ${args.to ?? all.as_of}: its data runs from ${start} to ${all.as_of}.`, {
            asset: entry.id,
            data_from: start,
            as_of: all.as_of,
          });
        }
        const { items, next_cursor, truncated, share } = page(inRange, args.limit, args.cursor);
        // Candles are given as they are, but a break in a daily range is said: the two candles
        // around it are not one day apart.
        const breaks = args.interval === 'daily' ? gapsOf(inRange) : [];
        // The data ends before `to` (or before a week does): the answer says where, and which week is short.
        const end = args.to && args.to < all.as_of ? args.to : all.as_of;
        const partialDays = (c: { date: string }) => Math.min(7, daysBetween(c.date, end) + 1);
        const candles = args.interval === 'weekly' ? items.map((c) => (partialDays(c) < 7 ? { ...c, partial_week_days: partialDays(c) } : c)) : items;
        const shortWeek = candles.find((c) => 'partial_week_days' in c);
        const notes = [
          ...breaks.map((g) => `${entry.symbol.toUpperCase()} has no candles from ${addDays(g.from, 1)} to ${addDays(g.to, -1)} (${g.missing_days} days) in this range.`),
          ...(args.to && args.to > all.as_of ? [`to ${args.to} is after the data's last day: the candles stop at ${all.as_of}.`] : []),
          ...(shortWeek ? [`The week of ${shortWeek.date} holds ${partialDays(shortWeek)} of its 7 days (to ${end}): its close is not a week's close.`] : []),
          ...[candleVolumeNote(candles, entry.symbol)].filter((n) => n !== undefined),
        ];
        return {
          data: { asset: { id: entry.id, symbol: entry.symbol, name: entry.name }, interval: args.interval, total: inRange.length, candles, volume_sources: candleVolumeSources(candles, entry.symbol) },
          source: all.source,
          data_as_of: all.as_of,
          next_cursor,
          truncated,
          page: share,
          notes,
        };
      },
    }),
  ];
}
