-- Generated from a freshly migrated database; do not edit (see server/db/schema.ts).

CREATE TABLE account_merges (
  id uuid NOT NULL,
  source_account_id uuid NOT NULL,
  target_account_id uuid NOT NULL,
  credits integer NOT NULL,
  keys integer NOT NULL,
  wallets integer NOT NULL,
  merged_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT account_merges_check CHECK (source_account_id <> target_account_id),
  CONSTRAINT account_merges_credits_check CHECK (credits >= 0),
  CONSTRAINT account_merges_keys_check CHECK (keys >= 0),
  CONSTRAINT account_merges_wallets_check CHECK (wallets >= 0),
  CONSTRAINT account_merges_source_account_id_fkey FOREIGN KEY (source_account_id) REFERENCES accounts(id),
  CONSTRAINT account_merges_target_account_id_fkey FOREIGN KEY (target_account_id) REFERENCES accounts(id),
  CONSTRAINT account_merges_pkey PRIMARY KEY (id),
  CONSTRAINT account_merges_source_account_id_key UNIQUE (source_account_id)
);

CREATE TABLE account_notices (
  id bigint NOT NULL DEFAULT nextval('account_notices_id_seq'::regclass),
  account_id uuid NOT NULL,
  kind text NOT NULL,
  event_id text NOT NULL,
  title text NOT NULL,
  data jsonb NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT account_notices_event_id_check CHECK (char_length(event_id) <= 200),
  CONSTRAINT account_notices_kind_check CHECK (kind = ANY (ARRAY['usage'::text, 'plan_lapse'::text])),
  CONSTRAINT account_notices_title_check CHECK (char_length(title) <= 300),
  CONSTRAINT account_notices_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id) ON DELETE CASCADE,
  CONSTRAINT account_notices_pkey PRIMARY KEY (id),
  CONSTRAINT account_notices_account_id_event_id_key UNIQUE (account_id, event_id)
);

CREATE TABLE account_wallet_offers (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  session_id uuid NOT NULL,
  account_id uuid NOT NULL,
  kind text NOT NULL,
  family text NOT NULL,
  chain text NOT NULL,
  address text NOT NULL,
  source_account_id uuid,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  expires_at timestamp with time zone NOT NULL,
  used_at timestamp with time zone,
  contract boolean NOT NULL DEFAULT false,
  CONSTRAINT account_wallet_offers_chain_check CHECK (chain = ANY (ARRAY['ethereum'::text, 'base'::text, 'polygon'::text, 'bsc'::text, 'solana'::text])),
  CONSTRAINT account_wallet_offers_check CHECK ((kind = 'merge'::text) = (source_account_id IS NOT NULL)),
  CONSTRAINT account_wallet_offers_check1 CHECK (source_account_id IS DISTINCT FROM account_id),
  CONSTRAINT account_wallet_offers_family_check CHECK (family = ANY (ARRAY['evm'::text, 'solana'::text])),
  CONSTRAINT account_wallet_offers_kind_check CHECK (kind = ANY (ARRAY['link'::text, 'merge'::text])),
  CONSTRAINT account_wallet_offers_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id) ON DELETE CASCADE,
  CONSTRAINT account_wallet_offers_session_id_fkey FOREIGN KEY (session_id) REFERENCES dashboard_sessions(id) ON DELETE CASCADE,
  CONSTRAINT account_wallet_offers_source_account_id_fkey FOREIGN KEY (source_account_id) REFERENCES accounts(id) ON DELETE CASCADE,
  CONSTRAINT account_wallet_offers_pkey PRIMARY KEY (id)
);

CREATE TABLE accounts (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  plan text NOT NULL,
  status text NOT NULL DEFAULT 'active'::text,
  balance integer NOT NULL,
  period_anchor timestamp with time zone NOT NULL,
  period_start timestamp with time zone NOT NULL,
  period_end timestamp with time zone,
  rl_tat timestamp with time zone NOT NULL DEFAULT '1970-01-01 00:00:00+00'::timestamp with time zone,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  updated_at timestamp with time zone NOT NULL DEFAULT now(),
  topup integer NOT NULL DEFAULT 0,
  paid_until timestamp with time zone,
  free_allowance text,
  CONSTRAINT accounts_balance_check CHECK (balance >= 0),
  CONSTRAINT accounts_free_allowance_check CHECK (free_allowance = ANY (ARRAY['granted'::text, 'withheld'::text])),
  CONSTRAINT accounts_status_check CHECK (status = ANY (ARRAY['active'::text, 'suspended'::text])),
  CONSTRAINT accounts_topup_check CHECK (topup >= 0),
  CONSTRAINT accounts_topup_within_balance CHECK (topup <= balance),
  CONSTRAINT accounts_plan_fkey FOREIGN KEY (plan) REFERENCES plans(name),
  CONSTRAINT accounts_pkey PRIMARY KEY (id)
);

CREATE TABLE alert_rules (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  account_id uuid NOT NULL,
  kind text NOT NULL,
  server text NOT NULL,
  params jsonb NOT NULL,
  state jsonb NOT NULL DEFAULT '{}'::jsonb,
  status text NOT NULL DEFAULT 'active'::text,
  webhook_id bigint,
  note text,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  next_evaluation_at timestamp with time zone NOT NULL DEFAULT now(),
  last_evaluated_at timestamp with time zone,
  last_error text,
  fired integer NOT NULL DEFAULT 0,
  last_fired_at timestamp with time zone,
  CONSTRAINT alert_rules_kind_check CHECK (kind = ANY (ARRAY['price'::text, 'whale'::text, 'social'::text])),
  CONSTRAINT alert_rules_note_check CHECK (char_length(note) <= 200),
  CONSTRAINT alert_rules_status_check CHECK (status = ANY (ARRAY['active'::text, 'paused'::text])),
  CONSTRAINT alert_rules_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id) ON DELETE CASCADE,
  CONSTRAINT alert_rules_webhook_id_fkey FOREIGN KEY (webhook_id) REFERENCES webhook_endpoints(id) ON DELETE SET NULL,
  CONSTRAINT alert_rules_pkey PRIMARY KEY (id)
);

CREATE TABLE alerts (
  id bigint NOT NULL DEFAULT nextval('alerts_id_seq'::regclass),
  account_id uuid NOT NULL,
  rule_id uuid,
  kind text NOT NULL,
  event_id text NOT NULL,
  title text NOT NULL,
  data jsonb NOT NULL,
  fired_at timestamp with time zone NOT NULL DEFAULT clock_timestamp(),
  CONSTRAINT alerts_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id) ON DELETE CASCADE,
  CONSTRAINT alerts_rule_id_fkey FOREIGN KEY (rule_id) REFERENCES alert_rules(id) ON DELETE SET NULL,
  CONSTRAINT alerts_pkey PRIMARY KEY (id),
  CONSTRAINT alerts_rule_id_event_id_key UNIQUE (rule_id, event_id)
);

CREATE TABLE api_keys (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  account_id uuid NOT NULL,
  hash bytea NOT NULL,
  prefix text NOT NULL,
  name text NOT NULL,
  description text,
  servers text[],
  expires_at timestamp with time zone,
  revoked_at timestamp with time zone,
  last_used_at timestamp with time zone,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  rotated_from uuid,
  paused_at timestamp with time zone,
  read_only boolean NOT NULL DEFAULT false,
  credit_cap integer,
  cap_period text NOT NULL DEFAULT 'month'::text,
  cap_spent integer NOT NULL DEFAULT 0,
  cap_window timestamp with time zone,
  rate_limit_per_minute integer,
  rl_tat timestamp with time zone,
  CONSTRAINT api_keys_cap_period_check CHECK (cap_period = ANY (ARRAY['day'::text, 'month'::text])),
  CONSTRAINT api_keys_cap_spent_check CHECK (cap_spent >= 0),
  CONSTRAINT api_keys_credit_cap_check CHECK (credit_cap > 0),
  CONSTRAINT api_keys_description_check CHECK (char_length(description) <= 500),
  CONSTRAINT api_keys_hash_check CHECK (octet_length(hash) = 32),
  CONSTRAINT api_keys_name_check CHECK (char_length(name) >= 1 AND char_length(name) <= 64),
  CONSTRAINT api_keys_rate_limit_per_minute_check CHECK (rate_limit_per_minute >= 1 AND rate_limit_per_minute <= 100000),
  CONSTRAINT api_keys_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id) ON DELETE CASCADE,
  CONSTRAINT api_keys_rotated_from_fkey FOREIGN KEY (rotated_from) REFERENCES api_keys(id) ON DELETE SET NULL,
  CONSTRAINT api_keys_pkey PRIMARY KEY (id),
  CONSTRAINT api_keys_hash_key UNIQUE (hash)
);

CREATE TABLE audit_log (
  id bigint NOT NULL DEFAULT nextval('audit_log_id_seq'::regclass),
  account_id uuid NOT NULL,
  action text NOT NULL,
  wallet text,
  chain text,
  request_id text,
  target text,
  details jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT audit_log_action_check CHECK (char_length(action) >= 1 AND char_length(action) <= 64),
  CONSTRAINT audit_log_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id) ON DELETE CASCADE,
  CONSTRAINT audit_log_pkey PRIMARY KEY (id)
);

