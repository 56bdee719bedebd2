/// <reference lib="dom" />
// Buying a plan from the dashboard in Chromium (issue 21): Plans → Upgrade to Basic → the
// injected wallet sends the USDC transfer on the anvil devnet → the service verifies it by RPC →
// the plan changes on screen. Only the browser extension is a stand-in (./wallets.ts): an EIP-6963
// provider whose key stays in the test process (it signs with a viem local account and sends the
// raw transaction to anvil; every read the page's wallet client makes is passed to the node). Page, server,
// chain, token, database and cookies are all real. The second test pays on Solana from a
// Wallet Standard wallet against a JSON-RPC stand-in (no Solana node runs here).
import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { base58 } from '@scure/base';
import { getCompiledTransactionMessageDecoder, getTransactionDecoder } from '@solana/kit';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hex } from 'viem';
import type { Devnet } from '../../server/devnet/devnet.ts';
import type { RunningService } from '../../server/runtime.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { ledgerSum } from '../helpers/service.ts';
import { rpcEnv } from '../dashboard/helpers.ts';
import { devnetAccount, devnetClients, usdcBalance } from '../payments/helpers.ts';
import { expectAccessibleIn, screenshot, signInWith, signOut } from './browser.ts';
import { startDashboardRig, type DashboardRig } from './rig.ts';
import { injectWallets, sendingFrom, type InjectedWallets } from './wallets.ts';

let rig: DashboardRig<Devnet>;
let db: TestDatabase;
let devnet: Devnet;
let service: RunningService;
let browser: Browser;
let page: Page;
const payer = devnetAccount(12);
/** The injected wallets: what they were asked to do, in order, is what a person would approve. */
let wallets: InjectedWallets;
const sent: Hex[] = [];

// Solana: a JSON-RPC stand-in (no Solana node runs here) serving the documented shapes of
// getLatestBlockhash, getSignatureStatuses and getTransaction (jsonParsed) for the transfers the
// wallet "sends"; the wallet signs the page's transaction with a real ed25519 key.
const SOLANA_TREASURY = base58.encode(generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(-32));
const BLOCKHASH = base58.encode(Buffer.alloc(32, 7));
const solanaChain = new Map<string, { mint: string; from: string; to: string; amount: bigint }>();
const solanaSent: { instruction: number; amount: bigint; decimals: number; mint: string; feePayer: string }[] = [];
let stand: http.Server;

