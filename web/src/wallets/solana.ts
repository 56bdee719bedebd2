// Solana wallets through the Wallet Standard: Phantom, Solflare, Backpack and others register
// with @wallet-standard/app's getWallets(). Sign-in connects, builds a Sign-In With Solana message
// (the wallet-standard-util helper, the same text format the server parses) and has the wallet
// sign it with ed25519 through the `solana:signMessage` feature.
import type { SolanaSignMessageFeature } from '@solana/wallet-standard-features';
import { createSignInMessageText } from '@solana/wallet-standard-util';
import { getWallets } from '@wallet-standard/app';
import type { Wallet } from '@wallet-standard/base';
import type { StandardConnectFeature } from '@wallet-standard/features';
import type { NonceInfo } from '../api.ts';
import { SIGN_IN_STATEMENT } from './statement.ts';

export function isSolanaSigner(wallet: Wallet): boolean {
  return (
    wallet.chains.some((c) => c.startsWith('solana:')) && 'standard:connect' in wallet.features && 'solana:signMessage' in wallet.features
  );
}

/** Calls back with the Solana wallets present now and whenever one registers or leaves. */
export function watchSolanaWallets(onChange: (wallets: Wallet[]) => void): () => void {
  const registry = getWallets();
  const emit = () => onChange(registry.get().filter(isSolanaSigner));
  emit();
  const offRegister = registry.on('register', emit);
  const offUnregister = registry.on('unregister', emit);
  return () => {
    offRegister();
    offUnregister();
  };
}

function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

export async function signInWithSolana(
  wallet: Wallet,
  nonce: () => Promise<NonceInfo>,
  statement: string = SIGN_IN_STATEMENT,
): Promise<{ message: string; signature: string }> {
  const { connect } = (wallet.features as StandardConnectFeature)['standard:connect'];
  const { accounts } = await connect();
  const account = accounts[0];
  if (!account) throw new Error('The wallet shared no account.');
  const n = await nonce();
  const message = createSignInMessageText({
    domain: n.domain,
    address: account.address,
    statement,
    uri: n.uri,
    version: '1',
    chainId: 'mainnet',
    nonce: n.nonce,
    issuedAt: new Date().toISOString(),
    expirationTime: n.expires_at,
  });
  const { signMessage } = (wallet.features as SolanaSignMessageFeature)['solana:signMessage'];
  const [output] = await signMessage({ account, message: new TextEncoder().encode(message) });
  if (!output) throw new Error('The wallet returned no signature.');
  return { message, signature: toBase64(output.signature) };
}
