// The alert feed in PostgreSQL, and the price rule's arithmetic: an event of a rule is stored once
// (the idempotency id), with one delivery job; a level rule fires on a crossing in its direction
// only; a move rule fires on a move within its window.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Quote } from '../../server/providers/market/types.ts';
import { priceRuleStep } from '../../server/servers/price-prediction/alerts.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createAccountWithKey } from '../helpers/service.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

async function ruleWithWebhook(): Promise<{ ruleId: string; accountId: string }> {
  const { account } = await createAccountWithKey(db, { plan: 'pro' });
  const hook = await db.query<{ id: string }>("INSERT INTO webhook_endpoints (account_id, url, secret) VALUES ($1, 'https://example.com/h', 'whsec_AAAA') RETURNING id", [account.id]);
  const rule = await db.query<{ id: string }>("INSERT INTO alert_rules (account_id, kind, server, params, webhook_id) VALUES ($1, 'whale', 'whale-intelligence', '{}', $2) RETURNING id", [account.id, hook.rows[0]!.id]);
  return { ruleId: rule.rows[0]!.id, accountId: account.id };
}

describe('alert_insert', () => {
  it('stores an event of a rule once, with one delivery and one queued delivery job, however often (and however concurrently) it is inserted', async () => {
    const { ruleId } = await ruleWithWebhook();
    const ids = await Promise.all(Array.from({ length: 8 }, () => db.query<{ id: string | null }>("SELECT alert_insert($1, 'ethereum:0xabc:tx:0', 'x', '{}') AS id", [ruleId])));
    expect(ids.map((r) => r.rows[0]!.id).filter((id) => id !== null)).toHaveLength(1);
    const counts = await db.query<{ alerts: number; deliveries: number; jobs: number }>(
      `SELECT (SELECT count(*)::int FROM alerts WHERE rule_id = $1) AS alerts,
              (SELECT count(*)::int FROM webhook_deliveries d JOIN alerts a ON a.id = d.alert_id WHERE a.rule_id = $1) AS deliveries,
              (SELECT count(*)::int FROM graphile_worker.jobs WHERE task_identifier = 'webhook_deliver') AS jobs`,
      [ruleId],
    );
    expect(counts.rows[0]).toEqual({ alerts: 1, deliveries: 1, jobs: 1 });
  });
});

const quote = (price: number, asOf = '2026-11-26'): Quote => ({ asset_id: 'bitcoin', symbol: 'BTC', name: 'Bitcoin', price_usd: price, change_24h_pct: null, change_7d_pct: null, change_30d_pct: null, volume_24h_usd: null, market_cap_usd: null, as_of: asOf, source: 'test' }) as Quote;

describe('price rules', () => {
  const above = { asset: 'bitcoin', symbol: 'BTC', condition: 'above' as const, level: 100 };
  it('a level rule fires on the crossing in its direction, once, and not for a rule made already past the level', () => {
    let state: Record<string, unknown> = { side: 'below', price: 90 };
    const steps = [95, 101, 105, 99, 102].map((p, i) => {
      const r = priceRuleStep(above, state, quote(p, `d${i}`), 0);
      state = r.state;
      return r.fired.length;
    });
    expect(steps).toEqual([0, 1, 0, 0, 1]);
    expect(priceRuleStep(above, { side: 'above', price: 120 }, quote(130), 0).fired).toEqual([]);
    expect(priceRuleStep({ ...above, condition: 'below' }, { side: 'below', price: 90 }, quote(101), 0).fired).toEqual([]);
  });

  it('a move rule fires when the price moved the percent within the window (clock injected), and not for an older move', () => {
    const move = { asset: 'bitcoin', symbol: 'BTC', condition: 'move' as const, percent: 5, window_minutes: 60 };
    const t0 = 1_000_000_000;
    const inWindow = priceRuleStep(move, { samples: [{ t: t0, p: 100 }] }, quote(106), t0 + 30 * 60_000);
    expect(inWindow.fired[0]!.data).toMatchObject({ change_pct: expect.closeTo(6, 5), from_price_usd: 100 });
    expect(priceRuleStep(move, { samples: [{ t: t0, p: 100 }] }, quote(106), t0 + 61 * 60_000).fired).toEqual([]);
    expect(priceRuleStep(move, { samples: [{ t: t0, p: 100 }] }, quote(96), t0 + 10 * 60_000).fired).toEqual([]);
  });
});
