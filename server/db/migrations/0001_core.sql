-- Plans, accounts, wallets, API keys and the credit ledger (DESIGN.md §5).
-- Invariant: accounts.balance = SUM(credit_ledger.delta) for the account, and balance >= 0.

CREATE TABLE plans (
  name                text PRIMARY KEY CHECK (name ~ '^[a-z][a-z0-9-]{0,31}$'),
  display_name        text NOT NULL,
  credits             integer NOT NULL CHECK (credits >= 0),
  renewal             text NOT NULL CHECK (renewal IN ('one-time', 'monthly')),
  requests_per_minute integer NOT NULL CHECK (requests_per_minute > 0),
  burst               integer NOT NULL CHECK (burst >= 1),
  servers             text[] NOT NULL,
  max_keys            integer NOT NULL CHECK (max_keys >= 1),
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now()
);

INSERT INTO plans (name, display_name, credits, renewal, requests_per_minute, burst, servers, max_keys)
SELECT p.name, p.display_name, p.credits, p.renewal, p.rpm, p.burst, s.all_servers, p.max_keys
FROM (VALUES
  ('free',    'Free',    150,   'one-time', 30,  10,  3),
  ('basic',   'Basic',   5000,  'monthly',  60,  20,  10),
  ('pro',     'Pro',     15000, 'monthly',  180, 40,  25),
  ('premium', 'Premium', 35000, 'monthly',  600, 100, 50)
) AS p(name, display_name, credits, renewal, rpm, burst, max_keys)
CROSS JOIN (SELECT ARRAY[
  'price-prediction', 'market-intelligence', 'blockchain-explorer', 'token-intelligence',
  'portfolio-analytics', 'whale-intelligence', 'social-intelligence', 'kol-analytics',
  'project-intelligence'] AS all_servers) AS s;

CREATE TABLE accounts (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  plan          text NOT NULL REFERENCES plans (name),
  status        text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
  balance       integer NOT NULL CHECK (balance >= 0),
  -- Monthly periods are anniversaries of period_anchor (clamped to the month's last day).
  period_anchor timestamptz NOT NULL,
  period_start  timestamptz NOT NULL,
  period_end    timestamptz, -- NULL for one-time plans: they never renew
  -- GCRA theoretical arrival time, shared by every key and pod of the account.
  rl_tat        timestamptz NOT NULL DEFAULT '1970-01-01T00:00:00Z',
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX accounts_renewal_due ON accounts (period_end) WHERE period_end IS NOT NULL;

CREATE TABLE wallets (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  family     text NOT NULL CHECK (family IN ('evm', 'solana')),
  chain      text NOT NULL CHECK (chain IN ('ethereum', 'base', 'polygon', 'bsc', 'solana')),
  address    text NOT NULL, -- EVM: lower-case hex; Solana: base58 as given
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (family, address)
);
CREATE INDEX wallets_account ON wallets (account_id);

CREATE TABLE api_keys (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id   uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  hash         bytea NOT NULL UNIQUE CHECK (octet_length(hash) = 32), -- SHA-256 of the plaintext
  prefix       text NOT NULL,                                         -- shown to identify the key
  name         text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 64),
  description  text CHECK (char_length(description) <= 500),
  servers      text[], -- NULL: every server the plan allows
  expires_at   timestamptz,
  revoked_at   timestamptz,
  last_used_at timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_keys_account ON api_keys (account_id);

-- No foreign key on account_id: rows are written only by the metering and account functions,
-- which hold the account's row lock, and the per-row key check measured a third of the cost of
-- the ledger insert on the hot path.
CREATE TABLE credit_ledger (
  id            bigserial PRIMARY KEY,
  account_id    uuid NOT NULL,
  request_id    text NOT NULL,
  kind          text NOT NULL CHECK (kind IN ('grant', 'renewal', 'plan_change', 'adjust', 'reserve', 'refund')),
  delta         integer NOT NULL,
  balance_after integer NOT NULL CHECK (balance_after >= 0),
  server        text,
  tool          text,
  key_id        uuid,
  note          text,
  -- For 'reserve' rows: when the call was resolved, and how ('charged' or 'refunded').
  resolved_at   timestamptz,
  resolution    text CHECK (resolution IN ('charged', 'refunded')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  UNIQUE (request_id, kind)
);
CREATE INDEX credit_ledger_account_time ON credit_ledger (account_id, created_at);
CREATE INDEX credit_ledger_unresolved ON credit_ledger (created_at)
  WHERE kind = 'reserve' AND resolved_at IS NULL;
