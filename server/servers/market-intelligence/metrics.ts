// get_asset_metrics and get_correlation_matrix: risk and co-movement from daily closes.
import { z } from 'zod';
import { ApiError } from '../../errors.ts';
import { addDays } from '../../lib/dates.ts';
import { snakeKeys } from '../../lib/snake.ts';
import { betaAndCorrelation, correlationMatrix, distanceFromAllTimeHigh, logReturnPerformance, maxDrawdown, SHARPE_METHOD } from '../../analytics/risk.ts';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import { analyse } from '../common/analysis.ts';
import { resolveAsset, resolveAssets } from '../common/assets.ts';
import { assetRef, pricePoint } from '../common/outputs.ts';
import { contiguous, contiguousWindow } from '../common/series.ts';
import type { ServerDeps } from '../deps.ts';

const windowSchema = z.object({ from: z.string(), to: z.string(), days: z.number() });

const assetSchema = z.string().trim().min(1).max(100).describe('An asset id, ticker or name, e.g. "bitcoin", "ETH".');

export function metricTools({ market }: ServerDeps): ToolDefinition[] {
  return [
    defineTool({
      name: 'get_asset_metrics',
      title: 'Asset risk and return metrics',
      description:
        "Returns an asset's realised volatility (of daily log returns), return over the window (total and geometric annualised), Sharpe ratio on the same log returns, maximum drawdown, beta and correlation to a benchmark (default BTC), and its distance from the all-time high. Ratios are fractions (0.25 = 25%), annualised over 365 days.",
      input: z
        .object({
          asset: assetSchema,
          window_days: z.number().int().min(30).max(3650).default(365).describe('Days of history ending on the last day (30-3650).'),
          benchmark: assetSchema.default('bitcoin'),
          risk_free_rate: z.number().min(0).max(0.5).default(0).describe('Annual risk-free rate for the Sharpe ratio, as a fraction.'),
        })
        .strict(),
      output: z.object({
        asset: assetRef,
        window: z.object({ from: z.string().optional(), to: z.string(), days: z.number().describe('Days of daily returns used: the window, or less where a break in the data cut it.') }),
        realised_volatility: z
          .object({ daily: z.number(), annualised: z.number(), observations: z.number(), from: z.string(), to: z.string() })
          .describe('Sample standard deviation of daily log returns; the one volatility of this answer (the Sharpe ratio divides by it).'),
        returns: z.object({
          total: z.number().describe('Last close over first close, minus 1.'),
          annualised_geometric: z.number().describe('(1 + total)^(365 / days spanned) - 1: the steady yearly rate that compounds to the total.'),
          mean_daily_log: z.number().describe('Mean daily log return (= ln(1 + total) / observations).'),
          observations: z.number(),
        }),
        max_drawdown: z.object({ depth: z.number(), peak: pricePoint, trough: pricePoint, recovered: pricePoint.nullable() }),
        sharpe: z.object({
          sharpe: z.number().nullable(),
          risk_free_rate: z.number(),
          method: z.string(),
        }),
        vs_benchmark: z.object({
          benchmark: z.string(),
          beta: z.number().nullable(),
          correlation: z.number().nullable(),
          overlapping_days: z.number(),
          observations: z.number(),
          from: z.string(),
          to: z.string(),
        }),
        all_time_high: z.object({ ath: pricePoint, last: pricePoint, distance: z.number(), days_since_ath: z.number() }),
        units: z.string(),
      }),
      credits: 2,
      handler: async (args, ctx) => {
        const asset = resolveAsset(market.registry, args.asset);
        const bench = resolveAsset(market.registry, args.benchmark);
        const [series, benchSeries] = await Promise.all([
          market.candles(asset.id, { interval: 'daily' }, ctx.signal).then((s) => contiguous(s, asset.symbol.toUpperCase())),
          market.candles(bench.id, { interval: 'daily' }, ctx.signal).then((s) => contiguous(s, bench.symbol.toUpperCase())),
        ]);
        // Returns, volatility, drawdown and beta on the last contiguous run of each; the all-time
        // high is a level, not a return, so it is taken over every candle (breaks included).
        const { candles: window, notes } = contiguousWindow(series, args.window_days);
        const benchWindow = benchSeries.candles.filter((c) => c.date >= (window[0]?.date ?? '') && c.date <= series.as_of);
        const benchNotes = window[0] && benchSeries.candles[0] && benchSeries.candles[0].date > window[0].date && benchSeries.gaps.length > 0
          ? [`${benchSeries.label} (the benchmark) has a break in its data: beta and correlation use only the days from ${benchSeries.candles[0].date}.`]
          : [];
        const result = analyse('not enough history', () => {
          const p = logReturnPerformance(window, args.risk_free_rate);
          return {
            window: { from: window[0]!.date, to: series.as_of, days: window.length - 1 },
            realised_volatility: p.volatility,
            returns: { total: p.totalReturn, annualised_geometric: p.annualisedGeometricReturn, mean_daily_log: p.meanDailyLogReturn, observations: p.volatility.observations },
            max_drawdown: maxDrawdown(window),
            sharpe: { sharpe: p.sharpe, risk_free_rate: args.risk_free_rate, method: SHARPE_METHOD },
            vs_benchmark: { benchmark: bench.id, ...snakeKeys(betaAndCorrelation(window, benchWindow)) },
            all_time_high: snakeKeys(distanceFromAllTimeHigh(series.all)),
          };
        });
        // The answer is as old as its oldest figure: beta and correlation stop where the benchmark does.
        const benchTo = result.vs_benchmark.to;
        const dated = benchTo < series.as_of
          ? [`Figures rest on different dates: ${asset.symbol.toUpperCase()}'s volatility, return, drawdown and Sharpe ratio run to ${series.as_of}; its beta and correlation to ${bench.id} stop at ${benchTo}, where ${bench.id}'s closes end. data_as_of is the older.`]
          : [];
        return {
          data: { asset: { id: asset.id, symbol: asset.symbol, name: asset.name }, ...result, units: 'fractions (0.25 = 25%); annualised with 365 days' },
          source: series.source === benchSeries.source ? series.source : `${series.source}+${benchSeries.source}`,
          data_as_of: benchTo < series.as_of ? benchTo : series.as_of,
          notes: [...notes.map((n) => `${n} The all-time high is over all the data, break included.`), ...benchNotes, ...dated],
        };
      },
    }),
    defineTool({
      name: 'get_correlation_matrix',
      title: 'Correlation matrix',
      description:
        'Returns the correlations of daily log returns between 2 and 20 assets over a window ending on the last day all have, with each pair\'s overlapping days.',
      input: z
        .object({
          assets: z.array(assetSchema).min(2).max(20),
          window_days: z.number().int().min(30).max(1825).default(90),
        })
        .strict(),
      output: z.object({
        window: windowSchema,
        ids: z.array(z.string()),
        matrix: z.array(z.array(z.number().nullable())).describe('matrix[i][j]: correlation of ids[i] and ids[j]'),
        overlapping_days: z.array(z.array(z.number())),
        method: z.string(),
      }),
      credits: 2,
      handler: async (args, ctx) => {
        const entries = resolveAssets(market.registry, args.assets);
        if (entries.length < 2) {
          throw new ApiError('INVALID_PARAMS', 'Name at least two different assets.', { issues: [{ path: 'assets', message: 'at least two distinct assets' }] });
        }
        // Each series' last contiguous run: no return spans a break in the data.
        const all = await Promise.all(entries.map((e) => market.candles(e.id, { interval: 'daily' }, ctx.signal).then((s) => contiguous(s, e.symbol.toUpperCase()))));
        // Assets end on different days: the window ends on the last day all of them have.
        const end = all.map((s) => s.as_of).reduce((a, b) => (b < a ? b : a));
        const start = addDays(end, -args.window_days);
        const firsts = all.map((s) => s.candles[0]?.date ?? end);
        if (firsts.some((f) => f > start)) {
          const late = entries
            .map((e, i) => (firsts[i]! > start ? `${e.id}${all[i]!.gaps.length > 0 ? ` (after a break in its prices from ${all[i]!.gaps.at(-1)!.from} to ${all[i]!.gaps.at(-1)!.to})` : ''}` : null))
            .filter((x) => x !== null);
          throw new ApiError('INVALID_PARAMS', `Not enough common contiguous history before ${end}: ${late.join(', ')} start later than ${start}.`, {
            issues: [{ path: 'window_days', message: `choose a window ending ${end} that these assets cover` }],
          });
        }
        const matrix = analyse('cannot correlate', () =>
          correlationMatrix(all.map((s, i) => ({ id: entries[i]!.id, candles: s.candles.filter((c) => c.date >= start && c.date <= end) }))),
        );
        return {
          data: { window: { from: start, to: end, days: args.window_days }, ...snakeKeys(matrix), method: 'Pearson correlation of daily log returns on common days' },
          source: all[0]!.source,
          data_as_of: end,
        };
      },
    }),
  ];
}
