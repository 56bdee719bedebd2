// The account's audit log (GET /api/audit): every dashboard action, who did it (the wallet signed
// in), when, and the request id to quote; and the browsers signed in now, each of which can be ended.
import { useEffect, useState } from 'react';
import { short } from '../address.ts';
import { api, describeError } from '../api.ts';
import { When } from './When.tsx';

interface AuditEntry {
  id: string;
  action: string;
  wallet: { family: string; address: string } | null;
  request_id: string | null;
  target: string | null;
  details: Record<string, unknown>;
  at: string;
}

interface SessionEntry {
  id: string;
  wallet: { family: string; address: string };
  user_agent: string | null;
  created_at: string;
  last_seen_at: string;
  current: boolean;
}

const ACTIONS: Record<string, string> = {
  sign_in: 'Signed in',
  sign_out: 'Signed out',
  session_revoke: 'Ended a session',
  key_create: 'Created a key',
  key_update: 'Changed a key',
  key_revoke: 'Revoked a key',
  key_rotate: 'Rotated a key',
  key_pause: 'Paused a key',
  key_resume: 'Resumed a key',
  wallet_link: 'Linked a wallet',
  wallet_unlink: 'Unlinked a wallet',
  account_merge: 'Merged an account',
  plan_purchase: 'Paid an order',
  connection_revoke: 'Revoked a connected app',
};

/** What a row says beyond the action: the key's name, the client, the wallet. */
function detail(e: AuditEntry): string {
  const d = e.details;
  if (typeof d.name === 'string') return d.name;
  if (typeof d.client === 'string') return d.client;
  if (e.action.startsWith('wallet_') && e.target) return short(e.target.replace(/^\w+:/, ''));
  return '';
}

export function AuditLog() {
  const [entries, setEntries] = useState<AuditEntry[]>();
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string>();

  const load = async (cursor?: string) => {
    try {
      const res = await api<{ entries: AuditEntry[]; next_cursor: string | null }>('GET', `/audit?limit=20${cursor ? `&cursor=${cursor}` : ''}`);
      setEntries((old) => (cursor ? [...(old ?? []), ...res.entries] : res.entries));
      setNext(res.next_cursor);
    } catch (err) {
      setError(describeError(err));
    }
  };
  useEffect(() => {
    void load();
  }, []);

  return (
    <section aria-labelledby="audit-title" aria-busy={entries === undefined} data-testid="audit-log">
      <h2 id="audit-title">Activity</h2>
      {entries === undefined && !error && <p className="muted" aria-live="polite">Loading activity…</p>}
      {entries && entries.length === 0 && <p className="muted">Nothing yet.</p>}
      {entries && entries.length > 0 && (
        // A list, not a table: each entry reads as one sentence on a phone as on a desk.
        <ol className="plain activity">
          {entries.map((e) => (
            <li key={e.id} data-action={e.action}>
              <When iso={e.at} /> · <strong>{ACTIONS[e.action] ?? e.action}</strong>
              {detail(e) && <> · {detail(e)}</>}
              {e.wallet && (
                <>
                  {' '}by <code className="address">{short(e.wallet.address)}</code>
                </>
              )}
              {e.request_id && (
                <span className="muted small">
                  {' '}· request <code>{e.request_id}</code>
                </span>
              )}
            </li>
          ))}
        </ol>
      )}
      {next && (
        <button type="button" onClick={() => void load(next)}>
          Show older activity
        </button>
      )}
      <p role="alert" className="error">{error}</p>
    </section>
  );
}

export function ActiveSessions() {
  const [sessions, setSessions] = useState<SessionEntry[]>();
  const [error, setError] = useState<string>();
  const load = async () => {
    try {
      setSessions((await api<{ sessions: SessionEntry[] }>('GET', '/sessions')).sessions);
    } catch (err) {
      setError(describeError(err));
    }
  };
  useEffect(() => {
    void load();
  }, []);
  const end = async (s: SessionEntry) => {
    if (!window.confirm(s.current ? 'End the session of this browser (you will be signed out)?' : `End the session of ${short(s.wallet.address)} in that browser?`)) return;
    try {
      await api('POST', `/sessions/${s.id}/revoke`);
      if (s.current) window.location.reload();
      else await load();
    } catch (err) {
      setError(describeError(err));
    }
  };
  return (
    <section aria-labelledby="sessions-title" data-testid="active-sessions">
      <h2 id="sessions-title">Signed-in browsers</h2>
      {sessions && (
        <ul className="plain">
          {sessions.map((s) => (
            <li key={s.id}>
              <code className="address">{short(s.wallet.address)}</code> · {s.user_agent ? s.user_agent.slice(0, 60) : 'unknown browser'} · last seen <When iso={s.last_seen_at} />
              {s.current && <strong> (this browser)</strong>}{' '}
              <button type="button" className="link" onClick={() => void end(s)} aria-label={s.current ? 'End the session of this browser' : `End the session of ${short(s.wallet.address)}`}>
                End
              </button>
            </li>
          ))}
        </ul>
      )}
      <p role="alert" className="error">{error}</p>
    </section>
  );
}
