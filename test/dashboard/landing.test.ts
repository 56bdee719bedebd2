// The public page at `/`: prices in dollars before any sign-in, readable with JavaScript off (no
// script at all, everything in the first answer), built from the same sources as /v1/catalog, with
// the configured origin (never the request's Host) and every operator-written name escaped.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planUpsert } from '../../server/accounts/plans.ts';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startTestService } from '../helpers/service.ts';

let db: TestDatabase;
let service: RunningService;

beforeAll(async () => {
  db = await createTestDatabase();
  // A plan as an operator's PlanPolicy may name it (plans are read at start and cached).
  await planUpsert(db, { name: 'team', display_name: '<img src=x onerror=alert(1)>', credits: 1000, renewal: 'monthly', requests_per_minute: 60, burst: 10, servers: [], max_keys: 5, price_cents: 1000 });
  service = await startTestService(db.url, {
    PUBLIC_BASE_URL: 'https://mcp.example.com',
    CREDIT_PACKS: '[{"name":"credits-5k","credits":5000,"price_cents":3000}]',
    PAYMENT_CHAINS: JSON.stringify({ base: { treasury: '0x000000000000000000000000000000000000dEaD', token: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', chain_id: 8453, confirmations: 1 } }),
  });
}, 120_000);

afterAll(async () => {
  await service?.close();
  await db?.drop();
});

const page = async (headers: Record<string, string> = {}) => {
  const res = await fetch(`${service.url}/`, { headers });
  return { res, html: await res.text() };
};

describe('the public page at /', () => {
  it('answers HTML with every server, every plan with its dollar price and every tool with its cost, without a script', async () => {
    const { res, html } = await page();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(html).not.toMatch(/<script/i);
    for (const s of service.registry.values()) {
      expect(html).toContain(s.title);
      for (const t of s.tools.values()) expect(html).toContain(`<code>${t.name}</code>`);
    }
    const catalog = (await (await fetch(`${service.url}/v1/catalog`)).json()) as { plans: { name: string; price_cents: number | null; credits: number }[] };
    const priced = catalog.plans.filter((p) => p.price_cents !== null);
    expect(priced.length).toBeGreaterThan(0);
    for (const p of priced) expect(html).toContain(`$${(p.price_cents! / 100).toFixed(2)} / month`);
    expect(html).toContain('5,000 credits');
    expect(html).toContain('$30.00');
    expect(html).toContain('href="/app/"');
  });

  it('names the configured origin, never a forged Host or X-Forwarded-Host', async () => {
    const { html } = await page({ host: 'evil.example', 'x-forwarded-host': 'evil.example' });
    expect(html).toContain('https://mcp.example.com/mcp');
    expect(html).not.toContain('evil.example');
  });

  it('escapes a plan name written by an operator', async () => {
    const { html } = await page();
    expect(html).not.toContain('<img src=x');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });
});
