/// <reference lib="dom" />
// What the browser tests that pay on the devnet share: the dashboard bundle (built if missing), a
// database, the anvil devnet, the service taking USDC on it (Ethereum, 1 confirmation), and
// Chromium with the injected test wallet signed in as `payer`. Torn down by close().
import type { BrowserContextOptions, Page } from 'playwright-core';
import type { Hex, LocalAccount } from 'viem';
import type { Devnet } from '../../server/devnet/devnet.ts';
import { rpcEnv } from '../dashboard/helpers.ts';
import { devnetClients } from '../payments/helpers.ts';
import { signInWith, VIEWPORTS } from './browser.ts';
import { startDashboardRig, type DashboardRig } from './rig.ts';
import { injectWallets, sendingFrom, type InjectedWallets, type WalletOptions } from './wallets.ts';

export interface PayingBrowser extends DashboardRig<Devnet> {
  page: Page;
  wallets: InjectedWallets;
  /** The hashes of the transactions the wallet sent, when it sends as `payer` (no sender of the test's own). */
  sent: Hex[];
  /** Opens the dashboard and signs in with the injected EVM wallet (the API keys page shows). */
  signIn(): Promise<void>;
}

export async function startPayingBrowser(
  payer: LocalAccount,
  /** How the wallet sends a transaction; by default as `payer`, recorded in `sent`. */
  sendEvmTransaction?: (devnet: Devnet) => NonNullable<WalletOptions['sendEvmTransaction']>,
  context: BrowserContextOptions = {},
): Promise<PayingBrowser> {
  const sent: Hex[] = [];
  const send = sendEvmTransaction ?? ((d: Devnet) => sendingFrom(payer, devnetClients(d.manifest).chain, d.manifest.rpc_url, sent));
  const rig = await startDashboardRig({
    devnet: true,
    env: ({ manifest: m }) => ({
      ...rpcEnv(m.rpc_url),
      MCP_SERVERS: 'market-intelligence',
      PAYMENT_CHAINS: JSON.stringify({ ethereum: { treasury: m.payments.treasury.address, token: m.payments.usdc.address, chain_id: m.chain_id, confirmations: 1 } }),
    }),
  });
  try {
    const browserContext = await rig.browser.newContext({ viewport: VIEWPORTS[0], ...context });
    const wallets = await injectWallets(browserContext, payer, { evmRpcUrl: rig.devnet.manifest.rpc_url, sendEvmTransaction: send(rig.devnet) });
    const page = await browserContext.newPage();
    page.setDefaultTimeout(20_000);
    const signIn = () => signInWith(page, rig.service.url);
    return { ...rig, page, wallets, sent, signIn };
  } catch (err) {
    await rig.close();
    throw err;
  }
}
