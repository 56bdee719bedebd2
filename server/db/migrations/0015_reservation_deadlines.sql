-- Each reservation carries its own deadline (stale_at), set by the pod that made it from its own
-- tool timeout. The stale sweep runs as one job for the whole database, taken by whichever replica
-- is free; with the threshold as a sweep argument, a replica with a short tool timeout (another
-- MCPServer's pods, a gateway pod) refunded the in-flight reservations of pods with a longer one:
-- calls answered in full were then free. Now the sweep refunds what is past its own deadline;
-- rows without one (reserved by pods of the previous version during a rolling upgrade) keep the
-- sweep's threshold.
--
-- meter_reserve_batch gains p_stale_after; the previous signature stays, as a wrapper that passes
-- NULL, for pods of the previous version (a changed signature would break their statements).

ALTER TABLE credit_ledger ADD COLUMN stale_at timestamptz;

CREATE FUNCTION meter_reserve_batch(
  p_accounts uuid[], p_request_ids text[], p_costs integer[], p_records boolean[],
  p_servers text[], p_tools text[], p_keys uuid[], p_now timestamptz, p_stale_after interval)
RETURNS TABLE (idx integer, outcome text, balance integer, plan text, requests_per_minute integer, burst integer,
               rl_remaining integer, rl_reset_seconds double precision,
               retry_after_seconds double precision, renewed boolean)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  n integer := coalesce(array_length(p_accounts, 1), 0);
  a_id uuid[]; a_balance integer[]; a_tat timestamptz[]; a_status text[]; a_plan text[];
  a_rpm integer[]; a_burst integer[]; a_renewal text[]; a_period_end timestamptz[]; a_paid_until timestamptz[];
  a_topup integer[]; a_changed boolean[]; a_renewed boolean[];
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
  a_changed := array_fill(false, ARRAY[coalesce(array_length(a_id, 1), 0)]);
  a_renewed := array_fill(false, ARRAY[coalesce(array_length(a_id, 1), 0)]);

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
      -- The allowance is spent first: top-up credits go only once the balance falls below them.
      v_topup := least(a_topup[k], a_balance[k]);
      IF p_records[i] THEN
        l_account := l_account || a_id[k]; l_request := l_request || p_request_ids[i];
        l_delta := l_delta || -v_cost; l_balance := l_balance || a_balance[k];
        l_server := l_server || p_servers[i]; l_tool := l_tool || p_tools[i]; l_key := l_key || p_keys[i];
        l_topup := l_topup || (v_topup - a_topup[k]);
      END IF;
      a_topup[k] := v_topup;
    END IF;
    balance := a_balance[k];
    RETURN NEXT;
  END LOOP;

  UPDATE accounts a SET balance = u.balance, topup = u.topup, rl_tat = u.tat, updated_at = v_now
    FROM unnest(a_id, a_balance, a_topup, a_tat, a_changed) AS u(id, balance, topup, tat, changed)
   WHERE a.id = u.id AND u.changed;
  INSERT INTO credit_ledger (account_id, request_id, kind, delta, balance_after, server, tool, key_id, topup_delta, created_at, stale_at)
  SELECT u.account_id, u.request_id, 'reserve', u.delta, u.balance_after, u.server, u.tool, u.key_id, nullif(u.topup_delta, 0), v_now,
         v_now + p_stale_after
    FROM unnest(l_account, l_request, l_delta, l_balance, l_server, l_tool, l_key, l_topup)
      AS u(account_id, request_id, delta, balance_after, server, tool, key_id, topup_delta);
END $$;

-- The previous signature, for pods of the previous version: reservations without a deadline.
CREATE OR REPLACE FUNCTION meter_reserve_batch(
  p_accounts uuid[], p_request_ids text[], p_costs integer[], p_records boolean[],
  p_servers text[], p_tools text[], p_keys uuid[], p_now timestamptz DEFAULT NULL)
RETURNS TABLE (idx integer, outcome text, balance integer, plan text, requests_per_minute integer, burst integer,
               rl_remaining integer, rl_reset_seconds double precision,
               retry_after_seconds double precision, renewed boolean)
LANGUAGE sql
AS $$
  SELECT * FROM meter_reserve_batch(p_accounts, p_request_ids, p_costs, p_records, p_servers, p_tools, p_keys, p_now, NULL::interval);
$$;

-- Refunds reservations past their own deadline (or, without one, older than p_older_than). The
-- partial index credit_ledger_unresolved holds only unresolved reservations: the calls in flight.
CREATE OR REPLACE FUNCTION meter_refund_stale(p_older_than interval, p_limit integer DEFAULT 1000)
RETURNS integer LANGUAGE plpgsql AS $$
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
END $$;
