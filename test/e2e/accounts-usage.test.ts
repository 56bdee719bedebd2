// Accounts with several wallets and usage by outcome, in Chromium (playwright-core) with injected
// EVM and Solana wallets against the real service and PostgreSQL: a wallet with no account used to
// sign in while signed in is offered for linking (no second account appears) and can be unlinked,
// never the last; a wallet with its own account is merged with a signature from each wallet, and
// both accounts' balances still equal their ledgers; the Usage page shows one key's successes,
// failures and 429s as the gateway answered them, for a preset and a custom range. Each state is
// checked by axe-core (light and dark) and for sideways overflow at 375 and 1280 px.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountIdByWallet } from '../../server/accounts/accounts.ts';
import { keyCreate } from '../../server/keys/store.ts';
import type { RunningService } from '../../server/runtime.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { balanceOf, ledgerSum, post, toolCall } from '../helpers/service.ts';
import { expectAccessibleIn, expectNoOverflowIn, SCHEMES, screenshot, signInWith, signOut, type TestWallet, useScheme, VIEWPORTS } from './browser.ts';
import { injectWallets, type InjectedWallets } from './wallets.ts';
import { startDashboardRig, type DashboardRig } from './rig.ts';

let rig: DashboardRig;
let db: TestDatabase;
let service: RunningService;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  rig = await startDashboardRig({ env: { MCP_SERVERS: 'market-intelligence', DASHBOARD_SIGN_IN_LIMIT: '100' } });
  ({ db, service, browser } = rig);
}, 120_000);

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await rig?.close();
});

async function newBrowser(): Promise<{ page: Page; wallets: InjectedWallets; evm: ReturnType<typeof privateKeyToAccount> }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  contexts.push(context);
  const evm = privateKeyToAccount(generatePrivateKey());
  const wallets = await injectWallets(context, evm);
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  return { page, wallets, evm };
}

/** axe-core at both widths in both schemes, and no sideways overflow, for the page as it is now. */
async function checkEveryWay(page: Page, where: string): Promise<void> {
  for (const viewport of VIEWPORTS) {
    await page.setViewportSize(viewport);
    for (const scheme of SCHEMES) {
      await useScheme(page, scheme);
      await expectAccessibleIn(page);
      await expectNoOverflowIn(`${where} at ${viewport.width} px, ${scheme}`, page);
    }
  }
  await page.setViewportSize(VIEWPORTS[0]);
  await page.emulateMedia({ colorScheme: 'light' });
}

const signIn = (page: Page, wallet: TestWallet) => signInWith(page, service.url, wallet);

const accountOf = async (page: Page): Promise<string> => (await page.evaluate(() => fetch('/api/session').then((r) => r.json()))).account.id;

async function invariantHolds(accountId: string): Promise<void> {
  const balance = await balanceOf(db, accountId);
  expect(balance).toBeGreaterThanOrEqual(0);
  expect(await ledgerSum(db, accountId)).toBe(balance);
}

