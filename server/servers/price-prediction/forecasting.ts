// forecast_price, backtest_forecast, get_volatility_forecast, get_prediction_track_record.
import { z } from 'zod';
import { calledDirection, FIT_WINDOW, FORECAST_MODELS } from '../../analytics/forecast.ts';
import { logReturns } from '../../analytics/garch.ts';
import { addDays } from '../../lib/dates.ts';
import { snakeKeys } from '../../lib/snake.ts';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import type { LoggedForecastDay } from '../../forecasts/store.ts';
import { analysed, jobOf } from '../common/analysis.ts';
import { assetRef, day } from '../common/outputs.ts';
import { contiguousWindow, gapNotes, type ContiguousSeries } from '../common/series.ts';
import type { ServerDeps } from '../deps.ts';
import { assetSchema, history } from './technical.ts';

const horizonSchema = z.number().int().min(1).max(30).default(7).describe('Days ahead.');
const modelSchema = z.enum(FORECAST_MODELS).default('auto').describe('auto picks the model with the lowest rolling-origin backtest error.');

const interval = z.array(z.number()).describe('[low, high] USD');
const fittedModel = z.enum(['drift', 'ets', 'arima', 'ensemble']);
const byLevel = z.record(z.string(), z.number()).describe('by interval level: "50", "80", "95"');

const backtestSchema = z.object({
  model: z.enum(FORECAST_MODELS),
  horizon: z.number(),
  origins: z.number(),
  window: z.number(),
  mae: z.number().describe('USD'),
  mape: z.number().describe('%'),
  mase: z.number().describe('< 1 beats the random walk'),
  naive_mae: z.number(),
  directional_accuracy: z.number().nullable(),
  flat_forecasts: z.number(),
  coverage: byLevel,
  misses: z.record(z.string(), z.object({ above: z.number(), below: z.number() })),
  up_base_rate: z.number(),
  models_used: z.record(z.string(), z.number()),
});

/** What npm run bench:forecast measured (2026-11-25, after the 50% band recalibration), quoted in answers. */
const BENCH = {
  directional_accuracy: 48.4,
  up_base_rate: 49.9,
} as const;

/**
 * Interval coverage as npm run bench:calibration measured it (2026-11-26, docs/data.md), with the
 * 30-day 95% band widened by TAIL_WIDENING_30D (fitted on the benchmark's five and the gap assets
 * in their last year): the benchmark's five majors in their last year (the 50% scale and the
 * widening were fitted there: in sample) and out of sample (seven other majors the same year, which
 * no scale was fitted on; the twelve majors in 2022-23; 51 assets with a break in their prices, on
 * their last run, which the widening was fitted on too). Percent, pooled over horizons 1/7/30.
 */
export const CALIBRATION = {
  benchmark: { 50: 50.6, 80: 81.7, 95: 95.3 },
  other_majors: { 50: 44.9, 80: 80.2, 95: 95.0 },
  years_2022_23: { 50: 59.7, 80: 86.5, 95: 96.7 },
  gap_assets: { 50: 44.9, 80: 75.2, 95: 96.4 },
  /** The seven other majors' 30-day 95% coverage before the widening was refitted (x1.1) and after (x1.29). */
  other_majors_95_at_30d: { before: 91.4, after: 94.0 },
  /** The 30-day 95% coverage in 2022-23 (twelve majors): the widening's cost in a calmer period. */
  years_2022_23_95_at_30d: 99.3,
  /** The lowest 95% coverage of any set and horizon: the gap assets at 7 days. */
  lowest_95: 93.6,
  /** 95% misses above / below at 30 days in the last year (benchmark five) and in 2022-23 (twelve majors). */
  misses_95_30d: { last_year: { above: 3.3, below: 0.0 }, years_2022_23: { above: 0.6, below: 0.1 } },
} as const;

