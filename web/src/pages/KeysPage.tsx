// Create keys (name, description, expiry with a 90-day suggestion, server subset), show a new key
// once with a copy button, list keys, edit, revoke and rotate (with a grace period the user chooses);
// pause, cap, rate-limit and make read-only (KeyControls.tsx); the account's activity (AuditLog.tsx).
// One request per click: a busy state blocks a second submit, and each creation carries an
// Idempotency-Key, so even a retried request cannot make a second key.
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { api, describeError, newIdempotencyKey, type DashboardConfig, type KeyInfo } from '../api.ts';
import { ActiveSessions, AuditLog } from './AuditLog.tsx';
import { CopyButton } from './CopyButton.tsx';
import { ServerChoices } from './ServerChoices.tsx';
import { KeyControlSummary, KeyLimits, PauseButton } from './KeyControls.tsx';
import { When } from './When.tsx';

export interface NewKey {
  id: string;
  name: string;
  plaintext: string;
  servers: string[] | null;
}

const GRACE_CHOICES = [
  { seconds: 0, label: 'Revoke the old key now', confirm: 'stops working at once' },
  { seconds: 3600, label: 'Keep the old key for 1 hour', confirm: 'keeps working for 1 hour' },
  { seconds: 86400, label: 'Keep the old key for 24 hours', confirm: 'keeps working for 24 hours' },
  { seconds: 7 * 86400, label: 'Keep the old key for 7 days', confirm: 'keeps working for 7 days' },
];

function inDays(days: number): string {
  return new Date(Date.now() + days * 86400_000).toISOString().slice(0, 10);
}

/** Edits an active key's name, description, servers and expiry (the key itself does not change). */
function EditKey({ config, keyInfo, onSaved, onCancel }: { config: DashboardConfig; keyInfo: KeyInfo; onSaved: () => void; onCancel: () => void }) {
  const all = config.servers.map((s) => s.name);
  const [name, setName] = useState(keyInfo.name);
  const [description, setDescription] = useState(keyInfo.description ?? '');
  const [expires, setExpires] = useState(keyInfo.expires_at?.slice(0, 10) ?? '');
  const [servers, setServers] = useState<string[]>(keyInfo.servers ?? all);
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<string>();
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);

  const save = async (e: FormEvent) => {
    e.preventDefault();
    if (saving) return;
    setSaving(true);
    setError(undefined);
    try {
      const sameExpiry = (keyInfo.expires_at?.slice(0, 10) ?? '') === expires;
      await api('PATCH', `/keys/${keyInfo.id}`, {
        name,
        description: description || null,
        servers: servers.length === all.length ? null : servers,
        ...(sameExpiry ? {} : { expires_at: expires || null }),
      });
      onSaved();
    } catch (err) {
      setError(describeError(err));
      setSaving(false);
    }
  };

  return (
    <section className="card" aria-labelledby="edit-title">
      <h2 id="edit-title" ref={heading} tabIndex={-1}>Edit “{keyInfo.name}”</h2>
      <form onSubmit={(e) => void save(e)} onInput={() => setError(undefined)}>
        <div className="grid2">
          <label>
            New name
            <input required maxLength={64} value={name} onChange={(e) => setName(e.target.value)} />
          </label>
          <label>
            New expiry
            <input type="date" value={expires} min={inDays(1)} onChange={(e) => setExpires(e.target.value)} aria-describedby="edit-expiry-hint" />
            <span id="edit-expiry-hint" className="hint">Clear the date for a key that never expires.</span>
          </label>
        </div>
        <label>
          New description
          <textarea maxLength={500} rows={2} value={description} onChange={(e) => setDescription(e.target.value)} />
        </label>
        <fieldset className="servers">
          <legend>Servers this key may call</legend>
          <ServerChoices servers={config.servers} idPrefix="edit" value={servers} onChange={setServers} />
        </fieldset>
        <div className="create-row">
          <button type="submit" className="primary" disabled={saving || servers.length === 0}>{saving ? 'Saving…' : 'Save changes'}</button>
          <button type="button" onClick={onCancel}>Cancel</button>
        </div>
      </form>
      <p role="alert" className="error">{error}</p>
    </section>
  );
}

