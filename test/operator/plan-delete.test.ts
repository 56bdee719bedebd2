// planDeleteUnused (operator/db/plans.ts) says a plan row is deleted only when it is gone. The
// race it must survive: its DELETE finds an account on the plan, and that account moves to
// another plan before the count that follows (seen in a full run: the PlanPolicy's finalizer was
// removed and the `basic` row stayed, in test/operator/planpolicy.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountSetPlan } from '../../server/accounts/accounts.ts';
import { planDeleteUnused, planGet } from '../../operator/db/plans.ts';
import type { OperatorDatabase } from '../../operator/db/pool.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createAccountWithKey } from '../helpers/service.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** The database, with `between` run once right after the first DELETE of a plan that removes nothing. */
function withHook(between: () => Promise<void>): OperatorDatabase {
  let done = false;
  return {
    description: 'test',
    close: async () => {},
    query: async (text, values) => {
      const res = await db.query(text, values);
      if (!done && text.startsWith('DELETE FROM plans') && (res.rowCount ?? 0) === 0) {
        done = true;
        await between();
      }
      return res as never;
    },
  };
}

describe('planDeleteUnused', () => {
  it('the last account moving off between the delete and the count: deleted is true only with the row gone', async () => {
    const { account } = await createAccountWithKey(db, { plan: 'basic' });
    const result = await planDeleteUnused(withHook(() => accountSetPlan(db, account.id, 'pro').then(() => {})), 'basic');
    const row = await planGet(db, 'basic');
    expect({ deleted: result.deleted, rowGone: row === undefined }).toEqual({ deleted: true, rowGone: true });
  });

  it('an account on the plan: not deleted, counted, the row kept', async () => {
    await createAccountWithKey(db, { plan: 'premium' });
    expect(await planDeleteUnused(db, 'premium')).toEqual({ deleted: false, accounts: 1 });
    expect(await planGet(db, 'premium')).toBeDefined();
  });
});
