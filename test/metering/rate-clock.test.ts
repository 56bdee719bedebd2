// The plan's rate limit (GCRA in meter_reserve_batch) measures each call against the database's
// clock read once the account is locked: a statement that waited for another's lock must not
// measure against the time it started, or the other's calls look ahead of it by the wait and a
// call inside the burst is refused.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planUpsert } from '../../server/accounts/plans.ts';
import { Meter } from '../../server/metering/meter.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createAccountWithKey } from '../helpers/service.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  // One call a second, a burst of two: the tolerance is 2 s ahead of now.
  await planUpsert(db, { name: 'one-per-second', display_name: 'One per second', credits: 100, renewal: 'monthly', requests_per_minute: 60, burst: 2, servers: ['market-intelligence'], max_keys: 1 });
});
afterAll(async () => db?.drop());

describe('the plan rate limit and lock waits', () => {
  it('a reservation that waited 1 s for the account lock is measured from when it got the lock, not from when it started', async () => {
    const { account, keyId } = await createAccountWithKey(db, { plan: 'one-per-second' });
    const meter = new Meter(db, { settleIntervalMs: 50, staleAfterMs: 60_000 });
    // Another statement holds the account for 1 s and leaves its rate 0.9 s ahead of its own
    // commit (as calls inside the burst would).
    const other = new pg.Client({ connectionString: db.url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [account.id]);
      const waiting = meter.reserve({ accountId: account.id, requestId: 'waited', cost: 1, record: true, server: 'market-intelligence', tool: 'bench_echo', keyId });
      await new Promise((r) => setTimeout(r, 1000));
      await other.query("UPDATE accounts SET rl_tat = clock_timestamp() + interval '0.9 seconds' WHERE id = $1", [account.id]);
      await other.query('COMMIT');
      // From the lock: 0.9 s + one interval (1 s) = 1.9 s ahead, inside the 2 s tolerance. From
      // the start, 1 s earlier: 2.9 s, refused.
      expect((await waiting).outcome).toBe('ok');
    } finally {
      await other.end();
    }
  });
});
