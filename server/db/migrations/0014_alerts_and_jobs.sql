-- Alerts that come to the agent (issue 33): account-owned rules, the alert feed they fire into,
-- webhook endpoints with their secrets, and the delivery log. The job queue itself
-- (graphile-worker's own schema, graphile_worker) is installed by the same migrate command
-- right after these files (server/db/migrate.ts), under the same advisory lock.

-- Where an account's alerts are POSTed, signed per Standard Webhooks with the endpoint's secret.
-- Rotation keeps the previous secret until previous_until, and deliveries meanwhile carry a
-- signature by each, so a receiver that has not switched yet still verifies them.
CREATE TABLE webhook_endpoints (
  id              bigserial PRIMARY KEY,
  account_id      uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  url             text NOT NULL CHECK (char_length(url) <= 2000),
  secret          text NOT NULL,
  previous_secret text,
  previous_until  timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  rotated_at      timestamptz,
  UNIQUE (account_id, url)
);

-- A rule: what to watch (kind + params, checked by the tool that created it), where it stands
-- (state: marks, the last price, the side of a level), and when it is next evaluated.
CREATE TABLE alert_rules (
  id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id         uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  kind               text NOT NULL CHECK (kind IN ('price', 'whale', 'social')),
  server             text NOT NULL,
  params             jsonb NOT NULL,
  state              jsonb NOT NULL DEFAULT '{}',
  status             text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused')),
  webhook_id         bigint REFERENCES webhook_endpoints (id) ON DELETE SET NULL,
  note               text CHECK (char_length(note) <= 200),
  created_at         timestamptz NOT NULL DEFAULT now(),
  next_evaluation_at timestamptz NOT NULL DEFAULT now(),
  last_evaluated_at  timestamptz,
  last_error         text,
  fired              integer NOT NULL DEFAULT 0,
  last_fired_at      timestamptz
);
CREATE INDEX alert_rules_account ON alert_rules (account_id, created_at);
CREATE INDEX alert_rules_due ON alert_rules (next_evaluation_at) WHERE status = 'active';

-- The alert feed. id is the cursor get_alerts pages by: alert_insert takes a transaction-scoped
-- advisory lock before drawing it, so ids become visible in increasing order and a reader that
-- saw id n never misses a later commit with a smaller id. (rule_id, event_id) is the idempotency
-- id: two replicas evaluating the same rule store the alert once.
CREATE TABLE alerts (
  id          bigserial PRIMARY KEY,
  account_id  uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  rule_id     uuid REFERENCES alert_rules (id) ON DELETE SET NULL,
  kind        text NOT NULL,
  event_id    text NOT NULL,
  title       text NOT NULL,
  data        jsonb NOT NULL,
  fired_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (rule_id, event_id)
);
CREATE INDEX alerts_account ON alerts (account_id, id);

-- One delivery of one alert to one endpoint; attempts are logged below it.
CREATE TABLE webhook_deliveries (
  id              bigserial PRIMARY KEY,
  alert_id        bigint NOT NULL REFERENCES alerts (id) ON DELETE CASCADE,
  endpoint_id     bigint NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  account_id      uuid NOT NULL,
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed', 'unpaid')),
  attempts        integer NOT NULL DEFAULT 0,
  -- Each redelivery starts a new round; a job of an earlier round (still under way when the
  -- redelivery was asked for) neither sends again nor writes the delivery's outcome.
  round           integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  delivered_at    timestamptz,
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (alert_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id);

CREATE TABLE webhook_attempts (
  id            bigserial PRIMARY KEY,
  delivery_id   bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempt       integer NOT NULL,
  started_at    timestamptz NOT NULL,
  duration_ms   integer NOT NULL,
  outcome       text NOT NULL CHECK (outcome IN ('ok', 'http_error', 'network_error', 'timeout', 'refused_address')),
  status_code   integer,
  error         text CHECK (char_length(error) <= 500)
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, attempt);

-- Stores an alert once and, in the same transaction, a delivery row per webhook endpoint of its
-- rule, each with its first delivery job queued (graphile-worker's add_job, so the job exists
-- if and only if the alert committed); returns the new alert's id, or NULL when (rule, event)
-- was already stored. Every new alert is announced on the 'alerts' channel (account id and
-- alert id), for listeners.
CREATE FUNCTION alert_insert(p_rule uuid, p_event text, p_title text, p_data jsonb)
RETURNS bigint LANGUAGE plpgsql AS $$
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
END $$;

-- Charges a delivered alert once (the request id names the delivery; a second call is a no-op),
-- from the plan allowance first and then top-up credits, never below zero. The ledger row is a
-- resolved 'reserve' of tool 'alert_delivery', so get_usage counts it like a call.
CREATE FUNCTION alert_delivery_charge(p_account uuid, p_request_id text, p_credits integer, p_server text)
RETURNS integer LANGUAGE plpgsql AS $$
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
END $$;
