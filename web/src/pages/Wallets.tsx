// The account's wallets: link another one, merge the account a wallet already has into this one
// (both wallets sign the merge), and unlink a wallet (never the last one, nor the one signed in with).
import { useState } from 'react';
import { short } from '../address.ts';
import { api, ApiFailure, describeError, type DashboardConfig, type SessionInfo, type WalletOffer } from '../api.ts';
import { WalletPicker } from './WalletPickerLazy.tsx';

type Signed = { family: 'evm' | 'solana'; message: string; signature: string };

/** The address a sign-in message was signed for (its second line, in EIP-4361 and in Solana's sign-in message). */
function signerOf(signed: Signed): string {
  return (signed.message.split('\n')[1] ?? '').trim();
}

const sameAddress = (family: string, a: string, b: string) => (family === 'evm' ? a.toLowerCase() === b.toLowerCase() : a === b);

const credits = (n: number) => `${n.toLocaleString('en-US')} credit${n === 1 ? '' : 's'}`;

/** The merge of an offered wallet's account: a preview, then a signature from each wallet, then the merge. */
function MergeDialog({ config, session, offer, onDone, onCancel }: { config: DashboardConfig; session: SessionInfo; offer: WalletOffer; onDone: (note: string) => void; onCancel: () => void }) {
  const [step, setStep] = useState<'preview' | 'target' | 'source' | 'merging'>('preview');
  const [targetSignature, setTargetSignature] = useState<Signed>();
  const [error, setError] = useState<string>();
  const source = offer.source!;
  // What the merge moves: on the free plan only bought (top-up) credits.
  const moved = (source as { credits_moved?: number }).credits_moved ?? source.balance;

  const merge = async (sourceSignature: Signed) => {
    setStep('merging');
    setError(undefined);
    try {
      const res = await api<{ merged: { credits: number; keys: number; wallets: number } }>('POST', '/merges', {
        offer_id: offer.id,
        signatures: [targetSignature, sourceSignature],
      });
      onDone(`Merged: ${credits(res.merged.credits)}, ${res.merged.keys} key${res.merged.keys === 1 ? '' : 's'} and ${res.merged.wallets} wallet${res.merged.wallets === 1 ? '' : 's'} moved to this account.`);
    } catch (err) {
      // A refusal (4xx) is made before anything moves: say so, beside why.
      setError(err instanceof ApiFailure && err.status < 500 ? `Nothing was merged. ${describeError(err)}` : describeError(err));
      // Each signature's nonce is used up: a new attempt starts from the first signature.
      setTargetSignature(undefined);
      setStep('preview');
    }
  };

  return (
    <div className="card merge" role="group" aria-labelledby="merge-title" data-testid="merge-offer">
      <h3 id="merge-title">Merge the account of {short(offer.wallet.address)} into this one?</h3>
      <p>
        This wallet already has its own cryptomcp account: <strong>{credits(source.balance)}</strong>, {source.active_keys} active key
        {source.active_keys === 1 ? '' : 's'} and {source.wallets.length} wallet{source.wallets.length === 1 ? '' : 's'}
        {source.plan ? ` on the ${source.plan} plan` : ''}. Merging moves its keys, wallets and bought credits ({credits(moved)}) here and ends it
        as a separate login{moved < source.balance ? '; what is left of its free allowance stays behind, since the free allowance comes once per account' : ''};
        this account stays on the {session.account.plan} plan. Both wallets sign the merge; signing costs nothing.
      </p>
      {step === 'preview' && source.blocked && (
        <>
          <p role="alert" className="error" data-testid="merge-blocked">{source.blocked.message}</p>
          <button type="button" onClick={onCancel}>Close</button>
        </>
      )}
      {step === 'preview' && !source.blocked && (
        <div className="actions">
          <button type="button" onClick={() => setStep('target')}>Merge into this account</button>
          <button type="button" onClick={onCancel}>Cancel</button>
        </div>
      )}
      {step === 'target' && (
        <>
          <p><strong>Step 1 of 2:</strong> sign with a wallet of this account ({short(session.wallet.address)} or another one linked here).</p>
          <WalletPicker
            config={config}
            mode="sign"
            statement={offer.statement}
            onDone={(signed) => {
              const s = signed as Signed;
              const signer = signerOf(s);
              // Step 1 is this account's wallet: another wallet's signature would only fail at the end.
              if (!session.account.wallets.some((w) => sameAddress(s.family, w.address, signer))) {
                setError(`That signature is from ${short(signer)}, which is not a wallet of this account. Sign with ${short(session.wallet.address)} or another wallet linked here.`);
                return;
              }
              setError(undefined);
              setTargetSignature(s);
              setStep('source');
            }}
          />
          <button type="button" onClick={onCancel}>Cancel</button>
        </>
      )}
      {step === 'source' && (
        <>
          <p><strong>Step 2 of 2:</strong> sign with <code className="address">{offer.wallet.address}</code>, the wallet of the account being merged.</p>
          <WalletPicker
            config={config}
            mode="sign"
            statement={offer.statement}
            onDone={(signed) => {
              const s = signed as Signed;
              if (!sameAddress(s.family, signerOf(s), offer.wallet.address)) {
                setError(`That signature is from ${short(signerOf(s))}; step 2 needs ${short(offer.wallet.address)}, the wallet of the account being merged.`);
                return;
              }
              void merge(s);
            }}
          />
          <button type="button" onClick={onCancel}>Cancel</button>
        </>
      )}
      {step === 'merging' && <p aria-live="polite">Merging…</p>}
      <p role="alert" className="error">{error}</p>
    </div>
  );
}

