-- Payments (issue 21, DESIGN.md §5b): prices as configuration, orders paid on chain, what a
-- payment buys, and the x402 revenue ledger. Money is integer base units everywhere: plan prices
-- in USD cents, on-chain amounts in the token's base units as numeric(78,0) (BSC's USDC has 18
-- decimals, so $199 is 1.99e20 base units: past bigint).

-- The plan's monthly price; NULL: not for sale (free, or plans the operator assigns by hand).
ALTER TABLE plans ADD COLUMN price_cents integer CHECK (price_cents >= 0);
UPDATE plans SET price_cents = CASE name WHEN 'basic' THEN 2900 WHEN 'pro' THEN 7900 WHEN 'premium' THEN 19900 END
 WHERE name IN ('basic', 'pro', 'premium');

-- Top-up credits: the part of the balance bought in packs. They survive renewal and plan changes
-- and are spent after the plan allowance (balance - topup). Always 0 <= topup <= balance.
ALTER TABLE accounts ADD COLUMN topup integer NOT NULL DEFAULT 0 CHECK (topup >= 0);
ALTER TABLE accounts ADD CONSTRAINT accounts_topup_within_balance CHECK (topup <= balance);
-- The end of what was paid for, on a plan bought on chain; NULL: not paid on chain (the free plan,
-- or a plan the operator assigns), which renews as before. A paid plan past it returns to free.
ALTER TABLE accounts ADD COLUMN paid_until timestamptz;

ALTER TABLE credit_ledger DROP CONSTRAINT credit_ledger_kind_check;
ALTER TABLE credit_ledger ADD CONSTRAINT credit_ledger_kind_check
  CHECK (kind IN ('grant', 'renewal', 'plan_change', 'adjust', 'reserve', 'refund', 'purchase', 'lapse'));
-- A purchase's ledger row names the chain and the transaction that paid for it.
ALTER TABLE credit_ledger ADD COLUMN chain text;
ALTER TABLE credit_ledger ADD COLUMN tx_hash text;
-- For 'reserve' rows: how many of the credits came out of top-up credits (<= 0), so a refund
-- gives them back as top-up credits, not as allowance that the next renewal would take away.
ALTER TABLE credit_ledger ADD COLUMN topup_delta integer;

-- An order fixes what is bought, at what price, and how it is to be paid, until it expires.
CREATE TABLE payment_orders (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id   uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  kind         text NOT NULL CHECK (kind IN ('plan', 'pack')),
  item         text NOT NULL,            -- the plan's or the pack's name
  credits      integer NOT NULL CHECK (credits >= 0),
  price_cents  integer NOT NULL CHECK (price_cents > 0),
  chain        text NOT NULL CHECK (chain IN ('ethereum', 'base', 'polygon', 'bsc', 'solana')),
  token        text NOT NULL,            -- the token contract (EVM) or mint (Solana)
  decimals     integer NOT NULL CHECK (decimals BETWEEN 0 AND 36),
  amount       numeric(78, 0) NOT NULL CHECK (amount > 0), -- token base units
  treasury     text NOT NULL,
  status       text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'submitted', 'paid')),
  tx_hash      text,                     -- the last hash submitted, retried until confirmed
  submitted_at timestamptz,
  paid_at      timestamptz,
  last_error   text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL
);
CREATE INDEX payment_orders_account ON payment_orders (account_id, created_at);
CREATE INDEX payment_orders_submitted ON payment_orders (submitted_at) WHERE status = 'submitted';

-- The money ledger: every payment received, on-chain purchases and x402 settlements alike. The
-- unique (chain, tx_hash) is what makes a transaction credit once, whichever replica or
-- concurrent request gets there first.
CREATE TABLE payments (
  id          bigserial PRIMARY KEY,
  kind        text NOT NULL CHECK (kind IN ('plan', 'pack', 'x402')),
  account_id  uuid REFERENCES accounts (id) ON DELETE SET NULL, -- NULL for x402 (no account)
  order_id    uuid REFERENCES payment_orders (id) ON DELETE SET NULL,
  chain       text NOT NULL,            -- our chain name, or the x402 network (CAIP-2)
  tx_hash     text NOT NULL,
  payer       text NOT NULL,
  token       text NOT NULL,
  amount      numeric(78, 0) NOT NULL CHECK (amount > 0),
  decimals    integer NOT NULL,
  usd_micros  bigint NOT NULL CHECK (usd_micros >= 0), -- the price in millionths of a USD
  item        text,                     -- plan or pack name; for x402 '<server>.<tool>'
  credits     integer NOT NULL DEFAULT 0,
  request_id  text,                     -- x402: the tools/call it paid for
  created_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (chain, tx_hash)
);
CREATE INDEX payments_account ON payments (account_id, created_at) WHERE account_id IS NOT NULL;

