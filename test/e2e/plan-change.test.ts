/// <reference lib="dom" />
// An upgrade that shows and keeps the value of the plan already paid for (issues 30 and 36), in
// Chromium against the real service, PostgreSQL and the anvil devnet, with the injected test wallet
// (./wallets.ts). Basic is bought, then Pro: before the wallet is asked for anything, the purchase
// panel shows the rule (Pro starts when Basic's paid time ends), what the paid time left is worth,
// the price and the dates, above the pay button; after paying, Basic and its credits are untouched
// and Pro is listed as bought to follow.
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevnet, type Devnet } from '../../server/devnet/devnet.ts';
import { WEB_DIST } from '../../server/dashboard/ui.ts';
import type { RunningService } from '../../server/runtime.ts';
import { buildWeb } from '../../scripts/build-web.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { ledgerSum, startTestService } from '../helpers/service.ts';
import { rpcEnv } from '../dashboard/helpers.ts';
import { devnetAccount, devnetClients } from '../payments/helpers.ts';
import { CHROMIUM, CHROMIUM_ARGS, expectAccessibleIn, expectNoOverflowIn, horizontalOverflow, VIEWPORTS } from './browser.ts';
import { injectWallets, sendingFrom, type InjectedWallets } from './wallets.ts';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/dashboard');

let db: TestDatabase;
let devnet: Devnet;
let service: RunningService;
let browser: Browser;
let page: Page;
let wallets: InjectedWallets;
const payer = devnetAccount(13);
const sent: Hex[] = [];

beforeAll(async () => {
  if (!fs.existsSync(path.join(WEB_DIST, 'index.html'))) await buildWeb();
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  db = await createTestDatabase();
  devnet = await startDevnet();
  const m = devnet.manifest;
  service = await startTestService(db.url, {
    ...rpcEnv(m.rpc_url),
    MCP_SERVERS: 'market-intelligence',
    PAYMENT_CHAINS: JSON.stringify({ ethereum: { treasury: m.payments.treasury.address, token: m.payments.usdc.address, chain_id: m.chain_id, confirmations: 1 } }),
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  wallets = await injectWallets(context, payer, { evmRpcUrl: m.rpc_url, sendEvmTransaction: sendingFrom(payer, devnetClients(m).chain, m.rpc_url, sent) });
  page = await context.newPage();
  page.setDefaultTimeout(20_000);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await service?.close();
  await devnet?.stop();
  await db?.drop();
});

describe('changing plan in the browser', () => {
  it('Basic, then Pro: the panel shows the rule and its numbers above the pay button before the wallet is asked, and Basic\'s paid month is kept', async () => {
    await page.goto(`${service.url}/app/`);
    await page.getByRole('button', { name: 'Test Wallet', exact: true }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
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
    await page.screenshot({ path: path.join(ARTIFACTS, 'plan-change-quote.png'), fullPage: true });
    // On a phone: the same terms, readable without sideways scrolling, before anything is asked.
    await page.setViewportSize(VIEWPORTS[1]);
    await expect.poll(async () => (await horizontalOverflow(page)).overflow, { timeout: 5000 }).toBeLessThanOrEqual(0).catch(() => {});
    await expectNoOverflowIn('the plan-change terms at 375 px', page);
    expect(await terms.textContent()).toContain('kept in full');
    await expectAccessibleIn(page);
    await page.screenshot({ path: path.join(ARTIFACTS, 'plan-change-quote-375.png'), fullPage: true });
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
