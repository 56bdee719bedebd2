// Migration 0019 on a database that already sent notices the old way (0018's
// account_notice_deliveries and account_notice_deliver jobs): each delivery becomes a
// webhook_deliveries row naming its notice with its status and attempts kept, a pending one is
// queued again as a webhook_deliver job while the old job is removed, and the old table goes.
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, describe, expect, it } from 'vitest';
import { accountCreate } from '../../server/accounts/accounts.ts';
import { loadMigrations, migrate } from '../../server/db/migrate.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase | undefined;

afterAll(async () => {
  await db?.drop();
});

describe('migration 0019: notices into the webhook delivery log', () => {
  it('moves delivered and pending notice deliveries, requeues the pending one on webhook_deliver, and drops the old table', async () => {
    db = await createTestDatabase({ migrate: false });
    const all = loadMigrations();
    const through18 = all.filter((m) => m.version <= 18);
    await migrate(db.pool, through18);

    const account = await accountCreate(db, { wallet: privateKeyToAccount(generatePrivateKey()).address, chain: 'ethereum', plan: 'free' });
    const endpoint = (await db.query<{ id: string }>("INSERT INTO webhook_endpoints (account_id, url, secret) VALUES ($1, 'https://hooks.example/a', 'whsec_x') RETURNING id", [account.id])).rows[0]!.id;
    const notice = async (event: string) =>
      (await db!.query<{ id: string }>("INSERT INTO account_notices (account_id, kind, event_id, title, data) VALUES ($1, 'usage', $2, 't', '{}') RETURNING id", [account.id, event])).rows[0]!.id;
    const [sent, waiting] = [await notice('usage:p:80'), await notice('usage:p:90')];
    await db.query("INSERT INTO account_notice_deliveries (notice_id, endpoint_id, status, attempts, delivered_at) VALUES ($1, $2, 'delivered', 1, now())", [sent, endpoint]);
    await db.query("INSERT INTO account_notice_deliveries (notice_id, endpoint_id, status, attempts) VALUES ($1, $2, 'pending', 2)", [waiting, endpoint]);
    await db.query("SELECT graphile_worker.add_job('account_notice_deliver', json_build_object('notice', $1::bigint, 'endpoint', $2::bigint), job_key => 'notice:' || $1 || ':' || $2)", [waiting, endpoint]);

    expect(await migrate(db.pool, all)).toEqual(all.filter((m) => m.version > 18).map((m) => m.version));

    const moved = await db.query<{ id: string; notice_id: string; alert_id: string | null; status: string; attempts: number; account_id: string }>(
      'SELECT id, notice_id, alert_id, status, attempts, account_id FROM webhook_deliveries ORDER BY notice_id',
    );
    expect(moved.rows.map((r) => [r.notice_id, r.alert_id, r.status, r.attempts, r.account_id])).toEqual([
      [sent, null, 'delivered', 1, account.id],
      [waiting, null, 'pending', 2, account.id],
    ]);
    const jobs = await db.query<{ task_identifier: string; key: string | null; payload: { delivery: number } }>(
      `SELECT t.identifier AS task_identifier, j.key, j.payload
         FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id ORDER BY j.id`,
    );
    expect(jobs.rows.map((j) => [j.task_identifier, j.key, j.payload.delivery])).toEqual([['webhook_deliver', `webhook:${moved.rows[1]!.id}`, Number(moved.rows[1]!.id)]]);
    expect((await db.query("SELECT to_regclass('account_notice_deliveries') AS t")).rows[0]!.t).toBeNull();
  });
});
