/// <reference lib="dom" />
// Key controls in Chromium (issue 36 item 3), against the real service and PostgreSQL with the
// injected test wallet: a key is created, paused (a real call with it is refused, 403 KEY_PAUSED)
// and resumed (it works), capped from the Limits panel (the call past the cap is refused and
// nothing charged), and the Activity list shows each action with the wallet and a request id; the
// page passes axe and does not scroll sideways at 1280 and 375 px; a revoked key's secret leaves
// the new-key box.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../server/runtime.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { post, toolCall } from '../helpers/service.ts';
import { expectAccessibleIn, expectNoOverflowIn, screenshot, signInWith, VIEWPORTS } from './browser.ts';
import { injectWallets } from './wallets.ts';
import { startDashboardRig, type DashboardRig } from './rig.ts';

let rig: DashboardRig;
let db: TestDatabase;
let service: RunningService;
let browser: Browser;

beforeAll(async () => {
  rig = await startDashboardRig({ env: { MCP_SERVERS: 'market-intelligence', KEY_CACHE_TTL_MS: '600000' } });
  ({ db, service, browser } = rig);
}, 120_000);

afterAll(async () => {
  await rig?.close();
});

async function call(key: string) {
  const res = await post(`${service.url}/mcp/market-intelligence`, toolCall('bench_echo'), { 'x-api-key': key });
  return { status: res.status, code: (res.body as { error?: { code: string } }).error?.code };
}

async function signedInPage(viewport: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page; address: string }> {
  const context = await browser.newContext({ viewport });
  const account = privateKeyToAccount(generatePrivateKey());
  await injectWallets(context, account);
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  page.on('dialog', (d) => void d.accept());
  await signInWith(page, service.url);
  return { context, page, address: account.address.toLowerCase() };
}

describe.each(VIEWPORTS)('key controls at $width px', (viewport) => {
  it('pause, resume, a cap and the activity list, each as a user does it', async () => {
    const { context, page, address } = await signedInPage(viewport);
    try {
      await page.getByLabel(/^Name/).fill('agent');
      await page.getByRole('button', { name: 'Create key' }).click();
      const plaintext = (await page.getByTestId('new-key').textContent())!;
      expect((await call(plaintext)).status).toBe(200);

      await page.getByRole('button', { name: 'Pause agent' }).click();
      await page.getByRole('button', { name: 'Resume agent' }).waitFor();
      expect(await call(plaintext)).toEqual({ status: 403, code: 'KEY_PAUSED' });
      await page.getByRole('button', { name: 'Resume agent' }).click();
      await page.getByRole('button', { name: 'Pause agent' }).waitFor();
      expect((await call(plaintext)).status).toBe(200);

      // A cap of 3 credits a day: two were spent, one more call fits, the next is refused, uncharged.
      await page.getByRole('button', { name: 'Limits of agent' }).click();
      const limits = page.getByTestId('key-limits');
      await limits.getByLabel('Credit cap').fill('3');
      await limits.getByLabel('Cap period').selectOption('day');
      await expectAccessibleIn(page);
      await limits.getByRole('button', { name: 'Save limits' }).click();
      await page.getByTestId('key-controls-summary').filter({ hasText: '2 of 3 credits this UTC day' }).waitFor();
      expect((await call(plaintext)).status).toBe(200);
      const balance = async () =>
        (await db.query<{ balance: number }>('SELECT a.balance FROM accounts a JOIN wallets w ON w.account_id = a.id WHERE w.address = $1', [address])).rows[0]!.balance;
      const before = await balance();
      expect(await call(plaintext)).toEqual({ status: 403, code: 'KEY_CAP_REACHED' });
      expect(await balance()).toBe(before);

      // The activity list, newest first, names each action with the wallet and a request id.
      await page.reload();
      const activity = page.getByTestId('audit-log');
      await activity.locator('li[data-action="key_update"]').waitFor();
      const actions = await activity.locator('li[data-action]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-action')));
      expect(actions, JSON.stringify(actions)).toEqual(['key_update', 'key_resume', 'key_pause', 'key_create', 'sign_in']);
      expect(await activity.locator('li[data-action]').first().textContent()).toMatch(/Changed a key · agent by 0x/);

      await expectAccessibleIn(page);
      await expectNoOverflowIn(`keys page at ${viewport.width} px`, page);
      await screenshot(page, `dashboard/key-controls-${viewport.width}.png`);

      // Revoking the key whose secret is on screen takes the secret off it.
      await page.getByLabel(/^Name/).fill('temporary');
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.getByTestId('new-key').waitFor();
      await page.getByRole('button', { name: 'Revoke temporary' }).click();
      await page.getByTestId('new-key').waitFor({ state: 'detached' });
    } finally {
      await context.close();
    }
  });
});
