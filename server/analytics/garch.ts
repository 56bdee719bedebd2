// GARCH(1,1) volatility on daily log returns (Bollerslev 1986):
//   r_t = mu + e_t,  e_t = sigma_t z_t,  sigma_t^2 = omega + alpha e_{t-1}^2 + beta sigma_{t-1}^2.
// Fitted by Gaussian (quasi-)maximum likelihood: the QMLE is consistent for omega, alpha, beta
// even when z_t is fat-tailed, which crypto returns are; the tails are handled where they
// matter, in the VaR, from the standardised residuals themselves. Returns are daily log
// returns, e.g. logReturns(closes) below.
import { mean } from './candles.ts';
import { empiricalQuantile, logistic, nelderMead, normalQuantile } from './numeric.ts';

/** Crypto trades every day of the year, so daily volatility is annualised with sqrt(365). */
export const TRADING_DAYS_PER_YEAR = 365;
export const MIN_GARCH_RETURNS = 60;
/** alpha + beta is kept at or below this so the variance process stays stationary. */
const MAX_PERSISTENCE = 0.9999;

export interface GarchFit {
  mu: number;
  omega: number;
  alpha: number;
  beta: number;
  persistence: number;
  /** omega / (1 − alpha − beta): the long-run daily variance the forecast reverts to. */
  unconditionalVariance: number;
  logLikelihood: number;
  converged: boolean;
  observations: number;
}

export interface VolatilityForecast {
  daily_sigma: number[];
  annualised_pct: number[];
}

/** Daily log returns of a close series (candles.ts has the dated, candle-based twin). */
export function logReturns(closes: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 1; i < closes.length; i++) out.push(Math.log((closes[i] as number) / (closes[i - 1] as number)));
  return out;
}

function assertReturns(returns: readonly number[]): void {
  if (returns.length < MIN_GARCH_RETURNS) {
    throw new RangeError(`GARCH needs at least ${MIN_GARCH_RETURNS} returns, got ${returns.length}`);
  }
  const bad = returns.findIndex((r) => !Number.isFinite(r));
  if (bad >= 0) throw new RangeError(`returns[${bad}] is not a finite number`);
}

function sampleVariance(xs: readonly number[], mu: number): number {
  let s = 0;
  for (const x of xs) s += (x - mu) * (x - mu);
  return s / xs.length;
}

/**
 * Conditional variances sigma_1^2 .. sigma_{n+1}^2; the recursion starts from the sample
 * variance (the usual backcast), and the last entry is the one-step-ahead forecast.
 */
function conditionalVariances(
  returns: readonly number[],
  mu: number,
  omega: number,
  alpha: number,
  beta: number,
  start: number,
): number[] {
  const h = new Array<number>(returns.length + 1);
  h[0] = start;
  for (let t = 0; t < returns.length; t++) {
    const e = (returns[t] as number) - mu;
    h[t + 1] = omega + alpha * e * e + beta * (h[t] as number);
  }
  return h;
}

// The likelihood loop the optimiser runs thousands of times: no allocation, the constant
// term added once at the end.
function logLikelihoodFrom(returns: readonly number[], mu: number, omega: number, alpha: number, beta: number, start: number): number {
  let h = start;
  let sum = 0;
  for (let t = 0; t < returns.length; t++) {
    const e = (returns[t] as number) - mu;
    const e2 = e * e;
    sum += Math.log(h) + e2 / h;
    h = omega + alpha * e2 + beta * h;
  }
  return -0.5 * (sum + returns.length * Math.log(2 * Math.PI));
}

/** Gaussian log-likelihood of the returns under the given parameters. */
export function garchLogLikelihood(
  returns: readonly number[],
  params: { mu: number; omega: number; alpha: number; beta: number },
): number {
  const { mu, omega, alpha, beta } = params;
  return logLikelihoodFrom(returns, mu, omega, alpha, beta, sampleVariance(returns, mu));
}

/**
 * Maximum-likelihood GARCH(1,1). The optimiser works on unconstrained u and maps them so
 * every trial point is admissible: omega = exp(u0) > 0, persistence = 0.9999·logistic(u1)
 * in (0, 0.9999), alpha = persistence·logistic(u2) and beta = persistence − alpha, so
 * alpha, beta >= 0 and alpha + beta < 1. mu is the sample mean (its MLE is within noise of
 * it for daily returns, and fixing it keeps the search three-dimensional). Several starting
 * points guard against the flat ridge along alpha + beta that GARCH likelihoods have.
 */