export function KeysPage({ config, onCreated, onChange }: { config: DashboardConfig; onCreated: (k: NewKey | undefined) => void; onChange: () => void }) {
  const [keys, setKeys] = useState<KeyInfo[]>();
  const [maxKeys, setMaxKeys] = useState<number | null>(null);
  const [shown, setShown] = useState<NewKey>();
  const [replayed, setReplayed] = useState<string>();
  const [error, setError] = useState<string>();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [expires, setExpires] = useState(inDays(90));
  const [servers, setServers] = useState<string[]>(config.servers.map((s) => s.name));
  const [grace, setGrace] = useState<Record<string, number>>({});
  const [creating, setCreating] = useState(false);
  const [pending, setPending] = useState<string>();
  const [showInactive, setShowInactive] = useState(false);
  const [editing, setEditing] = useState<KeyInfo>();
  const [limiting, setLimiting] = useState<KeyInfo>();
  // Bumped after each action, so the activity list shows it.
  const [changes, setChanges] = useState(0);
  // State updates land after the event: a ref stops a second click in the same frame.
  const inFlight = useRef(false);
  // The Idempotency-Key of the last creation attempt and the body it was for: a retry of the same
  // form reuses it (so a lost response cannot lead to a second key); a changed form gets a new one.
  const attempt = useRef<{ body: string; key: string }>(undefined);

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
    setReplayed(undefined);
    onCreated(k);
  };

  const create = async (e: FormEvent) => {
    e.preventDefault();
    if (inFlight.current) return;
    inFlight.current = true;
    setCreating(true);
    setError(undefined);
    setShown(undefined);
    setReplayed(undefined);
    try {
      const all = servers.length === config.servers.length;
      const body = { name, description: description || undefined, expires_at: expires || undefined, servers: all ? undefined : servers };
      const text = JSON.stringify(body);
      if (attempt.current?.body !== text) attempt.current = { body: text, key: newIdempotencyKey() };
      const res = await api<{ key: KeyInfo; plaintext: string | null }>('POST', '/keys', body, { 'idempotency-key': attempt.current.key });
      attempt.current = undefined;
      if (res.plaintext) reveal(res.key, res.plaintext);
      else {
        setShown(undefined);
        setReplayed(res.key.name);
      }
      setName('');
      setDescription('');
      await load();
      onChange();
    } catch (err) {
      setError(describeError(err));
    } finally {
      inFlight.current = false;
      setCreating(false);
    }
  };

  const act = async (key: KeyInfo, action: () => Promise<void>) => {
    if (pending) return;
    setPending(key.id);
    setError(undefined);
    try {
      await action();
      await load();
      setChanges((n) => n + 1);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setPending(undefined);
    }
  };

  const revoke = (key: KeyInfo) => {
    if (!window.confirm(`Revoke "${key.name}" (${key.prefix}…)? Clients using it stop working at once.`)) return;
    void act(key, async () => {
      await api('POST', `/keys/${key.id}/revoke`);
      // A revoked secret is not left on screen (nor offered by Quick start and Connect).
      if (shown?.id === key.id) {
        setShown(undefined);
        onCreated(undefined);
      }
    });
  };

  const rotate = (key: KeyInfo) => {
    const seconds = grace[key.id] ?? 86400;
    const choice = GRACE_CHOICES.find((g) => g.seconds === seconds) ?? GRACE_CHOICES[2]!;
    if (!window.confirm(`Rotate "${key.name}" (${key.prefix}…)? A new key is made and shown once; the old key ${choice.confirm}.`)) return;
    void act(key, async () => {
      const res = await api<{ key: KeyInfo; plaintext: string }>('POST', `/keys/${key.id}/rotate`, { grace_seconds: seconds });
      reveal(res.key, res.plaintext);
    });
  };

  const active = keys?.filter((k) => k.status === 'active').length ?? 0;
  const atCap = maxKeys !== null && active >= maxKeys;
  const inactive = keys?.filter((k) => k.status !== 'active').length ?? 0;
  const listed = keys?.filter((k) => showInactive || k.status === 'active') ?? [];
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
          <p className="muted">Next: Quick start has a curl command and an SDK program filled with this key; Connect a client has configurations for MCP clients.</p>
          <button type="button" className="link" onClick={() => setShown(undefined)}>Hide</button>
        </section>
      )}
      {replayed && (
        <p className="card" role="status">
          The key “{replayed}” was already created by an earlier click; no second key was made. Its secret was shown then: if you did not copy it, rotate
          that key.
        </p>
      )}

      {/* The list before the form: on a phone the keys are the first thing below the heading. */}
      <section aria-labelledby="list-title" aria-busy={keys === undefined}>
        <div className="toolbar">
          <h2 id="list-title">Your keys</h2>
          {inactive > 0 && (
            <label className="check">
              <input type="checkbox" checked={showInactive} onChange={(e) => setShowInactive(e.target.checked)} />
              Show revoked and expired keys ({inactive})
            </label>
          )}
        </div>
        {editing && (
          <EditKey
            key={editing.id}
            config={config}
            keyInfo={editing}
            onCancel={() => setEditing(undefined)}
            onSaved={() => {
              setEditing(undefined);
              void load();
            }}
          />
        )}
        {limiting && (
          <KeyLimits
            key={limiting.id}
            keyInfo={limiting}
            onCancel={() => setLimiting(undefined)}
            onSaved={() => {
              setLimiting(undefined);
              void load();
              setChanges((n) => n + 1);
            }}
          />
        )}
        {keys === undefined && <p className="muted" aria-live="polite">Loading your keys…</p>}
        {keys && listed.length === 0 && <p className="muted">{keys.length === 0 ? 'No keys yet.' : 'No active keys.'}</p>}
        {listed.length > 0 && (
          <div className="table-wrap">
            <table className="responsive keys">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Prefix</th>
                  <th scope="col">Servers</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Status</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {listed.map((k) => (
                  <tr key={k.id} data-key-id={k.id}>
                    <td data-label="Name" className="wrap">
                      <div>
                        <strong>{k.name}</strong>
                        {k.description && <div className="muted small">{k.description}</div>}
                        {keys!.some((other) => other.rotated_from === k.id) && <div className="muted small">Replaced by a rotation</div>}
                        <KeyControlSummary k={k} />
                      </div>
                    </td>
                    <td data-label="Prefix"><code>{k.prefix}…</code></td>
                    <td data-label="Servers" className="wrap">{k.servers ? k.servers.join(', ') : 'all'}</td>
                    <td data-label="Created"><When iso={k.created_at} /></td>
                    <td data-label="Last used">{k.last_used_at ? <When iso={k.last_used_at} /> : 'never'}</td>
                    <td data-label="Expires">{k.expires_at ? <When iso={k.expires_at} /> : 'never'}</td>
                    <td data-label="Status">
                      <span className={`status ${k.status === 'active' && k.paused ? 'paused' : k.status}`}>{k.status === 'active' && k.paused ? 'paused' : k.status}</span>
                    </td>
                    <td data-label="Actions">
                      {k.status === 'active' ? (
                        <div className="actions">
                          <label className="sr-only" htmlFor={`grace-${k.id}`}>Rotation grace period for {k.name}</label>
                          <select id={`grace-${k.id}`} value={grace[k.id] ?? 86400} onChange={(e) => setGrace({ ...grace, [k.id]: Number(e.target.value) })}>
                            {GRACE_CHOICES.map((g) => (
                              <option key={g.seconds} value={g.seconds}>{g.label}</option>
                            ))}
                          </select>
                          <button type="button" disabled={pending !== undefined} onClick={() => setEditing(k)} aria-label={`Edit ${k.name}`}>
                            Edit
                          </button>
                          <PauseButton k={k} disabled={pending !== undefined} onError={setError} onDone={() => void load().then(() => setChanges((n) => n + 1))} />
                          <button type="button" disabled={pending !== undefined} onClick={() => setLimiting(k)} aria-label={`Limits of ${k.name}`}>
                            Limits
                          </button>
                          <button type="button" disabled={pending !== undefined} onClick={() => rotate(k)} aria-label={`Rotate ${k.name}`}>
                            {pending === k.id ? 'Working…' : 'Rotate'}
                          </button>
                          <button type="button" className="danger" disabled={pending !== undefined} onClick={() => revoke(k)} aria-label={`Revoke ${k.name}`}>
                            Revoke
                          </button>
                        </div>
                      ) : (
                        <span className="muted">none</span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section className="card" aria-labelledby="create-title">
        <h2 id="create-title">Create a key</h2>
        <form onSubmit={(e) => void create(e)} onInput={() => setError(undefined)}>
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
            <ServerChoices servers={config.servers} idPrefix="server" value={servers} onChange={setServers} />
          </fieldset>
          <div className="create-row">
            <button type="submit" className="primary" disabled={creating || atCap || keys === undefined || servers.length === 0} aria-describedby="cap-note">
              {creating ? 'Creating…' : 'Create key'}
            </button>
            <span id="cap-note" className="hint" data-testid="cap-note">
              {maxKeys === null
                ? ''
                : atCap
                  ? `You have ${active} of ${maxKeys} active keys, the most your plan allows. Revoke a key you no longer use (or change plan on the Plans page) to create another.`
                  : `${active} of ${maxKeys} active keys on your plan.`}
              {servers.length === 0 ? ' Choose at least one server.' : ''}
            </span>
          </div>
        </form>
        <p role="alert" className="error">{error}</p>
      </section>
      <AuditLog key={`audit-${changes}`} />
      <ActiveSessions />
    </>
  );
}
