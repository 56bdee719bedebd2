// The forecast log: forecast_price writes each answer; get_prediction_track_record reads them.
// Tools see the ForecastLog interface; this is its PostgreSQL implementation.
import type { Database } from '../db/pool.ts';

export interface LoggedForecastDay {
  date: string;
  point: number;
  p50: [number, number];
  p80: [number, number];
  p95: [number, number];
}

export interface LoggedForecast {
  request_id: string;
  account_id: string;
  asset_id: string;
  model: string;
  horizon: number;
  source: string;
  base_date: string;
  base_close: number;
  path: LoggedForecastDay[];
  created_at?: Date;
}

export interface ForecastLog {
  record(f: LoggedForecast): Promise<void>;
  /**
   * Forecasts of an asset whose target days are all on or before `maturedBy`, of one horizon and
   * made from one price source (a forecast is scored only against the prices it was made from).
   */
  matured(assetId: string, maturedBy: string, limit: number, only: { horizon: number; source: string }): Promise<LoggedForecast[]>;
}

export class SqlForecastLog implements ForecastLog {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  async record(f: LoggedForecast): Promise<void> {
    await this.#db.query(
      `INSERT INTO forecast_log (request_id, account_id, asset_id, model, horizon, source, base_date, base_close, path)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (request_id) DO NOTHING`,
      [f.request_id, f.account_id, f.asset_id, f.model, f.horizon, f.source, f.base_date, f.base_close, JSON.stringify(f.path)],
    );
  }

  async matured(assetId: string, maturedBy: string, limit: number, only: { horizon: number; source: string }): Promise<LoggedForecast[]> {
    const res = await this.#db.query<LoggedForecast & { base_date: string }>(
      `SELECT request_id, account_id, asset_id, model, horizon, source, to_char(base_date, 'YYYY-MM-DD') AS base_date,
              base_close, path, created_at
         FROM forecast_log
        WHERE asset_id = $1 AND base_date + horizon <= $2::date AND horizon = $4 AND source = $5
        ORDER BY base_date DESC, id DESC LIMIT $3`,
      [assetId, maturedBy, limit, only.horizon, only.source],
    );
    return res.rows;
  }
}
