/// <reference lib="dom" />
// An upgrade that shows and keeps the value of the plan already paid for (issues 30 and 36), in
// Chromium against the real service, PostgreSQL and the anvil devnet, with the injected test wallet
// (./wallets.ts). Basic is bought, then Pro: before the wallet is asked for anything, the purchase
// panel shows the rule (Pro starts when Basic's paid time ends), what the paid time left is worth,
// the price and the dates, above the pay button; after paying, Basic and its credits are untouched
// and Pro is listed as bought to follow.
import type { Page } from 'playwright-core';
import type { Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '../helpers/db.ts';
import { ledgerSum } from '../helpers/service.ts';
import { devnetAccount } from '../payments/helpers.ts';
import { expectAccessibleIn, expectNoOverflowIn, screenshot, VIEWPORTS } from './browser.ts';
import { startPayingBrowser, type PayingBrowser } from './paying.ts';
import type { InjectedWallets } from './wallets.ts';

let env: PayingBrowser;
let db: TestDatabase;
let page: Page;
let wallets: InjectedWallets;
const payer = devnetAccount(13);
let sent: Hex[];

beforeAll(async () => {
  env = await startPayingBrowser(payer);
  ({ db, page, wallets, sent } = env);
}, 120_000);

afterAll(async () => {
  await env?.close();
});

describe('changing plan in the browser', () => {
  it('Basic, then Pro: the panel shows the rule and its numbers above the pay button before the wallet is asked, and Basic\'s paid month is kept', async () => {
    await env.signIn();
    await page.getByRole('link', { name: 'Plans' }).click();

    // From Free: starts now.
    await page.getByRole('button', { name: 'Upgrade to Basic' }).click();
    await page.getByRole('heading', { name: 'Starts now' }).waitFor();
    await page.getByRole('button', { name: 'Pay with Test Wallet' }).click();
    await page.getByText('Paid: Basic (one month) added to your account.').waitFor();
    const basic = page.locator('li.plan', { has: page.getByRole('heading', { name: /^Basic/ }) });
    await basic.getByText('Your plan').waitFor();
    const account = await db.query<{ id: string; paid_until: Date }>(
      'SELECT a.id, a.paid_until FROM accounts a JOIN wallets w ON w.account_id = a.id WHERE w.address = $1',
      [payer.address.toLowerCase()],
    );
    const { id, paid_until: basicPaidUntil } = account.rows[0]!;
    await page.getByRole('button', { name: 'Close' }).click();

    // Then Pro, while Basic is paid: the terms come first.
    await page.getByRole('button', { name: 'Upgrade to Pro' }).click();
    const terms = page.getByRole('region', { name: 'Starts when the plan time already paid ends' });
    await terms.waitFor();
    const text = (await terms.textContent())!;
    const day = basicPaidUntil.toLocaleDateString('en-US', { dateStyle: 'medium', timeZone: 'UTC' });
    expect(text).toContain(`starts on ${basicPaidUntil.toISOString().slice(0, 10)}`);
    expect(text).toContain(`paid until ${day}`);
    expect(text).toMatch(/Paid time left\$\d+\.\d\d/);
    expect(text).toContain('kept in full');
    expect(text).toContain('You pay$79.00');
    // Above the pay button, and nothing was sent or asked of the wallet for it yet.
    const pay = page.getByRole('button', { name: 'Pay with Test Wallet' });
    expect((await terms.boundingBox())!.y).toBeLessThan((await pay.boundingBox())!.y);
    expect(sent).toHaveLength(1);
    const promptsBefore = wallets.prompts.length;
    await expectAccessibleIn(page);
    await screenshot(page, 'dashboard/plan-change-quote.png');
    // On a phone: the same terms, readable without sideways scrolling, before anything is asked.
    await page.setViewportSize(VIEWPORTS[1]);
    await expectNoOverflowIn('the plan-change terms at 375 px', page);
    expect(await terms.textContent()).toContain('kept in full');
    await expectAccessibleIn(page);
    await screenshot(page, 'dashboard/plan-change-quote-375.png');
    await page.setViewportSize(VIEWPORTS[0]);

    await pay.click();
    await page.getByText('Paid: Pro (one month) added to your account.').waitFor();
    expect(sent).toHaveLength(2);
    expect(wallets.prompts.length).toBe(promptsBefore + 1);
    // Basic stays the plan with its credits and paid time; Pro is listed as bought to follow.
    const pro = page.locator('li.plan', { has: page.getByRole('heading', { name: /^Pro/ }) });
    await pro.getByText(/^Bought: starts/).waitFor();
    expect(await basic.getByText('Your plan').isVisible()).toBe(true);
    expect(await page.getByTestId('header-balance').textContent()).toBe('5,000 credits');
    const after = await db.query<{ plan: string; balance: number; paid_until: Date }>('SELECT plan, balance, paid_until FROM accounts WHERE id = $1', [id]);
    expect(after.rows[0]).toMatchObject({ plan: 'basic', balance: 5000 });
    expect(after.rows[0]!.paid_until.toISOString()).toBe(basicPaidUntil.toISOString());
    expect(await ledgerSum(db, id)).toBe(5000);
  });
});
