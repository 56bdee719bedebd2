// price-prediction over the real gateway and the SDK client, on the snapshot.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSnapshot } from '../../server/providers/market/snapshot.ts';
import { rawCsv } from '../helpers/raw-csv.ts';
import { toolSuite, type ToolSuite } from '../helpers/tools.ts';
import { balanceOf, post, toolCall } from '../helpers/service.ts';

let suite: ToolSuite;
let db: ToolSuite['db'];
let svc: ToolSuite['svc'];
let key: string;
let accountId: string;
let call: ToolSuite['call'];

beforeAll(async () => {
  suite = await toolSuite('price-prediction', 10_000);
  ({ db, svc, key, accountId, call } = suite);
});
afterAll(async () => {
  await suite?.close();
});

const rawBtc = () => rawCsv('ohlcv/btc_usd_daily_2010_2025.csv');

/** BTC's last close in the raw CryptoCompare CSV: the day every BTC answer is relative to. */
function rawBtcLast(): { date: string; close: number } {
  const last = rawBtc().at(-1)!;
  return { date: last.date!, close: Number(last.close) };
}

describe('forecast_price', () => {
  it('probability_up is the share of up 7-day moves over the last 365 days (the models have no measured edge), with the model number beside it', async () => {
    // The snapshot's BTC closes (Yahoo and CryptoCompare rows joined, each named in the series).
    const closes = loadSnapshot().series.bitcoin!.close;
    let up = 0;
    let n = 0;
    for (let t = closes.length - 365; t < closes.length; t++, n++) if (closes[t]! > closes[t - 7]!) up++;
    const env = await call<{ probability_up: number; direction: { model_probability_up: number; edge: string; probability_up_basis: string } }>('forecast_price', { asset: 'BTC', horizon: 7 });
    expect(env.data.probability_up).toBeCloseTo(up / n, 12);
    expect(env.data.direction.model_probability_up).toBeGreaterThan(0);
    expect(env.data.direction.edge).toMatch(/^none measured/);
    expect(env.data.direction.probability_up_basis).toContain('365');
  });

  it('forecasts each day after the last close with nested 50/80/95% intervals, logs the answer, and costs 5', async () => {
    const btc = rawBtcLast();
    const env = await call<{
      base_date: string;
      last_price: number;
      model: string;
      reason: string;
      probability_up: number;
      forecast: { date: string; point: number; p50: [number, number]; p80: [number, number]; p95: [number, number] }[];
    }>('forecast_price', { asset: 'BTC', horizon: 7 });
    expect(env.metadata).toMatchObject({ credits_used: 5, data_as_of: btc.date });
    expect(env.data.base_date).toBe(btc.date);
    expect(env.data.last_price).toBe(btc.close);
    expect(env.data.forecast.map((f) => f.date)).toEqual(['2025-12-10', '2025-12-11', '2025-12-12', '2025-12-13', '2025-12-14', '2025-12-15', '2025-12-16']);
    for (const f of env.data.forecast) {
      expect(f.p95[0]).toBeLessThan(f.p80[0]);
      expect(f.p80[0]).toBeLessThan(f.p50[0]);
      expect(f.p50[0]).toBeLessThan(f.point);
      expect(f.point).toBeLessThan(f.p50[1]);
      expect(f.p50[1]).toBeLessThan(f.p80[1]);
      expect(f.p80[1]).toBeLessThan(f.p95[1]);
    }
    expect(env.data.probability_up).toBeGreaterThan(0);
    expect(env.data.probability_up).toBeLessThan(1);
    expect(env.data.reason.length).toBeGreaterThan(10);
    const logged = await db.query<{ asset_id: string; horizon: number; base_date: string }>(
      `SELECT asset_id, horizon, to_char(base_date, 'YYYY-MM-DD') AS base_date FROM forecast_log WHERE request_id = $1`,
      [env.metadata.request_id],
    );
    expect(logged.rows).toEqual([{ asset_id: 'bitcoin', horizon: 7, base_date: btc.date }]);
  });

  it('a horizon outside 1-30 is 400 INVALID_PARAMS and an unknown asset 404 NOT_FOUND; neither is charged', async () => {
    const before = await balanceOf(db, accountId);
    const h = { 'x-api-key': key };
    const tooFar = await post(`${svc.url}/mcp/price-prediction`, toolCall('forecast_price', { asset: 'btc', horizon: 31 }), h);
    expect(tooFar.status).toBe(400);
    expect((tooFar.body as { error: { code: string } }).error.code).toBe('INVALID_PARAMS');
    const unknown = await post(`${svc.url}/mcp/price-prediction`, toolCall('forecast_price', { asset: 'notacoin' }), h);
    expect(unknown.status).toBe(404);
    expect(await balanceOf(db, accountId)).toBe(before);
  });
});

