-- Key controls (issue 36 item 3): a key can be paused, capped (credits per UTC day or month) and
-- rate-limited on its own, and made read-only; and every dashboard action is written to an audit log.
--
-- Pause, cap and key rate limit are enforced in meter_reserve_batch, under the account's row lock
-- that every reservation of the key already takes: a pause or a cap change committed on one replica
-- is seen by the next reservation on every replica (the gateway's key cache is never asked), and N
-- calls racing for the last credits of a cap are serialised by that lock (zero overspend). The
-- per-key limit is a GCRA like the plan's, its theoretical arrival time on the key row.
--
-- The key's spend is counted (cap_spent, for the period starting at cap_window) only while it has a
-- cap: setting a cap starts from what the key spent in the period so far (server/keys/store.ts,
-- under the same lock); meter_refund gives a refunded call back to it.
--
-- read_only is checked by the gateway on the cached grant (a write tool is 403 KEY_SCOPE_FORBIDDEN);
-- like a change of servers, it reaches other replicas within the key cache's TTL.

ALTER TABLE api_keys
  ADD COLUMN paused_at timestamptz,
  ADD COLUMN read_only boolean NOT NULL DEFAULT false,
  ADD COLUMN credit_cap integer CHECK (credit_cap > 0),
  ADD COLUMN cap_period text NOT NULL DEFAULT 'month' CHECK (cap_period IN ('day', 'month')),
  ADD COLUMN cap_spent integer NOT NULL DEFAULT 0 CHECK (cap_spent >= 0),
  ADD COLUMN cap_window timestamptz,
  ADD COLUMN rate_limit_per_minute integer CHECK (rate_limit_per_minute BETWEEN 1 AND 100000),
  ADD COLUMN rl_tat timestamptz;

-- The keys the metering statement has work for: most keys have no control, and the statement
-- reads only these rows.
CREATE INDEX api_keys_controlled ON api_keys (id)
  WHERE paused_at IS NOT NULL OR credit_cap IS NOT NULL OR rate_limit_per_minute IS NOT NULL;

-- The start of the period a key's cap counts (UTC calendar day or month).
CREATE FUNCTION key_cap_window(p_period text, p_at timestamptz) RETURNS timestamptz
LANGUAGE sql IMMUTABLE AS $$
  SELECT date_trunc(CASE WHEN p_period = 'day' THEN 'day' ELSE 'month' END, p_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
$$;

-- Every dashboard action, per account: who (account and the session's wallet), what, when, the
-- request id to quote.
CREATE TABLE audit_log (
  id          bigserial PRIMARY KEY,
  account_id  uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  action      text NOT NULL CHECK (char_length(action) BETWEEN 1 AND 64),
  wallet      text,
  chain       text,
  request_id  text,
  target      text,
  details     jsonb NOT NULL DEFAULT '{}',
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_log_account ON audit_log (account_id, id DESC);

-- The return type gains the key's figures, so both signatures are dropped and made again (the
-- previous version's pods read the columns by name and ignore the new ones).
DROP FUNCTION meter_reserve_batch(uuid[], text[], integer[], boolean[], text[], text[], uuid[], timestamptz);
DROP FUNCTION meter_reserve_batch(uuid[], text[], integer[], boolean[], text[], text[], uuid[], timestamptz, interval);

CREATE FUNCTION meter_reserve_batch(
  p_accounts uuid[], p_request_ids text[], p_costs integer[], p_records boolean[],
  p_servers text[], p_tools text[], p_keys uuid[], p_now timestamptz, p_stale_after interval)
RETURNS TABLE (idx integer, outcome text, balance integer, plan text, requests_per_minute integer, burst integer,
               rl_remaining integer, rl_reset_seconds double precision,
               retry_after_seconds double precision, renewed boolean,
               key_cap integer, key_spent integer, key_cap_period text, key_rate_limit integer)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
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
END $$;

-- The previous signature, for pods of the version before 0015: reservations without a deadline.
CREATE FUNCTION meter_reserve_batch(
  p_accounts uuid[], p_request_ids text[], p_costs integer[], p_records boolean[],
  p_servers text[], p_tools text[], p_keys uuid[], p_now timestamptz DEFAULT NULL)
RETURNS TABLE (idx integer, outcome text, balance integer, plan text, requests_per_minute integer, burst integer,
               rl_remaining integer, rl_reset_seconds double precision,
               retry_after_seconds double precision, renewed boolean,
               key_cap integer, key_spent integer, key_cap_period text, key_rate_limit integer)
LANGUAGE sql
AS $$
  SELECT * FROM meter_reserve_batch(p_accounts, p_request_ids, p_costs, p_records, p_servers, p_tools, p_keys, p_now, NULL::interval);
$$;

-- A refund gives the call back to its key's cap too (when it was counted in the key's current period).
CREATE OR REPLACE FUNCTION meter_refund(p_request_id text, p_note text DEFAULT NULL)
RETURNS integer LANGUAGE plpgsql AS $$
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
END $$;
