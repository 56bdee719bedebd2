// GET /api/plans: the account's plan, what it has paid for and scheduled, and what can be bought
// and on which chains (nothing when payments are off).
import type { FastifyInstance } from 'fastify';
import { publicPlan, type Plan } from '../../accounts/plans.ts';
import type { DashboardConfig } from '../../config.ts';
import type { Database } from '../../db/pool.ts';
import type { Payments } from '../../payments/orders.ts';
import { accountOf } from '../session.ts';

export function planRoutes(
  authed: FastifyInstance,
  deps: { db: Database; plans: () => Promise<Plan[]>; payments: Payments | undefined; settings: Pick<DashboardConfig, 'contact'> },
): void {
  const { db } = deps;
  authed.get('/plans', async (request) => {
    const account = await accountOf(db, request);
    return {
      current: account.plan,
      contact: deps.settings.contact ?? null,
      paid_until: account.paid_until?.toISOString() ?? null,
      // Plans bought to start when the paid time before them ends.
      scheduled: (
        await db.query<{ plan: string; starts_at: Date; ends_at: Date }>('SELECT plan, starts_at, ends_at FROM plan_schedule WHERE account_id = $1 ORDER BY starts_at', [account.id])
      ).rows.map((r) => ({ plan: r.plan, starts_at: r.starts_at.toISOString(), ends_at: r.ends_at.toISOString() })),
      free_allowance: account.free_allowance,
      topup: account.topup,
      // What can be bought, and where it can be paid (empty: payments are off).
      packs: deps.payments?.packs ?? [],
      chains: (deps.payments?.chains ?? []).map((c) => ({
        chain: c.chain,
        chain_id: c.chainId,
        token: c.token,
        decimals: c.decimals,
        confirmations: c.confirmations,
      })),
      plans: (await deps.plans()).map((p) => ({ ...publicPlan(p), display_name: p.display_name, current: p.name === account.plan })),
    };
  });
}
