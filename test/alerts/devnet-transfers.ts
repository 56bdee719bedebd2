// What the alert suites share on the devnet: the manifest written where the service reads it
// (DEVNET_MANIFEST), and an ETH transfer from a plain devnet wallet to a labelled exchange, the
// event a whale rule with match "exchange" fires on.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createWalletClient, http as viemHttp, parseEther, type Address, type Hash } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import type { Devnet } from '../../server/devnet/devnet.ts';

const MNEMONIC = 'test test test test test test test test test test test junk';

/** Writes the devnet's manifest to a temporary file and answers its path. */
export function writeManifest(devnet: Devnet): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cmcp-alerts-')), 'manifest.json');
  fs.writeFileSync(file, JSON.stringify(devnet.manifest));
  return file;
}

export const exchangeOf = (devnet: Devnet) => devnet.manifest.accounts.find((a) => a.kind === 'exchange')!;
export const senderIndexOf = (devnet: Devnet) => devnet.manifest.accounts.findIndex((a) => a.kind !== 'exchange');

/** Sends ETH from a plain devnet wallet to a labelled exchange (answers the hash once sent). */
export async function sendToExchange(devnet: Devnet, eth: string): Promise<Hash> {
  const wallet = createWalletClient({ account: mnemonicToAccount(MNEMONIC, { addressIndex: senderIndexOf(devnet) }), chain: foundry, transport: viemHttp(devnet.manifest.rpc_url) });
  return wallet.sendTransaction({ to: exchangeOf(devnet).address as Address, value: parseEther(eth) });
}
