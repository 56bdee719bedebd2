-- OAuth 2.1 for connectors (DESIGN.md §5a, issue 20). Two tables:
--
-- oauth_artifacts: what the authorization server library (oidc-provider) persists through its
-- adapter (server/oauth/adapter.ts): authorization codes, access and refresh tokens, grants,
-- interactions, its own sessions and dynamically registered clients. Rows are found by the SHA-256
-- of their id (a token's id is the token itself), and the adapter drops the id from the stored
-- payload, so a copy of the table holds no usable token or code.
CREATE TABLE oauth_artifacts (
  model       text NOT NULL CHECK (char_length(model) <= 64),
  id_hash     bytea NOT NULL CHECK (octet_length(id_hash) = 32),
  payload     jsonb NOT NULL,
  -- The payload's own jti was this row's id (removed before storing; put back when read).
  jti_is_id   boolean NOT NULL DEFAULT false,
  grant_id    text,
  uid_hash    bytea CHECK (octet_length(uid_hash) = 32),
  expires_at  timestamptz,
  consumed_at timestamptz,
  PRIMARY KEY (model, id_hash)
);
CREATE INDEX oauth_artifacts_grant ON oauth_artifacts (grant_id) WHERE grant_id IS NOT NULL;
CREATE INDEX oauth_artifacts_uid ON oauth_artifacts (model, uid_hash) WHERE uid_hash IS NOT NULL;
CREATE INDEX oauth_artifacts_expiry ON oauth_artifacts (expires_at);

-- A connection: one approved consent (one oidc-provider grant) of one client for one account.
-- It carries what a key grant carries for the gateway (account, servers allowed; the plan comes
-- through the account), so a token is metered, limited and scoped exactly like a key. It does
-- not count toward the plan's key cap and is never accepted as x-api-key. expires_at slides
-- forward with each refresh token issued (the refresh token lifetime).
CREATE TABLE oauth_connections (
  id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  grant_id       text NOT NULL UNIQUE,
  account_id     uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  client_id      text NOT NULL CHECK (char_length(client_id) <= 2048),
  client_name    text CHECK (char_length(client_name) <= 256),
  client_uri     text CHECK (char_length(client_uri) <= 2048),
  logo_uri       text CHECK (char_length(logo_uri) <= 2048),
  servers        text[] NOT NULL CHECK (cardinality(servers) >= 1),
  created_at     timestamptz NOT NULL DEFAULT now(),
  last_used_at   timestamptz,
  expires_at     timestamptz NOT NULL,
  revoked_at     timestamptz,
  revoked_reason text CHECK (revoked_reason IN ('user', 'grant_revoked'))
);
CREATE INDEX oauth_connections_account ON oauth_connections (account_id, created_at DESC);
