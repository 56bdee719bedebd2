-- Every forecast_price answer, so get_prediction_track_record can score the matured ones
-- against realised prices (DESIGN.md §6: every number traces to data with a source and date).
CREATE TABLE forecast_log (
  id          bigserial PRIMARY KEY,
  request_id  text NOT NULL UNIQUE,
  account_id  uuid NOT NULL,
  asset_id    text NOT NULL,
  model       text NOT NULL,
  horizon     integer NOT NULL CHECK (horizon BETWEEN 1 AND 30),
  source      text NOT NULL,          -- 'snapshot' or 'live:<provider>'
  base_date   date NOT NULL,          -- the last day of data the forecast was made from
  base_close  double precision NOT NULL,
  -- One entry per day ahead: {"date","point","p50":[lo,hi],"p80":[lo,hi],"p95":[lo,hi]}.
  path        jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX forecast_log_asset ON forecast_log (asset_id, base_date);
