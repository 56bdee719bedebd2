// The OAuth consent page and Connected apps in a real browser (Debian's Chromium driven by
// playwright-core) against the real service and PostgreSQL: an app's authorization request lands
// on the dashboard's consent page, the person signs in there with an injected EVM wallet or a
// Solana wallet, sees the app's name, address and logo and the servers it asks for, narrows them
// and approves; the browser returns to the app with a code whose token calls only the approved
// server, charged to that wallet's account. Connected apps lists the app and revokes it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../server/runtime.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { balanceOf, post, toolCall } from '../helpers/service.ts';
import { authorizationUrl, pkcePair, registerClient, tokenRequest } from '../oauth/helpers.ts';
import { expectAccessibleIn, screenshot } from './browser.ts';
import { injectWallets, type InjectedWallets } from './wallets.ts';
import { startDashboardRig, type DashboardRig } from './rig.ts';

let rig: DashboardRig;
let db: TestDatabase;
let service: RunningService;
let browser: Browser;
/** The app's side of the redirect: a native app's loopback callback page (RFC 8252), on a port of its own. */
let app: http.Server;
let appCallback: string;

beforeAll(async () => {
  app = http.createServer((_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end('<!doctype html><title>Back in the app</title><p>Back in the app</p>');
  });
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  appCallback = `http://127.0.0.1:${(app.address() as AddressInfo).port}/callback`;
  rig = await startDashboardRig({ env: { DASHBOARD_SIGN_IN_LIMIT: '100' } });
  ({ db, service, browser } = rig);
}, 120_000);

afterAll(async () => {
  await rig?.close();
  await new Promise((resolve) => app?.close(resolve));
});

/** A client registered with the app's callback as its redirect URI. */
const register = (extra: Record<string, unknown> = {}) => registerClient(service.url, { redirect_uris: [appCallback], ...extra });

/** A browser of its own with the stand-in wallets; where the browser was sent back to the app is recorded. */
async function person(): Promise<{ context: BrowserContext; page: Page; wallets: InjectedWallets; returned: () => URL | undefined }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const wallets = await injectWallets(context, privateKeyToAccount(generatePrivateKey()));
  let back: URL | undefined;
  context.on('request', (request) => {
    if (request.url().startsWith(appCallback)) back = new URL(request.url());
  });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  page.on('dialog', (d) => void d.accept());
  return { context, page, wallets, returned: () => back };
}

const echo = (server: string, token: string) => post(`${service.url}/mcp/${server}`, toolCall('bench_echo', { message: 'hi' }), { authorization: `Bearer ${token}` });