CREATE TABLE credit_ledger (
  id bigint NOT NULL DEFAULT nextval('credit_ledger_id_seq'::regclass),
  account_id uuid NOT NULL,
  request_id text NOT NULL,
  kind text NOT NULL,
  delta integer NOT NULL,
  balance_after integer NOT NULL,
  server text,
  tool text,
  key_id uuid,
  note text,
  resolved_at timestamp with time zone,
  resolution text,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  chain text,
  tx_hash text,
  topup_delta integer,
  stale_at timestamp with time zone,
  CONSTRAINT credit_ledger_balance_after_check CHECK (balance_after >= 0),
  CONSTRAINT credit_ledger_kind_check CHECK (kind = ANY (ARRAY['grant'::text, 'renewal'::text, 'plan_change'::text, 'adjust'::text, 'reserve'::text, 'refund'::text, 'purchase'::text, 'lapse'::text])),
  CONSTRAINT credit_ledger_resolution_check CHECK (resolution = ANY (ARRAY['charged'::text, 'refunded'::text])),
  CONSTRAINT credit_ledger_pkey PRIMARY KEY (id),
  CONSTRAINT credit_ledger_request_id_kind_key UNIQUE (request_id, kind)
);

CREATE TABLE dashboard_idempotency (
  account_id uuid NOT NULL,
  idempotency_key text NOT NULL,
  request_hash bytea NOT NULL,
  key_id uuid NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT dashboard_idempotency_idempotency_key_check CHECK (char_length(idempotency_key) >= 1 AND char_length(idempotency_key) <= 255),
  CONSTRAINT dashboard_idempotency_request_hash_check CHECK (octet_length(request_hash) = 32),
  CONSTRAINT dashboard_idempotency_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id) ON DELETE CASCADE,
  CONSTRAINT dashboard_idempotency_key_id_fkey FOREIGN KEY (key_id) REFERENCES api_keys(id) ON DELETE CASCADE,
  CONSTRAINT dashboard_idempotency_pkey PRIMARY KEY (account_id, idempotency_key)
);

CREATE TABLE dashboard_nonces (
  nonce text NOT NULL,
  purpose text NOT NULL,
  session_id uuid,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  expires_at timestamp with time zone NOT NULL,
  used_at timestamp with time zone,
  CONSTRAINT dashboard_nonces_check CHECK ((purpose = 'link'::text) = (session_id IS NOT NULL)),
  CONSTRAINT dashboard_nonces_nonce_check CHECK (nonce ~ '^[A-Za-z0-9]{16,64}$'::text),
  CONSTRAINT dashboard_nonces_purpose_check CHECK (purpose = ANY (ARRAY['sign_in'::text, 'link'::text])),
  CONSTRAINT dashboard_nonces_pkey PRIMARY KEY (nonce)
);

CREATE TABLE dashboard_sessions (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  token_hash bytea NOT NULL,
  account_id uuid NOT NULL,
  wallet_family text NOT NULL,
  wallet_address text NOT NULL,
  csrf_token text NOT NULL,
  user_agent text,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  last_seen_at timestamp with time zone NOT NULL DEFAULT now(),
  expires_at timestamp with time zone NOT NULL,
  revoked_at timestamp with time zone,
  CONSTRAINT dashboard_sessions_token_hash_check CHECK (octet_length(token_hash) = 32),
  CONSTRAINT dashboard_sessions_user_agent_check CHECK (char_length(user_agent) <= 512),
  CONSTRAINT dashboard_sessions_wallet_family_check CHECK (wallet_family = ANY (ARRAY['evm'::text, 'solana'::text])),
  CONSTRAINT dashboard_sessions_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id) ON DELETE CASCADE,
  CONSTRAINT dashboard_sessions_pkey PRIMARY KEY (id),
  CONSTRAINT dashboard_sessions_token_hash_key UNIQUE (token_hash)
);

CREATE TABLE dashboard_sign_in_attempts (
  id bigint NOT NULL DEFAULT nextval('dashboard_sign_in_attempts_id_seq'::regclass),
  client text NOT NULL,
  family text,
  address text,
  outcome text NOT NULL,
  reason text,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT dashboard_sign_in_attempts_client_check CHECK (char_length(client) <= 64),
  CONSTRAINT dashboard_sign_in_attempts_family_check CHECK (family = ANY (ARRAY['evm'::text, 'solana'::text])),
  CONSTRAINT dashboard_sign_in_attempts_outcome_check CHECK (outcome = ANY (ARRAY['ok'::text, 'refused'::text, 'rate_limited'::text])),
  CONSTRAINT dashboard_sign_in_attempts_pkey PRIMARY KEY (id)
);

CREATE TABLE forecast_log (
  id bigint NOT NULL DEFAULT nextval('forecast_log_id_seq'::regclass),
  request_id text NOT NULL,
  account_id uuid NOT NULL,
  asset_id text NOT NULL,
  model text NOT NULL,
  horizon integer NOT NULL,
  source text NOT NULL,
  base_date date NOT NULL,
  base_close double precision NOT NULL,
  path jsonb NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT forecast_log_horizon_check CHECK (horizon >= 1 AND horizon <= 30),
  CONSTRAINT forecast_log_pkey PRIMARY KEY (id),
  CONSTRAINT forecast_log_request_id_key UNIQUE (request_id)
);

CREATE TABLE oauth_artifacts (
  model text NOT NULL,
  id_hash bytea NOT NULL,
  payload jsonb NOT NULL,
  jti_is_id boolean NOT NULL DEFAULT false,
  grant_id text,
  uid_hash bytea,
  expires_at timestamp with time zone,
  consumed_at timestamp with time zone,
  CONSTRAINT oauth_artifacts_id_hash_check CHECK (octet_length(id_hash) = 32),
  CONSTRAINT oauth_artifacts_model_check CHECK (char_length(model) <= 64),
  CONSTRAINT oauth_artifacts_uid_hash_check CHECK (octet_length(uid_hash) = 32),
  CONSTRAINT oauth_artifacts_pkey PRIMARY KEY (model, id_hash)
);

CREATE TABLE oauth_connections (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  grant_id text NOT NULL,
  account_id uuid NOT NULL,
  client_id text NOT NULL,
  client_name text,
  client_uri text,
  logo_uri text,
  servers text[] NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  last_used_at timestamp with time zone,
  expires_at timestamp with time zone NOT NULL,
  revoked_at timestamp with time zone,
  revoked_reason text,
  CONSTRAINT oauth_connections_client_id_check CHECK (char_length(client_id) <= 2048),
  CONSTRAINT oauth_connections_client_name_check CHECK (char_length(client_name) <= 256),
  CONSTRAINT oauth_connections_client_uri_check CHECK (char_length(client_uri) <= 2048),
  CONSTRAINT oauth_connections_logo_uri_check CHECK (char_length(logo_uri) <= 2048),
  CONSTRAINT oauth_connections_revoked_reason_check CHECK (revoked_reason = ANY (ARRAY['user'::text, 'grant_revoked'::text])),
  CONSTRAINT oauth_connections_servers_check CHECK (cardinality(servers) >= 1),
  CONSTRAINT oauth_connections_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id) ON DELETE CASCADE,
  CONSTRAINT oauth_connections_pkey PRIMARY KEY (id),
  CONSTRAINT oauth_connections_grant_id_key UNIQUE (grant_id)
);

CREATE TABLE payment_orders (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  account_id uuid NOT NULL,
  kind text NOT NULL,
  item text NOT NULL,
  credits integer NOT NULL,
  price_cents integer NOT NULL,
  chain text NOT NULL,
  token text NOT NULL,
  decimals integer NOT NULL,
  amount numeric(78,0) NOT NULL,
  treasury text NOT NULL,
  status text NOT NULL DEFAULT 'pending'::text,
  tx_hash text,
  submitted_at timestamp with time zone,
  paid_at timestamp with time zone,
  last_error text,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  expires_at timestamp with time zone NOT NULL,
  CONSTRAINT payment_orders_amount_check CHECK (amount > 0::numeric),
  CONSTRAINT payment_orders_chain_check CHECK (chain = ANY (ARRAY['ethereum'::text, 'base'::text, 'polygon'::text, 'bsc'::text, 'solana'::text])),
  CONSTRAINT payment_orders_credits_check CHECK (credits >= 0),
  CONSTRAINT payment_orders_decimals_check CHECK (decimals >= 0 AND decimals <= 36),
  CONSTRAINT payment_orders_kind_check CHECK (kind = ANY (ARRAY['plan'::text, 'pack'::text])),
  CONSTRAINT payment_orders_price_cents_check CHECK (price_cents > 0),
  CONSTRAINT payment_orders_status_check CHECK (status = ANY (ARRAY['pending'::text, 'submitted'::text, 'paid'::text])),
  CONSTRAINT payment_orders_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id) ON DELETE CASCADE,
  CONSTRAINT payment_orders_pkey PRIMARY KEY (id)
);

