-- Idempotency keys for the dashboard's key creation (issue 24): a request that carries an
-- Idempotency-Key header is recorded with the key it made, in the same transaction, so the same
-- header from the same account within 24 hours answers that key again instead of making another.
-- The secret is never stored: a replay names the key but cannot show its plaintext again.
CREATE TABLE dashboard_idempotency (
  account_id      uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  idempotency_key text NOT NULL CHECK (char_length(idempotency_key) BETWEEN 1 AND 255),
  -- SHA-256 of the request's method, path and body: the same header with another body is refused.
  request_hash    bytea NOT NULL CHECK (octet_length(request_hash) = 32),
  key_id          uuid NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, idempotency_key)
);
CREATE INDEX dashboard_idempotency_created ON dashboard_idempotency (created_at);
