/// <reference lib="dom" />
// Page-side code below runs in the browser, so this file (and the tests calling page.evaluate) use DOM types.
// Stand-ins for browser wallet extensions (there is no extension here). Each is the page-side half
// of a wallet: an EIP-1193 provider announced through EIP-6963, and a Wallet Standard Solana
// wallet registered the standard way. Their keys stay in the test process: the page calls out
// through Playwright bindings and the test signs for real — a viem local account (secp256k1)
// and an ed25519 key pair. Only the extension is replaced; page, server, signatures, database and
// cookies are all real.
import { generateKeyPairSync, sign as edSign } from 'node:crypto';
import { base58 } from '@scure/base';
import { getTransactionDecoder } from '@solana/kit';
import type { BrowserContext } from 'playwright-core';
import { createWalletClient, http as viemHttp, type Chain, type Hex, type LocalAccount } from 'viem';

export interface InjectedWallets {
  /** Switch the EVM account the injected provider signs with. */
  setEvmAccount(account: LocalAccount): void;
  solanaAddress: string;
  /** Every personal_sign / signMessage request the page made (what a person would approve). */
  prompts: string[];
  /**
   * Test hooks for refusals: sign EVM messages with another key than the one the wallet reports,
   * run something (e.g. expire the nonce) just before signing, or decline to sign as a person
   * pressing Reject would (EIP-1193 error 4001 "User rejected the request."; the Solana wallet
   * throws the same message).
   */
  misbehave(opts: { signWith?: LocalAccount; beforeSign?: () => Promise<void>; reject?: boolean; rejectSwitch?: boolean }): void;
  /** The network the EVM wallet is on (1 at first); wallet_switchEthereumChain changes it unless refused. */
  chainId(): number;
  /** Every chain id the page asked the wallet to switch to. */
  switchRequests: number[];
}

/** What a test wallet can do besides signing in; without these, it refuses to send. */
export interface WalletOptions {
  /** Where the EVM wallet sends the reads it does not answer itself (gas, fees, nonce, blocks), as an extension's RPC does. */
  evmRpcUrl?: string;
  /** Sends the transaction the page asked for (eth_sendTransaction) and answers its hash: the test's own signer on a devnet. */
  sendEvmTransaction?: (tx: { to: Hex; data?: Hex; value?: Hex; gas?: Hex }) => Promise<Hex>;
  /**
   * Gives the Solana wallet solana:signAndSendTransaction: the wallet signs each transaction the
   * page asks for with its own key and hands it here, with the signature (base58), as "sent".
   */
  sendSolanaTransaction?: (transaction: Uint8Array, signature: string) => void;
}

const ICON = `data:image/svg+xml;base64,${Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32"><rect width="32" height="32" rx="6" fill="#0b5cad"/></svg>').toString('base64')}`;

