-- Metering (DESIGN.md §5): one atomic statement per request does the rate-limit check, lazy
-- renewal, credit reservation and the idempotent ledger row. Every balance change writes a
-- ledger row with the same delta, so accounts.balance = SUM(credit_ledger.delta) always holds.
-- p_now is the caller's clock for tests; production passes NULL and the database clock is used,
-- so every pod agrees on time.
--
-- Reservations and settlements commit asynchronously (synchronous_commit = off for their own
-- transaction only): waiting for the WAL flush on every metered call was most of metering's
-- cost. A PostgreSQL crash can lose the last fraction of a second of them, each whole (balance
-- and ledger row together, so the invariant holds), and losing one only ever forgives a charge.
-- Refunds, grants, plan changes, account and key writes stay synchronous, and a synchronous
-- commit also makes every earlier asynchronous one durable.
CREATE FUNCTION meter_async_commit() RETURNS void LANGUAGE sql AS $$
  SELECT set_config('synchronous_commit', 'off', true);
$$;

-- Bounds of the monthly period containing p_now: anniversaries of p_anchor, one calendar month
-- apart, clamped to the month's last day (Jan 31 -> Feb 28/29 -> Mar 31), computed in UTC.
CREATE FUNCTION period_bounds(p_anchor timestamptz, p_now timestamptz,
                              OUT period_start timestamptz, OUT period_end timestamptz)
LANGUAGE plpgsql IMMUTABLE AS $$
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
END $$;

-- Resets a monthly account to its plan's allowance if its period has ended (no rollover).
-- Caller must hold the account row lock or be fine with taking it. Returns true if renewed.
CREATE FUNCTION account_renew_if_due(p_account uuid, p_now timestamptz DEFAULT NULL)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  acc accounts%ROWTYPE;
  pl plans%ROWTYPE;
  b record;
