-- Renewals applied lazily by the metering statement are reported to the pod that applied them,
-- so cryptomcp_metering_renewals_total counts every renewal once (issue 6): the periodic sweep's
-- and these. meter_reserve_batch is meter_reserve_many (0002) plus a `renewed` column, set on the
-- first row of each account the statement renewed. meter_reserve_many stays, with the same
-- result as before, as a wrapper over it: pods of the previous version keep working during a
-- rolling upgrade (a changed result type would break their prepared statements).
--
-- Its statements run on generic plans: with array parameters the planner kept choosing a fresh
-- custom plan for every call, and planning was a large share of the statement's time
-- (bench/NOTES.md). The generic plans are index scans too.

CREATE FUNCTION meter_reserve_batch(
  p_accounts uuid[], p_request_ids text[], p_costs integer[], p_records boolean[],
  p_servers text[], p_tools text[], p_keys uuid[], p_now timestamptz DEFAULT NULL)
RETURNS TABLE (idx integer, outcome text, balance integer, plan text, requests_per_minute integer, burst integer,
               rl_remaining integer, rl_reset_seconds double precision,
               retry_after_seconds double precision, renewed boolean)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  n integer := coalesce(array_length(p_accounts, 1), 0);
  -- The batch's accounts, one slot each, in id order.
  a_id uuid[]; a_balance integer[]; a_tat timestamptz[]; a_status text[]; a_plan text[];
  a_rpm integer[]; a_burst integer[]; a_renewal text[]; a_period_end timestamptz[]; a_changed boolean[];
  a_renewed boolean[];
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
  a_renewed := array_fill(false, ARRAY[coalesce(array_length(a_id, 1), 0)]);

  -- Lazy renewal (rare): monthly accounts whose period ended are reset before anything else.
  FOR k IN 1 .. coalesce(array_length(a_id, 1), 0) LOOP
    IF a_renewal[k] = 'monthly' AND (a_period_end[k] IS NULL OR a_period_end[k] <= v_now) THEN
      a_renewed[k] := account_renew_if_due(a_id[k], v_now);
      a_balance[k] := (SELECT a.balance FROM accounts a WHERE a.id = a_id[k]);
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
    -- A renewed account is reported on its first call's row only, so the rows sum to renewals.
    renewed := a_renewed[k]; a_renewed[k] := false;
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

CREATE OR REPLACE FUNCTION meter_reserve_many(
  p_accounts uuid[], p_request_ids text[], p_costs integer[], p_records boolean[],
  p_servers text[], p_tools text[], p_keys uuid[], p_now timestamptz DEFAULT NULL)
RETURNS TABLE (idx integer, outcome text, balance integer, plan text, requests_per_minute integer, burst integer,
               rl_remaining integer, rl_reset_seconds double precision,
               retry_after_seconds double precision)
LANGUAGE sql AS $$
  SELECT b.idx, b.outcome, b.balance, b.plan, b.requests_per_minute, b.burst, b.rl_remaining, b.rl_reset_seconds, b.retry_after_seconds
    FROM meter_reserve_batch(p_accounts, p_request_ids, p_costs, p_records, p_servers, p_tools, p_keys, p_now) AS b;
$$;
