-- A page cut for size is charged for what it holds on every path (issue 35 item 7), tasks included.
--
-- meter_settle_part: a reservation charged only `p_credits` of it, the rest given back (top-up
-- credits first, as the reservation spent them last), in one statement: the statement
-- CreditMeter.settlePart ran inline, moved here so that task_finish charges a part the same way.
-- Returns the balance after the refund, or NULL when nothing was given back (or nothing was due).
CREATE FUNCTION meter_settle_part(p_request_id text, p_credits integer, p_note text)
RETURNS integer LANGUAGE sql AS $$
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
$$;

-- task_finish as in 0017, and a completed task charged only `p_part` credits of its reservation
-- when its answer is a page cut for size (NULL: the whole reservation), with `p_part_note` saying
-- why on the refund row.
DROP FUNCTION task_finish(uuid, text, jsonb, jsonb, text, boolean);
CREATE FUNCTION task_finish(p_id uuid, p_status text, p_result jsonb, p_error jsonb, p_message text, p_charge boolean,
                            p_part integer DEFAULT NULL, p_part_note text DEFAULT NULL)
RETURNS boolean LANGUAGE plpgsql AS $$
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
END $$;