const c = CALIBRATION;
const f1 = (x: number) => x.toFixed(1);
const levels = (x: { 50: number; 80: number; 95: number }) => `${f1(x[50])}/${f1(x[80])}/${f1(x[95])}%`;
/** The measured calibration, in one sentence every forecast answer and the track record carry. */
export const CALIBRATION_STATEMENT =
  `50/80/95% intervals covered ${levels(c.benchmark)} of outcomes on the benchmark's five majors (in sample), and out of sample ${levels(c.other_majors)} on seven other majors, ${levels(c.years_2022_23)} in 2022-23 (too wide then) and ${levels(c.gap_assets)} on assets with breaks in their prices; ` +
  `the 30-day 95% band is widened by a factor fitted on the benchmark and the break assets, never on the seven other majors, where it now covers ${f1(c.other_majors_95_at_30d.after)}% at 30 days (${f1(c.other_majors_95_at_30d.before)}% before); no 95% band covers under ${f1(c.lowest_95)}% on any set and horizon measured. ` +
  `Residual: the 50% band is too narrow out of sample in the last year (${c.other_majors[50]}%), the 80% band of assets with breaks covers ${c.gap_assets[80]}%, and the 30-day 95% band is too wide in calmer periods (${c.years_2022_23_95_at_30d}% in 2022-23) (npm run bench:calibration; docs/data.md).`;

/** Share of h-day moves that were up, over the windows ending in the last `days` closes. */
export function upShare(closes: readonly number[], horizon: number, days: number): { share: number | null; windows: number } {
  let up = 0;
  let windows = 0;
  for (let t = Math.max(horizon, closes.length - days); t < closes.length; t++) {
    windows++;
    if (closes[t]! > closes[t - horizon]!) up++;
  }
  return { share: windows ? up / windows : null, windows };
}

/**
 * The closes a model sees (the run; it fits on the last FIT_WINDOW of them) and the note when a
 * break left it fewer than the `needed` days it would otherwise reach back.
 */
function modelInput(series: ContiguousSeries, needed: number): { closes: number[]; notes: string[] } {
  const closes = series.candles.map((c) => c.close);
  return { closes, notes: gapNotes(series, addDays(series.as_of, -needed), series.candles.slice(-needed - 1)) };
}