-- Renewal, with payments: a plan paid on chain whose paid time has run out returns to the free
-- plan, keeping its top-up credits and granting no second free allowance (a 'lapse' row); any
-- other monthly account resets its allowance and keeps its top-up credits.
CREATE OR REPLACE FUNCTION account_renew_if_due(p_account uuid, p_now timestamptz DEFAULT NULL)
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
END $$;

-- The metering statement (0006) with two changes: an account whose paid period ran out is due
-- even on a one-time plan's renewal test (it lapses to free), and spending takes the plan
-- allowance first: top-up credits shrink only when the balance falls below them
-- (topup = least(topup, balance)), in the same UPDATE that writes the balance, and the reserve
-- row records how many it took (topup_delta) for a refund to give back.
CREATE OR REPLACE FUNCTION meter_reserve_batch(
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
  INSERT INTO credit_ledger (account_id, request_id, kind, delta, balance_after, server, tool, key_id, topup_delta, created_at)
  SELECT u.account_id, u.request_id, 'reserve', u.delta, u.balance_after, u.server, u.tool, u.key_id, nullif(u.topup_delta, 0), v_now
    FROM unnest(l_account, l_request, l_delta, l_balance, l_server, l_tool, l_key, l_topup)
      AS u(account_id, request_id, delta, balance_after, server, tool, key_id, topup_delta);
END $$;

-- The sweep also lapses paid plans whose paid time ran out (one-time plans included).
CREATE OR REPLACE FUNCTION accounts_renew_due(p_now timestamptz DEFAULT NULL, p_limit integer DEFAULT 1000)
RETURNS integer LANGUAGE plpgsql AS $$
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
END $$;

-- An operator's plan change keeps the account's top-up credits and ends any paid period.
CREATE OR REPLACE FUNCTION account_set_plan(p_account uuid, p_plan text, p_request_id text, p_now timestamptz DEFAULT NULL)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  acc accounts%ROWTYPE;
  pl plans%ROWTYPE;
BEGIN
  SELECT * INTO pl FROM plans WHERE name = p_plan;
  IF NOT FOUND THEN RAISE EXCEPTION 'unknown plan %', p_plan USING ERRCODE = 'P0002'; END IF;
  SELECT * INTO acc FROM accounts WHERE id = p_account FOR UPDATE;
  IF NOT FOUND THEN RETURN NULL; END IF;
  UPDATE accounts
     SET plan = pl.name, balance = pl.credits + acc.topup, period_anchor = v_now, period_start = v_now,
         period_end = CASE WHEN pl.renewal = 'monthly' THEN (period_bounds(v_now, v_now)).period_end END,
         paid_until = NULL, updated_at = v_now
   WHERE id = p_account;
  INSERT INTO credit_ledger (account_id, request_id, kind, delta, balance_after, note, created_at)
  VALUES (p_account, p_request_id, 'plan_change', pl.credits + acc.topup - acc.balance, pl.credits + acc.topup,
          'plan changed to ' || pl.name, v_now);
  RETURN pl.credits + acc.topup;
END $$;

-- Credits a verified on-chain payment for an order, once: the payments row's unique
-- (chain, tx_hash) refuses a transaction already credited (by any replica, at any time), and the
-- order must still be unpaid. In one transaction with the account change and its ledger row:
-- - a plan: on the same plan with paid time left, one more month of paid time (the period and
--   its allowance run on); otherwise a new period starts now on that plan with its full
--   allowance (top-up credits kept), paid for one month;
-- - a pack: its credits join the balance as top-up credits.
-- Outcomes: 'credited', 'already_credited' (this hash), 'order_not_pending', 'order_not_found'.
CREATE FUNCTION order_credit(p_order uuid, p_tx_hash text, p_payer text, p_now timestamptz DEFAULT NULL)
RETURNS TABLE (outcome text, balance integer, plan text, paid_until timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  o payment_orders%ROWTYPE;
  acc accounts%ROWTYPE;
  pl plans%ROWTYPE;
  v_balance integer;
  v_paid_until timestamptz;
  v_note text;
BEGIN
  SELECT * INTO o FROM payment_orders WHERE id = p_order FOR UPDATE;
  IF NOT FOUND THEN outcome := 'order_not_found'; RETURN NEXT; RETURN; END IF;
  IF o.status = 'paid' THEN
    outcome := CASE WHEN o.tx_hash = p_tx_hash THEN 'already_credited' ELSE 'order_not_pending' END;
    RETURN NEXT; RETURN;
  END IF;
  INSERT INTO payments (kind, account_id, order_id, chain, tx_hash, payer, token, amount, decimals, usd_micros, item, credits, created_at)
  VALUES (o.kind, o.account_id, o.id, o.chain, p_tx_hash, p_payer, o.token, o.amount, o.decimals, o.price_cents::bigint * 10000, o.item, o.credits, v_now)
  ON CONFLICT (chain, tx_hash) DO NOTHING;
  IF NOT FOUND THEN outcome := 'already_credited'; RETURN NEXT; RETURN; END IF;
  UPDATE payment_orders SET status = 'paid', tx_hash = p_tx_hash, paid_at = v_now, last_error = NULL WHERE id = o.id;

  SELECT * INTO acc FROM accounts WHERE id = o.account_id FOR UPDATE;
  IF o.kind = 'pack' THEN
    v_balance := acc.balance + o.credits;
    UPDATE accounts SET balance = v_balance, topup = acc.topup + o.credits, updated_at = v_now WHERE id = acc.id;
    v_paid_until := acc.paid_until;
    v_note := 'credit pack ' || o.item || ': ' || o.credits || ' top-up credits';
  ELSE
    SELECT * INTO pl FROM plans WHERE name = o.item;
    IF acc.plan = o.item AND acc.paid_until > v_now THEN
      v_paid_until := (period_bounds(acc.period_anchor, acc.paid_until)).period_end;
      v_balance := acc.balance;
      UPDATE accounts SET paid_until = v_paid_until, updated_at = v_now WHERE id = acc.id;
      v_note := 'plan ' || o.item || ' extended by one month';
    ELSE
      v_paid_until := (period_bounds(v_now, v_now)).period_end;
      v_balance := pl.credits + acc.topup;
      UPDATE accounts
         SET plan = pl.name, balance = v_balance, period_anchor = v_now, period_start = v_now,
             period_end = v_paid_until, paid_until = v_paid_until, updated_at = v_now
       WHERE id = acc.id;
      v_note := 'plan ' || o.item || ' bought: a new period with its full allowance';
    END IF;
  END IF;
  INSERT INTO credit_ledger (account_id, request_id, kind, delta, balance_after, note, chain, tx_hash, created_at)
  VALUES (acc.id, 'order:' || o.id, 'purchase', v_balance - acc.balance, v_balance, v_note, o.chain, p_tx_hash, v_now);
  outcome := 'credited'; balance := v_balance; plan := CASE WHEN o.kind = 'plan' THEN o.item ELSE acc.plan END;
  paid_until := v_paid_until;
  RETURN NEXT;
END $$;

-- A refund gives back what the reservation took: the top-up part as top-up credits again.
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
  INSERT INTO credit_ledger (account_id, request_id, kind, delta, balance_after, server, tool, key_id, note)
  VALUES (r.account_id, p_request_id, 'refund', -r.delta, v_balance, r.server, r.tool, r.key_id, p_note);
  RETURN v_balance;
END $$;

-- A deduction by the operator never leaves more top-up credits than the balance.
CREATE OR REPLACE FUNCTION account_grant(p_account uuid, p_amount integer, p_request_id text, p_note text DEFAULT NULL)
RETURNS integer LANGUAGE plpgsql AS $$
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
END $$;