export function fitGarch11(returns: readonly number[]): GarchFit {
  assertReturns(returns);
  const mu = mean(returns);
  const variance = sampleVariance(returns, mu);
  if (!(variance > 0)) throw new RangeError('returns have zero variance; GARCH is undefined');

  const decode = (u: number[]) => {
    const persistence = MAX_PERSISTENCE * logistic(u[1] as number);
    const alpha = persistence * logistic(u[2] as number);
    return { mu, omega: Math.exp(u[0] as number), alpha, beta: persistence - alpha };
  };
  const encode = (omega: number, alpha: number, beta: number): number[] => {
    const p = (alpha + beta) / MAX_PERSISTENCE;
    return [Math.log(omega), Math.log(p / (1 - p)), Math.log(alpha / beta)];
  };
  const objective = (u: number[]) => {
    const p = decode(u);
    return -logLikelihoodFrom(returns, mu, p.omega, p.alpha, p.beta, variance);
  };

  let best: ReturnType<typeof nelderMead> | undefined;
  for (const [alpha, beta] of [
    [0.08, 0.9],
    [0.15, 0.7],
    [0.04, 0.95],
  ] as const) {
    const omega = variance * (1 - alpha - beta);
    const result = nelderMead(objective, encode(omega, alpha, beta), { maxIterations: 600, tolerance: 1e-9 });
    if (!best || result.value < best.value) best = result;
  }
  if (!best) throw new Error('unreachable: no GARCH start was tried');
  // A restart from the best optimum re-expands the simplex, the standard remedy for
  // Nelder–Mead stalling on a collapsed simplex.
  const restarted = nelderMead(objective, best.x, { maxIterations: 600, tolerance: 1e-10, step: 0.2 });
  if (restarted.value <= best.value) best = restarted;
  const p = decode(best.x);
  const persistence = p.alpha + p.beta;
  return {
    mu,
    omega: p.omega,
    alpha: p.alpha,
    beta: p.beta,
    persistence,
    unconditionalVariance: p.omega / (1 - persistence),
    logLikelihood: -best.value,
    // At the persistence cap the process is effectively integrated (IGARCH) and the
    // long-run variance is not identified; report that as not converged.
    converged: best.converged && persistence < MAX_PERSISTENCE - 1e-6,
    observations: returns.length,
  };
}

/** Daily standardised residuals z_t = e_t / sigma_t under the fit. */
export function standardisedResiduals(fit: GarchFit, returns: readonly number[]): number[] {
  const h = conditionalVariances(returns, fit.mu, fit.omega, fit.alpha, fit.beta, sampleVariance(returns, fit.mu));
  return returns.map((r, t) => (r - fit.mu) / Math.sqrt(h[t] as number));
}

function nextVariance(fit: GarchFit, returns: readonly number[]): number {
  const h = conditionalVariances(returns, fit.mu, fit.omega, fit.alpha, fit.beta, sampleVariance(returns, fit.mu));
  return h[returns.length] as number;
}

/**
 * Volatility path for days 1..horizon after the last return:
 *   E[sigma_{T+k}^2] = V + (alpha + beta)^{k-1} (sigma_{T+1}^2 − V),  V = omega / (1 − alpha − beta).
 * annualised_pct = 100 · sqrt(365) · daily sigma (crypto trades every calendar day).
 */
export function forecastVolatility(fit: GarchFit, returns: readonly number[], horizon: number): VolatilityForecast {
  assertReturns(returns);
  if (!Number.isInteger(horizon) || horizon < 1) throw new RangeError(`horizon must be a positive integer, got ${horizon}`);
  const first = nextVariance(fit, returns);
  const daily_sigma: number[] = [];
  for (let k = 1; k <= horizon; k++) {
    const v = fit.unconditionalVariance + fit.persistence ** (k - 1) * (first - fit.unconditionalVariance);
    daily_sigma.push(Math.sqrt(v));
  }
  return { daily_sigma, annualised_pct: daily_sigma.map((s) => 100 * Math.sqrt(TRADING_DAYS_PER_YEAR) * s) };
}

export type VarMethod = 'filtered-historical' | 'normal';

/**
 * One-day 95% value at risk as a positive fraction of position value (0.05 = a 5% loss).
 * 'filtered-historical' (default; Barone-Adesi et al. 1999) scales the empirical 5% quantile
 * of the fit's standardised residuals by tomorrow's GARCH sigma, so the fat left tail of
 * crypto returns comes from the data rather than from an assumed distribution. 'normal' uses
 * the Gaussian quantile −1.645. The log-return quantile q becomes a loss of 1 − exp(q).
 */
export function valueAtRisk95(fit: GarchFit, returns: readonly number[], method: VarMethod = 'filtered-historical'): number {
  assertReturns(returns);
  const sigma = Math.sqrt(nextVariance(fit, returns));
  const z = method === 'normal' ? normalQuantile(0.05) : empiricalQuantile(standardisedResiduals(fit, returns), 0.05);
  const q = fit.mu + sigma * z;
  return Math.max(0, 1 - Math.exp(q));
}