function parsedTransfer(signature: string, t: { mint: string; from: string; to: string; amount: bigint }) {
  const balance = (accountIndex: number, owner: string, amount: bigint) => ({ accountIndex, mint: t.mint, owner, programId: 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', uiTokenAmount: { amount: amount.toString(), decimals: 6, uiAmountString: String(Number(amount) / 1e6) } });
  return {
    slot: 301_000_000,
    blockTime: Math.floor(Date.now() / 1000),
    version: 0,
    meta: {
      err: null,
      fee: 5000,
      preBalances: [1_000_000_000, 2_039_280, 2_039_280],
      postBalances: [999_995_000, 2_039_280, 2_039_280],
      preTokenBalances: [balance(1, t.from, 1_000_000_000n), balance(2, t.to, 0n)],
      postTokenBalances: [balance(1, t.from, 1_000_000_000n - t.amount), balance(2, t.to, t.amount)],
    },
    transaction: { signatures: [signature], message: { accountKeys: [{ pubkey: t.from, signer: true, writable: true }] } },
  };
}

beforeAll(async () => {
  stand = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const { id, method, params } = JSON.parse(body) as { id: number; method: string; params: unknown[] };
      const result =
        method === 'getLatestBlockhash'
          ? { context: { slot: 301_000_010 }, value: { blockhash: BLOCKHASH, lastValidBlockHeight: 280_000_150 } }
          : method === 'getSignatureStatuses'
            ? { context: { slot: 301_000_040 }, value: (params[0] as string[]).map((sig) => (solanaChain.has(sig) ? { slot: 301_000_000, confirmations: null, err: null, confirmationStatus: 'finalized' } : null)) }
            : method === 'getTransaction'
              ? solanaChain.has(params[0] as string)
                ? parsedTransfer(params[0] as string, solanaChain.get(params[0] as string)!)
                : null
              : undefined;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(result === undefined ? { jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } } : { jsonrpc: '2.0', id, result }));
    });
  });
  await new Promise<void>((resolve) => stand.listen(0, '127.0.0.1', resolve));
  rig = await startDashboardRig({
    devnet: true,
    env: ({ manifest: m }) => ({
      ...rpcEnv(m.rpc_url),
      MCP_SERVERS: 'market-intelligence',
      SOLANA_RPC_URL: `http://127.0.0.1:${(stand.address() as AddressInfo).port}`,
      PAYMENT_CHAINS: JSON.stringify({
        ethereum: { treasury: m.payments.treasury.address, token: m.payments.usdc.address, chain_id: m.chain_id, confirmations: 1 },
        solana: { treasury: SOLANA_TREASURY },
      }),
    }),
  });
  ({ db, devnet, service, browser } = rig);
  const m = devnet.manifest;
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  wallets = await injectWallets(context, payer, {
    // Reads (gas, fees, nonce, blocks) go to the node, and a send is signed by the payer's key and sent to anvil.
    evmRpcUrl: m.rpc_url,
    sendEvmTransaction: sendingFrom(payer, devnetClients(m).chain, m.rpc_url, sent),
    // "Sent": the stand-in now knows it as a finalized transfer of what the instruction says.
    sendSolanaTransaction: (transaction, signature) => {
      const tx = getTransactionDecoder().decode(transaction);
      const message = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
      const keys = message.staticAccounts.map(String);
      const ix = message.instructions[0]!;
      const data = Buffer.from(ix.data ?? []);
      const accounts = (ix.accountIndices ?? []).map((i) => keys[i]!);
      const transfer = { instruction: data[0]!, amount: data.readBigUInt64LE(1), decimals: data[9]!, mint: accounts[1]!, feePayer: keys[0]! };
      solanaSent.push(transfer);
      solanaChain.set(signature, { mint: transfer.mint, from: transfer.feePayer, to: SOLANA_TREASURY, amount: transfer.amount });
    },
  });
  page = await context.newPage();
  page.setDefaultTimeout(20_000);
}, 120_000);

afterAll(async () => {
  await rig?.close();
  await new Promise((resolve) => stand?.close(resolve));
});