CREATE TABLE payments (
  id bigint NOT NULL DEFAULT nextval('payments_id_seq'::regclass),
  kind text NOT NULL,
  account_id uuid,
  order_id uuid,
  chain text NOT NULL,
  tx_hash text NOT NULL,
  payer text NOT NULL,
  token text NOT NULL,
  amount numeric(78,0) NOT NULL,
  decimals integer NOT NULL,
  usd_micros bigint NOT NULL,
  item text,
  credits integer NOT NULL DEFAULT 0,
  request_id text,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT payments_amount_check CHECK (amount > 0::numeric),
  CONSTRAINT payments_kind_check CHECK (kind = ANY (ARRAY['plan'::text, 'pack'::text, 'x402'::text])),
  CONSTRAINT payments_usd_micros_check CHECK (usd_micros >= 0),
  CONSTRAINT payments_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id) ON DELETE SET NULL,
  CONSTRAINT payments_order_id_fkey FOREIGN KEY (order_id) REFERENCES payment_orders(id) ON DELETE SET NULL,
  CONSTRAINT payments_pkey PRIMARY KEY (id),
  CONSTRAINT payments_chain_tx_hash_key UNIQUE (chain, tx_hash)
);

CREATE TABLE plan_schedule (
  id bigint NOT NULL DEFAULT nextval('plan_schedule_id_seq'::regclass),
  account_id uuid NOT NULL,
  plan text NOT NULL,
  starts_at timestamp with time zone NOT NULL,
  ends_at timestamp with time zone NOT NULL,
  order_id uuid,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT plan_schedule_check CHECK (ends_at > starts_at),
  CONSTRAINT plan_schedule_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id) ON DELETE CASCADE,
  CONSTRAINT plan_schedule_order_id_fkey FOREIGN KEY (order_id) REFERENCES payment_orders(id) ON DELETE SET NULL,
  CONSTRAINT plan_schedule_plan_fkey FOREIGN KEY (plan) REFERENCES plans(name),
  CONSTRAINT plan_schedule_pkey PRIMARY KEY (id)
);

CREATE TABLE plans (
  name text NOT NULL,
  display_name text NOT NULL,
  credits integer NOT NULL,
  renewal text NOT NULL,
  requests_per_minute integer NOT NULL,
  burst integer NOT NULL,
  servers text[] NOT NULL,
  max_keys integer NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  updated_at timestamp with time zone NOT NULL DEFAULT now(),
  price_cents integer,
  CONSTRAINT plans_burst_check CHECK (burst >= 1),
  CONSTRAINT plans_credits_check CHECK (credits >= 0),
  CONSTRAINT plans_max_keys_check CHECK (max_keys >= 1),
  CONSTRAINT plans_name_check CHECK (name ~ '^[a-z][a-z0-9-]{0,31}$'::text),
  CONSTRAINT plans_price_cents_check CHECK (price_cents >= 0),
  CONSTRAINT plans_renewal_check CHECK (renewal = ANY (ARRAY['one-time'::text, 'monthly'::text])),
  CONSTRAINT plans_requests_per_minute_check CHECK (requests_per_minute > 0),
  CONSTRAINT plans_pkey PRIMARY KEY (name)
);

CREATE TABLE request_log (
  id bigint NOT NULL DEFAULT nextval('request_log_id_seq'::regclass),
  account_id uuid NOT NULL,
  key_id uuid,
  request_id text NOT NULL,
  server text NOT NULL,
  method text NOT NULL,
  tool text,
  status smallint NOT NULL,
  error_code text,
  credits integer NOT NULL DEFAULT 0,
  latency_ms integer NOT NULL,
  created_at timestamp with time zone NOT NULL,
  message text,
  args_bytes integer,
  CONSTRAINT request_log_args_bytes_check CHECK (args_bytes >= 0),
  CONSTRAINT request_log_credits_check CHECK (credits >= 0),
  CONSTRAINT request_log_error_code_check CHECK (char_length(error_code) <= 64),
  CONSTRAINT request_log_latency_ms_check CHECK (latency_ms >= 0),
  CONSTRAINT request_log_message_check CHECK (char_length(message) <= 300),
  CONSTRAINT request_log_method_check CHECK (char_length(method) <= 64),
  CONSTRAINT request_log_request_id_check CHECK (char_length(request_id) <= 128),
  CONSTRAINT request_log_status_check CHECK (status >= 100 AND status <= 599),
  CONSTRAINT request_log_tool_check CHECK (char_length(tool) <= 128),
  CONSTRAINT request_log_pkey PRIMARY KEY (account_id, id)
);

CREATE TABLE request_log_daily (
  account_id uuid NOT NULL,
  day date NOT NULL,
  key_id uuid,
  server text NOT NULL,
  method text NOT NULL,
  tool text,
  status smallint NOT NULL,
  error_code text,
  requests integer NOT NULL,
  credits bigint NOT NULL,
  CONSTRAINT request_log_daily_credits_check CHECK (credits >= 0),
  CONSTRAINT request_log_daily_requests_check CHECK (requests > 0),
  CONSTRAINT request_log_daily_group UNIQUE NULLS NOT DISTINCT (account_id, day, key_id, server, method, tool, status, error_code)
);

CREATE TABLE schema_migrations (
  version integer NOT NULL,
  name text NOT NULL,
  applied_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT schema_migrations_pkey PRIMARY KEY (version)
);

CREATE TABLE tasks (
  id uuid NOT NULL,
  account_id uuid NOT NULL,
  server text NOT NULL,
  tool text NOT NULL,
  request_id text NOT NULL,
  status text NOT NULL DEFAULT 'working'::text,
  status_message text,
  result jsonb,
  error jsonb,
  ttl_ms integer NOT NULL,
  poll_interval_ms integer NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamp with time zone NOT NULL DEFAULT clock_timestamp(),
  expires_at timestamp with time zone NOT NULL,
  heartbeat_at timestamp with time zone NOT NULL DEFAULT clock_timestamp(),
  CONSTRAINT tasks_check CHECK ((status = 'completed'::text) = (result IS NOT NULL)),
  CONSTRAINT tasks_check1 CHECK ((status = 'failed'::text) = (error IS NOT NULL)),
  CONSTRAINT tasks_poll_interval_ms_check CHECK (poll_interval_ms > 0),
  CONSTRAINT tasks_status_check CHECK (status = ANY (ARRAY['working'::text, 'completed'::text, 'failed'::text, 'cancelled'::text])),
  CONSTRAINT tasks_ttl_ms_check CHECK (ttl_ms > 0),
  CONSTRAINT tasks_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id) ON DELETE CASCADE,
  CONSTRAINT tasks_pkey PRIMARY KEY (id),
  CONSTRAINT tasks_request_id_key UNIQUE (request_id)
);

CREATE TABLE wallet_free_grants (
  family text NOT NULL,
  address text NOT NULL,
  chain text NOT NULL DEFAULT ''::text,
  account_id uuid NOT NULL,
  credits integer NOT NULL,
  granted_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT wallet_free_grants_chain_check CHECK (chain = ANY (ARRAY[''::text, 'ethereum'::text, 'base'::text, 'polygon'::text, 'bsc'::text])),
  CONSTRAINT wallet_free_grants_credits_check CHECK (credits >= 0),
  CONSTRAINT wallet_free_grants_family_check CHECK (family = ANY (ARRAY['evm'::text, 'solana'::text])),
  CONSTRAINT wallet_free_grants_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id),
  CONSTRAINT wallet_free_grants_pkey PRIMARY KEY (family, address, chain)
);

CREATE TABLE wallets (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  account_id uuid NOT NULL,
  family text NOT NULL,
  chain text NOT NULL,
  address text NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  contract boolean NOT NULL DEFAULT false,
  CONSTRAINT wallets_chain_check CHECK (chain = ANY (ARRAY['ethereum'::text, 'base'::text, 'polygon'::text, 'bsc'::text, 'solana'::text])),
  CONSTRAINT wallets_family_check CHECK (family = ANY (ARRAY['evm'::text, 'solana'::text])),
  CONSTRAINT wallets_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id) ON DELETE CASCADE,
  CONSTRAINT wallets_pkey PRIMARY KEY (id),
  CONSTRAINT wallets_family_address_key UNIQUE (family, address)
);

CREATE TABLE watches (
  id bigint NOT NULL DEFAULT nextval('watches_id_seq'::regclass),
  account_id uuid NOT NULL,
  chain text NOT NULL,
  address text NOT NULL,
  note text,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  last_checked_at timestamp with time zone,
  last_checked_block bigint,
  CONSTRAINT watches_chain_check CHECK (chain = ANY (ARRAY['ethereum'::text, 'base'::text, 'polygon'::text, 'bsc'::text, 'solana'::text])),
  CONSTRAINT watches_note_check CHECK (char_length(note) <= 200),
  CONSTRAINT watches_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id) ON DELETE CASCADE,
  CONSTRAINT watches_pkey PRIMARY KEY (id),
  CONSTRAINT watches_account_id_chain_address_key UNIQUE (account_id, chain, address)
);

CREATE TABLE webhook_attempts (
  id bigint NOT NULL DEFAULT nextval('webhook_attempts_id_seq'::regclass),
  delivery_id bigint NOT NULL,
  attempt integer NOT NULL,
  started_at timestamp with time zone NOT NULL,
  duration_ms integer NOT NULL,
  outcome text NOT NULL,
  status_code integer,
  error text,
  CONSTRAINT webhook_attempts_error_check CHECK (char_length(error) <= 500),
  CONSTRAINT webhook_attempts_outcome_check CHECK (outcome = ANY (ARRAY['ok'::text, 'http_error'::text, 'network_error'::text, 'timeout'::text, 'refused_address'::text])),
  CONSTRAINT webhook_attempts_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
  CONSTRAINT webhook_attempts_pkey PRIMARY KEY (id)
);

