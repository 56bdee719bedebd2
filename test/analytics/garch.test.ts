import { describe, expect, it } from 'vitest';
import {
  fitGarch11,
  forecastVolatility,
  garchLogLikelihood,
  logReturns,
  TRADING_DAYS_PER_YEAR,
  valueAtRisk95,
  type GarchFit,
} from '../../server/analytics/garch.ts';
import { normalQuantile } from '../../server/analytics/numeric.ts';
import { garchReturns, seededNormal, seededStudentT } from './simulate.ts';

const TRUTH = { mu: 0.0005, omega: 2e-5, alpha: 0.1, beta: 0.85 };

describe('fitGarch11 on data simulated from known parameters', () => {
  for (const seed of [1, 2, 3]) {
    it(`recovers omega, alpha, beta from 4,000 Gaussian-shock returns (seed ${seed})`, () => {
      const returns = garchReturns(4000, TRUTH, seededNormal(seed));
      const fit = fitGarch11(returns);
      expect(fit.converged).toBe(true);
      expect(Math.abs(fit.alpha - TRUTH.alpha)).toBeLessThan(0.04);
      expect(Math.abs(fit.beta - TRUTH.beta)).toBeLessThan(0.06);
      expect(Math.abs(fit.persistence - (TRUTH.alpha + TRUTH.beta))).toBeLessThan(0.04);
      expect(fit.omega / TRUTH.omega).toBeGreaterThan(0.5);
      expect(fit.omega / TRUTH.omega).toBeLessThan(2);
    });

    it(`the likelihood at the true parameters is below the maximised one (seed ${seed})`, () => {
      const returns = garchReturns(4000, TRUTH, seededNormal(seed));
      const fit = fitGarch11(returns);
      expect(garchLogLikelihood(returns, { ...TRUTH, mu: fit.mu })).toBeLessThan(fit.logLikelihood);
      expect(garchLogLikelihood(returns, fit)).toBeCloseTo(fit.logLikelihood, 6);
    });
  }

  it('still recovers the persistence under fat-tailed (Student-t, df 5) shocks — the QMLE case', () => {
    const returns = garchReturns(4000, TRUTH, seededStudentT(4, 5));
    const fit = fitGarch11(returns);
    expect(Math.abs(fit.persistence - 0.95)).toBeLessThan(0.05);
  });

  it('keeps omega > 0, alpha, beta >= 0 and alpha + beta < 1 even on returns with no GARCH effect', () => {
    const z = seededNormal(9);
    const returns = Array.from({ length: 1000 }, () => 0.02 * z());
    const fit = fitGarch11(returns);
    expect(fit.omega).toBeGreaterThan(0);
    expect(fit.alpha).toBeGreaterThanOrEqual(0);
    expect(fit.beta).toBeGreaterThanOrEqual(0);
    expect(fit.persistence).toBeLessThan(1);
    expect(fit.alpha).toBeLessThan(0.05);
    expect(Math.sqrt(fit.unconditionalVariance)).toBeCloseTo(0.02, 2);
  });
});

describe('forecastVolatility', () => {
  const returns = garchReturns(1000, TRUTH, seededNormal(5));
  const fit = fitGarch11(returns);

  it('follows the closed form V + (alpha+beta)^(k-1)(sigma²_{T+1} − V)', () => {
    const { daily_sigma } = forecastVolatility(fit, returns, 30);
    const first = (daily_sigma[0] as number) ** 2;
    daily_sigma.forEach((s, k) => {
      const expected = fit.unconditionalVariance + fit.persistence ** k * (first - fit.unconditionalVariance);
      expect(s ** 2).toBeCloseTo(expected, 14);
    });
  });

  it('one-step variance is omega + alpha·e_T² + beta·sigma_T² from the filtered recursion', () => {
    const hand: GarchFit = { ...fit, mu: 0, omega: 1e-5, alpha: 0.1, beta: 0.8, persistence: 0.9, unconditionalVariance: 1e-4 };
    const r = Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? 0.01 : -0.01));
    // Backcast start h_0 = mean r² = 1e-4 = V; every e² equals 1e-4 too, so h stays at V.
    const [sigma] = forecastVolatility(hand, r, 1).daily_sigma;
    expect(sigma).toBeCloseTo(0.01, 12);
  });

  it('annualises with sqrt(365) and reports percent', () => {
    const { daily_sigma, annualised_pct } = forecastVolatility(fit, returns, 5);
    expect(TRADING_DAYS_PER_YEAR).toBe(365);
    annualised_pct.forEach((a, i) => expect(a).toBeCloseTo(100 * Math.sqrt(365) * (daily_sigma[i] as number), 10));
  });

  it('rejects a horizon that is not a positive integer', () => {
    expect(() => forecastVolatility(fit, returns, 0)).toThrow(RangeError);
    expect(() => forecastVolatility(fit, returns, 2.5)).toThrow(RangeError);
  });
});

describe('valueAtRisk95', () => {
  it("'normal' is 1 − exp(mu − 1.645·sigma_{T+1}) as a positive loss fraction", () => {
    const returns = garchReturns(1000, TRUTH, seededNormal(6));
    const fit = fitGarch11(returns);
    const sigma = forecastVolatility(fit, returns, 1).daily_sigma[0] as number;
    expect(valueAtRisk95(fit, returns, 'normal')).toBeCloseTo(1 - Math.exp(fit.mu + normalQuantile(0.05) * sigma), 12);
  });

  it('filtered historical simulation agrees with the normal VaR on Gaussian shocks (within 15%)', () => {
    const returns = garchReturns(3000, TRUTH, seededNormal(7));
    const fit = fitGarch11(returns);
    const fhs = valueAtRisk95(fit, returns);
    const normal = valueAtRisk95(fit, returns, 'normal');
    expect(fhs).toBeGreaterThan(0);
    expect(Math.abs(fhs / normal - 1)).toBeLessThan(0.15);
  });

  it('about 5% of next-day returns breach the one-day VaR over a rolling year of simulated data', () => {
    const returns = garchReturns(1400, TRUTH, seededStudentT(8, 5));
    let breaches = 0;
    const days = 250;
    for (let t = returns.length - days; t < returns.length; t++) {
      const history = returns.slice(0, t);
      const varLoss = valueAtRisk95(fitGarch11(history), history);
      if (1 - Math.exp(returns[t] as number) > varLoss) breaches++;
    }
    // Binomial(250, 0.05): mean 12.5, sd 3.4; the band is about ±2.2 sd.
    expect(breaches).toBeGreaterThanOrEqual(5);
    expect(breaches).toBeLessThanOrEqual(20);
  });
});

describe('input checks', () => {
  it('needs at least 60 finite returns', () => {
    expect(() => fitGarch11(new Array(59).fill(0.01))).toThrow(/at least 60 returns/);
    const withNaN = garchReturns(100, TRUTH, seededNormal(1));
    withNaN[10] = NaN;
    expect(() => fitGarch11(withNaN)).toThrow(RangeError);
    expect(() => fitGarch11(withNaN)).toThrow(/returns\[10\]/);
  });

  it('logReturns gives log(p_t / p_{t−1})', () => {
    expect(logReturns([100, 110, 99])).toEqual([Math.log(1.1), Math.log(0.9)]);
  });
});
