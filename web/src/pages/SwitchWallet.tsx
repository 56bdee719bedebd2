// Signing in with another wallet while signed in: a wallet of this account or of another account
// switches to it; a wallet with no account yet is offered for linking to this account (or, if the
// person prefers, a separate account) instead of silently opening a second account. It is a modal
// dialog: it takes focus, Escape or Cancel closes it and focus returns to "Switch wallet".
import { useState } from 'react';
import { short } from '../address.ts';
import { api, describeError, type DashboardConfig, type SessionInfo, type WalletOffer } from '../api.ts';
import { Dialog } from './Dialog.tsx';
import { WalletPicker } from './WalletPickerLazy.tsx';

export function SwitchWallet({
  config,
  session,
  onSwitched,
  onLinked,
  onClose,
}: {
  config: DashboardConfig;
  session: SessionInfo;
  onSwitched: (s: SessionInfo) => void;
  onLinked: (note: string) => void;
  onClose: () => void;
}) {
  const [offer, setOffer] = useState<WalletOffer>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();

  const act = async (path: 'link' | 'separate-account') => {
    setBusy(true);
    setError(undefined);
    try {
      const res = await api<SessionInfo & { wallets?: unknown }>('POST', `/wallets/offers/${offer!.id}/${path}`);
      if (path === 'link') onLinked(`${short(offer!.wallet.address)} is linked: it signs in to this account now.`);
      else onSwitched(res);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog labelledBy="switch-title" onClose={onClose} testId="switch-wallet">
      <h2 id="switch-title" tabIndex={-1}>Sign in with another wallet</h2>
      {offer ? (
        <div data-testid="link-offer">
          <p>
            <code className="address">{offer.wallet.address}</code> has no cryptomcp account yet. Link it to this account (signed in as{' '}
            {short(session.wallet.address)}) so either wallet signs in here, or open a separate account for it with its own free credits.
          </p>
          <div className="actions">
            <button type="button" disabled={busy} onClick={() => void act('link')}>Link it to this account</button>
            <button type="button" disabled={busy} onClick={() => void act('separate-account')}>Open a separate account</button>
            <button type="button" disabled={busy} onClick={onClose}>Cancel</button>
          </div>
        </div>
      ) : (
        <>
          <p className="hint">A wallet of another account switches to that account. A wallet with no account yet can be linked to this one.</p>
          <WalletPicker
            config={config}
            mode="sign-in"
            onDone={(result) => {
              const r = result as SessionInfo | { offer: WalletOffer };
              if ('offer' in r) setOffer(r.offer);
              else onSwitched(r);
            }}
          />
          <button type="button" onClick={onClose}>Cancel</button>
        </>
      )}
      <p role="alert" className="error">{error}</p>
    </Dialog>
  );
}
