// Lists the wallets present in this browser — EVM wallets announced by EIP-6963 (and
// WalletConnect when configured) and Solana wallets registered through the Wallet Standard — and
// signs in, links a wallet, or signs a given statement (a merge) with the one chosen.
import type { Wallet } from '@wallet-standard/base';
import { useEffect, useId, useState } from 'react';
import type { Config, Connector } from 'wagmi';
import { getConnectors, watchConnectors } from 'wagmi/actions';
import { api, ApiFailure, describeError, type DashboardConfig, type NonceInfo, type WalletOffer } from '../api.ts';
import { createWagmiConfig, pickable, signInWithEvm, SIGN_IN_CHAINS } from '../wallets/evm.ts';
import { signInWithSolana, watchSolanaWallets } from '../wallets/solana.ts';

export interface WalletPickerProps {
  config: DashboardConfig;
  /** sign-in and link post the signed message; sign only hands it back (a merge collects two). */
  mode: 'sign-in' | 'link' | 'sign';
  onDone: (result: unknown) => void;
  /** The sentence the wallet signs (default: the sign-in statement). */
  statement?: string;
  /** A wallet that already has an account of its own, met while linking: the server offers to merge it. */
  onMergeOffer?: (offer: WalletOffer) => void;
}

export function WalletPicker({ config, mode, onDone, statement, onMergeOffer }: WalletPickerProps) {
  const [wagmi, setWagmi] = useState<Config>();
  const [evmWallets, setEvmWallets] = useState<Connector[]>([]);
  const [solanaWallets, setSolanaWallets] = useState<Wallet[]>([]);
  const [chainId, setChainId] = useState<number>(SIGN_IN_CHAINS[0].id);
  const [busy, setBusy] = useState<string>();
  const [error, setError] = useState<string>();
  const chainHint = useId();

  useEffect(() => {
    let stop = () => {};
    void createWagmiConfig(config.walletconnect_project_id).then((c) => {
      setWagmi(c);
      setEvmWallets(pickable(getConnectors(c)));
      stop = watchConnectors(c, { onChange: (list) => setEvmWallets(pickable(list)) });
    });
    return () => stop();
  }, [config.walletconnect_project_id]);

  useEffect(() => watchSolanaWallets(setSolanaWallets), []);

  const nonce = () => api<NonceInfo>('GET', mode === 'sign-in' ? '/auth/nonce' : '/wallets/nonce');
  const submit = async (name: string, family: 'evm' | 'solana', sign: () => Promise<{ message: string; signature: string }>) => {
    setBusy(name);
    setError(undefined);
    try {
      const signed = await sign();
      if (mode === 'sign') onDone({ family, ...signed });
      else onDone(await api('POST', mode === 'sign-in' ? '/auth/sign-in' : '/wallets', { family, ...signed }));
    } catch (err) {
      const offer = err instanceof ApiFailure && err.error.code === 'WALLET_IN_USE' ? (err.error.details.offer as WalletOffer | undefined) : undefined;
      if (offer && onMergeOffer) onMergeOffer(offer);
      else setError(describeError(err));
    } finally {
      setBusy(undefined);
    }
  };

  const none = evmWallets.length === 0 && solanaWallets.length === 0;
  return (
    <div className="picker">
      <fieldset>
        <legend>EVM wallets</legend>
        <ul className="wallets">
          {evmWallets.map((c) => (
            <li key={c.uid}>
              <button
                type="button"
                disabled={busy !== undefined || !wagmi}
                onClick={() => void submit(c.name, 'evm', () => signInWithEvm(wagmi!, c, chainId, nonce, statement))}
              >
                {c.icon ? <img src={c.icon} alt="" width={20} height={20} /> : null}
                {busy === c.name ? `Waiting for ${c.name}…` : c.name}
              </button>
            </li>
          ))}
          {evmWallets.length === 0 && <li className="muted">No EVM wallet found in this browser.</li>}
        </ul>
        {/* After the wallets, not before: the chain only names the network in the signed message. */}
        {evmWallets.length > 0 && (
          <label className="inline small chain">
            Chain named in the message{' '}
            <select value={chainId} onChange={(e) => setChainId(Number(e.target.value))} aria-describedby={chainHint}>
              {SIGN_IN_CHAINS.map((c) => (
                <option key={c.id} value={c.id}>{c.name}</option>
              ))}
            </select>
            <span id={chainHint} className="hint">Ethereum unless you prefer another: the account is the same on every chain (a smart-contract wallet signs on the chain it first used).</span>
          </label>
        )}
      </fieldset>
      <fieldset>
        <legend>Solana wallets</legend>
        <ul className="wallets">
          {solanaWallets.map((w) => (
            <li key={w.name}>
              <button type="button" disabled={busy !== undefined} onClick={() => void submit(w.name, 'solana', () => signInWithSolana(w, nonce, statement))}>
                {w.icon ? <img src={w.icon} alt="" width={20} height={20} /> : null}
                {busy === w.name ? `Waiting for ${w.name}…` : w.name}
              </button>
            </li>
          ))}
          {solanaWallets.length === 0 && <li className="muted">No Solana wallet found in this browser.</li>}
        </ul>
      </fieldset>
      {none && (
        <p className="muted">
          Install a wallet extension (MetaMask, Coinbase Wallet, Rainbow, Phantom, Solflare, Backpack)
          {config.walletconnect_project_id ? ' or use WalletConnect' : ''}, then reload this page.
        </p>
      )}
      <p role="alert" className="error">{error}</p>
    </div>
  );
}