describe('the consent page in Chromium', () => {
  for (const kind of ['EVM', 'Solana'] as const) {
    it(`signs in with an injected ${kind} wallet, shows the app and its servers, approves a narrowed set; the token calls only that server, charged to the wallet's account`, async () => {
      const { context, page, wallets, returned } = await person();
      try {
        const clientId = await register({ client_name: 'Browser Assistant', client_uri: 'https://assistant.example/', logo_uri: 'https://assistant.example/logo.png' });
        const { verifier, challenge } = pkcePair();
        await page.goto(authorizationUrl(service.url, { clientId, redirectUri: appCallback, challenge, scope: 'market-intelligence price-prediction' }).href);
        await page.getByRole('heading', { name: 'Authorize Browser Assistant', level: 1 }).waitFor();
        const card = page.getByTestId('consent-client');
        expect(await card.textContent()).toContain('https://assistant.example/');
        expect(await card.textContent()).toContain(new URL(appCallback).host);
        expect(await card.locator('img').getAttribute('src')).toBe('https://assistant.example/logo.png');
        await page.getByRole('heading', { name: 'Sign in to continue' }).waitFor();
        await expectAccessibleIn(page);

        await page.getByRole('button', kind === 'EVM' ? { name: 'Test Wallet', exact: true } : { name: 'Test Solana Wallet' }).click();
        await page.getByTestId('consent-account').waitFor();
        const session = await page.evaluate(() => fetch('/api/session').then((r) => r.json()));
        if (kind === 'Solana') expect(session.wallet.address).toBe(wallets.solanaAddress);
        expect(wallets.prompts.at(-1)).toContain(kind === 'EVM' ? 'wants you to sign in with your Ethereum account' : 'wants you to sign in with your Solana account');
        const boxes = page.getByRole('group', { name: 'Servers Browser Assistant may use' }).getByRole('checkbox');
        expect(await boxes.count()).toBe(2);
        await page.getByRole('checkbox', { name: 'price-prediction' }).uncheck();
        await screenshot(page, `consent/consent-${kind}.png`);
        await expectAccessibleIn(page);
        await page.getByRole('button', { name: 'Approve' }).click();
        await expect.poll(returned, { timeout: 15_000 }).toBeDefined();

        const back = returned()!;
        expect(back.searchParams.get('iss')).toBe(service.url);
        expect(back.searchParams.get('state')).toBe('st4te');
        const token = await tokenRequest(service.url, { grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: appCallback, client_id: clientId, code_verifier: verifier });
        expect(token.status).toBe(200);
        const before = await balanceOf(db, session.account.id);
        expect((await echo('market-intelligence', String(token.body.access_token))).status).toBe(200);
        expect(await balanceOf(db, session.account.id)).toBe(before - 1);
        expect((await echo('price-prediction', String(token.body.access_token))).status).toBe(403);
      } finally {
        await context.close();
      }
    });
  }

  it('Deny without signing in returns access_denied to the app', async () => {
    const { context, page, returned } = await person();
    try {
      const clientId = await register();
      await page.goto(authorizationUrl(service.url, { clientId, redirectUri: appCallback, challenge: pkcePair().challenge, resource: `${service.url}/mcp/market-intelligence` }).href);
      await page.getByRole('button', { name: 'Deny without signing in' }).click();
      await expect.poll(returned, { timeout: 15_000 }).toBeDefined();
      expect(returned()!.searchParams.get('error')).toBe('access_denied');
    } finally {
      await context.close();
    }
  });
});

describe('Connected apps in Chromium', () => {
  it('lists the app (client, servers, connected, last used) and Revoke stops its token', async () => {
    const { context, page, returned } = await person();
    try {
      const clientId = await register({ client_name: 'Revocable Assistant' });
      const { verifier, challenge } = pkcePair();
      await page.goto(authorizationUrl(service.url, { clientId, redirectUri: appCallback, challenge, resource: `${service.url}/mcp/market-intelligence` }).href);
      await page.getByRole('button', { name: 'Test Wallet', exact: true }).click();
      await page.getByRole('button', { name: 'Approve' }).click();
      await expect.poll(returned, { timeout: 15_000 }).toBeDefined();
      // The app has the code once its callback is asked for, but the browser may still be loading
      // that page: let it finish before navigating away, or the two navigations race.
      await page.waitForURL((url) => url.href.startsWith(appCallback));
      const token = await tokenRequest(service.url, { grant_type: 'authorization_code', code: returned()!.searchParams.get('code')!, redirect_uri: appCallback, client_id: clientId, code_verifier: verifier });
      const access = String(token.body.access_token);
      expect((await echo('market-intelligence', access)).status).toBe(200);

      await page.goto(`${service.url}/app/apps`);
      await page.getByRole('heading', { name: 'Connected apps', level: 1 }).waitFor();
      const row = page.getByTestId('connected-apps').getByRole('row', { name: /Revocable Assistant/ });
      await row.waitFor();
      expect(await row.textContent()).toContain('market-intelligence');
      // Last used is written in batches (about a second): reload until it shows.
      await expect
        .poll(async () => {
          await page.reload();
          await page.getByTestId('connected-apps').waitFor();
          return (await row.locator('td[data-label="Last used"]').textContent())?.trim();
        }, { timeout: 10_000, interval: 500 })
        .not.toBe('—');
      await screenshot(page, 'consent/connected-apps.png');
      await expectAccessibleIn(page);
      await page.getByRole('button', { name: 'Revoke Revocable Assistant' }).click();
      await page.getByTestId('no-apps').waitFor();
      const after = await echo('market-intelligence', access);
      expect(after.status).toBe(401);
    } finally {
      await context.close();
    }
  });
});
