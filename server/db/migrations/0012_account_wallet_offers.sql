-- Accounts with several wallets (issue 24): linking a wallet proven by a signature, merging the
-- account a wallet already has into the signed-in one, and the record of each merge. Also the
-- request log's daily counts that the Usage page's breakdowns read.

-- An offer is made when a signed-in session proves a wallet that it cannot simply link: a wallet
-- with no account met at sign-in ('link': link it, or open a separate account for it), or a wallet
-- that has an account of its own ('merge'). It is bound to the session that proved the wallet,
-- expires with the nonce lifetime and is used once.
CREATE TABLE account_wallet_offers (
  id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  session_id        uuid NOT NULL REFERENCES dashboard_sessions (id) ON DELETE CASCADE,
  account_id        uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  kind              text NOT NULL CHECK (kind IN ('link', 'merge')),
  family            text NOT NULL CHECK (family IN ('evm', 'solana')),
  chain             text NOT NULL CHECK (chain IN ('ethereum', 'base', 'polygon', 'bsc', 'solana')),
  address           text NOT NULL,
  -- 'merge': the account the wallet belonged to when it was proven.
  source_account_id uuid REFERENCES accounts (id) ON DELETE CASCADE,
  created_at        timestamptz NOT NULL DEFAULT now(),
  expires_at        timestamptz NOT NULL,
  used_at           timestamptz,
  CHECK ((kind = 'merge') = (source_account_id IS NOT NULL)),
  CHECK (source_account_id IS DISTINCT FROM account_id)
);
CREATE INDEX account_wallet_offers_expiry ON account_wallet_offers (expires_at);

-- One row per merge. The credits moved are also two 'adjust' rows of credit_ledger (request ids
-- 'merge:<id>:out' on the source, 'merge:<id>:in' on the target), so each account's balance
-- stays the sum of its ledger. The source account row stays (its ledger history refers to it),
-- with no wallets, keys or sessions, balance 0 and status 'suspended': it is no longer a login.
CREATE TABLE account_merges (
  id                uuid PRIMARY KEY,
  source_account_id uuid NOT NULL UNIQUE REFERENCES accounts (id),
  target_account_id uuid NOT NULL REFERENCES accounts (id),
  credits           integer NOT NULL CHECK (credits >= 0),
  keys              integer NOT NULL CHECK (keys >= 0),
  wallets           integer NOT NULL CHECK (wallets >= 0),
  merged_at         timestamptz NOT NULL DEFAULT now(),
  CHECK (source_account_id <> target_account_id)
);
CREATE INDEX account_merges_target ON account_merges (target_account_id);

-- The request log counted per UTC day, key, server, method, tool, status and error code, kept
-- beside the log by the same statement that writes each batch (server/dashboard/requestLog.ts):
-- the Usage page's breakdowns read these few rows per day instead of every logged request.
-- Pruned with the log (same retention); moved with the log when accounts merge.
CREATE TABLE request_log_daily (
  account_id uuid NOT NULL,
  day        date NOT NULL,
  key_id     uuid,
  server     text NOT NULL,
  method     text NOT NULL,
  tool       text,
  status     smallint NOT NULL,
  error_code text,
  requests   integer NOT NULL CHECK (requests > 0),
  credits    bigint NOT NULL CHECK (credits >= 0),
  CONSTRAINT request_log_daily_group UNIQUE NULLS NOT DISTINCT (account_id, day, key_id, server, method, tool, status, error_code)
);
CREATE INDEX request_log_daily_day ON request_log_daily (day);

-- The request log's primary key leads with the account. With a key on id alone the planner read a
-- page "newest first" by walking every account's newer rows backwards (it assumes an account's
-- rows are spread evenly), which for a quiet account among busy ones meant most of the table; now
-- the only index that yields id order is the account's own, which the old (account_id, id DESC)
-- index duplicated.
ALTER TABLE request_log DROP CONSTRAINT request_log_pkey, ADD PRIMARY KEY (account_id, id);
DROP INDEX request_log_account;