BEGIN
  SELECT * INTO acc FROM accounts WHERE id = p_account FOR UPDATE;
  IF NOT FOUND THEN RETURN false; END IF;
  SELECT * INTO pl FROM plans WHERE name = acc.plan;
  IF pl.renewal <> 'monthly' THEN RETURN false; END IF;
  b := period_bounds(acc.period_anchor, v_now);
  IF acc.period_end IS NULL THEN
    -- The plan became monthly after the account joined it: start counting periods, no reset yet.
    UPDATE accounts SET period_start = b.period_start, period_end = b.period_end WHERE id = acc.id;
    RETURN false;
  END IF;
  IF acc.period_end > v_now THEN RETURN false; END IF;
  UPDATE accounts
     SET balance = pl.credits, period_start = b.period_start, period_end = b.period_end, updated_at = v_now
   WHERE id = acc.id;
  INSERT INTO credit_ledger (account_id, request_id, kind, delta, balance_after, note, created_at)
  VALUES (acc.id, 'renewal:' || acc.id || ':' || to_char(b.period_start AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS'),
          'renewal', pl.credits - acc.balance, pl.credits, 'monthly renewal to the plan allowance', v_now);
  RETURN true;
END $$;

-- The metering statement, for a batch of calls (the gateway shares round trips under load; a
-- single call is a batch of one). Each call gets exactly the answer it would get alone, in the
-- order given: outcomes in check order are 'account_not_found', 'replayed' (this request id
-- already has a reservation), 'suspended', 'rate_limited' (nothing written),
-- 'insufficient_credits' (counted toward the rate limit, nothing charged) and 'ok' (reserved).
-- p_records[i]: write a 'reserve' ledger row (every tools/call, even at cost 0, so usage counts
-- it). The work is set-based (a handful of statements per batch, not per call): lock the
-- batch's accounts in id order (so concurrent batches cannot deadlock), decide every call in
-- memory, then write accounts and ledger rows in one statement each.
CREATE FUNCTION meter_reserve_many(
  p_accounts uuid[], p_request_ids text[], p_costs integer[], p_records boolean[],
  p_servers text[], p_tools text[], p_keys uuid[], p_now timestamptz DEFAULT NULL)
RETURNS TABLE (idx integer, outcome text, balance integer, plan text, requests_per_minute integer, burst integer,
               rl_remaining integer, rl_reset_seconds double precision,
               retry_after_seconds double precision)
LANGUAGE plpgsql AS $$
DECLARE
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  n integer := coalesce(array_length(p_accounts, 1), 0);
  -- The batch's accounts, one slot each, in id order.
  a_id uuid[]; a_balance integer[]; a_tat timestamptz[]; a_status text[]; a_plan text[];
  a_rpm integer[]; a_burst integer[]; a_renewal text[]; a_period_end timestamptz[]; a_changed boolean[];
  v_replayed text[];
  -- Ledger rows to insert.
  l_account uuid[] := '{}'; l_request text[] := '{}'; l_delta integer[] := '{}'; l_balance integer[] := '{}';
  l_server text[] := '{}'; l_tool text[] := '{}'; l_key uuid[] := '{}';
  k integer;
  v_cost integer;
  v_interval double precision;
  v_tolerance double precision;
  v_new_tat timestamptz;
  v_ahead double precision;
BEGIN
  PERFORM meter_async_commit();
  IF n = 0 THEN RETURN; END IF;

  SELECT array_agg(s.id ORDER BY s.id), array_agg(s.balance ORDER BY s.id), array_agg(s.rl_tat ORDER BY s.id),
         array_agg(s.status ORDER BY s.id), array_agg(s.plan ORDER BY s.id), array_agg(s.rpm ORDER BY s.id),
         array_agg(s.plan_burst ORDER BY s.id), array_agg(s.renewal ORDER BY s.id), array_agg(s.period_end ORDER BY s.id)
    INTO a_id, a_balance, a_tat, a_status, a_plan, a_rpm, a_burst, a_renewal, a_period_end
    FROM (SELECT a.id, a.balance, a.rl_tat, a.status, a.plan, a.period_end,
                 p.requests_per_minute AS rpm, p.burst AS plan_burst, p.renewal
            FROM accounts a JOIN plans p ON p.name = a.plan
           WHERE a.id = ANY (p_accounts)
           ORDER BY a.id
             FOR UPDATE OF a) AS s;
  a_changed := array_fill(false, ARRAY[coalesce(array_length(a_id, 1), 0)]);

  -- Lazy renewal (rare): monthly accounts whose period ended are reset before anything else.
  FOR k IN 1 .. coalesce(array_length(a_id, 1), 0) LOOP
    IF a_renewal[k] = 'monthly' AND (a_period_end[k] IS NULL OR a_period_end[k] <= v_now) THEN
      PERFORM account_renew_if_due(a_id[k], v_now);
      a_balance[k] := (SELECT a.balance FROM accounts a WHERE a.id = a_id[k]);
    END IF;
  END LOOP;

  SELECT array_agg(l.request_id) INTO v_replayed
    FROM credit_ledger l WHERE l.kind = 'reserve' AND l.request_id = ANY (p_request_ids);

  FOR i IN 1 .. n LOOP
    idx := i; outcome := NULL; balance := NULL; plan := NULL; requests_per_minute := NULL; burst := NULL;
    rl_remaining := NULL; rl_reset_seconds := NULL; retry_after_seconds := NULL;
    v_cost := p_costs[i];
    IF v_cost < 0 THEN RAISE EXCEPTION 'cost must be >= 0, got %', v_cost; END IF;
    k := array_position(a_id, p_accounts[i]);
    IF k IS NULL THEN
      outcome := 'account_not_found'; RETURN NEXT; CONTINUE;
    END IF;
    plan := a_plan[k]; requests_per_minute := a_rpm[k]; burst := a_burst[k]; balance := a_balance[k];
    IF p_records[i] AND p_request_ids[i] = ANY (v_replayed) THEN
      outcome := 'replayed'; RETURN NEXT; CONTINUE;
    END IF;
    IF a_status[k] <> 'active' THEN
      outcome := 'suspended'; RETURN NEXT; CONTINUE;
    END IF;

    -- GCRA: emission interval T = 60 s / rate; a request is admitted while the theoretical
    -- arrival time stays within burst * T of now.
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

    IF a_balance[k] < v_cost THEN
      outcome := 'insufficient_credits';
    ELSE
      outcome := 'ok';
      a_balance[k] := a_balance[k] - v_cost;
      IF p_records[i] THEN
        l_account := l_account || a_id[k]; l_request := l_request || p_request_ids[i];
        l_delta := l_delta || -v_cost; l_balance := l_balance || a_balance[k];
        l_server := l_server || p_servers[i]; l_tool := l_tool || p_tools[i]; l_key := l_key || p_keys[i];
      END IF;
    END IF;
    balance := a_balance[k];
    RETURN NEXT;
  END LOOP;

  UPDATE accounts a SET balance = u.balance, rl_tat = u.tat, updated_at = v_now
    FROM unnest(a_id, a_balance, a_tat, a_changed) AS u(id, balance, tat, changed)
   WHERE a.id = u.id AND u.changed;
  INSERT INTO credit_ledger (account_id, request_id, kind, delta, balance_after, server, tool, key_id, created_at)
  SELECT u.account_id, u.request_id, 'reserve', u.delta, u.balance_after, u.server, u.tool, u.key_id, v_now
    FROM unnest(l_account, l_request, l_delta, l_balance, l_server, l_tool, l_key)
      AS u(account_id, request_id, delta, balance_after, server, tool, key_id);
END $$;

-- One call alone (CLI, tests, tools that meter outside the gateway).
CREATE FUNCTION meter_reserve(
  p_account uuid, p_request_id text, p_cost integer, p_record boolean,
  p_server text, p_tool text, p_key uuid, p_now timestamptz DEFAULT NULL)
RETURNS TABLE (outcome text, balance integer, plan text, requests_per_minute integer, burst integer,
               rl_remaining integer, rl_reset_seconds double precision,
               retry_after_seconds double precision)
LANGUAGE sql AS $$
  SELECT m.outcome, m.balance, m.plan, m.requests_per_minute, m.burst, m.rl_remaining, m.rl_reset_seconds, m.retry_after_seconds
    FROM meter_reserve_many(ARRAY[p_account], ARRAY[p_request_id], ARRAY[p_cost], ARRAY[p_record],
                            ARRAY[p_server], ARRAY[p_tool], ARRAY[p_key], p_now) AS m;
$$;

-- Gives back a reservation that did not end in a successful answer. Idempotent: only an
-- unresolved reservation is refunded, once. Returns the new balance, or NULL if nothing to do.
CREATE FUNCTION meter_refund(p_request_id text, p_note text DEFAULT NULL)
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
  UPDATE accounts SET balance = accounts.balance - r.delta, updated_at = clock_timestamp()
   WHERE id = r.account_id RETURNING accounts.balance INTO v_balance;
  INSERT INTO credit_ledger (account_id, request_id, kind, delta, balance_after, server, tool, key_id, note)
  VALUES (r.account_id, p_request_id, 'refund', -r.delta, v_balance, r.server, r.tool, r.key_id, p_note);
  RETURN v_balance;
END $$;

-- Marks answered reservations as charged (batched off the hot path). Returns how many.
CREATE FUNCTION meter_settle(p_request_ids text[])
RETURNS integer LANGUAGE sql AS $$
  SELECT meter_async_commit();
  WITH settled AS (
    UPDATE credit_ledger SET resolved_at = clock_timestamp(), resolution = 'charged'
     WHERE kind = 'reserve' AND resolved_at IS NULL AND request_id = ANY (p_request_ids)
    RETURNING 1)
  SELECT count(*)::integer FROM settled;
$$;

-- Refunds reservations left unresolved longer than p_older_than: the pod that made them died
-- between the reservation and the answer. Returns how many were refunded.
CREATE FUNCTION meter_refund_stale(p_older_than interval, p_limit integer DEFAULT 1000)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  r record;
  n integer := 0;
BEGIN
  FOR r IN
    SELECT request_id FROM credit_ledger
     WHERE kind = 'reserve' AND resolved_at IS NULL AND created_at < clock_timestamp() - p_older_than
     ORDER BY created_at LIMIT p_limit
  LOOP
    IF meter_refund(r.request_id, 'stale reservation: no answer was recorded') IS NOT NULL THEN
      n := n + 1;
    END IF;
  END LOOP;
  RETURN n;
END $$;

-- The periodic renewal sweep: renews every monthly account whose period has ended. Accounts
-- locked by a metering statement right now are skipped; that statement renews them lazily.
CREATE FUNCTION accounts_renew_due(p_now timestamptz DEFAULT NULL, p_limit integer DEFAULT 1000)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  r record;
  n integer := 0;
BEGIN
  FOR r IN
    SELECT a.id FROM accounts a JOIN plans p ON p.name = a.plan
     WHERE p.renewal = 'monthly' AND a.period_end <= v_now
     ORDER BY a.period_end LIMIT p_limit
     FOR UPDATE OF a SKIP LOCKED
  LOOP
    IF account_renew_if_due(r.id, v_now) THEN n := n + 1; END IF;
  END LOOP;
  RETURN n;
END $$;

-- Adds (or, negative, deducts) credits; never below zero. The ledger row records the real change.
CREATE FUNCTION account_grant(p_account uuid, p_amount integer, p_request_id text, p_note text DEFAULT NULL)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  v_old integer;
  v_new integer;
BEGIN
  SELECT balance INTO v_old FROM accounts WHERE id = p_account FOR UPDATE;
  IF NOT FOUND THEN RETURN NULL; END IF;
  v_new := greatest(0, v_old + p_amount);
  UPDATE accounts SET balance = v_new, updated_at = clock_timestamp() WHERE id = p_account;
  INSERT INTO credit_ledger (account_id, request_id, kind, delta, balance_after, note)
  VALUES (p_account, p_request_id, 'adjust', v_new - v_old, v_new, p_note);
  RETURN v_new;
END $$;

-- Moves an account to a plan: a new period starts now with the new plan's allowance.
CREATE FUNCTION account_set_plan(p_account uuid, p_plan text, p_request_id text, p_now timestamptz DEFAULT NULL)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_old integer;
  pl plans%ROWTYPE;
BEGIN
  SELECT * INTO pl FROM plans WHERE name = p_plan;
  IF NOT FOUND THEN RAISE EXCEPTION 'unknown plan %', p_plan USING ERRCODE = 'P0002'; END IF;
  SELECT balance INTO v_old FROM accounts WHERE id = p_account FOR UPDATE;
  IF NOT FOUND THEN RETURN NULL; END IF;
  UPDATE accounts
     SET plan = pl.name, balance = pl.credits, period_anchor = v_now, period_start = v_now,
         period_end = CASE WHEN pl.renewal = 'monthly' THEN (period_bounds(v_now, v_now)).period_end END,
         updated_at = v_now
   WHERE id = p_account;
  INSERT INTO credit_ledger (account_id, request_id, kind, delta, balance_after, note, created_at)
  VALUES (p_account, p_request_id, 'plan_change', pl.credits - v_old, pl.credits, 'plan changed to ' || pl.name, v_now);
  RETURN pl.credits;
END $$;

-- Creates an account on a plan with its allowance as the opening grant.
CREATE FUNCTION account_create(p_plan text, p_now timestamptz DEFAULT NULL)
RETURNS uuid LANGUAGE plpgsql AS $$
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
END $$;
