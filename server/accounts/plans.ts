import type { Database } from '../db/pool.ts';
import type { Plan } from '../public-types.ts';

export type { Plan };

/** A plan's public fields, as /v1/catalog and the dashboard answer them. */
export function publicPlan(p: Plan): Omit<Plan, 'display_name'> {
  return { name: p.name, credits: p.credits, renewal: p.renewal, requests_per_minute: p.requests_per_minute, burst: p.burst, servers: p.servers, max_keys: p.max_keys, price_cents: p.price_cents };
}

const COLUMNS = 'name, display_name, credits, renewal, requests_per_minute, burst, servers, max_keys, price_cents';

export async function planList(db: Database): Promise<Plan[]> {
  const res = await db.query<Plan>(`SELECT ${COLUMNS} FROM plans ORDER BY credits, name`);
  return res.rows;
}

export async function planGet(db: Database, name: string): Promise<Plan | undefined> {
  const res = await db.query<Plan>(`SELECT ${COLUMNS} FROM plans WHERE name = $1`, [name]);
  return res.rows[0];
}

/** Inserts or updates a plan (the PlanPolicy operator and benchmarks write plans this way). */
export async function planUpsert(db: Database, plan: Omit<Plan, 'price_cents'> & { price_cents?: number | null }): Promise<void> {
  await db.query(
    `INSERT INTO plans (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (name) DO UPDATE SET display_name = EXCLUDED.display_name, credits = EXCLUDED.credits,
       renewal = EXCLUDED.renewal, requests_per_minute = EXCLUDED.requests_per_minute, burst = EXCLUDED.burst,
       servers = EXCLUDED.servers, max_keys = EXCLUDED.max_keys, price_cents = EXCLUDED.price_cents, updated_at = now()`,
    [plan.name, plan.display_name, plan.credits, plan.renewal, plan.requests_per_minute, plan.burst, plan.servers, plan.max_keys, plan.price_cents ?? null],
  );
}