describe('the other price-prediction tools', () => {
  it('backtest_forecast reports MASE against the random walk and interval coverage', async () => {
    const env = await call<{ mase: number; naive_mae: number; mae: number; coverage: Record<string, number>; origins: number; reading: string }>('backtest_forecast', {
      asset: 'eth',
      horizon: 7,
      origins: 10,
    });
    expect(env.data.origins).toBe(10);
    expect(env.data.mase).toBeCloseTo(env.data.mae / env.data.naive_mae, 9);
    expect(Object.keys(env.data.coverage).sort()).toEqual(['50', '80', '95']);
    expect(env.data.reading).toMatch(env.data.mase < 1 ? /beats/ : /does not beat/);
    expect(env.metadata.credits_used).toBe(10);
  });

  it('get_volatility_forecast fits a stationary GARCH(1,1) and gives a positive 1-day 95% VaR', async () => {
    const env = await call<{ fit: { alpha: number; beta: number; persistence: number }; path: { annualised_pct: number }[]; var_95_1d: number }>(
      'get_volatility_forecast',
      { asset: 'sol', horizon: 5 },
    );
    expect(env.data.fit.persistence).toBeLessThan(1);
    expect(env.data.fit.alpha + env.data.fit.beta).toBeCloseTo(env.data.fit.persistence, 9);
    expect(env.data.path).toHaveLength(5);
    expect(env.data.var_95_1d).toBeGreaterThan(0);
  });

  it("get_technical_indicators reads up to BTC's last raw close", async () => {
    const btc = rawBtcLast();
    const env = await call<{ indicators: { as_of: string; close: number; rsi: { latest: { value: number } } } }>('get_technical_indicators', { asset: 'btc' });
    expect(env.data.indicators).toMatchObject({ as_of: btc.date, close: btc.close });
    expect(env.data.indicators.rsi.latest.value).toBeGreaterThan(0);
    expect(env.data.indicators.rsi.latest.value).toBeLessThan(100);
  });

  it('get_trading_signal, get_support_resistance and scenario_analysis answer with their as-of day', async () => {
    const signal = await call<{ signal: { action: string; confidence: number }; historical_hit_rate: { all: { signals: number } } }>('get_trading_signal', { asset: 'eth' });
    expect(['buy', 'hold', 'sell']).toContain(signal.data.signal.action);
    expect(signal.metadata.data_as_of).toBe('2025-02-11');
    const levels = await call<{ levels: { price: number }[] }>('get_support_resistance', { asset: 'btc' });
    const prices = levels.data.levels.map((l) => l.price);
    expect(prices).toEqual([...prices].sort((a, b) => a - b));
    const scenario = await call<{ price: number; targets: { btc_move: number; target_price: number }[]; beta: { beta: number } }>('scenario_analysis', {
      asset: 'sol',
      btc_moves: [0.1],
    });
    expect(scenario.data.targets[0]!.target_price).toBeCloseTo(scenario.data.price * 1.1 ** scenario.data.beta.beta, 6);
  });

  it('get_prediction_track_record on the snapshot is the rolling-origin backtest, labelled as such', async () => {
    const env = await call<{ kind: string; backtest: { model: string }; calibration: string }>('get_prediction_track_record', { asset: 'btc', horizon: 7 });
    expect(env.data.kind).toMatch(/^rolling-origin backtest/);
    expect(env.data.backtest.model).toBe('auto');
    // Issue 35: the coverage measured out of sample and where it still falls short, in the answer.
    expect(env.data.calibration).toContain('out of sample');
    // The 30-day 95% band refitted on other sets than the seven majors, then checked on them (issue 35 item 5).
    expect(env.data.calibration).toContain('never on the seven other majors, where it now covers 94.0% at 30 days (91.4% before)');
    expect(env.data.calibration).toContain('no 95% band covers under 93.6% on any set and horizon measured');
    expect(env.data.calibration).toContain('Residual: the 50% band is too narrow');
  });

  it('beyond 7 days forecast_price says the side of the misses depends on the period, not that they fall high', async () => {
    const env = await call<{ interval_note: string }>('forecast_price', { asset: 'btc', horizon: 30 });
    expect(env.data.interval_note).toMatch(/^Beyond a week, which side the misses fall on depends on the market/);
    expect(env.data.interval_note).toContain('above the 95% band 3.3% of the time and below it 0% (a rising market), in 2022-23 0.6% above and 0.1% below');
  });
});

