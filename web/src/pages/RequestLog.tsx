// The request log on the Usage page: the account's recent /mcp requests, newest first, filtered by
// key, server, tool, status and a range of UTC days; a request found by the id an error answer
// quoted; each opened in full (status, code, message, duration, credits, server, tool, arguments'
// size, request id); the same filters as CSV. Read again with the page (refresh).
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { api, describeError, type DashboardConfig } from '../api.ts';
import { When } from './When.tsx';
import { useCredentials } from '../credentials.ts';
import type { RequestLogRowJson } from '../../../server/public-types.ts';

type Row = RequestLogRowJson;

const STATUSES = [
  { value: '', label: 'Any status' },
  { value: 'ok', label: 'Succeeded' },
  { value: 'error', label: 'Failed' },
  { value: 'rate_limited', label: 'Rate-limited (429)' },
];

const bytes = (n: number | null) => (n === null ? '—' : n < 1024 ? `${n} bytes` : `${(n / 1024).toFixed(1)} KiB`);
const outcome = (r: Row) => (r.error_code ? `${r.status} ${r.error_code}` : r.status < 400 ? `${r.status} OK` : String(r.status));

/** One request in full: what a person quotes to support or reads to fix a call. */
function RequestDetail({ row, keyName, onClose }: { row: Row; keyName: string; onClose: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [row.id]);
  const items: [string, ReactNode][] = [
    ['Request id', <code key="id" data-testid="detail-request-id">{row.request_id}</code>],
    ['Time', <When key="t" iso={row.created_at} />],
    ['Outcome', outcome(row)],
    ['Message', row.message ?? (row.error_code ? '—' : 'Answered successfully')],
    ['Server', row.server],
    ['Tool', row.tool ?? `— (${row.method})`],
    ['Method', row.method],
    ['Arguments', bytes(row.args_bytes)],
    ['Credits charged', String(row.credits)],
    ['Duration', `${row.latency_ms} ms`],
    ['Key', keyName],
  ];
  return (
    <section className="card request-detail" aria-labelledby="request-detail-title" data-testid="request-detail" onKeyDown={(e) => e.key === 'Escape' && onClose()}>
      <h3 id="request-detail-title" tabIndex={-1} ref={heading}>
        Request {row.tool ?? row.method}: {outcome(row)}
      </h3>
      <dl>
        {items.map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd className="wrap">{value}</dd>
          </div>
        ))}
      </dl>
      <button type="button" onClick={onClose}>Close details</button>
    </section>
  );
}

