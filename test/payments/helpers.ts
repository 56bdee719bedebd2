// Payments on the devnet: a USDC transfer sent the way the dashboard's wallet sends it (an ERC-20
// transfer from the payer's own key), blocks mined on demand, and an RPC proxy that can be taken
// down and brought back (the "node unreachable" fault).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPublicClient, createTestClient, createWalletClient, http as viemHttp, parseAbi, type Address, type Hex, type LocalAccount } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { MNEMONIC, type DevnetManifest } from '../../server/devnet/devnet.ts';

export const ERC20 = parseAbi([
  'function transfer(address to, uint256 value) returns (bool)',
  'function balanceOf(address) view returns (uint256)',
]);

export function devnetClients(m: DevnetManifest) {
  const chain = { ...foundry, id: m.chain_id, rpcUrls: { default: { http: [m.rpc_url] } } };
  const transport = viemHttp(m.rpc_url);
  return {
    chain,
    pub: createPublicClient({ chain, transport }),
    test: createTestClient({ chain, transport, mode: 'anvil' }),
    wallet: (account: LocalAccount) => createWalletClient({ account, chain, transport }),
  };
}

export const devnetAccount = (index: number) => mnemonicToAccount(MNEMONIC, { addressIndex: index });

/** Sends `value` base units of `token` to `to` from `from`; returns the hash once it is mined (one confirmation). */
export async function transferToken(m: DevnetManifest, from: LocalAccount, token: Address, to: Address, value: bigint): Promise<Hex> {
  const c = devnetClients(m);
  const hash = await c.wallet(from).writeContract({ address: token, abi: ERC20, functionName: 'transfer', args: [to, value] });
  await c.pub.waitForTransactionReceipt({ hash });
  return hash;
}

export async function usdcBalance(m: DevnetManifest, owner: Address): Promise<bigint> {
  return devnetClients(m).pub.readContract({ address: m.payments.usdc.address, abi: ERC20, functionName: 'balanceOf', args: [owner] });
}

/** A JSON-RPC pass-through to the node that can be switched off (answers 503, as a load balancer does). */
export async function rpcProxy(target: string): Promise<{ url: string; down: boolean; refused: number; close(): Promise<void> }> {
  // refused: requests answered 503 while down, so a test can wait for retries instead of sleeping.
  const state = { down: false, refused: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (state.down) {
        state.refused += 1;
        res.writeHead(503).end('upstream down');
        return;
      }
      fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) })
        .then(async (r) => res.writeHead(r.status, { 'content-type': 'application/json' }).end(await r.text()))
        .catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

/** EIP-3009's typed data for transferWithAuthorization (what USDC and the devnet's DevUsdc verify). */
export const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;
