import { mean } from './candles.ts';

// Small numerical kernels shared by the forecasting and volatility models: a Nelder–Mead
// minimiser and the normal / Student-t distribution functions. Pure, allocation-light, no I/O.

export interface MinimizeResult {
  x: number[];
  value: number;
  iterations: number;
  converged: boolean;
}

export interface MinimizeOptions {
  maxIterations?: number;
  /** Stop when the simplex's function values differ by less than this (relative). */
  tolerance?: number;
  /** Initial simplex edge, in the (unconstrained) parameter units. */
  step?: number;
}

/**
 * Nelder–Mead downhill simplex (Nelder & Mead 1965, standard coefficients 1, 2, ½, ½).
 * Derivative-free, so it copes with the kinked likelihoods that parameter transforms and
 * clamps produce. Callers pass unconstrained parameters and map them to their domain.
 * A non-finite objective value is treated as +Infinity so the simplex moves away from it.
 */
export function nelderMead(
  objective: (x: number[]) => number,
  start: number[],
  options: MinimizeOptions = {},
): MinimizeResult {
  const maxIterations = options.maxIterations ?? 400;
  const tolerance = options.tolerance ?? 1e-9;
  const step = options.step ?? 0.5;
  const dim = start.length;
  const f = (x: number[]): number => {
    const v = objective(x);
    return Number.isFinite(v) ? v : Infinity;
  };

  const points: number[][] = [start.slice()];
  for (let i = 0; i < dim; i++) {
    const p = start.slice();
    p[i] = (p[i] ?? 0) + step;
    points.push(p);
  }
  const values = points.map(f);

  const at = (arr: number[], i: number): number => arr[i] as number;
  const combine = (a: number[], b: number[], t: number): number[] =>
    a.map((ai, i) => ai + t * (at(b, i) - ai));

  let iterations = 0;
  let converged = false;
  const order = points.map((_, i) => i);
  while (iterations < maxIterations) {
    order.sort((i, j) => at(values, i) - at(values, j));
    const best = at(values, order[0] as number);
    const worstIndex = order[dim] as number;
    const worst = at(values, worstIndex);
    if (Math.abs(worst - best) <= tolerance * (Math.abs(best) + 1e-12)) {
      converged = true;
      break;
    }
    iterations++;

    const centroid = new Array<number>(dim).fill(0);
    for (let k = 0; k < dim; k++) {
      const p = points[order[k] as number] as number[];
      for (let i = 0; i < dim; i++) centroid[i] = at(centroid, i) + at(p, i) / dim;
    }
    const worstPoint = points[worstIndex] as number[];
    const secondWorst = at(values, order[dim - 1] as number);

    const reflected = combine(centroid, worstPoint, -1);
    const fr = f(reflected);
    if (fr < best) {
      const expanded = combine(centroid, worstPoint, -2);
      const fe = f(expanded);
      if (fe < fr) {
        points[worstIndex] = expanded;
        values[worstIndex] = fe;
      } else {
        points[worstIndex] = reflected;
        values[worstIndex] = fr;
      }
      continue;
    }
    if (fr < secondWorst) {
      points[worstIndex] = reflected;
      values[worstIndex] = fr;
      continue;
    }
    const outside = fr < worst;
    const contracted = outside ? combine(centroid, reflected, 0.5) : combine(centroid, worstPoint, 0.5);
    const fc = f(contracted);
    if (fc < (outside ? fr : worst)) {
      points[worstIndex] = contracted;
      values[worstIndex] = fc;
      continue;
    }
    const bestPoint = points[order[0] as number] as number[];
    for (let k = 1; k <= dim; k++) {
      const idx = order[k] as number;
      const shrunk = combine(bestPoint, points[idx] as number[], 0.5);
      points[idx] = shrunk;
      values[idx] = f(shrunk);
    }
  }
  let bestIndex = 0;
  for (let i = 1; i <= dim; i++) if (at(values, i) < at(values, bestIndex)) bestIndex = i;
  return { x: (points[bestIndex] as number[]).slice(), value: at(values, bestIndex), iterations, converged };
}

export const logistic = (u: number): number => 1 / (1 + Math.exp(-u));

// Lanczos approximation (g = 7, n = 9), accurate to ~1e-15 for positive arguments.
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
  -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
  1.5056327351493116e-7,
];

export function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
  const z = x - 1;
  let a = LANCZOS[0] as number;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += (LANCZOS[i] as number) / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

// Continued fraction for the regularised incomplete beta (Lentz's method, Numerical Recipes §6.4).
function betaContinuedFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-15) break;
  }
  return h;
}

/** Regularised incomplete beta function I_x(a, b). */
export function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const lnFront = logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x);
  const front = Math.exp(lnFront);
  if (x < (a + 1) / (a + b + 2)) return (front * betaContinuedFraction(a, b, x)) / a;
  return 1 - (front * betaContinuedFraction(b, a, 1 - x)) / b;
}

