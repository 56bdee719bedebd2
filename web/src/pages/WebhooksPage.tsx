// Webhooks: where the account's alerts and notices (usage, plan lapse) are POSTed (docs/alerts.md).
// Each endpoint with its rules and deliveries by status; add one by URL (its signing secret is
// shown once), rotate its secret (the old one keeps signing for a day), and the delivery log of an
// endpoint: each alert's or notice's event type, status and attempts (outcome, response code,
// duration), with Redeliver.
import { useEffect, useState, type FormEvent } from 'react';
import { api, ApiFailure, describeError } from '../api.ts';
import { CopyButton } from './CopyButton.tsx';
import { When } from './When.tsx';

interface Endpoint {
  id: number;
  url: string;
  created_at: string;
  rotated_at: string | null;
  previous_secret_until: string | null;
  rules: number;
  deliveries: { delivered: number; pending: number; failed: number; unpaid: number };
}

interface Attempt {
  attempt: number;
  started_at: string;
  duration_ms: number;
  outcome: string;
  status_code: number | null;
  error: string | null;
}

interface DeliveryRow {
  id: number;
  /** `alert.<kind>` or `account.usage` / `account.plan_lapse`. */
  event_type: string;
  alert_id: number | null;
  notice_id: number | null;
  title: string;
  status: string;
  attempts: Attempt[];
  next_attempt_at: string | null;
  delivered_at: string | null;
  created_at: string;
}

/** A secret just made, shown this once. */
interface Shown {
  url: string;
  secret: string;
  why: 'added' | 'rotated';
}

/** One day: the old secret keeps signing beside the new one for this long after a rotation. */
const ROTATION_GRACE_SECONDS = 86_400;

const OUTCOMES: Record<string, string> = {
  ok: 'accepted',
  http_error: 'HTTP error',
  network_error: 'network error',
  timeout: 'timed out',
  refused_address: 'refused address',
};

/** "alert 12" or "notice 3": what a delivery sent, as the log names it. */
function eventName(d: DeliveryRow): string {
  return d.notice_id === null ? `alert ${d.alert_id}` : `notice ${d.notice_id}`;
}

function attemptText(a: Attempt): string {
  const code = a.status_code === null ? '' : ` ${a.status_code}`;
  return `#${a.attempt} ${OUTCOMES[a.outcome] ?? a.outcome}${code}, ${a.duration_ms} ms`;
}

/** A refused URL says why (not public, not https, does not resolve); anything else as everywhere. */
function addError(err: unknown): string {
  if (err instanceof ApiFailure && err.error.code === 'INVALID_PARAMS') {
    const issue = (err.error.details.issues as { path: string; message: string }[] | undefined)?.find((i) => i.path === 'url');
    if (issue) return `This URL cannot receive webhooks: ${issue.message}. Use an https:// address on the public Internet.`;
  }
  return describeError(err);
}

