-- Account notices (0018) go through the one webhook sender: a notice's delivery to an endpoint is
-- a webhook_deliveries row like an alert's, sent by the webhook_deliver job with the same retry
-- schedule and attempt log, listed in the endpoint's delivery log and redeliverable. A delivery
-- names exactly one of an alert or a notice. account_notice_deliveries and its job
-- (account_notice_deliver) go: their rows move here, the pending ones queued again.
ALTER TABLE webhook_deliveries
  ALTER COLUMN alert_id DROP NOT NULL,
  ADD COLUMN notice_id bigint REFERENCES account_notices (id) ON DELETE CASCADE,
  ADD CONSTRAINT webhook_deliveries_one_event CHECK ((alert_id IS NULL) <> (notice_id IS NULL)),
  ADD CONSTRAINT webhook_deliveries_notice_id_endpoint_id_key UNIQUE (notice_id, endpoint_id);

INSERT INTO webhook_deliveries (notice_id, endpoint_id, account_id, status, attempts, next_attempt_at, delivered_at, created_at)
SELECT d.notice_id, d.endpoint_id, n.account_id, d.status, d.attempts, CASE WHEN d.status = 'pending' THEN now() END, d.delivered_at, n.created_at
  FROM account_notice_deliveries d JOIN account_notices n ON n.id = d.notice_id;

-- The job queue's schema exists once graphile-worker migrated (after ours on a new database,
-- where there is nothing to move).
DO $$
DECLARE
  d record;
BEGIN
  IF to_regnamespace('graphile_worker') IS NULL THEN RETURN; END IF;
  FOR d IN SELECT notice_id, endpoint_id FROM account_notice_deliveries LOOP
    PERFORM graphile_worker.remove_job('notice:' || d.notice_id || ':' || d.endpoint_id);
  END LOOP;
  FOR d IN SELECT id FROM webhook_deliveries WHERE notice_id IS NOT NULL AND status = 'pending' LOOP
    PERFORM graphile_worker.add_job('webhook_deliver', json_build_object('delivery', d.id, 'round', 0, 'attempt', 1),
                                    job_key => 'webhook:' || d.id, max_attempts => 3);
  END LOOP;
END $$;

DROP TABLE account_notice_deliveries;