// Complementary error function, W. J. Cody's rational Chebyshev form via Numerical Recipes
// erfcc (fractional error < 1.2e-7 everywhere), enough for probabilities we print to 4 digits.
function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? r : 2 - r;
}

export function normalCdf(x: number): number {
  return 0.5 * erfc(-x / Math.SQRT2);
}

/** Inverse of the standard normal CDF (Acklam's algorithm, relative error < 1.2e-9). */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile: p must be in (0, 1), got ${p}`);
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const [a0, a1, a2, a3, a4, a5] = a as [number, number, number, number, number, number];
  const [b0, b1, b2, b3, b4] = b as [number, number, number, number, number];
  const [c0, c1, c2, c3, c4, c5] = c as [number, number, number, number, number, number];
  const [d0, d1, d2, d3] = d as [number, number, number, number];
  const pLow = 0.02425;
  if (p < pLow) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (((((c0 * q + c1) * q + c2) * q + c3) * q + c4) * q + c5) / ((((d0 * q + d1) * q + d2) * q + d3) * q + 1);
  }
  if (p > 1 - pLow) {
    const q = Math.sqrt(-2 * Math.log(1 - p));
    return -(((((c0 * q + c1) * q + c2) * q + c3) * q + c4) * q + c5) / ((((d0 * q + d1) * q + d2) * q + d3) * q + 1);
  }
  const q = p - 0.5;
  const r = q * q;
  return ((((((a0 * r + a1) * r + a2) * r + a3) * r + a4) * r + a5) * q) / (((((b0 * r + b1) * r + b2) * r + b3) * r + b4) * r + 1);
}

/** Student-t CDF with `df` degrees of freedom; df = Infinity is the standard normal. */
export function studentTCdf(x: number, df: number): number {
  if (!Number.isFinite(df)) return normalCdf(x);
  const tail = 0.5 * incompleteBeta(df / (df + x * x), df / 2, 0.5);
  return x >= 0 ? 1 - tail : tail;
}

/** Inverse Student-t CDF by bisection on the CDF (monotone, so bisection cannot fail). */
export function studentTQuantile(p: number, df: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`studentTQuantile: p must be in (0, 1), got ${p}`);
  if (!Number.isFinite(df)) return normalQuantile(p);
  if (p < 0.5) return -studentTQuantile(1 - p, df);
  let lo = 0;
  let hi = Math.max(2, 2 * normalQuantile(p));
  while (studentTCdf(hi, df) < p) hi *= 2;
  for (let i = 0; i < 64 && hi - lo > 1e-12 * hi; i++) {
    const mid = 0.5 * (lo + hi);
    if (studentTCdf(mid, df) < p) lo = mid;
    else hi = mid;
  }
  return 0.5 * (lo + hi);
}

/**
 * Quantile of a Student-t rescaled to unit variance (needs df > 2): the shape we use for
 * fat-tailed forecast errors whose variance comes from the model.
 */
export function unitVarianceTQuantile(p: number, df: number): number {
  if (!Number.isFinite(df)) return normalQuantile(p);
  return studentTQuantile(p, df) * Math.sqrt((df - 2) / df);
}

export function unitVarianceTCdf(z: number, df: number): number {
  if (!Number.isFinite(df)) return normalCdf(z);
  return studentTCdf(z * Math.sqrt(df / (df - 2)), df);
}

/** Sample excess kurtosis m4/m2² − 3 (0 for a normal sample in expectation). */
export function excessKurtosis(xs: readonly number[]): number {
  const m = mean(xs);
  let m2 = 0;
  let m4 = 0;
  for (let i = 0; i < xs.length; i++) {
    const d = (xs[i] as number) - m;
    const d2 = d * d;
    m2 += d2;
    m4 += d2 * d2;
  }
  m2 /= xs.length;
  m4 /= xs.length;
  return m2 > 0 ? m4 / (m2 * m2) - 3 : 0;
}

/** Empirical quantile with linear interpolation between order statistics (R type 7). */
export function empiricalQuantile(xs: ArrayLike<number>, p: number): number {
  const sorted = Array.from(xs).sort((a, b) => a - b);
  const h = (sorted.length - 1) * p;
  const lo = Math.floor(h);
  const a = sorted[lo] as number;
  const b = sorted[Math.min(lo + 1, sorted.length - 1)] as number;
  return a + (h - lo) * (b - a);
}

/** Wilson score 95% interval of a share of k successes in n trials ([0, 1] when n is 0). */
export function wilson95(k: number, n: number): [number, number] {
  if (n === 0) return [0, 1];
  const z = 1.959963984540054;
  const p = k / n;
  const d = 1 + (z * z) / n;
  const centre = (p + (z * z) / (2 * n)) / d;
  const half = (z / d) * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}
