// npm run bench:forecast — forecast honesty and speed on the offline snapshot (issue 3):
//  - calibration: for BTC, ETH, SOL, BNB, XRP at horizons 1, 7 and 30 days, a rolling-origin
//    backtest whose outcomes lie in each asset's last 365 days: coverage of the 80% interval
//    (target 72-88%) and MASE against the no-change random walk (below 1 beats it);
//  - the gap assets (AAVE, UNI, XLM: no prices from 2021-12-31 to 2023-11-23) as their own cells,
//    forecast on their last contiguous run as forecast_price does, pooled apart from the majors;
//  - speed: forecast_price's model 'auto' on the last 5 years of BTC, p50 and p95 (target p50 < 200 ms).
import { lastContiguous } from '../server/analytics/candles.ts';
import { backtest, forecast } from '../server/analytics/forecast.ts';
import { SnapshotProvider } from '../server/providers/market/snapshot.ts';

const MAJORS = ['bitcoin', 'ethereum', 'solana', 'binancecoin', 'ripple'];
const GAP_ASSETS = ['aave', 'uniswap', 'stellar'];
const ASSETS = [...MAJORS, ...GAP_ASSETS];
const HORIZONS = [1, 7, 30];
const ORIGINS = Number(process.env.BENCH_ORIGINS ?? 60);
const snapshot = new SnapshotProvider();

console.log(`bench:forecast — model auto, ${ORIGINS} rolling origins per cell, outcomes in each asset's last 365 days`);
console.log('asset         last day    h   cov50  cov80  cov95   MASE   dir.acc  verdict');
const allRows: { id: string; h: number; cov50: number; cov80: number; cov95: number; mase: number; dir: number | null; flat: number; up: number; misses: Record<number, { above: number; below: number }> }[] = [];
for (const id of ASSETS) {
  const series = await snapshot.candles(id, { interval: 'daily' });
  // The last contiguous run, as the tools use it: no return spans a break in the data.
  const run = lastContiguous(series.candles).candles;
  const closes = run.map((c) => c.close);
  for (const h of HORIZONS) {
    const r = backtest(closes, { horizon: h, model: 'auto', origins: ORIGINS, window: 365 });
    const cov80 = r.coverage[80]!;
    allRows.push({ id, h, cov50: r.coverage[50]!, cov80, cov95: r.coverage[95]!, mase: r.mase, dir: r.directional_accuracy, flat: r.flat_forecasts, up: r.up_base_rate, misses: r.misses });
    const inBand = cov80 >= 0.72 && cov80 <= 0.88;
    console.log(
      `${id.padEnd(13)} ${series.as_of}  ${String(h).padStart(2)}  ${pct(r.coverage[50]!)}  ${pct(cov80)}  ${pct(r.coverage[95]!)}  ${r.mase.toFixed(3).padStart(5)}  ${r.directional_accuracy === null ? '    –' : pct(r.directional_accuracy)}    ${inBand ? '80% in band' : '80% OUT of 72-88%'}; ${r.mase < 1 ? 'beats' : 'does not beat'} the random walk`,
    );
  }
}
function summary(title: string, rows: typeof allRows) {
  console.log(`\n${title}`);
  const inBand = rows.filter((r) => r.cov80 >= 0.72 && r.cov80 <= 0.88).length;
  const pooled = rows.reduce((a, r) => a + r.cov80, 0) / rows.length;
  console.log(`pooled 80% coverage over all cells: ${pct(pooled)} (target 72-88%: ${pooled >= 0.72 && pooled <= 0.88 ? 'meets' : 'MISSES'})`);
  const beats = rows.filter((r) => r.mase < 1).length;
  console.log(`80% intervals in 72-88%: ${inBand} of ${rows.length} cells; beats the random walk (MASE < 1): ${beats} of ${rows.length}`);
  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(`pooled coverage: 50% ${pct(avg(rows.map((r) => r.cov50)))}, 80% ${pct(avg(rows.map((r) => r.cov80)))}, 95% ${pct(avg(rows.map((r) => r.cov95)))}; mean MASE ${avg(rows.map((r) => r.mase)).toFixed(3)}`);
  const called = rows.filter((r): r is typeof r & { dir: number } => r.dir !== null);
  console.log(`flat forecasts (no direction called, counted apart): ${rows.reduce((a, r) => a + r.flat, 0)} of ${rows.length * ORIGINS}`);
  console.log(`pooled directional accuracy ${pct(avg(called.map((r) => r.dir)))} against an up base rate of ${pct(avg(rows.map((r) => r.up)))} on the same origins (no edge unless clearly above both 50% and the base rate)`);
  for (const h of HORIZONS) {
    const cells = rows.filter((r) => r.h === h);
    const side = (l: number) => `above ${pct(avg(cells.map((r) => r.misses[l]!.above)))} / below ${pct(avg(cells.map((r) => r.misses[l]!.below)))}`;
    console.log(`misses at ${String(h).padStart(2)} days: 80% interval ${side(80)}; 95% interval ${side(95)}`);
  }
}
summary(`majors (${MAJORS.join(', ')})`, allRows.filter((r) => MAJORS.includes(r.id)));
summary(`gap assets (${GAP_ASSETS.join(', ')}), on their last contiguous run`, allRows.filter((r) => GAP_ASSETS.includes(r.id)));

const btc = (await snapshot.candles('bitcoin', { interval: 'daily' })).candles.map((c) => c.close).slice(-5 * 365);
const times: number[] = [];
for (let i = 0; i < 30; i++) {
  const t0 = performance.now();
  forecast(btc, { horizon: 7, model: 'auto' });
  times.push(performance.now() - t0);
}
times.sort((a, b) => a - b);
const p50 = times[Math.floor(times.length / 2)]!;
console.log(`\nforecast auto, BTC, ${btc.length} daily closes, horizon 7: p50 ${p50.toFixed(1)} ms, p95 ${times[Math.floor(times.length * 0.95)]!.toFixed(1)} ms (target p50 < 200 ms: ${p50 < 200 ? 'meets' : 'MISSES'})`);

function pct(x: number): string {
  return `${(x * 100).toFixed(1).padStart(5)}%`;
}
