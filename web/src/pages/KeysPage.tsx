// Create keys (name, description, expiry with a 90-day suggestion, server subset), show a new key
// once with a copy button, list keys, revoke and rotate (with a grace period the user chooses).
import { useEffect, useState, type FormEvent } from 'react';
import { api, describeError, type DashboardConfig, type KeyInfo } from '../api.ts';
import { CopyButton } from './CopyButton.tsx';

export interface NewKey {
  id: string;
  name: string;
  plaintext: string;
  servers: string[] | null;
}

const GRACE_CHOICES = [
  { seconds: 0, label: 'Revoke the old key now' },
  { seconds: 3600, label: 'Keep the old key for 1 hour' },
  { seconds: 86400, label: 'Keep the old key for 24 hours' },
  { seconds: 7 * 86400, label: 'Keep the old key for 7 days' },
];

function inDays(days: number): string {
  return new Date(Date.now() + days * 86400_000).toISOString().slice(0, 10);
}

function when(iso: string | null): string {
  return iso ? new Date(iso).toISOString().slice(0, 16).replace('T', ' ') + ' UTC' : '—';
}

export function KeysPage({ config, onCreated, onChange }: { config: DashboardConfig; onCreated: (k: NewKey) => void; onChange: () => void }) {
  const [keys, setKeys] = useState<KeyInfo[]>();
  const [maxKeys, setMaxKeys] = useState<number | null>(null);
  const [shown, setShown] = useState<NewKey>();
  const [error, setError] = useState<string>();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [expires, setExpires] = useState(inDays(90));
  const [servers, setServers] = useState<string[]>(config.servers.map((s) => s.name));
  const [grace, setGrace] = useState<Record<string, number>>({});

  const load = async () => {
    try {
      const res = await api<{ keys: KeyInfo[]; max_keys: number | null }>('GET', '/keys');
      setKeys(res.keys);
      setMaxKeys(res.max_keys);
    } catch (err) {
      setError(describeError(err));
    }
  };
  useEffect(() => {
    void load();
  }, []);

  const reveal = (key: KeyInfo, plaintext: string) => {
    const k = { id: key.id, name: key.name, plaintext, servers: key.servers };
    setShown(k);
    onCreated(k);
  };

  const create = async (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    try {
      const all = servers.length === config.servers.length;
      const res = await api<{ key: KeyInfo; plaintext: string }>('POST', '/keys', {
        name,
        description: description || undefined,
        expires_at: expires || undefined,
        servers: all ? undefined : servers,
      });
      reveal(res.key, res.plaintext);
      setName('');
      setDescription('');
      await load();
      onChange();
    } catch (err) {
      setError(describeError(err));
    }
  };

  const revoke = async (key: KeyInfo) => {
    if (!window.confirm(`Revoke "${key.name}" (${key.prefix}…)? Clients using it stop working at once.`)) return;
    try {
      await api('POST', `/keys/${key.id}/revoke`);
      await load();
    } catch (err) {
      setError(describeError(err));
    }
  };

  const rotate = async (key: KeyInfo) => {
    try {
      const res = await api<{ key: KeyInfo; plaintext: string }>('POST', `/keys/${key.id}/rotate`, { grace_seconds: grace[key.id] ?? 86400 });
      reveal(res.key, res.plaintext);
      await load();
    } catch (err) {
      setError(describeError(err));
    }
  };

  const active = keys?.filter((k) => k.status === 'active').length ?? 0;
  return (
    <>
      {shown && (
        <section className="card reveal" aria-labelledby="new-key-title">
          <h2 id="new-key-title">Your new key “{shown.name}”</h2>
          <p>Copy it now: it is shown only once and cannot be recovered (rotate the key if you lose it).</p>
          <div className="secret">
            <code data-testid="new-key">{shown.plaintext}</code>
            <CopyButton text={shown.plaintext} label="Copy key" />
          </div>
          <p className="muted">Next: the Connect page has ready configurations for your MCP client.</p>
          <button type="button" className="link" onClick={() => setShown(undefined)}>Hide</button>
        </section>
      )}

      <section className="card" aria-labelledby="create-title">
        <h2 id="create-title">Create a key</h2>
        <form onSubmit={(e) => void create(e)}>
          <div className="grid2">
            <label>
              <span>
                Name <span aria-hidden="true">*</span>
              </span>
              <input required maxLength={64} value={name} onChange={(e) => setName(e.target.value)} placeholder="e.g. laptop assistant" />
            </label>
            <label>
              Expires on
              <input type="date" value={expires} min={inDays(1)} onChange={(e) => setExpires(e.target.value)} aria-describedby="expiry-hint" />
              <span id="expiry-hint" className="hint">We suggest 90 days; clear the date for a key that never expires.</span>
            </label>
          </div>
          <label>
            Description
            <textarea maxLength={500} rows={2} value={description} onChange={(e) => setDescription(e.target.value)} />
          </label>
          <fieldset className="servers">
            <legend>Servers this key may call</legend>
            {config.servers.map((s) => (
              <label key={s.name} className="check">
                <input
                  type="checkbox"
                  checked={servers.includes(s.name)}
                  onChange={(e) => setServers(e.target.checked ? [...servers, s.name] : servers.filter((x) => x !== s.name))}
                />
                {s.name}
              </label>
            ))}
          </fieldset>
          <button type="submit" className="primary" disabled={servers.length === 0}>Create key</button>
          {maxKeys !== null && <span className="hint"> {active} of {maxKeys} active keys on your plan.</span>}
        </form>
        <p role="alert" className="error">{error}</p>
      </section>

      <section aria-labelledby="list-title">
        <h2 id="list-title">Your keys</h2>
        {keys && keys.length === 0 && <p className="muted">No keys yet.</p>}
        {keys && keys.length > 0 && (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Prefix</th>
                  <th scope="col">Servers</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Status</th>
                  <th scope="col"><span className="sr-only">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                {keys.map((k) => (
                  <tr key={k.id} data-key-id={k.id}>
                    <td>
                      {k.name}
                      {k.description && <div className="muted small">{k.description}</div>}
                      {keys.some((other) => other.rotated_from === k.id) && <div className="muted small">Replaced by a rotation</div>}
                    </td>
                    <td><code>{k.prefix}…</code></td>
                    <td>{k.servers ? k.servers.join(', ') : 'all'}</td>
                    <td>{when(k.created_at)}</td>
                    <td>{when(k.last_used_at)}</td>
                    <td>{when(k.expires_at)}</td>
                    <td><span className={`status ${k.status}`}>{k.status}</span></td>
                    <td>
                      {k.status === 'active' && (
                        <div className="actions">
                          <label className="sr-only" htmlFor={`grace-${k.id}`}>Rotation grace period for {k.name}</label>
                          <select id={`grace-${k.id}`} value={grace[k.id] ?? 86400} onChange={(e) => setGrace({ ...grace, [k.id]: Number(e.target.value) })}>
                            {GRACE_CHOICES.map((g) => (
                              <option key={g.seconds} value={g.seconds}>{g.label}</option>
                            ))}
                          </select>
                          <button type="button" onClick={() => void rotate(k)} aria-label={`Rotate ${k.name}`}>Rotate</button>
                          <button type="button" className="danger" onClick={() => void revoke(k)} aria-label={`Revoke ${k.name}`}>Revoke</button>
                        </div>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}
