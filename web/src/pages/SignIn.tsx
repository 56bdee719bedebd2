// The first page a visitor meets: what cryptomcp is in a sentence, the servers with what they
// answer and what a call costs (from the public catalog), what the free plan gives, and sign-in.
import { useEffect, useState } from 'react';
import { describeError, fetchCatalog, type Catalog, type DashboardConfig, type SessionInfo } from '../api.ts';
import { WalletPicker } from './WalletPickerLazy.tsx';

function costRange(tools: Catalog['servers'][number]['tools']): string {
  const paid = tools.map((t) => t.credits).filter((c) => c > 0);
  const free = tools.length - paid.length;
  const freeNote = free > 0 ? ` (${free} free tool${free === 1 ? '' : 's'})` : '';
  if (paid.length === 0) return `Every call is free${freeNote}.`;
  const lo = Math.min(...paid);
  const hi = Math.max(...paid);
  const range = lo === hi ? `${lo} credit${lo === 1 ? '' : 's'}` : `${lo}–${hi} credits`;
  return `A call costs ${range}${freeNote}.`;
}

export function SignIn({ config, notice, onSignedIn }: { config: DashboardConfig; notice?: string; onSignedIn: (s: SessionInfo) => void }) {
  const [catalog, setCatalog] = useState<Catalog>();
  const [catalogError, setCatalogError] = useState<string>();
  useEffect(() => {
    fetchCatalog().then(setCatalog, (err: unknown) => setCatalogError(describeError(err)));
  }, []);
  const free = catalog?.plans.find((p) => p.name === 'free');

  return (
    <main className="landing" id="main">
      <h1>cryptomcp</h1>
      <p className="lead">
        Crypto market, on-chain, social and project data for AI assistants and agents: {config.servers.length} MCP servers your client calls over HTTP
        with an API key, paid for in credits.
      </p>
      {notice && (
        <p className="card session-note" role="status" data-testid="session-note">
          {notice}
        </p>
      )}
      <section className="card" aria-labelledby="sign-in-title">
        <h2 id="sign-in-title">Sign in to cryptomcp</h2>
        <p>
          Connect a wallet and sign a message to prove it is yours. A new wallet gets an account on the free plan
          {free ? ` with ${free.credits.toLocaleString()} credits` : ''}; signing costs nothing and sends no transaction. Then create an API key and
          paste the ready-made configuration into your MCP client.
        </p>
        <WalletPicker config={config} mode="sign-in" onDone={(r) => onSignedIn(r as SessionInfo)} />
      </section>
      <section aria-labelledby="servers-title" aria-busy={!catalog && !catalogError}>
        <h2 id="servers-title">What you can ask</h2>
        <p>
          Each server answers one subject at <code>{config.mcp_base_url}/mcp/&lt;server&gt;</code>. Credits are spent only on a tool call that
          succeeds; connecting and listing tools are free. The full list of tools, with their inputs and costs, is in the{' '}
          <a href="/v1/catalog">catalog (JSON)</a>.
        </p>
        {catalogError && <p role="alert" className="error">The server list could not load: {catalogError}</p>}
        {!catalog && !catalogError && <p className="muted" aria-live="polite">Loading the servers…</p>}
        {catalog && (
          <ul className="server-list" data-testid="server-list">
            {catalog.servers.map((s) => (
              <li key={s.name} className="card">
                <h3>{s.name}</h3>
                <p>{s.description}</p>
                <p className="hint">
                  {s.tools.length} tools. {costRange(s.tools)}
                </p>
              </li>
            ))}
          </ul>
        )}
      </section>
    </main>
  );
}
