// get_technical_indicators, get_trading_signal, get_support_resistance, scenario_analysis.
import { z } from 'zod';
import { technicalIndicators } from '../../analytics/indicators.ts';
import { supportResistance } from '../../analytics/levels.ts';
import { betaAndCorrelation } from '../../analytics/risk.ts';
import { compositeRule, scenarioTargets } from '../../analytics/signals.ts';
import { snakeKeys } from '../../lib/snake.ts';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import type { MarketDataProvider } from '../../providers/market/types.ts';
import { analyse, analysed, jobOf } from '../common/analysis.ts';
import { resolveAsset } from '../common/assets.ts';
import { assetRef, day } from '../common/outputs.ts';
import { contiguous, contiguousWindow } from '../common/series.ts';
import { oneVolumeSource } from '../common/volume.ts';
import type { ServerDeps } from '../deps.ts';

export const assetSchema = z.string().trim().min(1).max(100).describe('Asset id, ticker or name, e.g. "bitcoin", "ETH".');

/** An indicator's latest value (null when the history is too short for it) and its recent values, oldest first. */
function reading<T extends z.ZodType>(value: T) {
  const dated = z.object({ date: day, value });
  return z.object({ name: z.string(), required_candles: z.number(), latest: dated.nullable(), history: z.array(dated) });
}
const numberReading = reading(z.number());

const hitCount = z.object({
  signals: z.number(),
  hits: z.number(),
  hit_rate: z.number().nullable(),
  ci95: z.array(z.number()).nullable().describe('[low, high]'),
  base_rate: z.number().nullable(),
  excess_over_base: z.number().nullable(),
  versus_base: z.enum(['above', 'below', 'indistinguishable']).nullable(),
});

const pivots = z.object({
  from: day,
  to: day,
  high: z.number(),
  low: z.number(),
  close: z.number(),
  p: z.number(),
  r1: z.number(),
  r2: z.number(),
  r3: z.number(),
  s1: z.number(),
  s2: z.number(),
  s3: z.number(),
});

/**
 * An asset's daily history, resolved from what the user typed: its last contiguous run (series.all
 * keeps every candle), so that nothing computed on it spans a break in the data.
 */
export async function history(market: MarketDataProvider, query: string, signal: AbortSignal) {
  const asset = resolveAsset(market.registry, query);
  const series = contiguous(await market.candles(asset.id, { interval: 'daily' }, signal), asset.symbol.toUpperCase());
  return { asset: { id: asset.id, symbol: asset.symbol, name: asset.name }, series };
}

