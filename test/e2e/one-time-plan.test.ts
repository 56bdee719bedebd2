/// <reference lib="dom" />
// A one-time plan is not sold or extended by the month (issue 36), in Chromium against the real
// service, PostgreSQL and the devnet taking USDC, at 1280 and 375 px. Free is given a price, as a
// PlanPolicy may do: on the Plans page an account on Free sees its one-time allowance with no
// "Extend Free by a month" (no button, no monthly price) while Basic still offers "Upgrade to
// Basic"; and the dashboard API refuses a quote or an order of Free with 400 INVALID_PARAMS,
// recording no order. axe-core finds no serious issue and nothing overflows sideways.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/wait.ts';
import { signedInNewAccount } from '../dashboard/helpers.ts';
import { devnetAccount } from '../payments/helpers.ts';
import { expectAccessibleIn, expectNoOverflowIn, screenshot, VIEWPORTS } from './browser.ts';
import { startPayingBrowser, type PayingBrowser } from './paying.ts';

let env: PayingBrowser;
const payer = devnetAccount(13);

beforeAll(async () => {
  env = await startPayingBrowser(payer);
  await env.db.query("UPDATE plans SET price_cents = 500 WHERE name = 'free'");
  // The service reads plans through a short cache: wait until it serves the price.
  await eventually(async () => {
    const catalog = (await (await fetch(`${env.service.url}/v1/catalog`)).json()) as { plans: { name: string; price_cents: number | null }[] };
    return catalog.plans.find((p) => p.name === 'free')?.price_cents === 500;
  });
}, 120_000);

afterAll(async () => {
  await env?.close();
});

describe('a one-time plan on the Plans page', () => {
  it('Free, priced by a PlanPolicy: no monthly price and no "Extend Free by a month" at 1280 and 375 px; Basic still offers its upgrade', async () => {
    const { page } = env;
    await env.signIn();
    await page.getByRole('link', { name: 'Plans' }).click();
    const free = page.locator('li.plan', { has: page.getByRole('heading', { name: /^Free/ }) });
    const basic = page.locator('li.plan', { has: page.getByRole('heading', { name: /^Basic/ }) });
    for (const viewport of VIEWPORTS) {
      await page.setViewportSize(viewport);
      await basic.getByRole('button', { name: 'Upgrade to Basic' }).waitFor();
      await free.getByText('Your plan').waitFor();
      await free.getByText('One-time allowance').waitFor();
      expect(await free.getByRole('button').count()).toBe(0);
      expect(await free.textContent()).not.toContain('/ month');
      expect(await page.getByRole('button', { name: /by a month/ }).count()).toBe(0);
      await expectAccessibleIn(page);
      await expectNoOverflowIn(`plans with a one-time plan at ${viewport.width} px`, page);
      await screenshot(page, `dashboard/plans-one-time-${viewport.width}.png`);
    }
    expect(env.sent).toHaveLength(0);
  });

  it('the dashboard API refuses to quote or order a one-time plan (400 INVALID_PARAMS) and records no order', async () => {
    const { client, accountId } = await signedInNewAccount(env.service.url);
    const quote = await client.get('/api/orders/quote?kind=plan&item=free');
    expect(quote.status).toBe(400);
    expect(quote.body.error).toMatchObject({ code: 'INVALID_PARAMS', details: { plan: 'free', issues: [{ path: 'item' }] } });
    expect(quote.body.error.message).toBe('Free is a one-time allowance: it is not sold or extended by the month.');
    const order = await client.post('/api/orders', { kind: 'plan', item: 'free', chain: 'ethereum' });
    expect(order.status).toBe(400);
    expect(order.body.error.code).toBe('INVALID_PARAMS');
    expect((await env.db.query('SELECT 1 FROM payment_orders WHERE account_id = $1', [accountId])).rowCount).toBe(0);
    // A monthly plan is still sold.
    expect((await client.post('/api/orders', { kind: 'plan', item: 'basic', chain: 'ethereum' })).status).toBe(201);
  });
});
