// The plans table, as the operator writes it: plain parameterised SQL against the schema the
// gateway's migrations create (the table's columns are the contract; the gateway reads the same
// rows on every request). One statement per operation.
import type { OperatorDatabase } from './pool.ts';

/** One row of the plans table. */
export interface PlanRow {
  name: string;
  display_name: string;
  credits: number;
  renewal: 'one-time' | 'monthly';
  requests_per_minute: number;
  burst: number;
  servers: string[];
  max_keys: number;
  /** Monthly price in USD cents; null: not for sale. */
  price_cents: number | null;
}

const COLUMNS = 'name, display_name, credits, renewal, requests_per_minute, burst, servers, max_keys, price_cents';

export async function planGet(db: OperatorDatabase, name: string): Promise<PlanRow | undefined> {
  const res = await db.query<PlanRow>(`SELECT ${COLUMNS} FROM plans WHERE name = $1`, [name]);
  return res.rows[0];
}

export async function planUpsert(db: OperatorDatabase, plan: PlanRow): Promise<void> {
  await db.query(
    `INSERT INTO plans (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (name) DO UPDATE SET display_name = EXCLUDED.display_name, credits = EXCLUDED.credits,
       renewal = EXCLUDED.renewal, requests_per_minute = EXCLUDED.requests_per_minute, burst = EXCLUDED.burst,
       servers = EXCLUDED.servers, max_keys = EXCLUDED.max_keys, price_cents = EXCLUDED.price_cents, updated_at = now()`,
    [plan.name, plan.display_name, plan.credits, plan.renewal, plan.requests_per_minute, plan.burst, plan.servers, plan.max_keys, plan.price_cents],
  );
}

/** Accounts on the plan: reported in status, and deletion waits while there are any. */
export async function planAccountCount(db: OperatorDatabase, name: string): Promise<number> {
  const res = await db.query<{ n: number }>('SELECT count(*) AS n FROM accounts WHERE plan = $1', [name]);
  return res.rows[0]?.n ?? 0;
}

/**
 * Deletes the plan only if no account is on it, in one statement (accounts reference plans by
 * foreign key, so an account created meanwhile makes the delete fail rather than orphan it).
 * `deleted` is true only when the row is gone: when the delete finds an account on the plan and
 * the count after it finds none, the last account moved off between the two statements (or the
 * row went meanwhile), so it looks again rather than report a row that is still there as deleted.
 */
export async function planDeleteUnused(db: OperatorDatabase, name: string): Promise<{ deleted: boolean; accounts: number }> {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const res = await db.query('DELETE FROM plans WHERE name = $1 AND NOT EXISTS (SELECT 1 FROM accounts WHERE plan = $1)', [name]);
      if ((res.rowCount ?? 0) > 0) return { deleted: true, accounts: 0 };
    } catch (err) {
      if ((err as { code?: string }).code !== '23503') throw err; // foreign_key_violation: in use after all
    }
    const accounts = await planAccountCount(db, name);
    if (accounts > 0) return { deleted: false, accounts };
    if (!(await planGet(db, name))) return { deleted: true, accounts: 0 };
  }
  // Accounts keep moving on and off the plan: not deleted this time; the caller retries later.
  return { deleted: false, accounts: 0 };
}

/**
 * What of the schema is there: whether the plans table exists (`cryptomcp migrate` has run), and
 * the newest migration applied (null before the first). `cryptomcp migrate` applies each
 * migration in its own transaction, so the plans table appears at the first one, while the
 * columns and functions a PlanPolicy's write needs may come with later ones: the version says
 * when the schema moved on.
 */
export async function schemaState(db: OperatorDatabase): Promise<{ plans: boolean; version: number | null }> {
  const res = await db.query<{ plans: boolean; tracked: boolean }>("SELECT to_regclass('plans') IS NOT NULL AS plans, to_regclass('schema_migrations') IS NOT NULL AS tracked");
  const row = res.rows[0];
  if (!row?.tracked) return { plans: row?.plans === true, version: null };
  const versions = await db.query<{ version: number | null }>('SELECT max(version) AS version FROM schema_migrations');
  return { plans: row.plans, version: versions.rows[0]?.version ?? null };
}
