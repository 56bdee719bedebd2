// Guarantee (issue 35, item 6): get_risk_metrics and compare_wallets name what they compute. The
// return is annualised geometrically (compounded), there is one volatility (of daily log
// returns) and the Sharpe ratio divides the mean daily log return by it: holdings that lost value
// over the window have a negative return and a negative Sharpe ratio, though the arithmetic mean
// of their daily simple returns is positive (what the answer reported before, unnamed). The report
// is reached over HTTP only through a chain scan (test/servers/portfolio-analytics.test.ts, on the
// devnet); here holdingsRisk, which both tools call, runs on a market provider written out below.
import { describe, expect, it } from 'vitest';
import { holdingsRisk } from '../../server/servers/portfolio-analytics/risk.ts';
import { fixtureCandle, fixtureDays, fixtureHolding, fixtureMarket } from '../helpers/held-market.ts';

// +20% then -18%, 45 times: each pair multiplies the value by 0.984; mean simple return +1% a day.
const days = fixtureDays('2024-11-01', 91);
const closes = days.map((_, i) => 100 * 1.2 ** Math.ceil(i / 2) * 0.82 ** Math.floor(i / 2));
const market = fixtureMarket({
  falling: days.map((d, i) => fixtureCandle(d, closes[i]!)),
  bitcoin: days.map((d, i) => fixtureCandle(d, 50_000 * (1 + 0.02 * Math.cos(i)))),
});
const holding = fixtureHolding('falling', days.at(-1)!);

describe('portfolio risk: a geometric return, one volatility, a Sharpe ratio on both', () => {
  it('reports a loss as a loss: negative geometric annualised return and Sharpe ratio, on the volatility of log returns', async () => {
    const simple = closes.slice(1).map((c, i) => c / closes[i]! - 1);
    expect(simple.reduce((a, b) => a + b, 0) / simple.length).toBeGreaterThan(0.009);

    const report = (await holdingsRisk(market, [holding], 90, new AbortController().signal))!;
    const logs = closes.slice(1).map((c, i) => Math.log(c / closes[i]!));
    const mean = logs.reduce((a, b) => a + b, 0) / logs.length;
    const sd = Math.sqrt(logs.reduce((a, b) => a + (b - mean) ** 2, 0) / (logs.length - 1));
    const total = closes.at(-1)! / closes[0]! - 1;

    expect(report.return_total).toBeCloseTo(total, 6);
    expect(report.return_annualised_geometric).toBeCloseTo((1 + total) ** (365 / 90) - 1, 6);
    expect(report.return_annualised_geometric).toBeLessThan(0);
    expect(report.log_return_volatility_daily).toBeCloseTo(sd, 6);
    expect(report.log_return_volatility_annualised).toBeCloseTo(sd * Math.sqrt(365), 6);
    expect(report.sharpe).toBeCloseTo((mean / sd) * Math.sqrt(365), 6);
    expect(report.sharpe).toBeLessThan(0);
    // No other volatility or unnamed return in the answer.
    expect(Object.keys(report).filter((k) => /volatility|return|sharpe/.test(k)).sort()).toEqual([
      'log_return_volatility_annualised',
      'log_return_volatility_daily',
      'return_annualised_geometric',
      'return_total',
      'sharpe',
    ]);
  });
});
