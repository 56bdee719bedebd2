import { lazy, Suspense, useEffect, useRef, useState, type ComponentType } from 'react';
import { short } from './address.ts';
import { api, ApiFailure, describeError, setCsrfToken, whenSessionEnds, type DashboardConfig, type SessionInfo } from './api.ts';
import type { NewKey } from './pages/KeysPage.tsx';
import { SignIn } from './pages/SignIn.tsx';
import { consentUid, PAGES, useRoute, type Route } from './route.ts';

/**
 * Each page is its own chunk, loaded when first opened: the first render needs only React, this
 * file and the sign-in text; wallet code (wagmi, viem, Wallet Standard) and Chart.js come with
 * the pages that use them.
 */
function page<P extends object>(load: () => Promise<Record<string, unknown>>, name: string) {
  return lazy(async () => ({ default: (await load())[name] as ComponentType<P> }));
}
const KeysPage = page<{ config: DashboardConfig; onCreated: (k: NewKey) => void; onChange: () => void }>(() => import('./pages/KeysPage.tsx'), 'KeysPage');
const QuickStartPage = page<{ config: DashboardConfig; newKey: NewKey | undefined }>(() => import('./pages/QuickStartPage.tsx'), 'QuickStartPage');
const ConnectPage = page<{ config: DashboardConfig; newKey: NewKey | undefined }>(() => import('./pages/ConnectPage.tsx'), 'ConnectPage');
const ConnectedAppsPage = page<object>(() => import('./pages/ConnectedAppsPage.tsx'), 'ConnectedAppsPage');
const WebhooksPage = page<object>(() => import('./pages/WebhooksPage.tsx'), 'WebhooksPage');
const UsagePage = lazy(() => import('./pages/UsagePage.tsx'));
const PlansPage = page<{ config: DashboardConfig; session: SessionInfo; onLinked: () => void }>(() => import('./pages/PlansPage.tsx'), 'PlansPage');
const ConsentPage = page<{ uid: string; config: DashboardConfig; session: SessionInfo | null; onSignedIn: (s: SessionInfo) => void; onSignedOut: () => void }>(
  () => import('./pages/ConsentPage.tsx'),
  'ConsentPage',
);
const SwitchWallet = page<{
  config: DashboardConfig;
  session: SessionInfo;
  onSwitched: (s: SessionInfo) => void;
  onLinked: (note: string) => void;
  onClose: () => void;
}>(() => import('./pages/SwitchWallet.tsx'), 'SwitchWallet');

const TITLES: Record<Route, string> = {
  keys: 'API keys',
  start: 'Quick start',
  connect: 'Connect a client',
  apps: 'Connected apps',
  usage: 'Usage',
  plans: 'Plans',
  webhooks: 'Webhooks',
  'not-found': 'Page not found',
};

/** Low: a tenth of the plan's allowance or less. */
function lowBalance(session: SessionInfo): boolean {
  const { balance, allowance } = session.account;
  return allowance !== null && allowance > 0 && balance <= allowance / 10;
}

const loading = (what: string) => <p className="muted" aria-live="polite">Loading {what}…</p>;