export function technicalTools({ market, compute }: ServerDeps): ToolDefinition[] {
  return [
    defineTool({
      name: 'get_technical_indicators',
      title: 'Technical indicators',
      description:
        "Returns an asset's latest RSI(14), MACD(12,26,9), Bollinger(20,2), EMAs, SMAs, ATR(14) and stochastic(14,3,3), each with its recent values. Prices in USD.",
      input: z
        .object({
          asset: assetSchema,
          history: z.number().int().min(1).max(60).default(10).describe('Recent values to return per indicator.'),
          ema_periods: z.array(z.number().int().min(2).max(200)).min(1).max(5).default([20, 50]),
          sma_periods: z.array(z.number().int().min(2).max(200)).min(1).max(5).default([50, 200]),
        })
        .strict(),
      output: z.object({
        asset: assetRef,
        as_of: day,
        indicators: z.object({
          as_of: day,
          close: z.number(),
          candles_used: z.number(),
          rsi: numberReading,
          macd: reading(z.object({ macd: z.number(), signal: z.number(), histogram: z.number() })),
          bollinger: reading(z.object({ upper: z.number(), middle: z.number(), lower: z.number(), percent_b: z.number(), bandwidth: z.number() })),
          ema: z.array(numberReading),
          sma: z.array(numberReading),
          atr: numberReading,
          stochastic: reading(z.object({ k: z.number(), d: z.number() })),
        }),
      }),
      credits: 1,
      handler: async (args, ctx) => {
        const { asset, series } = await history(market, args.asset, ctx.signal);
        const { candles: recent, notes } = contiguousWindow(series, 600);
        const indicators = analyse('cannot compute indicators', () =>
          technicalIndicators(recent, { historyLength: args.history, emaPeriods: args.ema_periods, smaPeriods: args.sma_periods }),
        );
        return { data: { asset, as_of: series.as_of, indicators: snakeKeys(indicators) }, source: series.source, data_as_of: series.as_of, notes };
      },
    }),
    defineTool({
      name: 'get_trading_signal',
      title: 'Trading signal',
      description:
        "Returns a buy/hold/sell signal with confidence and reasons from a composite of trend, momentum and mean-reversion rules, and the rule's hit rate replayed on the asset's past against the base rate.",
      input: z
        .object({
          asset: assetSchema,
          horizon_days: z.number().int().min(1).max(30).default(7).describe('How far ahead a signal is judged right or wrong.'),
          replay_days: z.number().int().min(90).max(1000).default(365).describe('Past days to replay the rule over.'),
        })
        .strict(),
      output: z.object({
        asset: assetRef,
        rule: z.object({ name: z.string(), description: z.string() }),
        signal: z.object({
          as_of: day,
          close: z.number(),
          action: z.enum(['buy', 'hold', 'sell']),
          score: z.number().describe('-1 to 1'),
          confidence: z.number().describe('0 to 1'),
          components: z.array(z.object({ name: z.string(), score: z.number(), reason: z.string() })),
          reasons: z.array(z.string()),
        }),
        historical_hit_rate: z.object({
          rule: z.string(),
          horizon_days: z.number(),
          buy: hitCount,
          sell: hitCount,
          all: hitCount,
          baseline: z.object({ up: z.number().nullable(), down: z.number().nullable() }),
          days_evaluated: z.number(),
          replay_days_requested: z.number().nullable(),
          from: day.nullable(),
          to: day.nullable(),
        }),
        verdict: z.string(),
        note: z.string().optional(),
      }),
      credits: 2,
      handler: async (args, ctx) => {
        const { asset, series } = await history(market, args.asset, ctx.signal);
        // Exactly replay_days scored days, each with the rule's full 300 days behind it, ending
        // horizon_days before the last close (the last day whose outcome is known).
        const { candles, notes } = contiguousWindow(series, args.replay_days + 300 + args.horizon_days);
        // The replay evaluates the rule on every day: hundreds of ms, so it runs in the compute pool.
        const { signal, record } = await analysed(
          'not enough history',
          compute.run('tradingSignal', { candles, horizonDays: args.horizon_days, replayDays: args.replay_days }, jobOf(ctx)),
        );
        const pct = (x: number | null) => (x === null ? 'n/a' : `${(x * 100).toFixed(1)}%`);
        const said = (label: string, c: typeof record.buy) =>
          c.signals === 0
            ? `no ${label} signals in the replay`
            : `${label}s hit ${pct(c.hitRate)} (95% ${pct(c.ci95![0])}-${pct(c.ci95![1])}, ${c.signals} signals) against a base rate of ${pct(c.baseRate)}: ${c.versusBase === 'indistinguishable' ? 'no measurable edge' : c.versusBase === 'above' ? 'above the base rate' : 'below the base rate'}`;
        return {
          data: {
            asset,
            rule: { name: compositeRule.name, description: compositeRule.description },
            signal: snakeKeys(signal),
            historical_hit_rate: snakeKeys(record),
            verdict: `Over ${record.daysEvaluated} replayed days (${record.from} to ${record.to}), ${said('buy', record.buy)}; ${said('sell', record.sell)}.`,
            ...(record.daysEvaluated < args.replay_days ? { note: `Only ${record.daysEvaluated} of the ${args.replay_days} days asked for have the rule's full 300-day history and a known outcome.` } : {}),
          },
          source: series.source,
          data_as_of: series.as_of,
          notes,
        };
      },
    }),
    defineTool({
      name: 'get_support_resistance',
      title: 'Support and resistance levels',
      description:
        "Returns an asset's support and resistance levels (USD): floor-trader pivots, Williams fractals and volume-profile levels, each with how often price touched it.",
      input: z
        .object({
          asset: assetSchema,
          window_days: z.number().int().min(30).max(365).default(90),
          pivot_period: z.enum(['day', 'week']).default('day'),
        })
        .strict(),
      output: z.object({
        asset: assetRef,
        window_days: z.number(),
        as_of: day,
        close: z.number(),
        pivots,
        fractals: z.array(z.object({ date: day, kind: z.enum(['high', 'low']), price: z.number() })),
        volume_profile: z
          .object({
            bins: z.array(z.object({ low: z.number(), high: z.number(), volume: z.number() })),
            point_of_control: z.number(),
            value_area_low: z.number(),
            value_area_high: z.number(),
            value_area_share: z.number(),
            total_volume: z.number(),
            candles_without_volume: z.number(),
            volume_source: z.string().nullable().describe('What the summed volumes count (one source; others left out).'),
            candles_of_other_volume_sources: z.number(),
          })
          .nullable()
          .describe('volumes in USD'),
        levels: z.array(
          z.object({
            price: z.number(),
            kind: z.string(),
            role: z.enum(['support', 'resistance']),
            strength: z.number().describe('candles that touched it'),
            date: day.optional(),
          }),
        ),
      }),
      credits: 1,
      handler: async (args, ctx) => {
        const { asset, series } = await history(market, args.asset, ctx.signal);
        const { candles, notes } = contiguousWindow(series, args.window_days);
        const volumes = oneVolumeSource(candles, asset.symbol);
        const { volume_profile, ...levels } = snakeKeys(analyse('cannot find levels', () => supportResistance(volumes.candles, { pivotPeriod: args.pivot_period })));
        return {
          data: {
            asset,
            window_days: args.window_days,
            ...levels,
            volume_profile: volume_profile && { ...volume_profile, volume_source: volumes.volume_source, candles_of_other_volume_sources: volumes.left_out },
          },
          source: series.source,
          data_as_of: series.as_of,
          notes: [...notes, ...(volumes.note ? [volumes.note] : [])],
        };
      },
    }),
    defineTool({
      name: 'scenario_analysis',
      title: 'Scenario analysis',
      description:
        "Returns an asset's USD price targets for given BTC moves from its beta to BTC, with the correlation saying how far to trust it.",
      input: z
        .object({
          asset: assetSchema,
          btc_moves: z.array(z.number().min(-0.9).max(3)).min(1).max(10).default([-0.3, -0.1, 0.1, 0.3]).describe('BTC moves as fractions: -0.1 = a 10% fall.'),
          window_days: z.number().int().min(60).max(1825).default(365),
        })
        .strict(),
      output: z.object({
        asset: assetRef,
        price: z.number(),
        price_date: day,
        beta: z.object({
          beta: z.number().nullable(),
          correlation: z.number().nullable(),
          overlapping_days: z.number(),
          observations: z.number(),
          from: day,
          to: day,
        }),
        targets: z.array(z.object({ btc_move: z.number(), asset_move: z.number(), target_price: z.number() })).describe('moves as fractions'),
        method: z.string(),
      }),
      credits: 2,
      handler: async (args, ctx) => {
        const { asset, series } = await history(market, args.asset, ctx.signal);
        const btc = contiguous(await market.candles('bitcoin', { interval: 'daily', to: series.as_of }, ctx.signal), 'BTC');
        const { candles: window, notes } = contiguousWindow(series, args.window_days);
        const last = window[window.length - 1]!;
        const result = analyse('cannot estimate beta', () => {
          const fit = betaAndCorrelation(window, btc.candles.filter((c) => c.date >= window[0]!.date));
          if (fit.beta === null) throw new RangeError('no variation to estimate beta from');
          return { beta: fit, targets: scenarioTargets(last.close, fit.beta, args.btc_moves) };
        });
        return {
          data: { asset, price: last.close, price_date: last.date, ...snakeKeys(result), method: 'target = price × (1 + BTC move)^beta' },
          source: series.source,
          data_as_of: series.as_of,
          notes,
        };
      },
    }),
  ];
}
