// npm run bench:calibration — are forecast_price's 50/80/95% intervals calibrated out of sample?
// Issue 35 (item 5). The intervals' scale factors (INTERVAL_SCALE in server/analytics/forecast.ts)
// are fitted on one set of outcomes and checked on others it never saw:
//  - fit: the 12 majors (bench:forecast's five and the seven below) with outcomes in 2022-2023;
//  - check: the same 12 in each one's last 365 days (the benchmark's five, then the seven others),
//    and the gap assets (series with a break, forecast on their last contiguous run) in their last
//    365 days, before (the whole series, break included, as the tools did) and after.
// The 30-day widening of the 95% band is fitted on the last year of the benchmark's five and the
// gap assets (after), and checked on the seven other majors, which never enter a fit.
// Every origin refits model `auto` on the closes up to it (backtestOrigins); an outcome is inside
// a band when its log price lies within centre ± scale × t quantile × sd, so one set of origins
// gives the coverage at any scale. Wilson 95% intervals treat origins as independent; at 7 and 30
// days neighbouring origins share days, so the true uncertainty is wider than printed.
// CALIBRATION_CACHE=<file> keeps the origins (they do not depend on the scales) between runs.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { lastContiguous } from '../server/analytics/candles.ts';
import { backtestOrigins, intervalScale, outcomeAgainst, type OriginOutcome } from '../server/analytics/forecast.ts';
import { wilson95 } from '../server/analytics/numeric.ts';
import { SnapshotProvider } from '../server/providers/market/snapshot.ts';

const BENCHMARK = ['bitcoin', 'ethereum', 'solana', 'binancecoin', 'ripple'];
/** The seven majors outside the benchmark with long, contiguous histories in the snapshot (no stablecoins). */
const OTHER_MAJORS = ['cardano', 'dogecoin', 'chainlink', 'litecoin', 'polkadot', 'avalanche-2', 'matic-network'];
const HORIZONS = [1, 7, 30];
const LEVELS = [50, 80, 95];
const RECENT_ORIGINS = Number(process.env.BENCH_ORIGINS ?? 60);
const FIT_ORIGINS = Number(process.env.BENCH_FIT_ORIGINS ?? 60);
const GAP_ORIGINS = Number(process.env.BENCH_GAP_ORIGINS ?? 8);
const FIT_TO = '2023-12-31';

const snapshot = new SnapshotProvider();
const cachePath = process.env.CALIBRATION_CACHE;
const t0 = performance.now();
const cache: Record<string, OriginOutcome[]> = cachePath && existsSync(cachePath) ? JSON.parse(readFileSync(cachePath, 'utf8')) : {};

interface Cell {
  set: string;
  asset: string;
  horizon: number;
  outcomes: OriginOutcome[];
}

async function closesOf(id: string, opts: { to?: string; contiguous: boolean }): Promise<number[]> {
  const all = (await snapshot.candles(id, { interval: 'daily' })).candles.filter((c) => !opts.to || c.date <= opts.to);
  return (opts.contiguous ? lastContiguous(all).candles : all).map((c) => c.close);
}

async function cell(set: string, asset: string, horizon: number, closes: () => Promise<number[]>, origins: number, window: number): Promise<Cell> {
  const key = `${set}|${asset}|${horizon}|${origins}|${window}`;
  if (!cache[key]) {
    cache[key] = backtestOrigins(await closes(), { horizon, model: 'auto', origins, window });
    if (cachePath) writeFileSync(cachePath, JSON.stringify(cache));
    process.stderr.write(`${key}: ${((performance.now() - t0) / 1000).toFixed(0)} s\n`);
  }
  return { set, asset, horizon, outcomes: cache[key]! };
}

const cells: Cell[] = [];
for (const h of HORIZONS) {
  for (const id of [...BENCHMARK, ...OTHER_MAJORS]) {
    // Outcomes in 2022-2023: the closes end on 2023-12-31 and the last 730 of them hold the outcomes.
    cells.push(await cell('fit: 12 majors, 2022-23', id, h, () => closesOf(id, { to: FIT_TO, contiguous: true }), FIT_ORIGINS, 730));
    const set = BENCHMARK.includes(id) ? 'check: benchmark 5, last 365 d' : 'check: 7 other majors, last 365 d';
    cells.push(await cell(set, id, h, () => closesOf(id, { contiguous: true }), RECENT_ORIGINS, 365));
  }
}
// The gap assets that trade on after their break (the break 2021-12-30 → 2023-11-24): outcomes in 2024.
const gapAssets = Object.entries(snapshot.data.series)
  .filter(([, s]) => s.dates.at(-1)! >= '2024-01-01' && lastContiguous(s.dates.map((date) => ({ date }))).gaps.length > 0)
  .map(([id]) => id)
  .filter((id) => !BENCHMARK.includes(id) && !OTHER_MAJORS.includes(id) && id !== 'bitcoin');
for (const h of HORIZONS) {
  for (const id of gapAssets) {
    cells.push(await cell('gap assets, before (break in the fit)', id, h, () => closesOf(id, { contiguous: false }), GAP_ORIGINS, 365));
    cells.push(await cell('gap assets, after (last contiguous run)', id, h, () => closesOf(id, { contiguous: true }), GAP_ORIGINS, 365));
  }
}
const seconds = (performance.now() - t0) / 1000;