CREATE TABLE webhook_deliveries (
  id bigint NOT NULL DEFAULT nextval('webhook_deliveries_id_seq'::regclass),
  alert_id bigint,
  endpoint_id bigint NOT NULL,
  account_id uuid NOT NULL,
  status text NOT NULL DEFAULT 'pending'::text,
  attempts integer NOT NULL DEFAULT 0,
  round integer NOT NULL DEFAULT 0,
  next_attempt_at timestamp with time zone,
  delivered_at timestamp with time zone,
  created_at timestamp with time zone NOT NULL DEFAULT clock_timestamp(),
  notice_id bigint,
  CONSTRAINT webhook_deliveries_one_event CHECK ((alert_id IS NULL) <> (notice_id IS NULL)),
  CONSTRAINT webhook_deliveries_status_check CHECK (status = ANY (ARRAY['pending'::text, 'delivered'::text, 'failed'::text, 'unpaid'::text])),
  CONSTRAINT webhook_deliveries_alert_id_fkey FOREIGN KEY (alert_id) REFERENCES alerts(id) ON DELETE CASCADE,
  CONSTRAINT webhook_deliveries_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  CONSTRAINT webhook_deliveries_notice_id_fkey FOREIGN KEY (notice_id) REFERENCES account_notices(id) ON DELETE CASCADE,
  CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id),
  CONSTRAINT webhook_deliveries_alert_id_endpoint_id_key UNIQUE (alert_id, endpoint_id),
  CONSTRAINT webhook_deliveries_notice_id_endpoint_id_key UNIQUE (notice_id, endpoint_id)
);

CREATE TABLE webhook_endpoints (
  id bigint NOT NULL DEFAULT nextval('webhook_endpoints_id_seq'::regclass),
  account_id uuid NOT NULL,
  url text NOT NULL,
  secret text NOT NULL,
  previous_secret text,
  previous_until timestamp with time zone,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  rotated_at timestamp with time zone,
  CONSTRAINT webhook_endpoints_url_check CHECK (char_length(url) <= 2000),
  CONSTRAINT webhook_endpoints_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id) ON DELETE CASCADE,
  CONSTRAINT webhook_endpoints_pkey PRIMARY KEY (id),
  CONSTRAINT webhook_endpoints_account_id_url_key UNIQUE (account_id, url)
);

CREATE INDEX account_merges_target ON public.account_merges USING btree (target_account_id);
CREATE INDEX account_wallet_offers_expiry ON public.account_wallet_offers USING btree (expires_at);
CREATE INDEX accounts_renewal_due ON public.accounts USING btree (period_end) WHERE (period_end IS NOT NULL);
CREATE INDEX alert_rules_account ON public.alert_rules USING btree (account_id, created_at);
CREATE INDEX alert_rules_due ON public.alert_rules USING btree (next_evaluation_at) WHERE (status = 'active'::text);
CREATE INDEX alerts_account ON public.alerts USING btree (account_id, id);
CREATE INDEX api_keys_account ON public.api_keys USING btree (account_id);
CREATE INDEX api_keys_controlled ON public.api_keys USING btree (id) WHERE ((paused_at IS NOT NULL) OR (credit_cap IS NOT NULL) OR (rate_limit_per_minute IS NOT NULL));
CREATE INDEX audit_log_account ON public.audit_log USING btree (account_id, id DESC);
CREATE INDEX credit_ledger_account_time ON public.credit_ledger USING btree (account_id, created_at);
CREATE INDEX credit_ledger_unresolved ON public.credit_ledger USING btree (created_at) WHERE ((kind = 'reserve'::text) AND (resolved_at IS NULL));
CREATE INDEX dashboard_idempotency_created ON public.dashboard_idempotency USING btree (created_at);
CREATE INDEX dashboard_nonces_expiry ON public.dashboard_nonces USING btree (expires_at);
CREATE INDEX dashboard_sessions_account ON public.dashboard_sessions USING btree (account_id);
CREATE INDEX dashboard_sessions_expiry ON public.dashboard_sessions USING btree (expires_at);
CREATE INDEX dashboard_sign_in_attempts_client ON public.dashboard_sign_in_attempts USING btree (client, created_at);
CREATE INDEX forecast_log_asset ON public.forecast_log USING btree (asset_id, base_date);
CREATE INDEX oauth_artifacts_expiry ON public.oauth_artifacts USING btree (expires_at);
CREATE INDEX oauth_artifacts_grant ON public.oauth_artifacts USING btree (grant_id) WHERE (grant_id IS NOT NULL);
CREATE INDEX oauth_artifacts_uid ON public.oauth_artifacts USING btree (model, uid_hash) WHERE (uid_hash IS NOT NULL);
CREATE INDEX oauth_connections_account ON public.oauth_connections USING btree (account_id, created_at DESC);
CREATE INDEX payment_orders_account ON public.payment_orders USING btree (account_id, created_at);
CREATE INDEX payment_orders_submitted ON public.payment_orders USING btree (submitted_at) WHERE (status = 'submitted'::text);
CREATE INDEX payments_account ON public.payments USING btree (account_id, created_at) WHERE (account_id IS NOT NULL);
CREATE INDEX plan_schedule_account ON public.plan_schedule USING btree (account_id, starts_at);
CREATE INDEX request_log_created ON public.request_log USING btree (created_at);
CREATE INDEX request_log_request_id ON public.request_log USING btree (account_id, request_id);
CREATE INDEX request_log_daily_day ON public.request_log_daily USING btree (day);
CREATE INDEX tasks_account ON public.tasks USING btree (account_id, created_at DESC, id DESC);
CREATE INDEX tasks_expiry ON public.tasks USING btree (expires_at);
CREATE INDEX tasks_working ON public.tasks USING btree (heartbeat_at) WHERE (status = 'working'::text);
CREATE INDEX wallets_account ON public.wallets USING btree (account_id);
CREATE INDEX watches_account ON public.watches USING btree (account_id, created_at);
CREATE INDEX webhook_attempts_delivery ON public.webhook_attempts USING btree (delivery_id, attempt);
CREATE INDEX webhook_deliveries_endpoint ON public.webhook_deliveries USING btree (endpoint_id, id);

