// get_trading_signal's historical hit rate: exactly replay_days replayed with the full rule, the
// base rate of the same days beside each hit rate, a 95% interval, and a verdict that says whether
// the rule beat the base rate. Called on the snapshot handler; up shares recomputed from the
// snapshot's BTC closes (which join Yahoo and CryptoCompare rows, each named in the series).
import { describe, expect, it } from 'vitest';
import { loadSnapshot } from '../../server/providers/market/snapshot.ts';
import { callHandler } from '../helpers/handlers.ts';

type HitCount = { signals: number; hits: number; hit_rate: number | null; ci95: [number, number] | null; base_rate: number | null; versus_base: string | null };
type Signal = { historical_hit_rate: { days_evaluated: number; from: string; to: string; buy: HitCount; sell: HitCount; baseline: { up: number } }; verdict: string };

const series = loadSnapshot().series.bitcoin!;
const btc = series.dates.map((date, k) => ({ date, close: series.close[k]! }));

describe('get_trading_signal hit rate', () => {
  it('BTC, 7 days, replay 365: exactly 365 days ending 7 days before the last close, buys and sells each beside the base rate of those days', async () => {
    const out = await callHandler('price-prediction', 'get_trading_signal', { asset: 'btc', horizon_days: 7, replay_days: 365 });
    const d = out.data as Signal;
    const hr = d.historical_hit_rate;
    expect(hr.days_evaluated).toBe(365);
    expect(hr.to).toBe('2025-12-02');
    const i = btc.findIndex((r) => r.date === hr.from);
    const days = btc.slice(i, i + 365);
    expect(days.at(-1)!.date).toBe('2025-12-02');
    const up = days.filter((r, k) => btc[i + k + 7]!.close > r.close).length / 365;
    expect(hr.baseline.up).toBeCloseTo(up, 12);
    expect(hr.buy.base_rate).toBeCloseTo(up, 12);
    for (const c of [hr.buy, hr.sell]) {
      if (c.signals === 0) continue;
      expect(c.ci95![0]).toBeLessThanOrEqual(c.hit_rate!);
      expect(c.ci95![1]).toBeGreaterThanOrEqual(c.hit_rate!);
      expect(['above', 'below', 'indistinguishable']).toContain(c.versus_base);
    }
    expect(d.verdict).toMatch(/base rate of/);
  });
});
