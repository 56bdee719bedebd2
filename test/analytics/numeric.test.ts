import { describe, expect, it } from 'vitest';
import {
  empiricalQuantile,
  excessKurtosis,
  logGamma,
  nelderMead,
  normalCdf,
  normalQuantile,
  studentTCdf,
  studentTQuantile,
  unitVarianceTCdf,
  unitVarianceTQuantile,
} from '../../server/analytics/numeric.ts';
import { seededNormal } from './simulate.ts';

describe('distribution functions match published tables', () => {
  it('normal quantiles and CDF (Abramowitz & Stegun table 26.1)', () => {
    expect(normalQuantile(0.975)).toBeCloseTo(1.959964, 6);
    expect(normalQuantile(0.9)).toBeCloseTo(1.281552, 6);
    expect(normalQuantile(0.001)).toBeCloseTo(-3.090232, 5);
    expect(normalCdf(1.96)).toBeCloseTo(0.9750021, 6);
    expect(normalCdf(0)).toBeCloseTo(0.5, 7);
  });

  it('Student-t quantiles (standard t table, two-sided critical values)', () => {
    expect(studentTQuantile(0.975, 5)).toBeCloseTo(2.570582, 5);
    expect(studentTQuantile(0.95, 10)).toBeCloseTo(1.812461, 5);
    expect(studentTQuantile(0.9, 4)).toBeCloseTo(1.533206, 5);
    expect(studentTQuantile(0.995, 1)).toBeCloseTo(63.65674, 3);
    expect(studentTQuantile(0.025, 5)).toBeCloseTo(-2.570582, 5);
    expect(studentTCdf(2.570582, 5)).toBeCloseTo(0.975, 6);
    expect(studentTQuantile(0.9, Infinity)).toBeCloseTo(1.281552, 6);
  });

  it('unit-variance t: quantile and CDF invert each other, and df → ∞ is the normal', () => {
    const q = unitVarianceTQuantile(0.9, 5);
    expect(q).toBeCloseTo(studentTQuantile(0.9, 5) * Math.sqrt(3 / 5), 10);
    expect(unitVarianceTCdf(q, 5)).toBeCloseTo(0.9, 8);
    expect(unitVarianceTQuantile(0.9, 1e6)).toBeCloseTo(normalQuantile(0.9), 4);
  });

  it('logGamma(1/2) = log √π and logGamma(5) = log 24', () => {
    expect(logGamma(0.5)).toBeCloseTo(0.5 * Math.log(Math.PI), 12);
    expect(logGamma(5)).toBeCloseTo(Math.log(24), 12);
  });
});

describe('sample statistics', () => {
  it('excess kurtosis of a large normal sample is near 0', () => {
    const z = seededNormal(11);
    const xs = Array.from({ length: 20_000 }, () => z());
    expect(Math.abs(excessKurtosis(xs))).toBeLessThan(0.15);
  });

  it('empirical quantile interpolates order statistics (R type 7)', () => {
    expect(empiricalQuantile([4, 1, 3, 2, 5], 0.5)).toBe(3);
    expect(empiricalQuantile([1, 2, 3, 4], 0.25)).toBeCloseTo(1.75, 12);
  });
});

describe('nelderMead', () => {
  it('finds the minimum of the Rosenbrock function at (1, 1)', () => {
    const r = nelderMead((x) => 100 * ((x[1] as number) - (x[0] as number) ** 2) ** 2 + (1 - (x[0] as number)) ** 2, [-1.2, 1], {
      maxIterations: 2000,
      tolerance: 1e-14,
    });
    expect(r.converged).toBe(true);
    expect(r.x[0]).toBeCloseTo(1, 3);
    expect(r.x[1]).toBeCloseTo(1, 3);
  });

  it('steps away from non-finite objective values', () => {
    const r = nelderMead((x) => ((x[0] as number) < 0 ? NaN : ((x[0] as number) - 2) ** 2), [1]);
    expect(r.x[0]).toBeCloseTo(2, 3);
  });
});