export function RequestLog({ config, refresh = 0 }: { config: DashboardConfig; refresh?: number }) {
  const { keys, nameOf } = useCredentials();
  const [filter, setFilter] = useState({ key: '', server: '', tool: '', status: '', from: '', to: '' });
  const [rows, setRows] = useState<Row[]>();
  const [next, setNext] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string>();
  const [open, setOpen] = useState<Row>();
  const [wanted, setWanted] = useState('');
  const [lookupError, setLookupError] = useState<string>();
  // Only the latest request's answer is shown (typing in the tool filter sends several).
  const latest = useRef(0);

  const params = () => new URLSearchParams(Object.entries(filter).filter(([, v]) => v !== ''));
  const query = (before?: string) => {
    const q = params();
    if (before) q.set('before', before);
    return `/requests?${q.toString()}`;
  };
  const load = async (before?: string) => {
    const mine = ++latest.current;
    setLoading(true);
    setError(undefined);
    try {
      const page = await api<{ rows: Row[]; next: string | null }>('GET', query(before));
      if (mine !== latest.current) return;
      setRows((old) => (before ? [...(old ?? []), ...page.rows] : page.rows));
      setNext(page.next);
    } catch (err) {
      if (mine === latest.current) setError(describeError(err));
    } finally {
      if (mine === latest.current) setLoading(false);
    }
  };
  useEffect(() => {
    void load();
  }, [filter]);
  // A refresh reads the newest page again, unless older pages were opened (they would be lost).
  useEffect(() => {
    if (refresh > 0 && next === null) void load();
  }, [refresh]);

  const lookUp = async () => {
    const id = wanted.trim();
    setLookupError(undefined);
    if (!id) return setLookupError('Paste the request id an answer quoted (x-request-id or details.request_id).');
    try {
      setOpen((await api<{ request: Row }>('GET', `/requests/${encodeURIComponent(id)}`)).request);
    } catch (err) {
      setLookupError(describeError(err));
    }
  };

  const set = (field: keyof typeof filter) => (e: { target: { value: string } }) => setFilter({ ...filter, [field]: e.target.value });
  const rangeProblem = filter.from && filter.to && filter.to < filter.from ? 'The last day must not be before the first day.' : undefined;
  return (
    <section aria-labelledby="log-title" aria-busy={loading}>
      <h2 id="log-title">Request log (last {config.request_log_retention_days} days)</h2>
      <form
        className="lookup"
        onSubmit={(e) => {
          e.preventDefault();
          void lookUp();
        }}
      >
        <label>
          Find a request by its id
          <input value={wanted} onChange={(e) => setWanted(e.target.value)} spellCheck={false} autoComplete="off" data-testid="request-id-search" />
        </label>
        <button type="submit">Open</button>
      </form>
      <p role="alert" className="error">{lookupError}</p>
      {open && <RequestDetail row={open} keyName={nameOf(open.key_id)} onClose={() => setOpen(undefined)} />}
      <div className="filters">
        <label>
          Key
          <select value={filter.key} onChange={set('key')}>
            <option value="">Any key</option>
            {keys.map((k) => (
              <option key={k.id} value={k.id}>{k.name}</option>
            ))}
          </select>
        </label>
        <label>
          Server
          <select value={filter.server} onChange={set('server')}>
            <option value="">Any server</option>
            {config.servers.map((s) => (
              <option key={s.name} value={s.name}>{s.name}</option>
            ))}
          </select>
        </label>
        <label>
          Tool name
          <input value={filter.tool} onChange={set('tool')} placeholder="any" spellCheck={false} />
        </label>
        <label>
          Status
          <select value={filter.status} onChange={set('status')}>
            {STATUSES.map((s) => (
              <option key={s.value} value={s.value}>{s.label}</option>
            ))}
          </select>
        </label>
        <label>
          From (UTC day)
          <input type="date" value={filter.from} onChange={set('from')} data-testid="log-from" />
        </label>
        <label>
          To (UTC day)
          <input type="date" value={filter.to} onChange={set('to')} data-testid="log-to" />
        </label>
      </div>
      <p role="alert" className="error">{rangeProblem ?? error}</p>
      <p>
        <a href={`/api/requests.csv?${params().toString()}`} download data-testid="log-csv">
          Download these requests (CSV)
        </a>
      </p>
      {rows === undefined && <p className="muted" aria-live="polite">Loading requests…</p>}
      {rows && rows.length === 0 && <p className="muted">No requests match.</p>}
      {rows && rows.length > 0 && (
        <div className="table-wrap">
          <table className="responsive" data-testid="request-log">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Key</th>
                <th scope="col">Server</th>
                <th scope="col">Tool</th>
                <th scope="col">Status</th>
                <th scope="col" className="num">Credits</th>
                <th scope="col" className="num">Latency</th>
                <th scope="col">Request id</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.id}>
                  <td data-label="Time"><When iso={r.created_at} /></td>
                  <td data-label="Key" className="wrap">{nameOf(r.key_id)}</td>
                  <td data-label="Server">{r.server}</td>
                  <td data-label="Tool">{r.tool ?? r.method}</td>
                  <td data-label="Status">{r.error_code ? `${r.status} ${r.error_code}` : r.status}</td>
                  <td data-label="Credits" className="num">{r.credits}</td>
                  <td data-label="Latency" className="num">{r.latency_ms} ms</td>
                  <td data-label="Request id">
                    <button type="button" className="link" onClick={() => setOpen(r)} aria-label={`Details of request ${r.request_id}`}>
                      <code>{r.request_id}</code>
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {next && (
        <button type="button" disabled={loading} onClick={() => void load(next)}>
          {loading ? 'Loading…' : 'Show older requests'}
        </button>
      )}
    </section>
  );
}