describe('get_prediction_track_record with matured forecasts', () => {
  it('scores logged forecasts whose target day has a realised close, against that close', async () => {
    const path = [{ date: '2025-11-08', point: 100000, p50: [95000, 105000], p80: [90000, 110000], p95: [80000, 120000] }];
    await db.query(
      `INSERT INTO forecast_log (request_id, account_id, asset_id, model, horizon, source, base_date, base_close, path)
       VALUES ('matured-test', $1, 'bitcoin', 'drift', 1, 'snapshot', '2025-11-07', 101000, $2)`,
      [accountId, JSON.stringify(path)],
    );
    const actual = Number(rawBtc().find((r) => r.date === '2025-11-08')!.close);
    const env = await call<{ kind: string; forecasts: { target_date: string; forecast: number; actual: number; abs_pct_error: number; inside_80: boolean }[] }>(
      'get_prediction_track_record',
      { asset: 'btc', horizon: 1 },
    );
    expect(env.data.kind).toBe('logged forecasts scored against realised prices');
    const scored = env.data.forecasts.find((f) => f.target_date === '2025-11-08')!;
    expect(scored).toMatchObject({ forecast: 100000, actual, inside_80: actual >= 90000 && actual <= 110000 });
    expect(scored.abs_pct_error).toBeCloseTo((Math.abs(actual - 100000) / actual) * 100, 9);
  });

  it('scores only forecasts of the asked horizon made from the same price source, and counts flat forecasts apart', async () => {
    const log = (id: string, horizon: number, source: string, baseDate: string, target: string, point: number, baseClose: number) =>
      db.query(
        `INSERT INTO forecast_log (request_id, account_id, asset_id, model, horizon, source, base_date, base_close, path)
         VALUES ($1, $2, 'bitcoin', 'drift', $3, $4, $5, $6, $7)`,
        [id, accountId, horizon, source, baseDate, baseClose, JSON.stringify([{ date: target, point, p50: [point, point], p80: [point * 0.9, point * 1.1], p95: [point * 0.8, point * 1.2] }])],
      );
    await log('tr-7d-up', 7, 'snapshot', '2025-10-01', '2025-10-08', 130000, 118000);
    await log('tr-7d-flat', 7, 'snapshot', '2025-10-02', '2025-10-09', 120000, 120000);
    await log('tr-1d-other-horizon', 1, 'snapshot', '2025-10-03', '2025-10-04', 1, 120000);
    await log('tr-30d-other-horizon', 30, 'snapshot', '2025-09-01', '2025-10-01', 1, 110000);
    await log('tr-7d-live-source', 7, 'live:test', '2025-10-04', '2025-10-11', 1, 120000);
    const env = await call<{
      horizon: number;
      forecasts: { made_from: string; horizon: number; direction: string; direction_right: boolean | null }[];
      summary: { count: number; flat_forecasts: number; directional_forecasts: number; directional_accuracy: number | null };
    }>('get_prediction_track_record', { asset: 'btc', horizon: 7, limit: 100 });
    expect(env.data.forecasts.map((f) => f.made_from).sort()).toEqual(['2025-10-01', '2025-10-02']);
    expect(env.data.forecasts.every((f) => f.horizon === 7)).toBe(true);
    const flat = env.data.forecasts.find((f) => f.made_from === '2025-10-02')!;
    expect(flat).toMatchObject({ direction: 'flat', direction_right: null });
    expect(env.data.summary).toMatchObject({ count: 2, flat_forecasts: 1, directional_forecasts: 1 });
    const up = env.data.forecasts.find((f) => f.made_from === '2025-10-01')!;
    expect(env.data.summary.directional_accuracy).toBe(up.direction_right ? 1 : 0);
  });
});
