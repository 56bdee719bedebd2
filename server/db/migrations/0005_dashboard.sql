-- The web dashboard (DESIGN.md §5, issue 8): wallet sign-in nonces, browser sessions, the
-- sign-in attempt log that the sign-in rate limit counts, and key rotation links.

-- Single-use sign-in nonces. A nonce is consumed by one UPDATE ... WHERE used_at IS NULL AND
-- expires_at > now() RETURNING, so two requests presenting the same nonce cannot both win.
-- 'link' nonces belong to the session that asked for them (linking a second wallet).
CREATE TABLE dashboard_nonces (
  nonce      text PRIMARY KEY CHECK (nonce ~ '^[A-Za-z0-9]{16,64}$'),
  purpose    text NOT NULL CHECK (purpose IN ('sign_in', 'link')),
  session_id uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at    timestamptz,
  CHECK ((purpose = 'link') = (session_id IS NOT NULL))
);
CREATE INDEX dashboard_nonces_expiry ON dashboard_nonces (expires_at);

-- Browser sessions behind an httpOnly cookie. Only the SHA-256 of the cookie's token is stored,
-- so a copy of the table does not let anyone sign in. csrf_token is the synchronizer token every
-- mutating request must echo in a header.
CREATE TABLE dashboard_sessions (
  id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  token_hash     bytea NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
  account_id     uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  wallet_family  text NOT NULL CHECK (wallet_family IN ('evm', 'solana')),
  wallet_address text NOT NULL,
  csrf_token     text NOT NULL,
  user_agent     text CHECK (char_length(user_agent) <= 512),
  created_at     timestamptz NOT NULL DEFAULT now(),
  last_seen_at   timestamptz NOT NULL DEFAULT now(),
  expires_at     timestamptz NOT NULL,
  revoked_at     timestamptz
);
CREATE INDEX dashboard_sessions_account ON dashboard_sessions (account_id);
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);

-- Every sign-in and link attempt, successful or not, by client address: the sign-in rate limit
-- counts the recent rows of a client (shared by every pod), and the rows are an audit trail.
CREATE TABLE dashboard_sign_in_attempts (
  id         bigserial PRIMARY KEY,
  client     text NOT NULL CHECK (char_length(client) <= 64),
  family     text CHECK (family IN ('evm', 'solana')),
  address    text,
  outcome    text NOT NULL CHECK (outcome IN ('ok', 'refused', 'rate_limited')),
  reason     text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dashboard_sign_in_attempts_client ON dashboard_sign_in_attempts (client, created_at);

-- Rotation: the new key points back to the key it replaced; the old key's expiry is brought
-- forward to the end of the grace period the user chose (the gateway already refuses expired keys).
ALTER TABLE api_keys ADD COLUMN rotated_from uuid REFERENCES api_keys (id) ON DELETE SET NULL;