CREATE OR REPLACE FUNCTION public.account_create(p_plan text, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS uuid
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  pl plans%ROWTYPE;
  v_id uuid;
BEGIN
  SELECT * INTO pl FROM plans WHERE name = p_plan;
  IF NOT FOUND THEN RAISE EXCEPTION 'unknown plan %', p_plan USING ERRCODE = 'P0002'; END IF;
  INSERT INTO accounts (plan, balance, period_anchor, period_start, period_end, created_at, updated_at)
  VALUES (pl.name, pl.credits, v_now, v_now,
          CASE WHEN pl.renewal = 'monthly' THEN (period_bounds(v_now, v_now)).period_end END, v_now, v_now)
  RETURNING id INTO v_id;
  INSERT INTO credit_ledger (account_id, request_id, kind, delta, balance_after, note, created_at)
  VALUES (v_id, 'open:' || v_id, 'grant', pl.credits, pl.credits, 'opening allowance of plan ' || pl.name, v_now);
  RETURN v_id;
END $function$;

CREATE OR REPLACE FUNCTION public.account_grant(p_account uuid, p_amount integer, p_request_id text, p_note text DEFAULT NULL::text)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_old integer;
  v_new integer;
BEGIN
  SELECT balance INTO v_old FROM accounts WHERE id = p_account FOR UPDATE;
  IF NOT FOUND THEN RETURN NULL; END IF;
  v_new := greatest(0, v_old + p_amount);
  UPDATE accounts SET balance = v_new, topup = least(topup, v_new), updated_at = clock_timestamp() WHERE id = p_account;
  INSERT INTO credit_ledger (account_id, request_id, kind, delta, balance_after, note)
  VALUES (p_account, p_request_id, 'adjust', v_new - v_old, v_new, p_note);
  RETURN v_new;
END $function$;

CREATE OR REPLACE FUNCTION public.account_open(p_plan text, p_grant boolean, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS uuid
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  pl plans%ROWTYPE;
  v_id uuid;
  v_credits integer;
BEGIN
  SELECT * INTO pl FROM plans WHERE name = p_plan;
  IF NOT FOUND THEN RAISE EXCEPTION 'unknown plan %', p_plan USING ERRCODE = 'P0002'; END IF;
  v_credits := CASE WHEN p_grant THEN pl.credits ELSE 0 END;
  INSERT INTO accounts (plan, balance, period_anchor, period_start, period_end, created_at, updated_at)
  VALUES (pl.name, v_credits, v_now, v_now,
          CASE WHEN pl.renewal = 'monthly' THEN (period_bounds(v_now, v_now)).period_end END, v_now, v_now)
  RETURNING id INTO v_id;
  INSERT INTO credit_ledger (account_id, request_id, kind, delta, balance_after, note, created_at)
  VALUES (v_id, 'open:' || v_id, 'grant', v_credits, v_credits,
          CASE WHEN p_grant THEN 'opening allowance of plan ' || pl.name
               ELSE 'no opening allowance: this wallet had the free allowance before' END, v_now);
  RETURN v_id;
END $function$;

CREATE OR REPLACE FUNCTION public.account_renew_if_due(p_account uuid, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  acc accounts%ROWTYPE;
  pl plans%ROWTYPE;
  seg plan_schedule%ROWTYPE;
  b record;
  v_switched boolean := false;
BEGIN
  SELECT * INTO acc FROM accounts WHERE id = p_account FOR UPDATE;
  IF NOT FOUND THEN RETURN false; END IF;
  LOOP
    EXIT WHEN acc.paid_until IS NULL OR acc.paid_until > v_now;
    SELECT * INTO seg FROM plan_schedule s WHERE s.account_id = acc.id ORDER BY s.starts_at LIMIT 1;
    EXIT WHEN NOT FOUND;
    DELETE FROM plan_schedule WHERE id = seg.id;
    SELECT * INTO pl FROM plans WHERE name = seg.plan;
    b := period_bounds(seg.starts_at, greatest(seg.starts_at, least(v_now, seg.ends_at - interval '1 second')));
    UPDATE accounts
       SET plan = pl.name, balance = pl.credits + acc.topup, period_anchor = seg.starts_at, period_start = b.period_start,
           period_end = b.period_end, paid_until = seg.ends_at, updated_at = v_now
     WHERE id = acc.id;
    INSERT INTO credit_ledger (account_id, request_id, kind, delta, balance_after, note, created_at)
    VALUES (acc.id, 'scheduled:' || seg.id, 'plan_change', pl.credits + acc.topup - acc.balance, pl.credits + acc.topup,
            'paid plan ' || pl.name || ' starts where the paid time before it ended', v_now);
    SELECT * INTO acc FROM accounts WHERE id = p_account;
    v_switched := true;
  END LOOP;
  SELECT * INTO pl FROM plans WHERE name = acc.plan;
  IF acc.paid_until IS NOT NULL AND acc.paid_until <= v_now THEN
    UPDATE accounts
       SET plan = 'free', balance = acc.topup, period_anchor = acc.paid_until, period_start = acc.paid_until,
           period_end = NULL, paid_until = NULL, updated_at = v_now
     WHERE id = acc.id;
    INSERT INTO credit_ledger (account_id, request_id, kind, delta, balance_after, note, created_at)
    VALUES (acc.id, 'lapse:' || acc.id || ':' || to_char(acc.paid_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS'),
            'lapse', acc.topup - acc.balance, acc.topup, 'paid period of plan ' || acc.plan || ' ended unpaid: back to free, no new grant', v_now);
    RETURN true;
  END IF;
  IF v_switched THEN RETURN true; END IF;
  IF pl.renewal <> 'monthly' THEN RETURN false; END IF;
  b := period_bounds(acc.period_anchor, v_now);
  IF acc.period_end IS NULL THEN
    UPDATE accounts SET period_start = b.period_start, period_end = b.period_end WHERE id = acc.id;
    RETURN false;
  END IF;
  IF acc.period_end > v_now THEN RETURN false; END IF;
  UPDATE accounts
     SET balance = pl.credits + acc.topup, period_start = b.period_start, period_end = b.period_end, updated_at = v_now
   WHERE id = acc.id;
  INSERT INTO credit_ledger (account_id, request_id, kind, delta, balance_after, note, created_at)
  VALUES (acc.id, 'renewal:' || acc.id || ':' || to_char(b.period_start AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS'),
          'renewal', pl.credits + acc.topup - acc.balance, pl.credits + acc.topup, 'monthly renewal to the plan allowance', v_now);
  RETURN true;
END $function$;

CREATE OR REPLACE FUNCTION public.account_set_plan(p_account uuid, p_plan text, p_request_id text, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  acc accounts%ROWTYPE;
  pl plans%ROWTYPE;
BEGIN
  SELECT * INTO pl FROM plans WHERE name = p_plan;
  IF NOT FOUND THEN RAISE EXCEPTION 'unknown plan %', p_plan USING ERRCODE = 'P0002'; END IF;
  SELECT * INTO acc FROM accounts WHERE id = p_account FOR UPDATE;
  IF NOT FOUND THEN RETURN NULL; END IF;
  DELETE FROM plan_schedule WHERE account_id = p_account;
  UPDATE accounts
     SET plan = pl.name, balance = pl.credits + acc.topup, period_anchor = v_now, period_start = v_now,
         period_end = CASE WHEN pl.renewal = 'monthly' THEN (period_bounds(v_now, v_now)).period_end END,
         paid_until = NULL, updated_at = v_now
   WHERE id = p_account;
  INSERT INTO credit_ledger (account_id, request_id, kind, delta, balance_after, note, created_at)
  VALUES (p_account, p_request_id, 'plan_change', pl.credits + acc.topup - acc.balance, pl.credits + acc.topup,
          'plan changed to ' || pl.name, v_now);
  RETURN pl.credits + acc.topup;
END $function$;

CREATE OR REPLACE FUNCTION public.accounts_renew_due(p_now timestamp with time zone DEFAULT NULL::timestamp with time zone, p_limit integer DEFAULT 1000)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  r record;
  n integer := 0;
BEGIN
  FOR r IN
    SELECT a.id FROM accounts a JOIN plans p ON p.name = a.plan
     WHERE (p.renewal = 'monthly' AND a.period_end <= v_now) OR a.paid_until <= v_now
     ORDER BY least(a.period_end, a.paid_until) LIMIT p_limit
     FOR UPDATE OF a SKIP LOCKED
  LOOP
    IF account_renew_if_due(r.id, v_now) THEN n := n + 1; END IF;
  END LOOP;
  RETURN n;
END $function$;

CREATE OR REPLACE FUNCTION public.alert_delivery_charge(p_account uuid, p_request_id text, p_credits integer, p_server text)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
  acc accounts%ROWTYPE;
  v_new integer;
  v_topup integer;
BEGIN
  SELECT * INTO acc FROM accounts WHERE id = p_account FOR UPDATE;
  IF NOT FOUND THEN RETURN NULL; END IF;
  IF EXISTS (SELECT 1 FROM credit_ledger WHERE request_id = p_request_id AND kind = 'reserve') THEN RETURN acc.balance; END IF;
  v_new := greatest(0, acc.balance - p_credits);
  v_topup := least(acc.topup, v_new);
  UPDATE accounts SET balance = v_new, topup = v_topup, updated_at = clock_timestamp() WHERE id = p_account;
  INSERT INTO credit_ledger (account_id, request_id, kind, delta, balance_after, server, tool, note, topup_delta, resolved_at, resolution)
  VALUES (p_account, p_request_id, 'reserve', v_new - acc.balance, v_new, p_server, 'alert_delivery', 'alert delivered by webhook',
          nullif(v_topup - acc.topup, 0), clock_timestamp(), 'charged');
  RETURN v_new;
END $function$;

CREATE OR REPLACE FUNCTION public.alert_insert(p_rule uuid, p_event text, p_title text, p_data jsonb)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
  r alert_rules%ROWTYPE;
  v_id bigint;
  v_delivery bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('cryptomcp.alerts'));
  SELECT * INTO r FROM alert_rules WHERE id = p_rule;
  IF NOT FOUND THEN RETURN NULL; END IF;
  INSERT INTO alerts (account_id, rule_id, kind, event_id, title, data)
  VALUES (r.account_id, r.id, r.kind, p_event, p_title, p_data)
  ON CONFLICT (rule_id, event_id) DO NOTHING
  RETURNING id INTO v_id;
  IF v_id IS NULL THEN RETURN NULL; END IF;
  UPDATE alert_rules SET fired = fired + 1, last_fired_at = clock_timestamp() WHERE id = r.id;
  IF r.webhook_id IS NOT NULL THEN
    INSERT INTO webhook_deliveries (alert_id, endpoint_id, account_id, next_attempt_at)
    VALUES (v_id, r.webhook_id, r.account_id, clock_timestamp())
    RETURNING id INTO v_delivery;
    PERFORM graphile_worker.add_job('webhook_deliver', json_build_object('delivery', v_delivery, 'attempt', 1),
                                    job_key => 'webhook:' || v_delivery, max_attempts => 3);
  END IF;
  PERFORM pg_notify('alerts', r.account_id || ':' || v_id);
  RETURN v_id;
END $function$;

CREATE OR REPLACE FUNCTION public.key_cap_window(p_period text, p_at timestamp with time zone)
 RETURNS timestamp with time zone
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT date_trunc(CASE WHEN p_period = 'day' THEN 'day' ELSE 'month' END, p_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
$function$;

CREATE OR REPLACE FUNCTION public.meter_async_commit()
 RETURNS void
 LANGUAGE sql
AS $function$
  SELECT set_config('synchronous_commit', 'off', true);
$function$;

CREATE OR REPLACE FUNCTION public.meter_refund(p_request_id text, p_note text DEFAULT NULL::text)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
  r credit_ledger%ROWTYPE;
  v_balance integer;
BEGIN
  UPDATE credit_ledger
     SET resolved_at = clock_timestamp(), resolution = 'refunded'
   WHERE request_id = p_request_id AND kind = 'reserve' AND resolved_at IS NULL
  RETURNING * INTO r;
  IF NOT FOUND THEN RETURN NULL; END IF;
  UPDATE accounts SET balance = accounts.balance - r.delta, topup = accounts.topup - coalesce(r.topup_delta, 0),
         updated_at = clock_timestamp()
   WHERE id = r.account_id RETURNING accounts.balance INTO v_balance;
  -- Under the account's lock just taken, like every other writer of cap_spent.
  UPDATE api_keys SET cap_spent = greatest(0, cap_spent + r.delta)
   WHERE id = r.key_id AND credit_cap IS NOT NULL AND cap_window IS NOT NULL AND r.created_at >= cap_window;
  INSERT INTO credit_ledger (account_id, request_id, kind, delta, balance_after, server, tool, key_id, note)
  VALUES (r.account_id, p_request_id, 'refund', -r.delta, v_balance, r.server, r.tool, r.key_id, p_note);
  RETURN v_balance;
END $function$;

CREATE OR REPLACE FUNCTION public.meter_refund_stale(p_older_than interval, p_limit integer DEFAULT 1000)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
  r record;
  n integer := 0;
BEGIN
  FOR r IN
    SELECT request_id FROM credit_ledger
     WHERE kind = 'reserve' AND resolved_at IS NULL
       AND coalesce(stale_at, created_at + p_older_than) < clock_timestamp()
     ORDER BY created_at LIMIT p_limit
  LOOP
    IF meter_refund(r.request_id, 'stale reservation: no answer was recorded') IS NOT NULL THEN
      n := n + 1;
    END IF;
  END LOOP;
  RETURN n;
END $function$;

CREATE OR REPLACE FUNCTION public.meter_reserve(p_account uuid, p_request_id text, p_cost integer, p_record boolean, p_server text, p_tool text, p_key uuid, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS TABLE(outcome text, balance integer, plan text, requests_per_minute integer, burst integer, rl_remaining integer, rl_reset_seconds double precision, retry_after_seconds double precision)
 LANGUAGE sql
AS $function$
  SELECT m.outcome, m.balance, m.plan, m.requests_per_minute, m.burst, m.rl_remaining, m.rl_reset_seconds, m.retry_after_seconds
    FROM meter_reserve_many(ARRAY[p_account], ARRAY[p_request_id], ARRAY[p_cost], ARRAY[p_record],
                            ARRAY[p_server], ARRAY[p_tool], ARRAY[p_key], p_now) AS m;
$function$;

CREATE OR REPLACE FUNCTION public.meter_reserve_batch(p_accounts uuid[], p_request_ids text[], p_costs integer[], p_records boolean[], p_servers text[], p_tools text[], p_keys uuid[], p_now timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS TABLE(idx integer, outcome text, balance integer, plan text, requests_per_minute integer, burst integer, rl_remaining integer, rl_reset_seconds double precision, retry_after_seconds double precision, renewed boolean, key_cap integer, key_spent integer, key_cap_period text, key_rate_limit integer)
 LANGUAGE sql
AS $function$
  SELECT * FROM meter_reserve_batch(p_accounts, p_request_ids, p_costs, p_records, p_servers, p_tools, p_keys, p_now, NULL::interval);
$function$;

CREATE OR REPLACE FUNCTION public.meter_reserve_batch(p_accounts uuid[], p_request_ids text[], p_costs integer[], p_records boolean[], p_servers text[], p_tools text[], p_keys uuid[], p_now timestamp with time zone, p_stale_after interval)
 RETURNS TABLE(idx integer, outcome text, balance integer, plan text, requests_per_minute integer, burst integer, rl_remaining integer, rl_reset_seconds double precision, retry_after_seconds double precision, renewed boolean, key_cap integer, key_spent integer, key_cap_period text, key_rate_limit integer)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
DECLARE
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  n integer := coalesce(array_length(p_accounts, 1), 0);
  a_id uuid[]; a_balance integer[]; a_tat timestamptz[]; a_status text[]; a_plan text[];
  a_rpm integer[]; a_burst integer[]; a_renewal text[]; a_period_end timestamptz[]; a_paid_until timestamptz[];
  a_topup integer[]; a_changed boolean[]; a_renewed boolean[];
  -- The keys with a control (pause, cap, rate limit), read after the accounts are locked.
  c_id uuid[]; c_paused boolean[]; c_cap integer[]; c_period text[]; c_spent integer[]; c_window timestamptz[];
  c_rpm integer[]; c_tat timestamptz[]; c_changed boolean[];
  c integer;
  v_key_tat timestamptz;
  v_key_ahead double precision;
  v_replayed text[];
  l_account uuid[] := '{}'; l_request text[] := '{}'; l_delta integer[] := '{}'; l_balance integer[] := '{}';
  l_server text[] := '{}'; l_tool text[] := '{}'; l_key uuid[] := '{}'; l_topup integer[] := '{}';
  v_topup integer;
  k integer;
  v_cost integer;
  v_interval double precision;
  v_tolerance double precision;
  v_new_tat timestamptz;
  v_ahead double precision;
  r record;
BEGIN
  PERFORM meter_async_commit();
  IF n = 0 THEN RETURN; END IF;

  SELECT array_agg(s.id ORDER BY s.id), array_agg(s.balance ORDER BY s.id), array_agg(s.rl_tat ORDER BY s.id),
         array_agg(s.status ORDER BY s.id), array_agg(s.plan ORDER BY s.id), array_agg(s.rpm ORDER BY s.id),
         array_agg(s.plan_burst ORDER BY s.id), array_agg(s.renewal ORDER BY s.id), array_agg(s.period_end ORDER BY s.id),
         array_agg(s.paid_until ORDER BY s.id), array_agg(s.topup ORDER BY s.id)
    INTO a_id, a_balance, a_tat, a_status, a_plan, a_rpm, a_burst, a_renewal, a_period_end, a_paid_until, a_topup
    FROM (SELECT a.id, a.balance, a.rl_tat, a.status, a.plan, a.period_end, a.paid_until, a.topup,
                 p.requests_per_minute AS rpm, p.burst AS plan_burst, p.renewal
            FROM accounts a JOIN plans p ON p.name = a.plan
           WHERE a.id = ANY (p_accounts)
           ORDER BY a.id
             FOR UPDATE OF a) AS s;
  -- The database's clock is read again once the accounts are locked: a statement that waited for
  -- another's locks would otherwise measure the rate against a time before that one's, and see
  -- the other's calls as ahead of it by the wait (the tenth call of a burst of ten refused).
  IF p_now IS NULL THEN v_now := clock_timestamp(); END IF;
  a_changed := array_fill(false, ARRAY[coalesce(array_length(a_id, 1), 0)]);
  a_renewed := array_fill(false, ARRAY[coalesce(array_length(a_id, 1), 0)]);

  -- Read under the accounts' locks: every writer of cap_spent and rl_tat holds the key's account
  -- lock, and a pause committed before this statement took the locks is seen here.
  -- Locked in id order, as keyTouchMany locks them: the two never deadlock.
  SELECT array_agg(s.id), array_agg(s.paused_at IS NOT NULL), array_agg(s.credit_cap), array_agg(s.cap_period),
         array_agg(CASE WHEN s.cap_window IS NOT DISTINCT FROM key_cap_window(s.cap_period, v_now) THEN s.cap_spent ELSE 0 END),
         array_agg(key_cap_window(s.cap_period, v_now)), array_agg(s.rate_limit_per_minute), array_agg(s.rl_tat)
    INTO c_id, c_paused, c_cap, c_period, c_spent, c_window, c_rpm, c_tat
    FROM (SELECT k2.id, k2.paused_at, k2.credit_cap, k2.cap_period, k2.cap_spent, k2.cap_window, k2.rate_limit_per_minute, k2.rl_tat
            FROM api_keys k2
           WHERE k2.id = ANY (p_keys)
             AND (k2.paused_at IS NOT NULL OR k2.credit_cap IS NOT NULL OR k2.rate_limit_per_minute IS NOT NULL)
           ORDER BY k2.id
             FOR UPDATE OF k2) AS s;
  c_changed := array_fill(false, ARRAY[coalesce(array_length(c_id, 1), 0)]);

  -- Lazy renewal (rare): monthly accounts whose period ended, and paid plans whose paid time ran out.
  FOR k IN 1 .. coalesce(array_length(a_id, 1), 0) LOOP
    IF (a_renewal[k] = 'monthly' AND (a_period_end[k] IS NULL OR a_period_end[k] <= v_now))
       OR a_paid_until[k] <= v_now THEN
      a_renewed[k] := account_renew_if_due(a_id[k], v_now);
      -- A lapse changes the plan too (to free), and with it the rate limit.
      SELECT a.balance, a.topup, a.plan, p.requests_per_minute, p.burst INTO r
        FROM accounts a JOIN plans p ON p.name = a.plan WHERE a.id = a_id[k];
      a_balance[k] := r.balance; a_topup[k] := r.topup; a_plan[k] := r.plan; a_rpm[k] := r.requests_per_minute; a_burst[k] := r.burst;
    END IF;
  END LOOP;

  SELECT array_agg(l.request_id) INTO v_replayed
    FROM credit_ledger l WHERE l.kind = 'reserve' AND l.request_id = ANY (p_request_ids);

  FOR i IN 1 .. n LOOP
    idx := i; outcome := NULL; balance := NULL; plan := NULL; requests_per_minute := NULL; burst := NULL;
    rl_remaining := NULL; rl_reset_seconds := NULL; retry_after_seconds := NULL; renewed := false;
    IF c_id IS NOT NULL THEN
      key_cap := NULL; key_spent := NULL; key_cap_period := NULL; key_rate_limit := NULL;
    END IF;
    v_cost := p_costs[i];
    IF v_cost < 0 THEN RAISE EXCEPTION 'cost must be >= 0, got %', v_cost; END IF;
    k := array_position(a_id, p_accounts[i]);
    IF k IS NULL THEN
      outcome := 'account_not_found'; RETURN NEXT; CONTINUE;
    END IF;
    plan := a_plan[k]; requests_per_minute := a_rpm[k]; burst := a_burst[k]; balance := a_balance[k];
    renewed := a_renewed[k]; a_renewed[k] := false;
    IF p_records[i] AND p_request_ids[i] = ANY (v_replayed) THEN
      outcome := 'replayed'; RETURN NEXT; CONTINUE;
    END IF;
    IF a_status[k] <> 'active' THEN
      outcome := 'suspended'; RETURN NEXT; CONTINUE;
    END IF;

    -- Most statements hold no controlled key (c_id is NULL): they pay one test per call here.
    c := NULL;
    IF c_id IS NOT NULL THEN
      v_key_tat := NULL;
      c := array_position(c_id, p_keys[i]);
    END IF;
    IF c IS NOT NULL THEN
      key_cap := c_cap[c]; key_spent := c_spent[c]; key_cap_period := c_period[c]; key_rate_limit := c_rpm[c];
      IF c_paused[c] THEN
        outcome := 'key_paused'; RETURN NEXT; CONTINUE;
      END IF;
      IF c_cap[c] IS NOT NULL AND c_spent[c] + v_cost > c_cap[c] THEN
        outcome := 'key_cap_reached'; RETURN NEXT; CONTINUE;
      END IF;
      IF c_rpm[c] IS NOT NULL THEN
        -- A minute's worth at once, then one per 60/limit seconds.
        v_key_tat := greatest(c_tat[c], v_now) + make_interval(secs => 60.0 / c_rpm[c]);
        v_key_ahead := extract(epoch FROM v_key_tat - v_now);
        IF v_key_ahead > 60.0 + 1e-6 THEN
          outcome := 'key_rate_limited';
          rl_remaining := 0;
          retry_after_seconds := v_key_ahead - 60.0;
          rl_reset_seconds := v_key_ahead - 60.0 / c_rpm[c];
          RETURN NEXT; CONTINUE;
        END IF;
      END IF;
    END IF;

    v_interval := 60.0 / a_rpm[k];
    v_tolerance := v_interval * a_burst[k];
    v_new_tat := greatest(a_tat[k], v_now) + make_interval(secs => v_interval);
    v_ahead := extract(epoch FROM v_new_tat - v_now);
    IF v_ahead > v_tolerance + 1e-6 THEN
      outcome := 'rate_limited';
      rl_remaining := 0;
      retry_after_seconds := v_ahead - v_tolerance;
      rl_reset_seconds := v_ahead - v_interval;
      RETURN NEXT; CONTINUE;
    END IF;
    rl_remaining := floor((v_tolerance - v_ahead) / v_interval + 1e-6)::integer;
    rl_reset_seconds := v_ahead;
    a_tat[k] := v_new_tat;
    a_changed[k] := true;
    IF v_key_tat IS NOT NULL THEN
      c_tat[c] := v_key_tat; c_changed[c] := true;
    END IF;

    IF a_balance[k] < v_cost THEN
      outcome := 'insufficient_credits';
    ELSE
      outcome := 'ok';
      a_balance[k] := a_balance[k] - v_cost;
      -- The allowance is spent first: top-up credits go only once the balance falls below them.
      v_topup := least(a_topup[k], a_balance[k]);
      IF p_records[i] THEN
        l_account := l_account || a_id[k]; l_request := l_request || p_request_ids[i];
        l_delta := l_delta || -v_cost; l_balance := l_balance || a_balance[k];
        l_server := l_server || p_servers[i]; l_tool := l_tool || p_tools[i]; l_key := l_key || p_keys[i];
        l_topup := l_topup || (v_topup - a_topup[k]);
        IF c IS NOT NULL AND c_cap[c] IS NOT NULL THEN
          c_spent[c] := c_spent[c] + v_cost; c_changed[c] := true;
          key_spent := c_spent[c];
        END IF;
      END IF;
      a_topup[k] := v_topup;
    END IF;
    balance := a_balance[k];
    RETURN NEXT;
  END LOOP;

  UPDATE accounts a SET balance = u.balance, topup = u.topup, rl_tat = u.tat, updated_at = v_now
    FROM unnest(a_id, a_balance, a_topup, a_tat, a_changed) AS u(id, balance, topup, tat, changed)
   WHERE a.id = u.id AND u.changed;
  IF true = ANY (c_changed) THEN
    UPDATE api_keys k2 SET cap_spent = u.spent, cap_window = CASE WHEN k2.credit_cap IS NULL THEN k2.cap_window ELSE u.win END,
           rl_tat = coalesce(u.tat, k2.rl_tat)
      FROM unnest(c_id, c_spent, c_window, c_tat, c_changed) AS u(id, spent, win, tat, changed)
     WHERE k2.id = u.id AND u.changed;
  END IF;
  INSERT INTO credit_ledger (account_id, request_id, kind, delta, balance_after, server, tool, key_id, topup_delta, created_at, stale_at)
  SELECT u.account_id, u.request_id, 'reserve', u.delta, u.balance_after, u.server, u.tool, u.key_id, nullif(u.topup_delta, 0), v_now,
         v_now + p_stale_after
    FROM unnest(l_account, l_request, l_delta, l_balance, l_server, l_tool, l_key, l_topup)
      AS u(account_id, request_id, delta, balance_after, server, tool, key_id, topup_delta);
END $function$;

CREATE OR REPLACE FUNCTION public.meter_reserve_many(p_accounts uuid[], p_request_ids text[], p_costs integer[], p_records boolean[], p_servers text[], p_tools text[], p_keys uuid[], p_now timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS TABLE(idx integer, outcome text, balance integer, plan text, requests_per_minute integer, burst integer, rl_remaining integer, rl_reset_seconds double precision, retry_after_seconds double precision)
 LANGUAGE sql
AS $function$
  SELECT b.idx, b.outcome, b.balance, b.plan, b.requests_per_minute, b.burst, b.rl_remaining, b.rl_reset_seconds, b.retry_after_seconds
    FROM meter_reserve_batch(p_accounts, p_request_ids, p_costs, p_records, p_servers, p_tools, p_keys, p_now) AS b;
$function$;

CREATE OR REPLACE FUNCTION public.meter_settle(p_request_ids text[])
 RETURNS integer
 LANGUAGE sql
AS $function$
  SELECT meter_async_commit();
  WITH settled AS (
    UPDATE credit_ledger SET resolved_at = clock_timestamp(), resolution = 'charged'
     WHERE kind = 'reserve' AND resolved_at IS NULL AND request_id = ANY (p_request_ids)
    RETURNING 1)
  SELECT count(*)::integer FROM settled;
$function$;

CREATE OR REPLACE FUNCTION public.meter_settle_part(p_request_id text, p_credits integer, p_note text)
 RETURNS integer
 LANGUAGE sql
AS $function$
  WITH r AS (
    UPDATE credit_ledger SET resolved_at = clock_timestamp(), resolution = 'charged'
     WHERE request_id = p_request_id AND kind = 'reserve' AND resolved_at IS NULL
    RETURNING account_id, server, tool, key_id, greatest(0, -delta - p_credits) AS back,
              least(greatest(0, -delta - p_credits), -coalesce(topup_delta, 0)) AS topup_back
  ), a AS (
    UPDATE accounts SET balance = accounts.balance + r.back, topup = accounts.topup + r.topup_back, updated_at = clock_timestamp()
      FROM r WHERE accounts.id = r.account_id AND r.back > 0
    RETURNING accounts.balance
  )
  INSERT INTO credit_ledger (account_id, request_id, kind, delta, balance_after, server, tool, key_id, note)
  SELECT r.account_id, p_request_id, 'refund', r.back, a.balance, r.server, r.tool, r.key_id, p_note FROM r, a
  RETURNING balance_after;
$function$;

CREATE OR REPLACE FUNCTION public.order_credit(p_order uuid, p_tx_hash text, p_payer text, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS TABLE(outcome text, balance integer, plan text, paid_until timestamp with time zone)
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  o payment_orders%ROWTYPE;
  acc accounts%ROWTYPE;
  pl plans%ROWTYPE;
  r record;
  v_account uuid;
  v_balance integer;
  v_paid_until timestamptz;
  v_note text;
BEGIN
  SELECT po.account_id INTO v_account FROM payment_orders po WHERE po.id = p_order;
  IF NOT FOUND THEN outcome := 'order_not_found'; RETURN NEXT; RETURN; END IF;
  PERFORM 1 FROM accounts a WHERE a.id = v_account FOR UPDATE;
  SELECT * INTO o FROM payment_orders WHERE id = p_order FOR UPDATE;
  IF o.account_id <> v_account THEN
    -- Moved by a merge while this waited for the lock: credit it where it is now.
    PERFORM 1 FROM accounts a WHERE a.id = o.account_id FOR UPDATE;
  END IF;
  IF o.status = 'paid' THEN
    outcome := CASE WHEN o.tx_hash = p_tx_hash THEN 'already_credited' ELSE 'order_not_pending' END;
    RETURN NEXT; RETURN;
  END IF;
  INSERT INTO payments (kind, account_id, order_id, chain, tx_hash, payer, token, amount, decimals, usd_micros, item, credits, created_at)
  VALUES (o.kind, o.account_id, o.id, o.chain, p_tx_hash, p_payer, o.token, o.amount, o.decimals, o.price_cents::bigint * 10000, o.item, o.credits, v_now)
  ON CONFLICT (chain, tx_hash) DO NOTHING;
  IF NOT FOUND THEN outcome := 'already_credited'; RETURN NEXT; RETURN; END IF;
  UPDATE payment_orders SET status = 'paid', tx_hash = p_tx_hash, paid_at = v_now, last_error = NULL WHERE id = o.id;

  IF o.kind = 'plan' THEN PERFORM account_renew_if_due(o.account_id, v_now); END IF;
  SELECT * INTO acc FROM accounts WHERE id = o.account_id;
  IF o.kind = 'pack' THEN
    v_balance := acc.balance + o.credits;
    UPDATE accounts SET balance = v_balance, topup = acc.topup + o.credits, updated_at = v_now WHERE id = acc.id;
    v_paid_until := acc.paid_until;
    v_note := 'credit pack ' || o.item || ': ' || o.credits || ' top-up credits';
  ELSE
    SELECT * INTO pl FROM plans WHERE name = o.item;
    SELECT * INTO r FROM plan_purchase_rule(acc.id, o.item, v_now);
    v_balance := acc.balance;
    v_paid_until := acc.paid_until;
    IF r.rule = 'starts_now' THEN
      v_paid_until := r.ends_at;
      v_balance := pl.credits + acc.topup;
      UPDATE accounts
         SET plan = pl.name, balance = v_balance, period_anchor = v_now, period_start = v_now,
             period_end = v_paid_until, paid_until = v_paid_until, updated_at = v_now
       WHERE id = acc.id;
      v_note := 'plan ' || o.item || ' bought: a new period with its full allowance';
    ELSIF r.rule = 'extends' AND r.segment_id IS NULL THEN
      v_paid_until := r.ends_at;
      UPDATE accounts SET paid_until = v_paid_until, updated_at = v_now WHERE id = acc.id;
      v_note := 'plan ' || o.item || ' extended by one month';
    ELSIF r.rule = 'extends' THEN
      UPDATE plan_schedule SET ends_at = r.ends_at WHERE id = r.segment_id;
      v_note := 'plan ' || o.item || ' (scheduled) extended by one month, to ' || to_char(r.ends_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"');
    ELSE
      INSERT INTO plan_schedule (account_id, plan, starts_at, ends_at, order_id) VALUES (acc.id, o.item, r.starts_at, r.ends_at, o.id);
      v_note := 'plan ' || o.item || ' scheduled from ' || to_char(r.starts_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
                || ', when the paid time before it ends';
    END IF;
  END IF;
  INSERT INTO credit_ledger (account_id, request_id, kind, delta, balance_after, note, chain, tx_hash, created_at)
  VALUES (acc.id, 'order:' || o.id, 'purchase', v_balance - acc.balance, v_balance, v_note, o.chain, p_tx_hash, v_now);
  outcome := 'credited'; balance := v_balance;
  plan := (SELECT a.plan FROM accounts a WHERE a.id = acc.id);
  paid_until := v_paid_until;
  RETURN NEXT;
END $function$;

CREATE OR REPLACE FUNCTION public.period_bounds(p_anchor timestamp with time zone, p_now timestamp with time zone, OUT period_start timestamp with time zone, OUT period_end timestamp with time zone)
 RETURNS record
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
DECLARE
  a timestamp := p_anchor AT TIME ZONE 'UTC';
  n timestamp := p_now AT TIME ZONE 'UTC';
  k integer := greatest(1, (extract(year FROM n)::int - extract(year FROM a)::int) * 12
                         + (extract(month FROM n)::int - extract(month FROM a)::int));
BEGIN
  WHILE a + make_interval(months => k) <= n LOOP k := k + 1; END LOOP;
  WHILE k > 1 AND a + make_interval(months => k - 1) > n LOOP k := k - 1; END LOOP;
  period_start := (a + make_interval(months => k - 1)) AT TIME ZONE 'UTC';
  period_end := (a + make_interval(months => k)) AT TIME ZONE 'UTC';
END $function$;

CREATE OR REPLACE FUNCTION public.plan_purchase_rule(p_account uuid, p_plan text, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS TABLE(rule text, starts_at timestamp with time zone, ends_at timestamp with time zone, segment_id bigint)
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  acc accounts%ROWTYPE;
  seg plan_schedule%ROWTYPE;
BEGIN
  SELECT * INTO acc FROM accounts WHERE id = p_account;
  IF NOT FOUND THEN RETURN; END IF;
  IF acc.paid_until IS NULL OR acc.paid_until <= v_now THEN
    rule := 'starts_now'; starts_at := v_now; ends_at := (period_bounds(v_now, v_now)).period_end; segment_id := NULL;
    RETURN NEXT; RETURN;
  END IF;
  SELECT * INTO seg FROM plan_schedule s WHERE s.account_id = acc.id ORDER BY s.starts_at DESC LIMIT 1;
  IF NOT FOUND THEN
    IF acc.plan = p_plan THEN
      rule := 'extends'; starts_at := acc.paid_until; ends_at := (period_bounds(acc.period_anchor, acc.paid_until)).period_end; segment_id := NULL;
    ELSE
      rule := 'scheduled'; starts_at := acc.paid_until; ends_at := (period_bounds(acc.paid_until, acc.paid_until)).period_end; segment_id := NULL;
    END IF;
  ELSIF seg.plan = p_plan THEN
    rule := 'extends'; starts_at := seg.ends_at; ends_at := (period_bounds(seg.starts_at, seg.ends_at)).period_end; segment_id := seg.id;
  ELSE
    rule := 'scheduled'; starts_at := seg.ends_at; ends_at := (period_bounds(seg.ends_at, seg.ends_at)).period_end; segment_id := NULL;
  END IF;
  RETURN NEXT;
END $function$;

CREATE OR REPLACE FUNCTION public.task_cancel(p_id uuid, p_account uuid)
 RETURNS TABLE(status text, cancelled boolean)
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_request text;
BEGIN
  UPDATE tasks t SET status = 'cancelled', status_message = 'Cancelled by the client.', updated_at = clock_timestamp()
   WHERE t.id = p_id AND t.account_id = p_account AND t.status = 'working' AND t.expires_at > clock_timestamp()
  RETURNING t.request_id INTO v_request;
  IF FOUND THEN
    PERFORM meter_refund(v_request, 'task cancelled');
    status := 'cancelled'; cancelled := true;
    RETURN NEXT;
    RETURN;
  END IF;
  RETURN QUERY SELECT t.status, false FROM tasks t WHERE t.id = p_id AND t.account_id = p_account AND t.expires_at > clock_timestamp();
END $function$;

CREATE OR REPLACE FUNCTION public.task_fail_orphans(p_after interval, p_limit integer DEFAULT 1000)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
  r record;
  n integer := 0;
BEGIN
  FOR r IN
    SELECT id FROM tasks WHERE status = 'working' AND heartbeat_at < clock_timestamp() - p_after
     ORDER BY heartbeat_at LIMIT p_limit FOR UPDATE SKIP LOCKED
  LOOP
    IF task_finish(r.id, 'failed', NULL, '{"code": -32603, "message": "The replica running this task stopped before it finished."}'::jsonb,
                   'The replica running this task stopped before it finished; its credits were refunded.', false) THEN
      n := n + 1;
    END IF;
  END LOOP;
  RETURN n;
END $function$;

CREATE OR REPLACE FUNCTION public.task_finish(p_id uuid, p_status text, p_result jsonb, p_error jsonb, p_message text, p_charge boolean, p_part integer DEFAULT NULL::integer, p_part_note text DEFAULT NULL::text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_request text;
BEGIN
  IF p_status NOT IN ('completed', 'failed') THEN RAISE EXCEPTION 'task_finish: status must be completed or failed, got %', p_status; END IF;
  UPDATE tasks SET status = p_status, result = p_result, error = p_error, status_message = p_message, updated_at = clock_timestamp()
   WHERE id = p_id AND status = 'working'
  RETURNING request_id INTO v_request;
  IF NOT FOUND THEN RETURN false; END IF;
  IF p_charge AND p_part IS NOT NULL THEN
    PERFORM meter_settle_part(v_request, p_part, p_part_note);
  ELSIF p_charge THEN
    PERFORM meter_settle(ARRAY[v_request]);
  ELSE
    PERFORM meter_refund(v_request, 'task ' || p_status || coalesce(': ' || p_message, ''));
  END IF;
  RETURN true;
END $function$;

CREATE OR REPLACE FUNCTION public.wallets_share_free_grant(p_account uuid)
 RETURNS void
 LANGUAGE sql
AS $function$
  INSERT INTO wallet_free_grants (family, address, chain, account_id, credits)
  SELECT w.family, w.address, CASE WHEN w.contract THEN w.chain ELSE '' END, p_account, 0
    FROM wallets w
   WHERE w.account_id = p_account AND EXISTS (SELECT 1 FROM wallet_free_grants g WHERE g.account_id = p_account)
  ON CONFLICT DO NOTHING
$function$;
