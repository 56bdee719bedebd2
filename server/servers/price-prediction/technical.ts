// get_technical_indicators, get_trading_signal, get_support_resistance, scenario_analysis.
import { z } from 'zod';
import { lastNDays } from '../../analytics/candles.ts';
import { technicalIndicators } from '../../analytics/indicators.ts';
import { supportResistance } from '../../analytics/levels.ts';
import { betaAndCorrelation } from '../../analytics/risk.ts';
import { compositeRule, scenarioTargets } from '../../analytics/signals.ts';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import type { MarketDataProvider } from '../../providers/market/types.ts';
import { analyse, analysed, jobOf } from '../common/analysis.ts';
import { resolveAsset } from '../common/assets.ts';
import type { ServerDeps } from '../deps.ts';

export const assetSchema = z.string().trim().min(1).max(100).describe('An asset id, ticker or name, e.g. "bitcoin", "ETH".');

/** An asset's full daily history, resolved from what the user typed. */
export async function history(market: MarketDataProvider, query: string, signal: AbortSignal) {
  const asset = resolveAsset(market.registry, query);
  const series = await market.candles(asset.id, { interval: 'daily' }, signal);
  return { asset: { id: asset.id, symbol: asset.symbol, name: asset.name }, series };
}

export function technicalTools({ market, compute }: ServerDeps): ToolDefinition[] {
  return [
    defineTool({
      name: 'get_technical_indicators',
      title: 'Technical indicators',
      description:
        "Returns an asset's latest RSI(14), MACD(12,26,9), Bollinger bands(20,2), EMAs, SMAs, ATR(14) and stochastic(14,3,3) with a short recent history of each, computed with the trading-signals library.",
      input: z
        .object({
          asset: assetSchema,
          history: z.number().int().min(1).max(60).default(10).describe('Recent values to return per indicator.'),
          ema_periods: z.array(z.number().int().min(2).max(200)).min(1).max(5).default([20, 50]),
          sma_periods: z.array(z.number().int().min(2).max(200)).min(1).max(5).default([50, 200]),
        })
        .strict(),
      credits: 1,
      handler: async (args, ctx) => {
        const { asset, series } = await history(market, args.asset, ctx.signal);
        const recent = lastNDays(series.candles, 600);
        const indicators = analyse('cannot compute indicators', () =>
          technicalIndicators(recent, { historyLength: args.history, emaPeriods: args.ema_periods, smaPeriods: args.sma_periods }),
        );
        return { data: { asset, as_of: series.as_of, indicators }, source: series.source, data_as_of: series.as_of };
      },
    }),
    defineTool({
      name: 'get_trading_signal',
      title: 'Trading signal',
      description:
        "Returns a buy/hold/sell signal with confidence and reasons from a composite of trend, momentum and mean-reversion rules, and that same rule's historical hit rate on the asset (replayed day by day, no look-ahead) against the base rate.",
      input: z
        .object({
          asset: assetSchema,
          horizon_days: z.number().int().min(1).max(30).default(7).describe('How far ahead a signal is judged right or wrong.'),
          replay_days: z.number().int().min(90).max(1000).default(365).describe('Past days to replay the rule over.'),
        })
        .strict(),
      credits: 2,
      handler: async (args, ctx) => {
        const { asset, series } = await history(market, args.asset, ctx.signal);
        // Exactly replay_days scored days, each with the rule's full 300 days behind it, ending
        // horizon_days before the last close (the last day whose outcome is known).
        const candles = lastNDays(series.candles, args.replay_days + 300 + args.horizon_days);
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
            signal,
            historical_hit_rate: record,
            verdict: `Over ${record.daysEvaluated} replayed days (${record.from} to ${record.to}), ${said('buy', record.buy)}; ${said('sell', record.sell)}.`,
            ...(record.daysEvaluated < args.replay_days ? { note: `Only ${record.daysEvaluated} of the ${args.replay_days} days asked for have the rule's full 300-day history and a known outcome.` } : {}),
          },
          source: series.source,
          data_as_of: series.as_of,
        };
      },
    }),
    defineTool({
      name: 'get_support_resistance',
      title: 'Support and resistance levels',
      description:
        "Returns an asset's support and resistance levels: floor-trader pivots of the last complete day or week, Williams fractal highs and lows, and volume-profile levels (point of control, value area), with how often price touched each.",
      input: z
        .object({
          asset: assetSchema,
          window_days: z.number().int().min(30).max(365).default(90),
          pivot_period: z.enum(['day', 'week']).default('day'),
        })
        .strict(),
      credits: 1,
      handler: async (args, ctx) => {
        const { asset, series } = await history(market, args.asset, ctx.signal);
        const levels = analyse('cannot find levels', () =>
          supportResistance(lastNDays(series.candles, args.window_days), { pivotPeriod: args.pivot_period }),
        );
        return { data: { asset, window_days: args.window_days, ...levels }, source: series.source, data_as_of: series.as_of };
      },
    }),
    defineTool({
      name: 'scenario_analysis',
      title: 'Scenario analysis',
      description:
        "Returns an asset's price targets for given BTC moves, from its beta to BTC (daily log returns over a window), with the beta's correlation as a measure of how much to trust it.",
      input: z
        .object({
          asset: assetSchema,
          btc_moves: z.array(z.number().min(-0.9).max(3)).min(1).max(10).default([-0.3, -0.1, 0.1, 0.3]).describe('BTC moves as fractions: -0.1 = a 10% fall.'),
          window_days: z.number().int().min(60).max(1825).default(365),
        })
        .strict(),
      credits: 2,
      handler: async (args, ctx) => {
        const { asset, series } = await history(market, args.asset, ctx.signal);
        const btc = await market.candles('bitcoin', { interval: 'daily', to: series.as_of }, ctx.signal);
        const window = lastNDays(series.candles, args.window_days);
        const last = window[window.length - 1]!;
        const result = analyse('cannot estimate beta', () => {
          const fit = betaAndCorrelation(window, btc.candles.filter((c) => c.date >= window[0]!.date));
          if (fit.beta === null) throw new RangeError('no variation to estimate beta from');
          return { beta: fit, targets: scenarioTargets(last.close, fit.beta, args.btc_moves) };
        });
        return {
          data: { asset, price: last.close, price_date: last.date, ...result, method: 'target = price × (1 + BTC move)^beta' },
          source: series.source,
          data_as_of: series.as_of,
        };
      },
    }),
  ];
}
