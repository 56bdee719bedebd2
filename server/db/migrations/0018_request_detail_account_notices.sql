-- The request log that debugs and the account's own notices (issue 36).
--
-- request_log: what a failed call said (the error's message, as the client got it, cut to 300
-- characters) and the size of the tool arguments sent, for the dashboard's detail view; and a
-- lookup by the request id an error answer quotes.
ALTER TABLE request_log
  ADD COLUMN message    text CHECK (char_length(message) <= 300),
  ADD COLUMN args_bytes integer CHECK (args_bytes >= 0);
CREATE INDEX request_log_request_id ON request_log (account_id, request_id);

-- Notices about the account itself, sent to every webhook endpoint of the account: usage past
-- 80, 90 and 100% of the period's allowance, and a paid plan about to lapse to Free. event_id
-- names the period and threshold (usage:<period start>:80, lapse:<paid until>), so each is
-- recorded, and sent, once whichever replica finds it first.
CREATE TABLE account_notices (
  id          bigserial PRIMARY KEY,
  account_id  uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  kind        text NOT NULL CHECK (kind IN ('usage', 'plan_lapse')),
  event_id    text NOT NULL CHECK (char_length(event_id) <= 200),
  title       text NOT NULL CHECK (char_length(title) <= 300),
  data        jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (account_id, event_id)
);

-- One notice to one endpoint; the job account_notice_deliver sends it and retries with
-- graphile-worker's backoff.
CREATE TABLE account_notice_deliveries (
  notice_id    bigint NOT NULL REFERENCES account_notices (id) ON DELETE CASCADE,
  endpoint_id  bigint NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  status       text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts     integer NOT NULL DEFAULT 0,
  last_error   text CHECK (char_length(last_error) <= 500),
  delivered_at timestamptz,
  PRIMARY KEY (notice_id, endpoint_id)
);
