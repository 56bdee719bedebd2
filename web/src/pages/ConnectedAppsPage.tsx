// Connected apps: the OAuth connections of the account (apps added as connectors in claude.ai,
// ChatGPT, Claude Desktop…), with the servers each may call, when it was connected and last used,
// and Revoke, which stops it within seconds.
import { useEffect, useState } from 'react';
import { api, describeError, type ConnectionInfo } from '../api.ts';
import { When } from './When.tsx';

export function ConnectedAppsPage() {
  const [connections, setConnections] = useState<ConnectionInfo[]>();
  const [error, setError] = useState<string>();
  const [pending, setPending] = useState<string>();
  const [showEnded, setShowEnded] = useState(false);

  const load = () =>
    api<{ connections: ConnectionInfo[] }>('GET', '/connections').then(
      (r) => setConnections(r.connections),
      (err: unknown) => setError(describeError(err)),
    );
  useEffect(() => {
    void load();
  }, []);

  const revoke = (c: ConnectionInfo) => {
    const name = c.client_name ?? c.client_id;
    if (!window.confirm(`Revoke ${name}? It stops working at once and must be authorized again to reconnect.`)) return;
    setPending(c.id);
    setError(undefined);
    api('POST', `/connections/${c.id}/revoke`)
      .then(load, (err: unknown) => setError(describeError(err)))
      .finally(() => setPending(undefined));
  };

  if (!connections) return error ? <p role="alert" className="error">{error}</p> : <p aria-live="polite">Loading…</p>;
  const active = connections.filter((c) => c.status === 'active');
  const ended = connections.length - active.length;
  const shown = showEnded ? connections : active;
  return (
    <>
      <p>
        Apps you authorized with your wallet (connectors in claude.ai, ChatGPT, Claude Desktop and other clients that sign in with OAuth). Each
        spends your credits like an API key, on the servers you allowed. See Connect a client for how to add one.
      </p>
      {error && <p role="alert" className="error">{error}</p>}
      {ended > 0 && (
        <label className="check">
          <input type="checkbox" checked={showEnded} onChange={(e) => setShowEnded(e.target.checked)} />
          Show revoked and expired apps ({ended})
        </label>
      )}
      {shown.length === 0 ? (
        <p className="muted" data-testid="no-apps">No connected apps.</p>
      ) : (
        <table className="responsive apps" data-testid="connected-apps">
          <thead>
            <tr>
              <th scope="col">App</th>
              <th scope="col">Servers</th>
              <th scope="col">Connected</th>
              <th scope="col">Last used</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((c) => (
              <tr key={c.id}>
                <td data-label="App">
                  <strong>{c.client_name ?? c.client_id}</strong>
                  {c.client_uri && <div className="hint">{c.client_uri}</div>}
                </td>
                <td data-label="Servers">{c.servers.join(', ')}</td>
                <td data-label="Connected"><When iso={c.created_at} /></td>
                <td data-label="Last used"><When iso={c.last_used_at} /></td>
                <td data-label="Status">
                  {c.status === 'active' ? (
                    <button type="button" className="danger" disabled={pending !== undefined} onClick={() => revoke(c)} aria-label={`Revoke ${c.client_name ?? c.client_id}`}>
                      Revoke
                    </button>
                  ) : (
                    c.status
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