describe('buying a plan in the browser', () => {
  it('Plans → Upgrade to Basic → the wallet sends the USDC transfer on the devnet → the plan and balance change on screen', async () => {
    const m = devnet.manifest;
    await signInWith(page, service.url);
    expect(await page.getByTestId('header-balance').textContent()).toBe('150 credits');

    await page.getByRole('link', { name: 'Plans' }).click();
    const basic = page.locator('li.plan', { has: page.getByRole('heading', { name: /^Basic/ }) });
    expect(await basic.textContent()).toContain('$29.00 / month');
    await page.getByRole('button', { name: 'Upgrade to Basic' }).click();
    await page.getByRole('heading', { name: /Buy Basic \(one month\) for \$29\.00/ }).waitFor();
    const treasuryBefore = await usdcBalance(m, m.payments.treasury.address);
    await page.getByRole('button', { name: 'Pay with Test Wallet' }).click();

    await basic.getByText('Your plan').waitFor();
    await page.getByText('Paid: Basic (one month) added to your account.').waitFor();
    await screenshot(page, 'dashboard/purchase-basic.png');
    expect(await page.getByTestId('header-balance').textContent()).toBe('5,000 credits');
    expect(await page.getByRole('button', { name: 'Extend Basic by a month' }).isVisible()).toBe(true);

    // The wallet switched to the order's chain and sent one transfer; the treasury got the price.
    expect(wallets.prompts).toHaveLength(2);
    expect(wallets.prompts[0]).toContain(payer.address); // the sign-in message
    expect(wallets.prompts[1]).toBe(`send to ${m.payments.usdc.address.toLowerCase()}`);
    expect(wallets.switchRequests).toEqual([m.chain_id]);
    expect(sent).toHaveLength(1);
    expect(await usdcBalance(m, m.payments.treasury.address)).toBe(treasuryBefore + 29_000_000n);
    const account = await db.query<{ id: string; plan: string; balance: number }>(
      'SELECT a.id, a.plan, a.balance FROM accounts a JOIN wallets w ON w.account_id = a.id WHERE w.address = $1',
      [payer.address.toLowerCase()],
    );
    expect(account.rows[0]).toMatchObject({ plan: 'basic', balance: 5000 });
    expect(await ledgerSum(db, account.rows[0]!.id)).toBe(5000);

    // The purchase panel is a modal dialog: it stays with its "Paid" line until closed.
    await page.getByTestId('purchase-dialog').getByRole('button', { name: 'Close' }).click();
    // Usage lists the purchase with its receipt.
    await page.getByRole('link', { name: 'Usage' }).click();
    const purchases = page.getByTestId('purchases');
    await purchases.waitFor();
    expect(await purchases.textContent()).toContain('Basic plan, one month');
    expect(await purchases.textContent()).toContain('$29.00');
    const receipt = await page.getByRole('link', { name: /^Receipt #/ }).getAttribute('href');
    const html = await (await page.request.get(`${service.url}${receipt!}`)).text();
    expect(html).toContain(sent[0]!.toLowerCase());
    // The receipt a business files: seller, buyer wallet, item, amount, chain; a page of its own
    // (a main landmark, the reader's colour scheme, a way back), checked by axe in both schemes.
    for (const part of ['Seller', service.url, m.payments.treasury.address.toLowerCase(), payer.address.toLowerCase(), 'Basic plan, one month', '29.00 USDC', 'Ethereum']) expect(html).toContain(part);
    await page.getByRole('link', { name: /^Receipt #/ }).click();
    await page.getByRole('main').waitFor();
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe(scheme === 'dark' ? 'rgb(20, 20, 20)' : 'rgb(255, 255, 255)');
      await expectAccessibleIn(page);
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.getByRole('link', { name: 'Back to the dashboard' }).click();
    await page.getByRole('heading', { name: 'Credit packs' }).waitFor();
  });

  it('Solana: signed in with a Wallet Standard wallet, Upgrade to Pro builds one SPL transferChecked of the order amount, the wallet signs and sends it, the plan changes on screen', async () => {
    await signOut(page);
    await page.getByRole('button', { name: 'Test Solana Wallet' }).click();
    // Signed in to a new free account (the page returns to the view it was on).
    await page.getByTestId('header-balance').getByText('150 credits').waitFor();
    await page.getByRole('link', { name: 'Plans' }).click();
    await page.getByRole('button', { name: 'Upgrade to Pro' }).click();
    await page.getByRole('combobox').selectOption('solana');
    await page.getByRole('button', { name: 'Pay with Test Solana Wallet' }).click();
    const pro = page.locator('li.plan', { has: page.getByRole('heading', { name: /^Pro/ }) });
    await pro.getByText('Your plan').waitFor();
    expect(await page.getByTestId('header-balance').textContent()).toBe('15,000 credits');
    // What the page asked the wallet to send: transferChecked (12) of $79.00 in 6-decimal USDC, paid by the signed-in wallet.
    expect(solanaSent).toEqual([{ instruction: 12, amount: 79_000_000n, decimals: 6, mint: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', feePayer: wallets.solanaAddress }]);
    const row = await db.query<{ plan: string; balance: number }>('SELECT a.plan, a.balance FROM accounts a JOIN wallets w ON w.account_id = a.id WHERE w.address = $1', [wallets.solanaAddress]);
    expect(row.rows[0]).toEqual({ plan: 'pro', balance: 15000 });
  });
});
