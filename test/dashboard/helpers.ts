// Test-side wallets and an HTTP client that keeps cookies the way a browser does, for the
// dashboard API tests. The wallets sign for real: viem local accounts (secp256k1) for EVM, an
// ed25519 key pair for Solana; the messages are built with the ecosystems' own helpers.
import { generateKeyPairSync, sign as edSign, type KeyObject } from 'node:crypto';
import { base58 } from '@scure/base';
import { createSignInMessageText } from '@solana/wallet-standard-util';
import { compileSolidity } from '../../scripts/devnet-compile.ts';
import { createWalletClient, http, type Hex, type LocalAccount } from 'viem';
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { createSiweMessage } from 'viem/siwe';

export class CookieClient {
  readonly base: string;
  readonly jar = new Map<string, string>();
  csrf: string | undefined;
  constructor(base: string) {
    this.base = base;
  }

  async request(method: string, url: string, body?: unknown, headers: Record<string, string> = {}) {
    const cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(`${this.base}${url}`, {
      method,
      headers: {
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(cookie ? { cookie } : {}),
        ...(this.csrf && method !== 'GET' ? { 'x-csrf-token': this.csrf } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const setCookies = res.headers.getSetCookie();
    for (const c of setCookies) {
      const [pair] = c.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(c)) this.jar.delete(name);
      else this.jar.set(name, value);
    }
    const text = await res.text();
    let json: unknown = text;
    try {
      json = JSON.parse(text);
    } catch {
      // CSV and such stay text
    }
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read response fields freely
    return { status: res.status, headers: res.headers, setCookies, body: json as any };
  }
  get(url: string, headers?: Record<string, string>) {
    return this.request('GET', url, undefined, headers);
  }
  post(url: string, body: unknown = {}, headers?: Record<string, string>) {
    return this.request('POST', url, body, headers);
  }
}

export function siweMessage(
  account: { address: `0x${string}` },
  nonce: { nonce: string; domain: string; uri: string },
  overrides: Partial<Parameters<typeof createSiweMessage>[0]> = {},
): string {
  return createSiweMessage({
    address: account.address,
    chainId: 1,
    domain: nonce.domain,
    uri: nonce.uri,
    nonce: nonce.nonce,
    version: '1',
    statement: 'Sign in to the cryptomcp dashboard.',
    issuedAt: new Date(),
    ...overrides,
  });
}

/** Nonce, message, signature, POST: what the Connect button does, for an EVM account. */
export async function signInEvm(
  client: CookieClient,
  account: LocalAccount,
  overrides: Partial<Parameters<typeof createSiweMessage>[0]> = {},
  signer: LocalAccount = account,
) {
  const nonce = (await client.get('/api/auth/nonce')).body;
  const message = siweMessage(account, nonce, overrides);
  const signature = await signer.signMessage({ message });
  const res = await client.post('/api/auth/sign-in', { family: 'evm', message, signature });
  if (res.status < 300) client.csrf = res.body.csrf_token;
  return { res, message, signature };
}

/** A fresh wallet signed in to its own new account (201), as a CookieClient on `baseUrl`. */
export async function signedInNewAccount(baseUrl: string): Promise<{ client: CookieClient; accountId: string }> {
  const client = new CookieClient(baseUrl);
  const { res } = await signInEvm(client, privateKeyToAccount(generatePrivateKey()));
  if (res.status !== 201) throw new Error(`sign-in answered ${res.status}: ${JSON.stringify(res.body)}`);
  return { client, accountId: res.body.account.id };
}

export interface SolanaTestWallet {
  address: string;
  privateKey: KeyObject;
}

export function solanaWallet(): SolanaTestWallet {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  return { address: base58.encode(raw), privateKey };
}

export function solanaSign(wallet: SolanaTestWallet, message: string): string {
  return edSign(null, Buffer.from(message, 'utf8'), wallet.privateKey).toString('base64');
}

/** A wallet that signs in the tests: an EVM account or a Solana test wallet. */
export type Signer = { kind: 'evm'; account: PrivateKeyAccount } | { kind: 'solana'; wallet: SolanaTestWallet };

/** A link-nonce message with the given statement, signed by the signer (what the merge dialog asks each wallet for). */
export async function signStatement(client: CookieClient, signer: Signer, statement: string) {
  const nonce = (await client.get('/api/wallets/nonce')).body;
  if (signer.kind === 'evm') {
    const message = siweMessage(signer.account, nonce, { statement });
    return { family: 'evm', message, signature: await signer.account.signMessage({ message }) };
  }
  const message = createSignInMessageText({
    domain: nonce.domain,
    address: signer.wallet.address,
    statement,
    uri: nonce.uri,
    version: '1',
    chainId: 'mainnet',
    nonce: nonce.nonce,
    issuedAt: new Date().toISOString(),
  });
  return { family: 'solana', message, signature: solanaSign(signer.wallet, message) };
}

export async function signInSolana(client: CookieClient, wallet: SolanaTestWallet, path = '/api/auth/nonce', post = '/api/auth/sign-in') {
  const nonce = (await client.get(path)).body;
  const message = createSignInMessageText({
    domain: nonce.domain,
    address: wallet.address,
    statement: 'Sign in to the cryptomcp dashboard.',
    uri: nonce.uri,
    version: '1',
    chainId: 'mainnet',
    nonce: nonce.nonce,
    issuedAt: new Date().toISOString(),
  });
  const res = await client.post(post, { family: 'solana', message, signature: solanaSign(wallet, message) });
  if (res.status < 300 && res.body.csrf_token) client.csrf = res.body.csrf_token;
  return { res, message };
}

const MNEMONIC = 'test test test test test test test test test test test junk';

/**
 * A minimal smart-contract wallet (EIP-1271): a signature is valid when its owner signed the hash.
 * Compiled with solc here and deployed on the local anvil node, so the server's EIP-1271 check
 * calls a real contract over real JSON-RPC.
 */
const WALLET_SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
contract OwnedWallet {
  address public immutable owner;
  constructor(address owner_) { owner = owner_; }
  function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
    (address signer, ECDSA.RecoverError err, ) = ECDSA.tryRecover(hash, signature);
    return err == ECDSA.RecoverError.NoError && signer == owner ? bytes4(0x1626ba7e) : bytes4(0xffffffff);
  }
}`;

/** Deploys the contract wallet for `owner` (from mnemonic index 7); `chainId`: the node's, when not anvil's default 31337. */
export async function deploySmartWallet(rpcUrl: string, owner: `0x${string}`, chainId: number = foundry.id): Promise<`0x${string}`> {
  // Compiled once per source change (cached by input hash), not on every run.
  const out = compileSolidity({
    language: 'Solidity',
    sources: { 'OwnedWallet.sol': { content: WALLET_SOURCE } },
    settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'cancun', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  });
  const artifact = out.contracts['OwnedWallet.sol']!['OwnedWallet']!;
  const deployer = mnemonicToAccount(MNEMONIC, { addressIndex: 7 });
  const chain = { ...foundry, id: chainId, rpcUrls: { default: { http: [rpcUrl] } } };
  const wallet = createWalletClient({ account: deployer, chain, transport: http(rpcUrl) });
  const { createPublicClient } = await import('viem');
  const pub = createPublicClient({ chain, transport: http(rpcUrl) });
  const hash = await wallet.deployContract({
    abi: artifact.abi,
    bytecode: `0x${artifact.evm.bytecode.object}` as Hex,
    args: [owner],
  });
  const receipt = await pub.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  if (!receipt.contractAddress) throw new Error('deployment made no contract');
  return receipt.contractAddress;
}

/** The RPC variables that point every sign-in chain at one local node. */
export function rpcEnv(rpcUrl: string): Record<string, string> {
  return { ETHEREUM_RPC_URL: rpcUrl, BASE_RPC_URL: rpcUrl, POLYGON_RPC_URL: rpcUrl, BSC_RPC_URL: rpcUrl };
}
