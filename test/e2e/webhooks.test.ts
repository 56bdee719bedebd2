/// <reference lib="dom" />
// The Webhooks page in Chromium against the real service, PostgreSQL and the anvil devnet, at
// 1280 and 375 px: a person signs in with the injected wallet, adds an endpoint by URL and sees its
// signing secret once; a whale rule naming that URL fires on a transfer, the local receiver
// (which verifies the Standard Webhooks signature) fails twice and accepts the third attempt; the
// delivery log shows the delivery with its three attempts; Redeliver sends it again; an account
// notice (usage at 80%) sent to the endpoint is in the log as account.usage and is redelivered;
// Rotate shows a new secret once. axe-core finds no serious WCAG 2 A/AA issue and nothing overflows sideways.
import type { Browser, Page } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Devnet } from '../../server/devnet/devnet.ts';
import { keyCreate } from '../../server/keys/store.ts';
import type { RunningService } from '../../server/runtime.ts';
import { accountNoticesRecord } from '../../server/alerts/notices.ts';
import { sendToExchange, writeManifest } from '../alerts/devnet-transfers.ts';
import { startReceiver } from '../alerts/receiver.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { post, toolCall } from '../helpers/service.ts';
import { eventually } from '../helpers/wait.ts';
import { expectAccessibleIn, expectNoOverflowIn, screenshot, VIEWPORTS } from './browser.ts';
import { injectWallets } from './wallets.ts';
import { startDashboardRig, type DashboardRig } from './rig.ts';

let rig: DashboardRig<Devnet>;
let db: TestDatabase;
let devnet: Devnet;
let service: RunningService;
let browser: Browser;

beforeAll(async () => {
  rig = await startDashboardRig({
    devnet: true,
    env: (d) => ({
      MCP_SERVERS: 'whale-intelligence',
      ETHEREUM_RPC_URL: d.manifest.rpc_url,
      DEVNET_MANIFEST: writeManifest(d),
      // The receiver listens on loopback over http.
      WEBHOOK_ALLOW_PRIVATE: '1',
      ALERT_EVALUATE_INTERVAL_MS: '200',
      JOBS_POLL_INTERVAL_MS: '50',
      WEBHOOK_RETRY_SCHEDULE_MS: '100,100,100',
    }),
  });
  ({ db, devnet, service, browser } = rig);
}, 120_000);

afterAll(async () => {
  await rig?.close();
});

async function signedIn(viewport: { width: number; height: number }): Promise<{ page: Page; accountId: string }> {
  const context = await browser.newContext({ viewport });
  const wallet = privateKeyToAccount(generatePrivateKey());
  await injectWallets(context, wallet);
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  page.on('dialog', (d) => void d.accept());
  await page.goto(`${service.url}/app/`);
  await page.getByRole('button', { name: 'Test Wallet', exact: true }).click();
  await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
  const account = await db.query<{ account_id: string }>('SELECT account_id FROM wallets WHERE address = $1', [wallet.address.toLowerCase()]);
  return { page, accountId: account.rows[0]!.account_id };
}

