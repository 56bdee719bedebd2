-- The request log (issue 24): one row per authenticated /mcp request, written by the gateway in
-- batches through server/dashboard/requestLog.ts, read by the dashboard (newest first, filtered
-- by key, server, tool and status) and deleted after the retention period by the sweep.
-- No foreign keys: rows are written off the hot path in batches and outlive revoked keys.
CREATE TABLE request_log (
  id          bigserial PRIMARY KEY,
  account_id  uuid NOT NULL,
  key_id      uuid,
  request_id  text NOT NULL CHECK (char_length(request_id) <= 128),
  server      text NOT NULL,
  method      text NOT NULL CHECK (char_length(method) <= 64),
  tool        text CHECK (char_length(tool) <= 128),
  status      smallint NOT NULL CHECK (status BETWEEN 100 AND 599),
  error_code  text CHECK (char_length(error_code) <= 64),
  credits     integer NOT NULL DEFAULT 0 CHECK (credits >= 0),
  latency_ms  integer NOT NULL CHECK (latency_ms >= 0),
  created_at  timestamptz NOT NULL
);
-- Every dashboard query is one account's rows, newest first (keyset pagination on id, the write order).
CREATE INDEX request_log_account ON request_log (account_id, id DESC);
CREATE INDEX request_log_created ON request_log (created_at);