// The models, backtests and GARCH fits run in the compute pool (ServerDeps.compute): a backtest
// holds a core for seconds, which on the event loop froze every other request of the process.
export function forecastingTools({ market, forecasts, compute }: ServerDeps): ToolDefinition[] {
  return [
    defineTool({
      name: 'forecast_price',
      title: 'Price forecast',
      description:
        'Returns a daily USD price forecast for 1-30 days with 50/80/95% intervals (ETS, ARIMA, drift or ensemble on log prices, chosen by backtest). probability_up is the recent base rate: the models show no directional edge.',
      input: z.object({ asset: assetSchema, horizon: horizonSchema, model: modelSchema }).strict(),
      output: z.object({
        asset: assetRef,
        base_date: day,
        last_price: z.number(),
        model: fittedModel,
        spec: z.string(),
        reason: z.string(),
        selection: z.array(z.object({ model: fittedModel, mae_log: z.number(), relative_to_random_walk: z.number() })).nullable(),
        probability_up: z.number().nullable(),
        direction: z.object({ probability_up_basis: z.string(), model_probability_up: z.number(), edge: z.string() }),
        interval_note: z.string().optional(),
        forecast: z.array(z.object({ date: day, point: z.number(), p50: interval, p80: interval, p95: interval })),
        caveat: z.string(),
      }),
      credits: 5,
      handler: async (args, ctx) => {
        const { asset, series } = await history(market, args.asset, ctx.signal);
        const { closes, notes } = modelInput(series, FIT_WINDOW);
        const result = await analysed('cannot forecast', compute.run('forecast', { closes, options: { horizon: args.horizon, model: args.model } }, jobOf(ctx)));
        const upBase = upShare(closes, args.horizon, 365);
        const path: LoggedForecastDay[] = result.steps.map((s) => ({
          date: addDays(series.as_of, s.step),
          point: s.point,
          p50: s.intervals[50]!,
          p80: s.intervals[80]!,
          p95: s.intervals[95]!,
        }));
        await forecasts.record({
          request_id: ctx.requestId,
          account_id: ctx.account.id,
          asset_id: asset.id,
          model: result.model,
          horizon: args.horizon,
          source: market.name,
          base_date: series.as_of,
          base_close: result.last_price,
          path,
        });
        return {
          data: {
            asset,
            base_date: series.as_of,
            last_price: result.last_price,
            model: result.model,
            spec: result.spec,
            reason: result.reason,
            selection: result.selection,
            // The models show no directional edge in backtests, so the probability of an up move
            // given is the base rate of the recent past, with the model's own number beside it.
            probability_up: upBase.share,
            direction: {
              probability_up_basis: `share of ${args.horizon}-day moves that were up over the ${upBase.windows} windows ending in the last 365 days`,
              model_probability_up: result.probability_up,
              edge: `none measured: in npm run bench:forecast (5 majors, horizons 1/7/30, 900 origins) the models called the direction right ${BENCH.directional_accuracy}% of the time against an up base rate of ${BENCH.up_base_rate}% on the same origins; the model probability is shown for transparency, not as a signal`,
            },
            // Which side 30-day misses fall on depended on the period: high in the last year (a
            // rising market), evenly in 2022-23. Said as measured, not as a rule.
            ...(args.horizon > 7
              ? {
                  interval_note: `Beyond a week, which side the misses fall on depends on the market: over the last year 30-day outcomes fell above the 95% band ${c.misses_95_30d.last_year.above}% of the time and below it ${c.misses_95_30d.last_year.below}% (a rising market), in 2022-23 ${c.misses_95_30d.years_2022_23.above}% above and ${c.misses_95_30d.years_2022_23.below}% below. ${CALIBRATION_STATEMENT}`,
                }
              : {}),
            forecast: path,
            caveat: `A statistical forecast from past prices only, not a guarantee. ${CALIBRATION_STATEMENT}`,
          },
          source: series.source,
          data_as_of: series.as_of,
          notes,
        };
      },
    }),
    defineTool({
      name: 'backtest_forecast',
      longRunning: true,
      title: 'Forecast backtest',
      description:
        "Returns a forecast model's rolling-origin backtest on an asset: MAE, MAPE, MASE against the random walk, directional accuracy and 50/80/95% interval coverage.",
      input: z
        .object({
          asset: assetSchema,
          horizon: horizonSchema,
          model: modelSchema,
          origins: z.number().int().min(5).max(100).default(30).describe('Forecast origins to evaluate, evenly spaced.'),
          window_days: z.number().int().min(60).max(730).default(365).describe('Outcomes lie in the last window_days.'),
        })
        .strict(),
      output: backtestSchema.extend({ asset: assetRef, reading: z.string() }),
      credits: 10,
      handler: async (args, ctx) => {
        const { asset, series } = await history(market, args.asset, ctx.signal);
        const { closes, notes } = modelInput(series, args.window_days + FIT_WINDOW);
        const result = await analysed(
          'cannot backtest',
          compute.run('backtest', { closes, options: { horizon: args.horizon, model: args.model, origins: args.origins, window: args.window_days } }, jobOf(ctx)),
        );
        return {
          data: { asset, ...result, reading: result.mase < 1 ? 'beats the random walk on these origins' : 'does not beat the random walk on these origins' },
          source: series.source,
          data_as_of: series.as_of,
          notes,
        };
      },
    }),
    defineTool({
      name: 'get_volatility_forecast',
      title: 'Volatility forecast',
      description:
        'Returns a GARCH(1,1) volatility forecast on daily log returns: the daily and annualised volatility path, the fit, and the 1-day 95% value at risk.',
      input: z
        .object({
          asset: assetSchema,
          horizon: horizonSchema,
          window_days: z.number().int().min(250).max(3650).default(1000).describe('Days of returns to fit on.'),
        })
        .strict(),
      output: z.object({
        asset: assetRef,
        returns_used: z.number(),
        fit: z.object({
          mu: z.number(),
          omega: z.number(),
          alpha: z.number(),
          beta: z.number(),
          persistence: z.number(),
          unconditional_variance: z.number(),
          log_likelihood: z.number(),
          converged: z.boolean(),
          observations: z.number(),
        }),
        path: z.array(z.object({ date: day, daily_sigma: z.number(), annualised_pct: z.number().optional() })),
        var_95_1d: z.number(),
        units: z.string(),
      }),
      credits: 3,
      handler: async (args, ctx) => {
        const { asset, series } = await history(market, args.asset, ctx.signal);
        const { candles, notes } = contiguousWindow(series, args.window_days);
        const returns = logReturns(candles.map((c) => c.close));
        const garch = await analysed('cannot fit GARCH', compute.run('garch', { returns, horizon: args.horizon }, jobOf(ctx)));
        const result = {
          fit: snakeKeys(garch.fit),
          path: garch.path.daily_sigma.map((s, i) => ({ date: addDays(series.as_of, i + 1), daily_sigma: s, annualised_pct: garch.path.annualised_pct[i] })),
          var_95_1d: garch.var_95_1d,
        };
        return {
          data: { asset, returns_used: returns.length, ...result, units: 'daily_sigma is a fraction of price; annualised with √365; VaR is a fraction of position value' },
          source: series.source,
          data_as_of: series.as_of,
          notes,
        };
      },
    }),
    defineTool({
      name: 'get_prediction_track_record',
      longRunning: true,
      title: 'Prediction track record',
      description:
        "Returns forecast_price's matured forecasts on an asset scored against realised prices, or, where none has matured (the offline snapshot), its backtest record.",
      input: z.object({ asset: assetSchema, horizon: horizonSchema, limit: z.number().int().min(1).max(100).default(20) }).strict(),
      output: z.object({
        asset: assetRef,
        kind: z.string(),
        horizon: z.number().optional(),
        price_source: z.string().optional(),
        forecasts: z
          .array(
            z.object({
              made_from: day,
              target_date: day,
              horizon: z.number(),
              model: z.string(),
              forecast: z.number(),
              actual: z.number(),
              abs_pct_error: z.number(),
              inside_80: z.boolean(),
              direction: z.enum(['up', 'down', 'flat']),
              direction_right: z.boolean().nullable(),
            }),
          )
          .optional(),
        summary: z
          .object({
            count: z.number(),
            mape: z.number(),
            coverage_80: z.number(),
            directional_forecasts: z.number(),
            flat_forecasts: z.number(),
            directional_accuracy: z.number().nullable(),
          })
          .optional(),
        rule: z.string().optional(),
        backtest: backtestSchema.optional().describe('when no forecast has matured'),
        calibration: z.string().describe("The intervals' coverage measured in and out of sample, and where it falls short."),
      }),
      credits: 1,
      handler: async (args, ctx) => {
        const { asset, series } = await history(market, args.asset, ctx.signal);
        // Only forecasts of the asked horizon, made from the prices they are scored against.
        const matured = await forecasts.matured(asset.id, series.as_of, args.limit, { horizon: args.horizon, source: market.name });
        const byDate = new Map(series.candles.map((c) => [c.date, c.close]));
        const scored = matured
          .map((f) => {
            const target = f.path[f.path.length - 1]!;
            const actual = byDate.get(target.date);
            if (actual === undefined) return null;
            const called = calledDirection(target.point, f.base_close);
            return {
              made_from: f.base_date,
              target_date: target.date,
              horizon: f.horizon,
              model: f.model,
              forecast: target.point,
              actual,
              abs_pct_error: (Math.abs(actual - target.point) / actual) * 100,
              inside_80: actual >= target.p80[0] && actual <= target.p80[1],
              // A flat forecast calls no direction: it is counted apart, never as a wrong one.
              direction: called > 0 ? ('up' as const) : called < 0 ? ('down' as const) : ('flat' as const),
              direction_right: called === 0 ? null : called === Math.sign(actual - f.base_close),
            };
          })
          .filter((x) => x !== null);
        if (scored.length > 0) {
          const directional = scored.filter((s) => s.direction_right !== null);
          return {
            data: {
              asset,
              kind: 'logged forecasts scored against realised prices',
              horizon: args.horizon,
              price_source: market.name,
              forecasts: scored,
              summary: {
                count: scored.length,
                mape: scored.reduce((a, s) => a + s.abs_pct_error, 0) / scored.length,
                coverage_80: scored.filter((s) => s.inside_80).length / scored.length,
                directional_forecasts: directional.length,
                flat_forecasts: scored.length - directional.length,
                directional_accuracy: directional.length ? directional.filter((s) => s.direction_right).length / directional.length : null,
              },
              rule: `forecasts of horizon ${args.horizon} made from ${market.name} prices only; directional accuracy counts forecasts that called a direction (flat ones are counted apart)`,
              calibration: CALIBRATION_STATEMENT,
            },
            source: series.source,
            data_as_of: series.as_of,
          };
        }
        const { closes, notes } = modelInput(series, 365 + FIT_WINDOW);
        const record = await analysed('cannot backtest', compute.run('backtest', { closes, options: { horizon: args.horizon, model: 'auto', origins: 30, window: 365 } }, jobOf(ctx)));
        return {
          data: {
            asset,
            kind: 'rolling-origin backtest (no logged forecast has matured: on the offline snapshot prices do not move on, so this is the model record on history instead)',
            backtest: record,
            calibration: CALIBRATION_STATEMENT,
          },
          source: series.source,
          data_as_of: series.as_of,
          notes,
        };
      },
    }),
  ];
}