export function Wallets({ config, session, onChanged }: { config: DashboardConfig; session: SessionInfo; onChanged: () => void }) {
  const [linking, setLinking] = useState(false);
  const [offer, setOffer] = useState<WalletOffer>();
  const [confirming, setConfirming] = useState<string>();
  const [note, setNote] = useState<string>();
  const [error, setError] = useState<string>();
  const wallets = session.account.wallets;
  const familyOf = (chain: string) => (chain === 'solana' ? 'solana' : 'evm');
  const isCurrent = (address: string) => address === session.wallet.address;

  const unlink = async (chain: string, address: string) => {
    setError(undefined);
    try {
      await api('POST', '/wallets/unlink', { family: familyOf(chain), address });
      setNote(`${short(address)} is no longer linked to this account.`);
      onChanged();
    } catch (err) {
      setError(describeError(err));
    } finally {
      setConfirming(undefined);
    }
  };

  return (
    <section className="card" aria-labelledby="wallets-title">
      <h2 id="wallets-title">Wallets on this account</h2>
      <p className="hint">Any of these wallets signs in to this account. A wallet can be removed while another one remains.</p>
      <ul className="wallet-list" data-testid="wallet-list">
        {wallets.map((w) => (
          <li key={`${w.chain}:${w.address}`}>
            <code className="address">{w.address}</code> <span className="muted">({w.chain}{isCurrent(w.address) ? ', signed in with' : ''})</span>{' '}
            {confirming === w.address ? (
              <span className="actions">
                <button type="button" onClick={() => void unlink(w.chain, w.address)}>Unlink {short(w.address)}</button>
                <button type="button" onClick={() => setConfirming(undefined)}>Keep it</button>
              </span>
            ) : (
              wallets.length > 1 &&
              !isCurrent(w.address) && (
                <button type="button" className="link" onClick={() => setConfirming(w.address)} aria-label={`Unlink ${w.address}`}>
                  Unlink
                </button>
              )
            )}
          </li>
        ))}
      </ul>
      <p role="status" data-testid="wallets-note">{note}</p>
      <p role="alert" className="error">{error}</p>
      {offer ? (
        <MergeDialog
          config={config}
          session={session}
          offer={offer}
          onCancel={() => setOffer(undefined)}
          onDone={(n) => {
            setOffer(undefined);
            setNote(n);
            onChanged();
          }}
        />
      ) : linking ? (
        <>
          <WalletPicker
            config={config}
            mode="link"
            onMergeOffer={(o) => {
              setLinking(false);
              setOffer(o);
            }}
            onDone={() => {
              setLinking(false);
              setNote('The wallet is linked: it signs in to this account now.');
              onChanged();
            }}
          />
          <button type="button" onClick={() => setLinking(false)}>Cancel</button>
        </>
      ) : (
        <button type="button" onClick={() => { setNote(undefined); setLinking(true); }}>Link another wallet</button>
      )}
    </section>
  );
}