describe('the Webhooks page in Chromium', () => {
  for (const viewport of VIEWPORTS) {
    it(`${viewport.width} px: add an endpoint (secret shown once), its delivery log after a rule fires (three attempts), redeliver, rotate`, async () => {
      const { page, accountId } = await signedIn(viewport);
      const receiver = await startReceiver({ failFirst: 2 });
      try {
        await page.getByRole('link', { name: 'Webhooks' }).click();
        await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
        await page.getByTestId('no-webhooks').waitFor();
        expect(new URL(page.url()).pathname).toBe('/app/webhooks');

        // A URL the service refuses: a coded refusal, nothing added.
        await page.getByRole('textbox', { name: /^URL/ }).fill('ftp://files.example/hook');
        await page.getByRole('button', { name: 'Add endpoint' }).click();
        await page.getByRole('alert').filter({ hasText: 'This URL cannot receive webhooks: only https:// URLs are allowed.' }).waitFor();
        expect((await db.query('SELECT 1 FROM webhook_endpoints WHERE account_id = $1', [accountId])).rowCount).toBe(0);

        // Added: the secret is shown once (the same URL again shows none).
        await page.getByRole('textbox', { name: /^URL/ }).fill(receiver.url);
        await page.getByRole('button', { name: 'Add endpoint' }).click();
        const secret = (await page.getByTestId('webhook-secret').textContent())!;
        expect(secret).toMatch(/^whsec_/);
        const stored = await db.query<{ secret: string }>('SELECT secret FROM webhook_endpoints WHERE account_id = $1', [accountId]);
        expect(stored.rows.map((r) => r.secret)).toEqual([secret]);
        receiver.secret = secret;
        const table = page.getByTestId('webhooks');
        await table.getByText(receiver.url).waitFor();
        await page.getByRole('textbox', { name: /^URL/ }).fill(receiver.url);
        await page.getByRole('button', { name: 'Add endpoint' }).click();
        await page.getByText('You have an endpoint for').waitFor();
        await expectAccessibleIn(page);
        await expectNoOverflowIn(`webhooks ${viewport.width} px`, page);

        // A whale rule naming that URL (an MCP call with a key of this account) uses the endpoint.
        const { plaintext } = await keyCreate(db, accountId, { name: 'alerts' });
        const created = await post(`${service.url}/mcp/whale-intelligence`, toolCall('create_whale_alert', { chain: 'ethereum', min_usd: 1000, webhook_url: receiver.url }), { 'x-api-key': plaintext });
        const result = (created.body as { result: { structuredContent: { data: { rule: { id: string }; webhook: { created: boolean; secret: string | null } } } } }).result.structuredContent.data;
        expect(result.webhook).toEqual(expect.objectContaining({ created: false, secret: null }));
        await sendToExchange(devnet, '2');
        const [got] = await receiver.waitFor(1);
        expect(receiver.attempts.get(got!.id)).toBe(3);

        // The log: delivered, with the two failures and the success.
        await page.reload();
        await page.getByRole('button', { name: `Delivery log of ${receiver.url}` }).click();
        const log = page.getByTestId('deliveries');
        await log.waitFor();
        const row = log.locator('tbody tr').first();
        await row.getByText('delivered', { exact: true }).waitFor();
        const attempts = await row.locator('ol.attempts li').allTextContents();
        expect(attempts).toHaveLength(3);
        expect(attempts[0]).toMatch(/^#1 HTTP error 500, \d+ ms$/);
        expect(attempts[2]).toMatch(/^#3 accepted 204, \d+ ms$/);
        expect(await table.textContent()).toContain('1 delivered, 0 pending, 0 failed');
        await expectAccessibleIn(page);
        await expectNoOverflowIn(`delivery log ${viewport.width} px`, page);
        await screenshot(page, `dashboard/webhooks-${viewport.width}.png`);

        // Redeliver: sent again now, verified by the receiver.
        await row.getByRole('button', { name: /^Redeliver alert/ }).click();
        await page.getByText(/is being sent again/).waitFor();
        await receiver.waitFor(2);
        expect(receiver.rejected).toBe(0);

        // An account notice (usage at 80%) goes to the same endpoint through the same sender: it is
        // in the log as account.usage and Redeliver sends it again, signed.
        const notice = { account_id: accountId, kind: 'usage' as const, event_id: `usage:e2e:80`, title: "80% of this period's Free credits used", data: { threshold_percent: 80 } };
        expect(await accountNoticesRecord(db, [notice])).toBe(1);
        const [, , noticed] = await receiver.waitFor(3);
        expect(noticed!.body).toMatchObject({ type: 'account.usage', data: { event_id: notice.event_id } });
        // Recorded as delivered just after the receiver answered: refresh the log once it is.
        await eventually(async () => (await db.query("SELECT 1 FROM webhook_deliveries WHERE account_id = $1 AND notice_id IS NOT NULL AND status = 'delivered'", [accountId])).rowCount);
        await page.getByRole('button', { name: 'Refresh' }).click();
        const noticeRow = log.locator('tbody tr', { hasText: 'account.usage' });
        await noticeRow.getByText('delivered', { exact: true }).waitFor();
        await noticeRow.getByText(notice.title).waitFor();
        await noticeRow.getByRole('button', { name: /^Redeliver notice \d+$/ }).click();
        await page.getByText(/The notice \d+ is being sent again/).waitFor();
        const [, , , again] = await receiver.waitFor(4);
        expect(again!.id).toBe(noticed!.id);
        expect(receiver.rejected).toBe(0);
        await expectAccessibleIn(page);
        await expectNoOverflowIn(`delivery log with a notice ${viewport.width} px`, page);

        // Rotate: a new secret, shown once, different from the first.
        await page.getByRole('button', { name: `Rotate the secret of ${receiver.url}` }).click();
        await page.getByRole('heading', { name: 'New signing secret' }).waitFor();
        const rotated = (await page.getByTestId('webhook-secret').textContent())!;
        expect(rotated).toMatch(/^whsec_/);
        expect(rotated).not.toBe(secret);
        await table.getByText('The previous secret signs too until').waitFor();

        // This account's rule stops here, so the next run's transfer concerns only its own.
        await post(`${service.url}/mcp/whale-intelligence`, toolCall('delete_alert_rule', { rule_id: result.rule.id }), { 'x-api-key': plaintext });
      } finally {
        await page.context().close();
        await receiver.close();
      }
    }, 120_000);
  }
});