export function WebhooksPage() {
  const [endpoints, setEndpoints] = useState<Endpoint[]>();
  const [error, setError] = useState<string>();
  const [url, setUrl] = useState('');
  const [adding, setAdding] = useState(false);
  const [shown, setShown] = useState<Shown>();
  const [note, setNote] = useState<string>();
  const [open, setOpen] = useState<Endpoint>();

  const load = () =>
    api<{ webhooks: Endpoint[] }>('GET', '/webhooks').then(
      (r) => setEndpoints(r.webhooks),
      (err: unknown) => setError(describeError(err)),
    );
  useEffect(() => {
    void load();
  }, []);

  const add = async (e: FormEvent) => {
    e.preventDefault();
    setAdding(true);
    setError(undefined);
    setNote(undefined);
    try {
      const res = await api<{ id: number; url: string; created: boolean; secret: string | null }>('POST', '/webhooks', { url: url.trim() });
      if (res.secret) setShown({ url: res.url, secret: res.secret, why: 'added' });
      else setNote(`You have an endpoint for ${res.url} already; its secret was shown when it was added (rotate it if you lost it).`);
      setUrl('');
      await load();
    } catch (err) {
      setError(addError(err));
    } finally {
      setAdding(false);
    }
  };

  const rotate = async (endpoint: Endpoint) => {
    if (!window.confirm(`Rotate the signing secret of ${endpoint.url}? The new secret is shown once; the old one keeps signing beside it for 24 hours.`)) return;
    setError(undefined);
    try {
      const res = await api<{ secret: string }>('POST', `/webhooks/${endpoint.id}/rotate`, { grace_seconds: ROTATION_GRACE_SECONDS });
      setShown({ url: endpoint.url, secret: res.secret, why: 'rotated' });
      await load();
    } catch (err) {
      setError(describeError(err));
    }
  };

  return (
    <>
      <p>
        Alert rules (create_price_alert, create_whale_alert, create_social_alert) that name a <code>webhook_url</code> have each alert POSTed there,
        signed per Standard Webhooks and retried for about a day. A delivered alert costs 1 credit; a failed one nothing.
      </p>

      {shown && (
        <section className="card reveal" aria-labelledby="secret-title">
          <h2 id="secret-title">{shown.why === 'added' ? 'Signing secret of your new endpoint' : 'New signing secret'}</h2>
          <p>
            Copy it now: it is shown only once. Your receiver verifies each delivery to <code>{shown.url}</code> with it.
          </p>
          <div className="secret">
            <code data-testid="webhook-secret">{shown.secret}</code>
            <CopyButton text={shown.secret} label="Copy secret" />
          </div>
          <button type="button" className="link" onClick={() => setShown(undefined)}>Hide</button>
        </section>
      )}

      <section className="card" aria-labelledby="add-title">
        <h2 id="add-title">Add an endpoint</h2>
        <form onSubmit={(e) => void add(e)}>
          <label>
            URL
            <input type="url" required maxLength={2048} value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://example.com/hooks/cryptomcp" aria-describedby="url-hint" />
            <span id="url-hint" className="hint">An https:// address on the public Internet. Rules send to it when their webhook_url is this URL.</span>
          </label>
          <div className="create-row">
            <button type="submit" className="primary" disabled={adding}>{adding ? 'Adding…' : 'Add endpoint'}</button>
          </div>
        </form>
        {note && <p role="status">{note}</p>}
        <p role="alert" className="error">{error}</p>
      </section>

      <section aria-labelledby="endpoints-title" aria-busy={endpoints === undefined}>
        <h2 id="endpoints-title">Your endpoints</h2>
        {endpoints === undefined ? (
          <p aria-live="polite">Loading…</p>
        ) : endpoints.length === 0 ? (
          <p className="muted" data-testid="no-webhooks">No webhook endpoints yet.</p>
        ) : (
          <table className="responsive" data-testid="webhooks">
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">Rules</th>
                <th scope="col">Deliveries</th>
                <th scope="col">Secret</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {endpoints.map((e) => (
                <tr key={e.id}>
                  <td data-label="URL" className="wrap">{e.url}</td>
                  <td data-label="Rules">{e.rules}</td>
                  <td data-label="Deliveries">
                    {e.deliveries.delivered} delivered, {e.deliveries.pending} pending, {e.deliveries.failed} failed
                    {e.deliveries.unpaid > 0 ? `, ${e.deliveries.unpaid} unpaid` : ''}
                  </td>
                  <td data-label="Secret">
                    <div>
                      {e.rotated_at ? <>Rotated <When iso={e.rotated_at} /></> : <>Made <When iso={e.created_at} /></>}
                      {e.previous_secret_until && (
                        <div className="hint">
                          The previous secret signs too until <When iso={e.previous_secret_until} />
                        </div>
                      )}
                    </div>
                  </td>
                  <td data-label="Actions">
                    <div className="actions">
                      <button type="button" aria-expanded={open?.id === e.id} onClick={() => setOpen(open?.id === e.id ? undefined : e)} aria-label={`Delivery log of ${e.url}`}>
                        Delivery log
                      </button>
                      <button type="button" onClick={() => void rotate(e)} aria-label={`Rotate the secret of ${e.url}`}>
                        Rotate secret
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>

      {open && <DeliveryLog key={open.id} endpoint={open} onChange={load} />}
    </>
  );
}

function DeliveryLog({ endpoint, onChange }: { endpoint: Endpoint; onChange: () => Promise<void> }) {
  const [rows, setRows] = useState<DeliveryRow[]>();
  const [error, setError] = useState<string>();
  const [status, setStatus] = useState<string>();

  const load = () =>
    api<{ deliveries: DeliveryRow[] }>('GET', `/webhooks/${endpoint.id}/deliveries?limit=50`).then(
      (r) => setRows(r.deliveries),
      (err: unknown) => setError(describeError(err)),
    );
  useEffect(() => {
    void load();
  }, []);

  const redeliver = async (d: DeliveryRow) => {
    setError(undefined);
    try {
      await api('POST', `/webhooks/deliveries/${d.id}/redeliver`);
      setStatus(`The ${eventName(d)} is being sent again.`);
      await Promise.all([load(), onChange()]);
    } catch (err) {
      setError(describeError(err));
    }
  };

  return (
    <section className="card" aria-labelledby="log-title">
      <div className="toolbar">
        <h2 id="log-title">
          Delivery log of <code>{endpoint.url}</code>
        </h2>
        <button type="button" onClick={() => void load()}>Refresh</button>
      </div>
      <p role="status">{status}</p>
      <p role="alert" className="error">{error}</p>
      {rows === undefined ? (
        <p aria-live="polite">Loading…</p>
      ) : rows.length === 0 ? (
        <p className="muted" data-testid="no-deliveries">Nothing sent to this endpoint yet.</p>
      ) : (
        <table className="responsive" data-testid="deliveries">
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">When</th>
              <th scope="col"><span className="sr-only">Redeliver</span></th>
            </tr>
          </thead>
          <tbody>
            {rows.map((d) => (
              <tr key={d.id} data-testid={`delivery-${d.id}`}>
                <td data-label="Event">
                  {d.title}
                  <div className="hint"><code>{d.event_type}</code></div>
                </td>
                <td data-label="Status">{d.status}</td>
                <td data-label="Attempts">
                  <div>
                    {d.attempts.length === 0 ? (
                      '—'
                    ) : (
                      <ol className="attempts">
                        {d.attempts.map((a) => (
                          <li key={a.attempt} title={a.error ?? undefined}>{attemptText(a)}</li>
                        ))}
                      </ol>
                    )}
                    {d.next_attempt_at && (
                      <div className="hint">
                        Next attempt <When iso={d.next_attempt_at} />
                      </div>
                    )}
                  </div>
                </td>
                <td data-label="When"><When iso={d.delivered_at ?? d.created_at} /></td>
                <td data-label="Redeliver">
                  <button type="button" onClick={() => void redeliver(d)} aria-label={`Redeliver ${eventName(d)}`}>
                    Redeliver
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
