/// <reference lib="dom" />
// What the browser tests that pay on the devnet share: the dashboard bundle (built if missing), a
// database, the anvil devnet, the service taking USDC on it (Ethereum, 1 confirmation), and
// Chromium with the injected test wallet signed in as `payer`. Torn down by close().
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core';
import type { LocalAccount } from 'viem';
import { startDevnet, type Devnet } from '../../server/devnet/devnet.ts';
import { WEB_DIST } from '../../server/dashboard/ui.ts';
import type { RunningService } from '../../server/runtime.ts';
import { buildWeb } from '../../scripts/build-web.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startTestService } from '../helpers/service.ts';
import { rpcEnv } from '../dashboard/helpers.ts';
import { CHROMIUM, CHROMIUM_ARGS, VIEWPORTS } from './browser.ts';
import { injectWallets, type InjectedWallets, type WalletOptions } from './wallets.ts';

export const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/dashboard');

export interface PayingBrowser {
  db: TestDatabase;
  devnet: Devnet;
  service: RunningService;
  browser: Browser;
  page: Page;
  wallets: InjectedWallets;
  close(): Promise<void>;
}

export async function startPayingBrowser(
  payer: LocalAccount,
  sendEvmTransaction: (devnet: Devnet) => NonNullable<WalletOptions['sendEvmTransaction']>,
  context: BrowserContextOptions = {},
): Promise<PayingBrowser> {
  if (!fs.existsSync(path.join(WEB_DIST, 'index.html'))) await buildWeb();
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  // Whatever started is stopped, newest first, also when a later step fails.
  const started: (() => Promise<unknown>)[] = [];
  const close = async () => {
    for (const stop of started.reverse()) await stop();
  };
  try {
    const db = await createTestDatabase();
    started.push(() => db.drop());
    const devnet = await startDevnet();
    started.push(() => devnet.stop());
    const m = devnet.manifest;
    const service = await startTestService(db.url, {
      ...rpcEnv(m.rpc_url),
      MCP_SERVERS: 'market-intelligence',
      PAYMENT_CHAINS: JSON.stringify({ ethereum: { treasury: m.payments.treasury.address, token: m.payments.usdc.address, chain_id: m.chain_id, confirmations: 1 } }),
    });
    started.push(() => service.close());
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    started.push(() => browser.close());
    const browserContext = await browser.newContext({ viewport: VIEWPORTS[0], ...context });
    const wallets = await injectWallets(browserContext, payer, { evmRpcUrl: m.rpc_url, sendEvmTransaction: sendEvmTransaction(devnet) });
    const page = await browserContext.newPage();
    page.setDefaultTimeout(20_000);
    return { db, devnet, service, browser, page, wallets, close };
  } catch (err) {
    await close();
    throw err;
  }
}
