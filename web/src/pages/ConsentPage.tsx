// Where an app's OAuth authorization lands (/app/consent/{uid}): the wallet sign-in when needed,
// then who is asking (name, address and logo from its metadata), the servers it asks for — which
// the person may narrow, each with what it answers — and Approve / Deny, told apart by more than
// their words. "Not you?" signs out so another wallet can answer. The answer sends the browser
// back to the app. Built for a phone first: people approve connectors there.
import { useEffect, useState } from 'react';
import { short } from '../address.ts';
import { api, ApiFailure, describeError, type DashboardConfig, type InteractionDetails, type SessionInfo } from '../api.ts';
import { ServerChoices } from './ServerChoices.tsx';
import { WalletPicker } from './WalletPickerLazy.tsx';

/** Only an https logo is shown: anything else could be a tracking or local address. */
function safeLogo(uri: string | null): string | undefined {
  return uri && /^https:\/\//i.test(uri) ? uri : undefined;
}

export function ConsentPage({
  uid,
  config,
  session,
  onSignedIn,
  onSignedOut,
}: {
  uid: string;
  config: DashboardConfig;
  session: SessionInfo | null;
  onSignedIn: (s: SessionInfo) => void;
  onSignedOut: () => void;
}) {
  const [details, setDetails] = useState<InteractionDetails>();
  const [loadError, setLoadError] = useState<string>();
  const [servers, setServers] = useState<string[]>([]);
  const [busy, setBusy] = useState<'approve' | 'deny'>();
  const [error, setError] = useState<string>();

  useEffect(() => {
    api<InteractionDetails>('GET', `/oauth/interaction/${encodeURIComponent(uid)}/details`).then(
      (d) => {
        setDetails(d);
        setServers(d.servers);
      },
      (err: unknown) => setLoadError(err instanceof ApiFailure && err.status === 404 ? err.message : describeError(err)),
    );
  }, [uid]);

  useEffect(() => {
    document.title = 'Authorize an app · cryptomcp';
  }, []);

  const notYou = async () => {
    await api('POST', '/auth/sign-out').catch(() => {});
    onSignedOut();
  };

  const answer = async (kind: 'approve' | 'deny') => {
    setBusy(kind);
    setError(undefined);
    try {
      const body = kind === 'approve' ? { servers } : {};
      const { redirect_to } = await api<{ redirect_to: string }>('POST', `/oauth/interaction/${encodeURIComponent(uid)}/${kind}`, body);
      window.location.assign(redirect_to);
    } catch (err) {
      setError(describeError(err));
      setBusy(undefined);
    }
  };

  if (loadError) {
    return (
      <main className="centered" id="main">
        <section className="card">
          <h1>Authorize an app</h1>
          <p role="alert" className="error">{loadError}</p>
        </section>
      </main>
    );
  }
  if (!details) return <main className="centered"><p aria-live="polite">Loading…</p></main>;

  const name = details.client.name ?? details.client.client_id;
  const logo = safeLogo(details.client.logo_uri);
  return (
    <main className="landing consent" id="main">
      <h1>Authorize {name}</h1>
      <section className="card" aria-labelledby="client-title" data-testid="consent-client">
        <div className="client-head">
          {logo && <img src={logo} alt="" width={48} height={48} referrerPolicy="no-referrer" onError={(e) => (e.currentTarget.hidden = true)} />}
          <div>
            <h2 id="client-title">{name}</h2>
            {details.client.uri && (
              <p>
                <a href={details.client.uri} target="_blank" rel="noreferrer noopener">{details.client.uri}</a>
              </p>
            )}
            <p className="hint">
              {details.client.registration === 'metadata_document' ? 'Identified by its metadata document at ' : 'Registered itself as '}
              <code>{details.client.client_id}</code>
              {details.client.redirect_host && (
                <>
                  ; your answer returns you to <strong>{details.client.redirect_host}</strong>
                </>
              )}
              .
            </p>
          </div>
        </div>
        <p>
          This app asks to call cryptomcp's MCP servers for your account. Its calls spend your credits and count toward your plan's rate limit,
          like an API key. You can revoke it at any time under Connected apps.
        </p>
      </section>

      {!session ? (
        <section className="card" aria-labelledby="consent-sign-in">
          <h2 id="consent-sign-in">Sign in to continue</h2>
          <p>Connect a wallet and sign a message to prove it is yours. A new wallet gets an account on the free plan; signing sends no transaction.</p>
          <WalletPicker config={config} mode="sign-in" onDone={(r) => onSignedIn(r as SessionInfo)} />
        </section>
      ) : (
        <section className="card" aria-labelledby="consent-servers">
          <p data-testid="consent-account">
            Signed in as <span title={session.wallet.address}>{short(session.wallet.address)}</span> ({session.account.plan} plan,{' '}
            {session.account.balance.toLocaleString('en-US')} credits).{' '}
            <button type="button" className="link" disabled={busy !== undefined} onClick={() => void notYou()}>
              Not you? Use another wallet
            </button>
          </p>
          <fieldset className="servers">
            <legend id="consent-servers">Servers {name} may use</legend>
            <ServerChoices
              servers={details.servers.map((s) => config.servers.find((c) => c.name === s) ?? { name: s, description: '' })}
              idPrefix="consent"
              value={servers}
              onChange={setServers}
            />
          </fieldset>
          {servers.length === 0 && <p className="error">Choose at least one server, or deny.</p>}
          {error && <p role="alert" className="error">{error}</p>}
          <div className="actions answer">
            <button type="button" className="primary" disabled={busy !== undefined || servers.length === 0} onClick={() => void answer('approve')}>
              {busy === 'approve' ? 'Approving…' : 'Approve'}
            </button>
            <button type="button" className="secondary" disabled={busy !== undefined} onClick={() => void answer('deny')}>
              {busy === 'deny' ? 'Denying…' : 'Deny'}
            </button>
          </div>
        </section>
      )}
      {!session && (
        <p>
          <button type="button" className="link" disabled={busy !== undefined} onClick={() => void answer('deny')}>
            Deny without signing in
          </button>
        </p>
      )}
      {!session && error && <p role="alert" className="error">{error}</p>}
    </main>
  );
}
