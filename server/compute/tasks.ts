// The CPU-bound work the compute pool runs: pure functions of plain, structured-cloneable inputs
// (numbers, candles, texts), each one a named task. The same table runs in a worker thread (worker.ts)
// and, with COMPUTE_WORKERS=0, on the main thread (pool.ts), so both modes compute the same thing.
// Which tools use it was decided by measuring each handler on the snapshot
// (npm run measure:tool-cpu, figures in bench/NOTES.md).
import { backtest, forecast, type BacktestOptions, type ForecastOptions } from '../analytics/forecast.ts';
import { fitGarch11, forecastVolatility, valueAtRisk95 } from '../analytics/garch.ts';
import type { DailyCandle } from '../analytics/candles.ts';
import { compositeRule, historicalHitRate } from '../analytics/signals.ts';
import { termCounts } from '../analytics/terms.ts';

export const TASKS = {
  /** forecast_price: the models, the rolling-origin choice among them, the path. */
  forecast: ({ closes, options }: { closes: readonly number[]; options: ForecastOptions }) => forecast(closes, options),
  /** backtest_forecast and get_prediction_track_record: the rolling-origin evaluation. */
  backtest: ({ closes, options }: { closes: readonly number[]; options: BacktestOptions }) => backtest(closes, options),
  /** get_volatility_forecast: GARCH(1,1) by maximum likelihood, its sigma path and VaR. */
  garch: ({ returns, horizon }: { returns: readonly number[]; horizon: number }) => {
    const fit = fitGarch11(returns);
    return { fit, path: forecastVolatility(fit, returns, horizon), var_95_1d: valueAtRisk95(fit, returns) };
  },
  /** get_trading_signal: today's composite signal and its day-by-day replay. */
  tradingSignal: ({ candles, horizonDays, replayDays }: { candles: readonly DailyCandle[]; horizonDays: number; replayDays: number }) => ({
    signal: compositeRule.evaluate(candles),
    record: historicalHitRate(candles, compositeRule, horizonDays, { replayDays }),
  }),
  /** get_trending_topics: term counts of a window's posts and of the window before (their texts). */
  trendingTerms: ({ current, previous }: { current: readonly string[]; previous: readonly string[] }) => ({
    current: termCounts(current),
    previous: termCounts(previous),
  }),
} as const;

export type TaskName = keyof typeof TASKS;
export type TaskInput<K extends TaskName> = Parameters<(typeof TASKS)[K]>[0];
export type TaskOutput<K extends TaskName> = ReturnType<(typeof TASKS)[K]>;

/** What a task's thread hands back: its value, or its error as data (a RangeError stays one). */
export type TaskResult = { ok: true; value: unknown } | { ok: false; name: string; message: string };

export function runTask(task: string, input: unknown): TaskResult {
  const fn = (TASKS as Record<string, ((input: never) => unknown) | undefined>)[task];
  if (!fn) return { ok: false, name: 'Error', message: `no compute task named ${task}` };
  try {
    return { ok: true, value: fn(input as never) };
  } catch (err) {
    // Errors cross threads as data: RangeError marks input the caller must fix (analyse() maps
    // it to INVALID_PARAMS); anything else becomes an internal error on the main thread.
    return { ok: false, name: err instanceof RangeError ? 'RangeError' : 'Error', message: err instanceof Error ? err.message : String(err) };
  }
}