export function App() {
  const [config, setConfig] = useState<DashboardConfig>();
  const [session, setSession] = useState<SessionInfo | null>();
  // The signed-in pages of a session that ended, kept (hidden) so that signing in again to the
  // same account returns to them as they were, with whatever was typed into their forms.
  const [ended, setEnded] = useState<SessionInfo>();
  const [failure, setFailure] = useState<string>();
  const [route, navigate, moves] = useRoute();
  const [newKey, setNewKey] = useState<NewKey>();
  const [notice, setNotice] = useState<string>();
  const [switching, setSwitching] = useState(false);
  // Focus goes to the page's heading after a navigation or a sign-in, not to <body> or the link.
  const [focusRequests, setFocusRequests] = useState(0);
  const heading = useRef<HTMLHeadingElement>(null);
  const current = useRef<SessionInfo | null | undefined>(undefined);
  current.current = session;

  // A session that ends (expired, or signed out in another tab) returns to sign-in with a note,
  // instead of leaving the header's balance and wallet over pages that cannot load.
  const sessionEnded = () => {
    setCsrfToken(undefined);
    // A new key's secret is not carried over a session's end into Quick start or Connect.
    setNewKey(undefined);
    const was = current.current;
    if (was) {
      setNotice('Your session has ended. Sign in again to continue where you were.');
      setEnded(was);
    }
    setSession(null);
  };

  const signedIn = (s: SessionInfo) => {
    setCsrfToken(s.csrf_token);
    setNotice(undefined);
    setEnded(undefined);
    setSession(s);
    setFocusRequests((n) => n + 1);
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

  const load = () => {
    setFailure(undefined);
    api<DashboardConfig>('GET', '/config').then(setConfig, (err: unknown) => setFailure(describeError(err)));
    void refreshSession();
  };

  useEffect(() => {
    load();
    whenSessionEnds(sessionEnded);
    return () => whenSessionEnds(undefined);
  }, []);

  useEffect(() => {
    document.title = session ? `${TITLES[route]} · cryptomcp` : 'Sign in · cryptomcp';
  }, [route, session]);

  useEffect(() => {
    if (moves + focusRequests > 0) heading.current?.focus();
  }, [moves, focusRequests]);

  if (failure) {
    return (
      <main className="centered" id="main">
        <div className="card" data-testid="load-failure">
          <p role="alert">The dashboard could not load: {failure}</p>
          <button type="button" className="primary" onClick={load}>Retry</button>
        </div>
      </main>
    );
  }
  if (!config || session === undefined) return <main className="centered"><p aria-live="polite">Loading…</p></main>;
  // An app's authorization request: sign-in (when needed) and consent, outside the dashboard's pages.
  const consent = consentUid();
  if (consent) {
    return (
      <Suspense fallback={<main className="centered">{loading('the authorization request')}</main>}>
        <ConsentPage
          uid={consent}
          config={config}
          session={session}
          onSignedIn={(s) => {
            setCsrfToken(s.csrf_token);
            setSession(s);
          }}
          onSignedOut={() => {
            setCsrfToken(undefined);
            setSession(null);
          }}
        />
      </Suspense>
    );
  }

  const signOut = async () => {
    await api('POST', '/auth/sign-out').catch(() => {});
    setCsrfToken(undefined);
    setNewKey(undefined);
    setEnded(undefined);
    setNotice('You are signed out.');
    setSession(null);
  };

  const shown = session ?? ended;
  return (
    <>
      {!session && <SignIn config={config} notice={notice} onSignedIn={signedIn} />}
      {shown && (
        // Keyed by account: switching to another account's wallet reloads every page's data.
        <div className="shell" key={shown.account.id} hidden={!session} inert={!session}>
          <a className="skip" href="#main">Skip to content</a>
          <header className="top">
            <span className="brand">cryptomcp</span>
            <nav aria-label="Dashboard">
              <ul>
                {PAGES.map((p) => (
                  <li key={p}>
                    <a
                      href={`/app/${p}`}
                      aria-current={p === route ? 'page' : undefined}
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
              <span className="balance" data-testid="header-balance">{shown.account.balance.toLocaleString('en-US')} {shown.account.balance === 1 ? 'credit' : 'credits'}</span>
              <span title={shown.wallet.address}>{short(shown.wallet.address)}</span>
              <button type="button" className="link" aria-haspopup="dialog" aria-expanded={switching} onClick={() => setSwitching(!switching)}>
                Switch wallet
              </button>
              <button type="button" className="link" onClick={() => void signOut()}>Sign out</button>
            </div>
          </header>
          <main id={session ? 'main' : undefined} tabIndex={-1}>
            {switching && session && (
              <Suspense fallback={null}>
                <SwitchWallet
                  config={config}
                  session={session}
                  onClose={() => setSwitching(false)}
                  onSwitched={(s) => {
                    setSwitching(false);
                    setCsrfToken(s.csrf_token);
                    setNewKey(undefined);
                    setSession(s);
                    setFocusRequests((n) => n + 1);
                  }}
                  onLinked={(note) => {
                    setSwitching(false);
                    setNotice(note);
                    void refreshSession();
                  }}
                />
              </Suspense>
            )}
            {notice && session && (
              <p className="card notice" role="status" data-testid="app-notice">
                {notice}
              </p>
            )}
            {lowBalance(shown) && (
              <p className="card notice" role="status" data-testid="low-balance">
                Your balance is low: {shown.account.balance.toLocaleString('en-US')} of {shown.account.allowance!.toLocaleString('en-US')} credits left.
                Calls that cost more than that are refused (402); see Plans for more credits, and Usage for what spent them.
              </p>
            )}
            <h1 ref={heading} tabIndex={-1}>{TITLES[route]}</h1>
            <Suspense fallback={loading('the page')}>
              {route === 'keys' && <KeysPage config={config} onCreated={(k) => setNewKey(k)} onChange={refreshSession} />}
              {route === 'start' && <QuickStartPage config={config} newKey={newKey} />}
              {route === 'connect' && <ConnectPage config={config} newKey={newKey} />}
              {route === 'apps' && <ConnectedAppsPage />}
              {route === 'usage' && <UsagePage config={config} onLoaded={refreshSession} />}
              {route === 'plans' && <PlansPage config={config} session={shown} onLinked={refreshSession} />}
              {route === 'webhooks' && <WebhooksPage />}
            </Suspense>
            {route === 'not-found' && (
              <div className="card" data-testid="not-found">
                <p>
                  There is no page at <code>{window.location.pathname}</code>. It may have moved, or the address was mistyped.
                </p>
                <p>
                  <a
                    href="/app/keys"
                    onClick={(e) => {
                      e.preventDefault();
                      navigate('keys');
                    }}
                  >
                    Go to your API keys
                  </a>
                </p>
              </div>
            )}
          </main>
        </div>
      )}
    </>
  );
}