/** The factor on the t quantile of the band at a level and horizon. */
type Scales = (level: number, horizon: number) => number;
const coverage = (outcomes: readonly OriginOutcome[], level: number, scale: number) => {
  let inside = 0;
  let above = 0;
  for (const o of outcomes) {
    const w = outcomeAgainst(o, level, scale);
    if (w === 'inside') inside++;
    else if (w === 'above') above++;
  }
  return { inside, above, below: outcomes.length - inside - above, n: outcomes.length };
};
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const share = (k: number, n: number) => {
  const [lo, hi] = wilson95(k, n);
  return `${pct(k / n)} (${(lo * 100).toFixed(1)}–${(hi * 100).toFixed(1)})`;
};

/**
 * The scale at which the pooled coverage of `level` on these outcomes is nominal (bisection; coverage
 * rises with the scale), or, `conservative`, at which the lower end of its Wilson 95% interval is.
 */
function fitScale(outcomes: readonly OriginOutcome[], level: number, conservative = false): number {
  let lo = 0.5;
  let hi = 2;
  for (let i = 0; i < 40; i++) {
    const mid = (lo + hi) / 2;
    const inside = coverage(outcomes, level, mid).inside;
    if ((conservative ? wilson95(inside, outcomes.length)[0] : inside / outcomes.length) < level / 100) lo = mid;
    else hi = mid;
  }
  return Math.round(hi * 100) / 100;
}

const sets = [...new Set(cells.map((c) => c.set))];
const pooled = (set: string, h?: number) => cells.filter((c) => c.set === set && (h === undefined || c.horizon === h)).flatMap((c) => c.outcomes);

function table(title: string, scales: Scales) {
  const shown = HORIZONS.map((h) => `${h} d: ${LEVELS.map((l) => `${l}% ${Number(scales(l, h).toFixed(3))}`).join(', ')}`).join('; ');
  console.log(`\n${title} (scales ${shown}; coverage with Wilson 95% interval)\n`);
  console.log('| outcomes | horizon | n | 50% | 80% | 95% | 95% misses above / below |');
  console.log('|---|---|---|---|---|---|---|');
  for (const set of sets) {
    for (const h of [...HORIZONS, undefined]) {
      const os = pooled(set, h);
      // Pooled over horizons, each origin is scored at its own horizon's scale.
      const c = Object.fromEntries(
        LEVELS.map((l) => [l, HORIZONS.filter((x) => h === undefined || x === h).map((x) => coverage(pooled(set, x), l, scales(l, x))).reduce((a, b) => ({ inside: a.inside + b.inside, above: a.above + b.above, below: a.below + b.below, n: a.n + b.n }))]),
      );
      const m = c[95]!;
      console.log(`| ${set} | ${h ?? 'all'} | ${os.length} | ${LEVELS.map((l) => share(c[l]!.inside, os.length)).join(' | ')} | ${pct(m.above / m.n)} / ${pct(m.below / m.n)} |`);
    }
  }
}

console.log(`bench:calibration — model auto; ${cells.reduce((a, c) => a + c.outcomes.length, 0)} origins in ${seconds.toFixed(0)} s`);
console.log(`gap assets (${gapAssets.length}): ${gapAssets.join(', ')}`);
const fitSet = pooled('fit: 12 majors, 2022-23');
const fitted = Object.fromEntries(LEVELS.map((l) => [l, fitScale(fitSet, l)]));
const byHorizon = HORIZONS.map((h) => `${h} d: ${LEVELS.map((l) => `${l}% ${fitScale(pooled('fit: 12 majors, 2022-23', h), l)}`).join(', ')}`);
console.log(`scales fitted on 2022-23 (12 majors, pooled): ${LEVELS.map((l) => `${l}% ${fitted[l]}`).join(', ')}; by horizon: ${byHorizon.join('; ')}`);
table('Unscaled t intervals', () => 1);
table('As shipped (intervalScale: INTERVAL_SCALE and TAIL_WIDENING_30D)', intervalScale);
table('Scales fitted on 2022-23 (pooled over horizons)', (l) => fitted[l]!);
// The widening of the 95% band at 30 days (TAIL_WIDENING_30D), fitted on the last year's outcomes
// of the benchmark's five and the gap assets, and checked on the seven other majors (never used
// to fit it) and on 2022-23. The point fit (nominal coverage on the fit set) and the conservative
// one (the lower end of its Wilson interval at 95%: the band covers 95% with 95% confidence there).
const fitOn = [...pooled('check: benchmark 5, last 365 d', 30), ...pooled('gap assets, after (last contiguous run)', 30)];
for (const conservative of [false, true]) {
  const scale = fitScale(fitOn, 95, conservative);
  const at = sets.map((set) => {
    const os = pooled(set, 30);
    const c = coverage(os, 95, scale);
    return `${set} ${share(c.inside, os.length)}, misses ${pct(c.above / c.n)} above / ${pct(c.below / c.n)} below`;
  });
  console.log(`\n95% band at 30 days, fitted on the benchmark 5 and the gap assets (last year, ${fitOn.length} origins), ${conservative ? 'Wilson lower bound at 95%' : 'point estimate at 95%'}: scale ${scale}; at it: ${at.join('; ')}`);
}
