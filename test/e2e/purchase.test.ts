/// <reference lib="dom" />
// Buying a plan from the dashboard in Chromium (issue 21): Plans → Upgrade to Basic → the
// injected wallet sends the USDC transfer on the anvil devnet → the service verifies it by RPC →
// the plan changes on screen. Only the browser extension is a stand-in: an EIP-6963 provider whose
// key stays in the test process (it signs with a viem local account and sends the raw transaction
// to anvil; every read the page's wallet client makes is passed to the node). Page, server,
// chain, token, database and cookies are all real.
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, http, type Hex } from 'viem';
import { startDevnet, type Devnet } from '../../server/devnet/devnet.ts';
import type { RunningService } from '../../server/runtime.ts';
import { WEB_DIST } from '../../server/dashboard/ui.ts';
import { buildWeb } from '../../scripts/build-web.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { ledgerSum, startTestService } from '../helpers/service.ts';
import { rpcEnv } from '../dashboard/helpers.ts';
import { devnetAccount, devnetClients, usdcBalance } from '../payments/helpers.ts';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/dashboard');

let db: TestDatabase;
let devnet: Devnet;
let service: RunningService;
let browser: Browser;
let page: Page;
const payer = devnetAccount(12);
/** What the wallet was asked to do, in order (what a person would approve). */
const prompts: string[] = [];
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
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const wallet = createWalletClient({ account: payer, chain: devnetClients(m).chain, transport: http(m.rpc_url) });
  let chainId = 1;
  await context.exposeBinding('__payWallet', async (_source, method: string, params: unknown[]) => {
    switch (method) {
      case 'eth_requestAccounts':
      case 'eth_accounts':
        return [payer.address];
      case 'eth_chainId':
        return `0x${chainId.toString(16)}`;
      case 'wallet_switchEthereumChain':
        chainId = Number((params as [{ chainId: string }])[0].chainId);
        prompts.push(`switch to ${chainId}`);
        return null;
      case 'wallet_requestPermissions':
      case 'wallet_revokePermissions':
        return null;
      case 'personal_sign': {
        const [data] = params as [Hex];
        prompts.push('sign in');
        return payer.signMessage({ message: { raw: data } });
      }
      case 'eth_sendTransaction': {
        const [tx] = params as [{ to: Hex; data?: Hex; value?: Hex; gas?: Hex }];
        prompts.push(`send to ${tx.to.toLowerCase()}`);
        const hash = await wallet.sendTransaction({ to: tx.to, data: tx.data, value: tx.value ? BigInt(tx.value) : undefined, gas: tx.gas ? BigInt(tx.gas) : undefined });
        sent.push(hash);
        return hash;
      }
      default: {
        // Reads (gas, fees, nonce, blocks) go to the node, as an extension's RPC does.
        const res = await fetch(m.rpc_url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
        const body = (await res.json()) as { result?: unknown; error?: { message: string } };
        if (body.error) throw new Error(body.error.message);
        return body.result;
      }
    }
  });
  await context.addInitScript(() => {
    const w = window as unknown as { __payWallet: (method: string, params: unknown[]) => Promise<unknown> };
    const provider = {
      request: async ({ method, params }: { method: string; params?: unknown[] }) => {
        try {
          return await w.__payWallet(method, params ?? []);
        } catch (err) {
          throw Object.assign(new Error((err as Error).message), { code: -32603 });
        }
      },
      on: () => {},
      removeListener: () => {},
    };
    const icon = 'data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHdpZHRoPSIxIiBoZWlnaHQ9IjEiLz4=';
    const detail = Object.freeze({ info: { uuid: '0d9c3c1e-5b7a-4d2e-9c1f-2a3b4c5d6e7f', name: 'Test Wallet', icon, rdns: 'dev.cryptomcp.paywallet' }, provider });
    const announce = () => window.dispatchEvent(new CustomEvent('eip6963:announceProvider', { detail }));
    window.addEventListener('eip6963:requestProvider', announce);
    announce();
  });
  page = await context.newPage();
  page.setDefaultTimeout(20_000);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await service?.close();
  await devnet?.stop();
  await db?.drop();
});

describe('buying a plan in the browser', () => {
  it('Plans → Upgrade to Basic → the wallet sends the USDC transfer on the devnet → the plan and balance change on screen', async () => {
    const m = devnet.manifest;
    await page.goto(`${service.url}/app/`);
    await page.getByRole('button', { name: 'Test Wallet', exact: true }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    expect(await page.getByTestId('header-balance').textContent()).toBe('150 credits');

    await page.getByRole('link', { name: 'Plans' }).click();
    const basic = page.locator('li.plan', { has: page.getByRole('heading', { name: /^Basic/ }) });
    expect(await basic.textContent()).toContain('$29.00 / month');
    await page.getByRole('button', { name: 'Upgrade to Basic' }).click();
    await page.getByRole('heading', { name: /Buy Basic \(one month\) for \$29\.00/ }).waitFor();
    const treasuryBefore = await usdcBalance(m, m.payments.treasury.address);
    await page.getByRole('button', { name: 'Pay with Test Wallet' }).click();

    await basic.getByText('Your plan').waitFor();
    await page.getByText('Paid. Basic (one month) is yours.').waitFor();
    await page.screenshot({ path: path.join(ARTIFACTS, 'purchase-basic.png'), fullPage: true });
    expect(await page.getByTestId('header-balance').textContent()).toBe('5,000 credits');
    expect(await page.getByRole('button', { name: 'Extend Basic by a month' }).isVisible()).toBe(true);

    // The wallet switched to the order's chain and sent one transfer; the treasury got the price.
    expect(prompts).toEqual(['sign in', `switch to ${m.chain_id}`, `send to ${m.payments.usdc.address.toLowerCase()}`]);
    expect(sent).toHaveLength(1);
    expect(await usdcBalance(m, m.payments.treasury.address)).toBe(treasuryBefore + 29_000_000n);
    const account = await db.query<{ id: string; plan: string; balance: number }>(
      'SELECT a.id, a.plan, a.balance FROM accounts a JOIN wallets w ON w.account_id = a.id WHERE w.address = $1',
      [payer.address.toLowerCase()],
    );
    expect(account.rows[0]).toMatchObject({ plan: 'basic', balance: 5000 });
    expect(await ledgerSum(db, account.rows[0]!.id)).toBe(5000);

    // Usage lists the purchase with its receipt.
    await page.getByRole('link', { name: 'Usage' }).click();
    const purchases = page.getByTestId('purchases');
    await purchases.waitFor();
    expect(await purchases.textContent()).toContain('Plan basic');
    expect(await purchases.textContent()).toContain('$29.00');
    const receipt = await page.getByRole('link', { name: /^Receipt #/ }).getAttribute('href');
    const html = await (await page.request.get(`${service.url}${receipt!}`)).text();
    expect(html).toContain(sent[0]!.toLowerCase());
  });
});
