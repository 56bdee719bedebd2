-- Long tools run as MCP tasks (issue 33 item 4; docs/tasks.md). A task is created by a tools/call
-- that asks for one, answered at once, and run in the background by the replica that took the
-- call; its state lives here so that any replica answers tasks/get, tasks/result, tasks/list and
-- tasks/cancel. Each task owns the credit reservation of the call that created it (request_id):
-- charged when its result is stored, refunded when it fails or is cancelled, in the same
-- statement as the state change, so a task is never both charged and refunded.
--
-- The replica running a task writes heartbeat_at every few seconds; a working task whose heartbeat
-- stopped (its replica died) is failed and refunded by the tasks_sweep job. The reservation's own
-- deadline (credit_ledger.stale_at, set when the task is created) lies past the task's longest
-- run, so the metering sweep never refunds a task still running.

CREATE TABLE tasks (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  server text NOT NULL,
  tool text NOT NULL,
  request_id text NOT NULL UNIQUE,
  status text NOT NULL DEFAULT 'working' CHECK (status IN ('working', 'completed', 'failed', 'cancelled')),
  status_message text,
  -- The CallToolResult (completed) or the JSON-RPC error object (failed).
  result jsonb,
  error jsonb,
  ttl_ms integer NOT NULL CHECK (ttl_ms > 0),
  poll_interval_ms integer NOT NULL CHECK (poll_interval_ms > 0),
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  -- created_at + ttl_ms: the task and its result are deleted after this.
  expires_at timestamptz NOT NULL,
  heartbeat_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  CHECK ((status = 'completed') = (result IS NOT NULL)),
  CHECK ((status = 'failed') = (error IS NOT NULL))
);

-- tasks/list: an account's tasks, newest first, by keyset.
CREATE INDEX tasks_account ON tasks (account_id, created_at DESC, id DESC);
-- The sweep's two questions: working tasks whose heartbeat stopped, and tasks past their TTL.
CREATE INDEX tasks_working ON tasks (heartbeat_at) WHERE status = 'working';
CREATE INDEX tasks_expiry ON tasks (expires_at);

-- A working task ends: completed (p_charge: its reservation is charged; not: the answer held no
-- data and is free) or failed (refunded). Returns false when the task was no longer working
-- (cancelled, or failed by the sweep meanwhile): then nothing is charged or refunded here.
CREATE FUNCTION task_finish(p_id uuid, p_status text, p_result jsonb, p_error jsonb, p_message text, p_charge boolean)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  v_request text;
BEGIN
  IF p_status NOT IN ('completed', 'failed') THEN RAISE EXCEPTION 'task_finish: status must be completed or failed, got %', p_status; END IF;
  UPDATE tasks SET status = p_status, result = p_result, error = p_error, status_message = p_message, updated_at = clock_timestamp()
   WHERE id = p_id AND status = 'working'
  RETURNING request_id INTO v_request;
  IF NOT FOUND THEN RETURN false; END IF;
  IF p_charge THEN
    PERFORM meter_settle(ARRAY[v_request]);
  ELSE
    PERFORM meter_refund(v_request, 'task ' || p_status || coalesce(': ' || p_message, ''));
  END IF;
  RETURN true;
END $$;

-- The account's request to cancel its task: the task's status after it, and whether this call
-- cancelled it (it was working: refunded in the same statement). No row: the account has no such
-- live task.
CREATE FUNCTION task_cancel(p_id uuid, p_account uuid)
RETURNS TABLE (status text, cancelled boolean) LANGUAGE plpgsql AS $$
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
END $$;

-- Fails and refunds the working tasks whose replica stopped writing their heartbeat.
CREATE FUNCTION task_fail_orphans(p_after interval, p_limit integer DEFAULT 1000)
RETURNS integer LANGUAGE plpgsql AS $$
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
END $$;
