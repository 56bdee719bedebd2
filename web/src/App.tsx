import { lazy, Suspense, useEffect, useRef, useState } from 'react';
import { short } from './address.ts';
import { api, ApiFailure, describeError, setCsrfToken, whenSessionEnds, type DashboardConfig, type SessionInfo } from './api.ts';
import { ConnectedAppsPage } from './pages/ConnectedAppsPage.tsx';
import { ConnectPage } from './pages/ConnectPage.tsx';
import { ConsentPage } from './pages/ConsentPage.tsx';
import { KeysPage, type NewKey } from './pages/KeysPage.tsx';
import { PlansPage } from './pages/PlansPage.tsx';
import { QuickStartPage } from './pages/QuickStartPage.tsx';
import { SignIn } from './pages/SignIn.tsx';
import { SwitchWallet } from './pages/SwitchWallet.tsx';
import { WebhooksPage } from './pages/WebhooksPage.tsx';
import { consentUid, PAGES, useRoute, type Page } from './route.ts';

// Chart.js is only needed on the Usage page: it loads when that page is first opened.
const UsagePage = lazy(() => import('./pages/UsagePage.tsx'));

const TITLES: Record<Page, string> = {
  keys: 'API keys',
  start: 'Quick start',
  connect: 'Connect a client',
  apps: 'Connected apps',
  usage: 'Usage',
  plans: 'Plans',
  webhooks: 'Webhooks',
};

/** Low: a tenth of the plan's allowance or less. */
function lowBalance(session: SessionInfo): boolean {
  const { balance, allowance } = session.account;
  return allowance !== null && allowance > 0 && balance <= allowance / 10;
}

export function App() {
  const [config, setConfig] = useState<DashboardConfig>();
  const [session, setSession] = useState<SessionInfo | null>();
  const [failure, setFailure] = useState<string>();
  const [page, navigate] = useRoute();
  const [newKey, setNewKey] = useState<NewKey>();
  const [notice, setNotice] = useState<string>();
  const [switching, setSwitching] = useState(false);
  const signedIn = useRef(false);
  signedIn.current = Boolean(session);

  // A session that ends (expired, or signed out in another tab) returns to sign-in with a note,
  // instead of leaving the header's balance and wallet over pages that cannot load.
  const sessionEnded = () => {
    setCsrfToken(undefined);
    setNewKey(undefined);
    if (signedIn.current) setNotice('Your session has ended. Sign in again to continue where you were.');
    setSession(null);
  };

  const refreshSession = async () => {
    try {
      const s = await api<SessionInfo>('GET', '/session');
      setCsrfToken(s.csrf_token);
      setSession(s);
    } catch (err) {
      if (err instanceof ApiFailure && err.status === 401) sessionEnded();
      else setFailure(describeError(err));
    }
  };

  useEffect(() => {
    api<DashboardConfig>('GET', '/config').then(setConfig, (err: unknown) => setFailure(describeError(err)));
    void refreshSession();
    whenSessionEnds(sessionEnded);
    return () => whenSessionEnds(undefined);
  }, []);

  useEffect(() => {
    document.title = session ? `${TITLES[page]} · cryptomcp` : 'Sign in · cryptomcp';
  }, [page, session]);

  if (failure) return <main className="centered"><p role="alert">The dashboard could not load: {failure}</p></main>;
  if (!config || session === undefined) return <main className="centered"><p aria-live="polite">Loading…</p></main>;
  // An app's authorization request: sign-in (when needed) and consent, outside the dashboard's pages.
  const consent = consentUid();
  if (consent) {
    return (
      <ConsentPage
        uid={consent}
        config={config}
        session={session}
        onSignedIn={(s) => {
          setCsrfToken(s.csrf_token);
          setSession(s);
        }}
      />
    );
  }
  if (!session) {
    return (
      <SignIn
        config={config}
        notice={notice}
        onSignedIn={(s) => {
          setCsrfToken(s.csrf_token);
          setNotice(undefined);
          setSession(s);
        }}
      />
    );
  }

  const signOut = async () => {
    await api('POST', '/auth/sign-out').catch(() => {});
    setCsrfToken(undefined);
    setNewKey(undefined);
    setNotice('You are signed out.');
    setSession(null);
  };

  return (
    <div className="shell">
      <a className="skip" href="#main">Skip to content</a>
      <header className="top">
        <span className="brand">cryptomcp</span>
        <nav aria-label="Dashboard">
          <ul>
            {PAGES.map((p) => (
              <li key={p}>
                <a
                  href={`/app/${p}`}
                  aria-current={p === page ? 'page' : undefined}
                  onClick={(e) => {
                    e.preventDefault();
                    navigate(p);
                  }}
                >
                  {TITLES[p]}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div className="who">
          <span className="balance" data-testid="header-balance">{session.account.balance.toLocaleString('en-US')} credits</span>
          <span title={session.wallet.address}>{short(session.wallet.address)}</span>
          <button type="button" className="link" aria-expanded={switching} onClick={() => setSwitching(!switching)}>Switch wallet</button>
          <button type="button" className="link" onClick={() => void signOut()}>Sign out</button>
        </div>
      </header>
      {/* Keyed by account: switching to another account's wallet reloads every page's data. */}
      <main id="main" tabIndex={-1} key={session.account.id}>
        {switching && (
          <SwitchWallet
            config={config}
            session={session}
            onClose={() => setSwitching(false)}
            onSwitched={(s) => {
              setSwitching(false);
              setCsrfToken(s.csrf_token);
              setNewKey(undefined);
              setSession(s);
            }}
            onLinked={(note) => {
              setSwitching(false);
              setNotice(note);
              void refreshSession();
            }}
          />
        )}
        {notice && (
          <p className="card notice" role="status" data-testid="app-notice">
            {notice}
          </p>
        )}
        {lowBalance(session) && (
          <p className="card notice" role="status" data-testid="low-balance">
            Your balance is low: {session.account.balance.toLocaleString('en-US')} of {session.account.allowance!.toLocaleString('en-US')} credits left.
            Calls that cost more than that are refused (402); see Plans for more credits, and Usage for what spent them.
          </p>
        )}
        <h1>{TITLES[page]}</h1>
        {page === 'keys' && <KeysPage config={config} onCreated={(k) => setNewKey(k)} onChange={refreshSession} />}
        {page === 'start' && <QuickStartPage config={config} newKey={newKey} />}
        {page === 'connect' && <ConnectPage config={config} newKey={newKey} />}
        {page === 'apps' && <ConnectedAppsPage />}
        {page === 'usage' && (
          <Suspense fallback={<p aria-live="polite">Loading charts…</p>}>
            <UsagePage config={config} onLoaded={refreshSession} />
          </Suspense>
        )}
        {page === 'plans' && <PlansPage config={config} session={session} onLinked={refreshSession} />}
        {page === 'webhooks' && <WebhooksPage />}
      </main>
    </div>
  );
}
