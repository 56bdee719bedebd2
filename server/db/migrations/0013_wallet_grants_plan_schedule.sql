-- Issue 30: a free allowance once per wallet for ever, and plan purchases that never lose paid time.

-- Every wallet that ever received the free plan's opening allowance. Rows are never deleted: an
-- unlinked wallet, a wallet whose account was merged away, a wallet signing in again all keep
-- theirs, so a new account for such a wallet opens with 0 credits. `chain` is the chain a contract
-- wallet (EIP-1271) was proved on — the same address on another chain is another wallet with
-- another owner — and '' for a wallet proved by its own key (the same key on every chain).
CREATE TABLE wallet_free_grants (
  family     text NOT NULL CHECK (family IN ('evm', 'solana')),
  address    text NOT NULL,
  chain      text NOT NULL DEFAULT '' CHECK (chain IN ('', 'ethereum', 'base', 'polygon', 'bsc')),
  account_id uuid NOT NULL REFERENCES accounts (id),
  credits    integer NOT NULL CHECK (credits >= 0),
  granted_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (family, address, chain)
);

-- The wallets that already have an account had their allowance (or their account's) before this
-- record existed. How they were proved is not known, so they are recorded as keys (''), which a
-- lookup for a contract wallet matches too.
INSERT INTO wallet_free_grants (family, address, chain, account_id, credits, granted_at)
SELECT w.family, w.address, '', w.account_id, 0, w.created_at FROM wallets w
ON CONFLICT DO NOTHING;

-- Whether the account opened with the free allowance ('granted') or without it because its wallet
-- had it before ('withheld'); NULL for accounts opened otherwise (another plan, or before this).
ALTER TABLE accounts ADD COLUMN free_allowance text CHECK (free_allowance IN ('granted', 'withheld'));

-- Opens an account on a plan; p_grant false opens it with 0 credits (a zero 'grant' row says why).
CREATE FUNCTION account_open(p_plan text, p_grant boolean, p_now timestamptz DEFAULT NULL)
RETURNS uuid LANGUAGE plpgsql AS $$
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
END $$;

-- Paid plan time bought while another plan is paid: it starts where the paid time before it ends
-- (accounts.paid_until, then each row's ends_at), so nothing already paid is cut short. Rows are
-- contiguous and in order; account_renew_if_due moves the account onto the first one when its
-- paid time runs out.
CREATE TABLE plan_schedule (
  id         bigserial PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  plan       text NOT NULL REFERENCES plans (name),
  starts_at  timestamptz NOT NULL,
  ends_at    timestamptz NOT NULL,
  order_id   uuid REFERENCES payment_orders (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK (ends_at > starts_at)
);
CREATE INDEX plan_schedule_account ON plan_schedule (account_id, starts_at);

-- What buying one month of p_plan does now (the quote and order_credit both ask this):
-- 'starts_now'  no paid time left: a new period on the plan from now, full allowance;
-- 'extends'     the last paid plan is this one: one more month after its paid time
--               (segment_id: the scheduled row extended; NULL: the current plan);
-- 'scheduled'   another plan is paid: this one starts when that paid time ends.
CREATE FUNCTION plan_purchase_rule(p_account uuid, p_plan text, p_now timestamptz DEFAULT NULL)
RETURNS TABLE (rule text, starts_at timestamptz, ends_at timestamptz, segment_id bigint)
LANGUAGE plpgsql STABLE AS $$
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
END $$;

-- Renewal (0011) with the schedule: when the paid time runs out and a plan was bought to follow it,
-- the account moves onto that plan (a new period from where the paid time ended, its full
-- allowance, top-up credits kept; a 'plan_change' row) instead of lapsing to free.
CREATE OR REPLACE FUNCTION account_renew_if_due(p_account uuid, p_now timestamptz DEFAULT NULL)
RETURNS boolean LANGUAGE plpgsql AS $$
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
END $$;

-- An operator's plan change ends any paid period (0011), and with it the plan time scheduled after.
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
END $$;

-- Crediting a paid order (0011), with plan purchases that keep what is already paid: the
-- account's lock is taken first (a merge takes it too, so an order never moves while it is being
-- credited), any due renewal or scheduled start is applied, then plan_purchase_rule decides:
-- 'starts_now' starts a new period with the full allowance (top-up credits kept), 'extends' adds a
-- month to the current or the last scheduled plan, 'scheduled' queues the plan after the paid
-- time. Only 'starts_now' changes the balance.
CREATE OR REPLACE FUNCTION order_credit(p_order uuid, p_tx_hash text, p_payer text, p_now timestamptz DEFAULT NULL)
RETURNS TABLE (outcome text, balance integer, plan text, paid_until timestamptz)
LANGUAGE plpgsql AS $$
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
END $$;

-- A link offer remembers whether its wallet was proved through a contract (EIP-1271), so an
-- account opened from it records the allowance for that contract on that chain.
ALTER TABLE account_wallet_offers ADD COLUMN contract boolean NOT NULL DEFAULT false;

-- Whether the wallet was proved through its contract (EIP-1271) on `chain` rather than by its key.
ALTER TABLE wallets ADD COLUMN contract boolean NOT NULL DEFAULT false;

-- A wallet that joins an account which had the free allowance (linked, or moved in by a merge)
-- shares that allowance: it is recorded too, so unlinking it and signing in again opens an account
-- with nothing. Called after every link and merge, with the account's row lock held.
CREATE FUNCTION wallets_share_free_grant(p_account uuid) RETURNS void LANGUAGE sql AS $$
  INSERT INTO wallet_free_grants (family, address, chain, account_id, credits)
  SELECT w.family, w.address, CASE WHEN w.contract THEN w.chain ELSE '' END, p_account, 0
    FROM wallets w
   WHERE w.account_id = p_account AND EXISTS (SELECT 1 FROM wallet_free_grants g WHERE g.account_id = p_account)
  ON CONFLICT DO NOTHING
$$;