export async function injectWallets(context: BrowserContext, evm: LocalAccount, options: WalletOptions = {}): Promise<InjectedWallets> {
  let account = evm;
  let signWith: LocalAccount | undefined;
  let beforeSign: (() => Promise<void>) | undefined;
  let reject = false;
  let rejectSwitch = false;
  let chainId = 1;
  const switchRequests: number[] = [];
  const prompts: string[] = [];
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const rawPublicKey = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  const solanaAddress = base58.encode(rawPublicKey);

  await context.exposeBinding('__evmWalletRequest', async (_source, method: string, params: unknown[]) => {
    switch (method) {
      case 'eth_requestAccounts':
      case 'eth_accounts':
        return [account.address];
      case 'eth_chainId':
        return `0x${chainId.toString(16)}`;
      case 'net_version':
        return String(chainId);
      case 'wallet_switchEthereumChain': {
        const target = Number((params as [{ chainId: string }])[0].chainId);
        switchRequests.push(target);
        if (rejectSwitch) throw new Error('USER_REJECTED');
        chainId = target;
        return null;
      }
      case 'wallet_requestPermissions':
      case 'wallet_revokePermissions':
        return null;
      case 'personal_sign': {
        const [data, address] = params as [`0x${string}`, string];
        if (address.toLowerCase() !== account.address.toLowerCase()) throw new Error('unknown account');
        prompts.push(Buffer.from(data.slice(2), 'hex').toString('utf8'));
        if (reject) throw new Error('USER_REJECTED');
        await beforeSign?.();
        return (signWith ?? account).signMessage({ message: { raw: data } });
      }
      case 'eth_sendTransaction': {
        if (!options.sendEvmTransaction) throw new Error('eth_sendTransaction not supported by the test wallet');
        const [tx] = params as [{ to: Hex; data?: Hex; value?: Hex; gas?: Hex }];
        prompts.push(`send to ${tx.to.toLowerCase()}`);
        if (reject) throw new Error('USER_REJECTED');
        return options.sendEvmTransaction(tx);
      }
      default: {
        if (!options.evmRpcUrl) throw new Error(`method ${method} not supported by the test wallet`);
        const res = await fetch(options.evmRpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
        const body = (await res.json()) as { result?: unknown; error?: { message: string } };
        if (body.error) throw new Error(body.error.message);
        return body.result;
      }
    }
  });
  await context.exposeBinding('__solanaWalletSign', async (_source, bytes: number[]) => {
    const message = Buffer.from(bytes);
    prompts.push(message.toString('utf8'));
    if (reject) throw new Error('USER_REJECTED');
    return [...edSign(null, message, privateKey)];
  });
  if (options.sendSolanaTransaction) {
    const send = options.sendSolanaTransaction;
    await context.exposeBinding('__solanaWalletSend', async (_source, bytes: number[]) => {
      prompts.push('solana transaction');
      if (reject) throw new Error('USER_REJECTED');
      const transaction = new Uint8Array(bytes);
      const signature = edSign(null, Buffer.from(getTransactionDecoder().decode(transaction).messageBytes), privateKey);
      send(transaction, base58.encode(signature));
      return [...signature];
    });
  }

  await context.addInitScript(
    ({ icon, solanaAddress, publicKey, canSend }) => {
      const w = window as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
      // EIP-1193 provider, announced through EIP-6963.
      const listeners = new Map<string, Set<(...a: unknown[]) => void>>();
      const provider = {
        request: async ({ method, params }: { method: string; params?: unknown[] }) => {
          try {
            return await w.__evmWalletRequest!(method, params ?? []);
          } catch (err) {
            const message = (err as Error).message;
            if (message.includes('USER_REJECTED')) throw Object.assign(new Error('User rejected the request.'), { code: 4001 });
            throw Object.assign(new Error(message), { code: 4200 });
          }
        },
        on: (event: string, fn: (...a: unknown[]) => void) => {
          if (!listeners.has(event)) listeners.set(event, new Set());
          listeners.get(event)!.add(fn);
        },
        removeListener: (event: string, fn: (...a: unknown[]) => void) => listeners.get(event)?.delete(fn),
      };
      const detail = Object.freeze({
        info: { uuid: '7f4a4c8e-6a8e-4d4c-9f7e-3b0f1a2b3c4d', name: 'Test Wallet', icon, rdns: 'dev.cryptomcp.testwallet' },
        provider,
      });
      const announce = () => window.dispatchEvent(new CustomEvent('eip6963:announceProvider', { detail }));
      window.addEventListener('eip6963:requestProvider', announce);
      announce();

      // Wallet Standard Solana wallet.
      const account = {
        address: solanaAddress,
        publicKey: new Uint8Array(publicKey),
        chains: ['solana:mainnet'],
        features: canSend ? ['solana:signMessage', 'solana:signAndSendTransaction'] : ['solana:signMessage'],
      };
      const rejected = (err: unknown) => new Error((err as Error).message.includes('USER_REJECTED') ? 'User rejected the request.' : (err as Error).message, { cause: err });
      const wallet = {
        version: '1.0.0',
        name: 'Test Solana Wallet',
        icon,
        chains: ['solana:mainnet'],
        get accounts() {
          return [account];
        },
        features: {
          'standard:connect': { version: '1.0.0', connect: async () => ({ accounts: [account] }) },
          'standard:events': { version: '1.0.0', on: () => () => {} },
          'solana:signMessage': {
            version: '1.0.0',
            signMessage: async (...inputs: { message: Uint8Array }[]) =>
              Promise.all(
                inputs.map(async (input) => {
                  let signature: number[];
                  try {
                    signature = (await w.__solanaWalletSign!([...input.message])) as number[];
                  } catch (err) {
                    throw rejected(err);
                  }
                  return { signedMessage: input.message, signature: new Uint8Array(signature) };
                }),
              ),
          },
          ...(canSend
            ? {
                'solana:signAndSendTransaction': {
                  version: '1.0.0',
                  supportedTransactionVersions: [0],
                  signAndSendTransaction: async (...inputs: { transaction: Uint8Array }[]) =>
                    Promise.all(
                      inputs.map(async (input) => {
                        try {
                          return { signature: new Uint8Array((await w.__solanaWalletSend!([...input.transaction])) as number[]) };
                        } catch (err) {
                          throw rejected(err);
                        }
                      }),
                    ),
                },
              }
            : {}),
        },
      };
      const register = ({ register }: { register: (wallet: unknown) => void }) => register(wallet);
      window.dispatchEvent(new CustomEvent('wallet-standard:register-wallet', { detail: register }));
      window.addEventListener('wallet-standard:app-ready', (e) => register((e as CustomEvent).detail));
    },
    { icon: ICON, solanaAddress, publicKey: [...rawPublicKey], canSend: Boolean(options.sendSolanaTransaction) },
  );

  return {
    setEvmAccount: (a) => (account = a),
    solanaAddress,
    prompts,
    chainId: () => chainId,
    switchRequests,
    misbehave: (opts) => {
      signWith = opts.signWith;
      beforeSign = opts.beforeSign;
      reject = opts.reject ?? false;
      rejectSwitch = opts.rejectSwitch ?? false;
    },
  };
}

/**
 * A sendEvmTransaction that signs with `payer`'s key and sends to the node at `rpcUrl` (the
 * devnet), recording each hash in `sent`: what a wallet extension does when the page asks it to pay.
 */
export function sendingFrom(payer: LocalAccount, chain: Chain, rpcUrl: string, sent: Hex[]): NonNullable<WalletOptions['sendEvmTransaction']> {
  const wallet = createWalletClient({ account: payer, chain, transport: viemHttp(rpcUrl) });
  return async (tx) => {
    const hash = await wallet.sendTransaction({ to: tx.to, data: tx.data, value: tx.value ? BigInt(tx.value) : undefined, gas: tx.gas ? BigInt(tx.gas) : undefined });
    sent.push(hash);
    return hash;
  };
}
