/// <reference lib="dom" />
// A merge signed by the wrong key (issue 36), in Chromium with the injected EVM and Solana wallets
// against the real service and PostgreSQL, at 1280 and 375 px. The wallet being merged reports its
// address but signs with another key (as a wallet on the wrong account would): the service refuses
// the merge, the dialog says nothing was merged and why, and nothing changed — the wallet, its key
// and its credits stay with their own account, no audit row says "merged". The same merge with the
// right key then goes through. axe-core finds no serious issue, nothing overflows sideways.
import type { Browser, Page } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountIdByWallet } from '../../server/accounts/accounts.ts';
import type { Devnet } from '../../server/devnet/devnet.ts';
import { keyCreate } from '../../server/keys/store.ts';
import type { RunningService } from '../../server/runtime.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { balanceOf } from '../helpers/service.ts';
import { rpcEnv } from '../dashboard/helpers.ts';
import { expectAccessibleIn, expectNoOverflowIn, screenshot, signInWith, signOut, type TestWallet, VIEWPORTS } from './browser.ts';
import { injectWallets } from './wallets.ts';
import { startDashboardRig, type DashboardRig } from './rig.ts';

let rig: DashboardRig<Devnet>;
let db: TestDatabase;
let service: RunningService;
let browser: Browser;

beforeAll(async () => {
  // A signature that does not recover to the address is checked as a smart-contract wallet's
  // (EIP-1271) on the chain: the devnet answers that no contract is there.
  rig = await startDashboardRig({ devnet: true, env: (d) => ({ ...rpcEnv(d.manifest.rpc_url), MCP_SERVERS: 'market-intelligence', DASHBOARD_SIGN_IN_LIMIT: '100' }) });
  ({ db, service, browser } = rig);
}, 120_000);

afterAll(async () => {
  await rig?.close();
});

async function signIn(page: Page, wallet: TestWallet): Promise<string> {
  await signInWith(page, service.url, wallet);
  return (await page.evaluate(() => fetch('/api/session').then((r) => r.json()))).account.id;
}

describe('merging an account with a wrong signature', () => {
  for (const viewport of VIEWPORTS) {
    it(`${viewport.width} px: refused with "Nothing was merged" and why; both accounts unchanged; the right signature then merges`, async () => {
      const context = await browser.newContext({ viewport });
      try {
        const evm = privateKeyToAccount(generatePrivateKey());
        const wallets = await injectWallets(context, evm);
        const page = await context.newPage();
        page.setDefaultTimeout(15_000);
        // The EVM wallet has an account of its own (with a key); the Solana wallet signs in to another.
        const source = await signIn(page, 'Test Wallet');
        await keyCreate(db, source, { name: 'evm bot' });
        await signOut(page);
        const target = await signIn(page, 'Test Solana Wallet');
        expect(target).not.toBe(source);
        const state = async () => ({
          evmOwner: await accountIdByWallet(db, 'ethereum', evm.address.toLowerCase()),
          keys: (await db.query<{ account_id: string }>('SELECT account_id FROM api_keys WHERE name = $1 AND account_id IN ($2, $3)', ['evm bot', source, target])).rows.map((r) => r.account_id),
          balances: [await balanceOf(db, source), await balanceOf(db, target)],
          merges: (await db.query("SELECT 1 FROM audit_log WHERE action = 'account_merge' AND account_id IN ($1, $2)", [source, target])).rowCount,
        });
        const before = await state();
        expect(before).toMatchObject({ evmOwner: source, keys: [source], merges: 0 });

        await page.getByRole('link', { name: 'Plans' }).click();
        await page.getByRole('button', { name: 'Link another wallet' }).click();
        await page.getByRole('button', { name: 'Test Wallet', exact: true }).click();
        const dialog = page.getByTestId('merge-offer');
        await dialog.waitFor();
        await dialog.getByRole('button', { name: 'Merge into this account' }).click();
        await dialog.getByText('Step 1 of 2').waitFor();
        await dialog.getByRole('button', { name: 'Test Solana Wallet' }).click();
        await dialog.getByText('Step 2 of 2').waitFor();
        // The EVM wallet reports its address but signs with another key.
        wallets.misbehave({ signWith: privateKeyToAccount(generatePrivateKey()) });
        await dialog.getByRole('button', { name: 'Test Wallet', exact: true }).click();
        const alert = dialog.getByRole('alert').filter({ hasText: /\S/ });
        await expect
          .poll(() => alert.textContent())
          .toBe('Nothing was merged. The signature does not belong to the address your wallet shared. Choose that account in your wallet and try again.');
        // Back at the start of the merge, with nothing changed.
        await dialog.getByRole('button', { name: 'Merge into this account' }).waitFor();
        expect(await state()).toEqual(before);
        expect(await page.getByTestId('wallet-list').locator('li').count()).toBe(1);
        await expectAccessibleIn(page);
        await expectNoOverflowIn(`merge refused at ${viewport.width} px`, page);
        await screenshot(page, `dashboard/merge-wrong-signature-${viewport.width}.png`);

        // With the right key, the same offer merges.
        wallets.misbehave({});
        await dialog.getByRole('button', { name: 'Merge into this account' }).click();
        await dialog.getByRole('button', { name: 'Test Solana Wallet' }).click();
        await dialog.getByText('Step 2 of 2').waitFor();
        await dialog.getByRole('button', { name: 'Test Wallet', exact: true }).click();
        await page.getByTestId('wallets-note').getByText(/^Merged: /).waitFor();
        expect(await accountIdByWallet(db, 'ethereum', evm.address.toLowerCase())).toBe(target);
        expect((await state()).merges).toBe(1);
      } finally {
        await context.close();
      }
    }, 120_000);
  }
});