describe('accounts and usage in Chromium', () => {
  it('a wallet with no account used to sign in while signed in is offered for linking, not made a second account; then it can be unlinked, never the last', async () => {
    const { page, wallets } = await newBrowser();
    await signIn(page, 'Test Wallet');
    const x = await accountOf(page);
    const accounts = async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM accounts')).rows[0]!.n;
    const before = await accounts();

    await page.getByRole('button', { name: 'Switch wallet' }).click();
    await page.getByTestId('switch-wallet').getByRole('button', { name: 'Test Solana Wallet' }).click();
    const offer = page.getByTestId('link-offer');
    await offer.waitFor();
    expect(await offer.textContent()).toContain(`${wallets.solanaAddress} has no cryptomcp account yet`);
    await checkEveryWay(page, 'link offer');
    await screenshot(page, 'dashboard/accounts-1-link-offer.png');
    await page.getByRole('button', { name: 'Link it to this account' }).click();
    await page.getByTestId('app-notice').getByText('is linked').waitFor();
    expect(await accounts()).toBe(before);
    expect(await accountIdByWallet(db, 'solana', wallets.solanaAddress)).toBe(x);
    expect(await accountOf(page)).toBe(x);

    await page.getByRole('link', { name: 'Plans' }).click();
    const list = page.getByTestId('wallet-list');
    await list.getByText(wallets.solanaAddress).waitFor();
    expect(await list.locator('li').count()).toBe(2);
    await checkEveryWay(page, 'Plans with two wallets');
    // The wallet signed in with offers no Unlink; the other does, after a confirmation.
    expect(await list.getByRole('button', { name: 'Unlink' }).count()).toBe(1);
    await list.getByRole('button', { name: `Unlink ${wallets.solanaAddress}` }).click();
    await list.getByRole('button', { name: /^Unlink .+…/ }).click();
    await page.getByTestId('wallets-note').getByText('is no longer linked').waitFor();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="wallet-list"] li').length === 1);
    expect(await list.getByRole('button', { name: /Unlink/ }).count()).toBe(0);
    expect(await accountIdByWallet(db, 'solana', wallets.solanaAddress)).toBeUndefined();
  });

  let mergedInto: string;
  let mergedPage: Page;

  it('a wallet with its own account is merged into the signed-in one with a signature from each wallet; credits and keys move, both ledgers hold', async () => {
    const { page, wallets, evm } = await newBrowser();
    // The Solana wallet first gets an account of its own, with a key that has spent a credit.
    await signIn(page, 'Test Solana Wallet');
    const y = await accountOf(page);
    const { plaintext } = await keyCreate(db, y, { name: 'solana bot' });
    expect((await post(`${service.url}/mcp/market-intelligence`, toolCall('bench_echo', { message: 'hi' }), { 'x-api-key': plaintext })).status).toBe(200);
    await signOut(page);
    await signIn(page, 'Test Wallet');
    const x = await accountOf(page);
    expect(x).not.toBe(y);
    const [bx, by] = [await balanceOf(db, x), await balanceOf(db, y)];

    await page.getByRole('link', { name: 'Plans' }).click();
    await page.getByRole('button', { name: 'Link another wallet' }).click();
    await page.getByRole('button', { name: 'Test Solana Wallet' }).click();
    const dialog = page.getByTestId('merge-offer');
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain(`${by} credits, 1 active key and 1 wallet`);
    await checkEveryWay(page, 'merge offer');
    await screenshot(page, 'dashboard/accounts-2-merge-offer.png');

    await dialog.getByRole('button', { name: 'Merge into this account' }).click();
    await dialog.getByText('Step 1 of 2').waitFor();
    await dialog.getByRole('button', { name: 'Test Wallet', exact: true }).click();
    await dialog.getByText('Step 2 of 2').waitFor();
    await dialog.getByRole('button', { name: 'Test Solana Wallet' }).click();
    // Both are free accounts: the other's free allowance stays behind (once per account), nothing was bought.
    expect(await dialog.textContent()).toContain('what is left of its free allowance stays behind');
    await page.getByTestId('wallets-note').getByText('Merged: 0 credits, 1 key and 1 wallet moved to this account.').waitFor();
    await page.getByTestId('header-balance').getByText(`${bx.toLocaleString('en-US')} credits`).waitFor();

    // Both wallets were shown the same merge statement, naming both accounts.
    const [first, second] = wallets.prompts.slice(-2);
    expect(first).toContain(evm.address);
    expect(first).toContain(`Merge cryptomcp account ${y} into account ${x}`);
    expect(second).toContain(wallets.solanaAddress);
    expect(second).toContain(`Merge cryptomcp account ${y} into account ${x}`);
    expect(await balanceOf(db, x)).toBe(bx);
    expect(await balanceOf(db, y)).toBe(0);
    await invariantHolds(x);
    await invariantHolds(y);
    expect(await accountIdByWallet(db, 'solana', wallets.solanaAddress)).toBe(x);
    expect(await page.getByTestId('wallet-list').locator('li').count()).toBe(2);
    mergedInto = x;
    mergedPage = page;
  });

  it('Usage shows one key\'s successes, failures and 429s as the gateway answered them, for a preset and a custom range', async () => {
    const page = mergedPage;
    const { key, plaintext } = await keyCreate(db, mergedInto, { name: 'usage probe' });
    const url = `${service.url}/mcp/market-intelligence`;
    const statuses: number[] = [];
    statuses.push((await post(url, toolCall('bench_fail'), { 'x-api-key': plaintext })).status);
    // The free plan's burst runs out within a few dozen quick calls: then 429.
    for (let i = 0; i < 40 && !statuses.includes(429); i++) statuses.push((await post(url, toolCall('bench_echo', { message: String(i) }), { 'x-api-key': plaintext })).status);
    const ok = statuses.filter((s) => s === 200).length;
    const limited = statuses.filter((s) => s === 429).length;
    const failed = statuses.length - ok - limited;
    expect(limited).toBeGreaterThan(0);
    expect(failed).toBe(1);
    // The gateway writes its log in batches (within a second).
    for (const until = Date.now() + 10_000; Date.now() < until; await new Promise((r) => setTimeout(r, 200))) {
      const n = await db.query('SELECT 1 FROM request_log WHERE key_id = $1', [key.id]);
      if (n.rowCount === statuses.length) break;
    }

    await page.getByRole('link', { name: 'Usage' }).click();
    const breakdown = page.getByTestId('usage-breakdown');
    await breakdown.getByTestId('breakdown-key').getByRole('option', { name: 'usage probe' }).waitFor({ state: 'attached' });
    await breakdown.getByTestId('breakdown-key').selectOption({ label: 'usage probe' });
    const totals = breakdown.getByTestId('outcome-totals');
    const expected = `${statuses.length} requests, ${ok} succeeded, ${failed} failed, ${limited} rate-limited`;
    await totals.getByText(expected).waitFor();
    expect(await totals.textContent()).toContain('The last 30 days');
    const echo = breakdown.getByTestId('by-tool-outcomes').locator('tr', { hasText: 'bench_echo' });
    expect(await echo.locator('td[data-label="Rate-limited"]').textContent()).toBe(String(limited));
    expect(await breakdown.getByTestId('by-error').textContent()).toContain('RATE_LIMITED');
    expect(await breakdown.getByTestId('outcome-chart').count()).toBe(1);
    await checkEveryWay(page, 'Usage by outcome');
    await screenshot(page, 'dashboard/usage-by-outcome.png');

    // A custom range before these calls holds none of them; one that ends today holds them all.
    const day = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
    await page.getByTestId('range-preset').selectOption('custom');
    await page.getByTestId('range-from').fill(day(10));
    await page.getByTestId('range-to').fill(day(9));
    await page.getByRole('button', { name: 'Apply' }).click();
    await totals.getByText(`${day(10)} to ${day(9)} (UTC): 0 requests`).waitFor();
    await page.getByTestId('range-from').fill(day(1));
    await page.getByTestId('range-to').fill(day(0));
    await page.getByRole('button', { name: 'Apply' }).click();
    await totals.getByText(`${day(1)} to ${day(0)} (UTC): ${expected}`).waitFor();
    // A range that ends before it starts is refused in the page, in a sentence.
    await page.getByTestId('range-from').fill(day(0));
    await page.getByTestId('range-to').fill(day(1));
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('The last day must not be before the first day.').waitFor();
    await checkEveryWay(page, 'Usage with a custom range');
  });
});
