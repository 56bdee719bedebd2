// The request log on the Usage page: the account's recent /mcp requests, newest first, filtered by
// key, server, tool and status, each with its request id (what an error answer quotes).
import { useEffect, useRef, useState } from 'react';
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

export function RequestLog({ config }: { config: DashboardConfig }) {
  const { keys, nameOf } = useCredentials();
  const [filter, setFilter] = useState({ key: '', server: '', tool: '', status: '' });
  const [rows, setRows] = useState<Row[]>();
  const [next, setNext] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string>();
  // Only the latest request's answer is shown (typing in the tool filter sends several).
  const latest = useRef(0);

  const query = (before?: string) => {
    const q = new URLSearchParams(Object.entries(filter).filter(([, v]) => v !== ''));
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

  const keyName = nameOf;
  const set = (field: keyof typeof filter) => (e: { target: { value: string } }) => setFilter({ ...filter, [field]: e.target.value });
  return (
    <section aria-labelledby="log-title" aria-busy={loading}>
      <h2 id="log-title">Request log (last {config.request_log_retention_days} days)</h2>
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
      </div>
      <p role="alert" className="error">{error}</p>
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
                  <td data-label="Key" className="wrap">{keyName(r.key_id)}</td>
                  <td data-label="Server">{r.server}</td>
                  <td data-label="Tool">{r.tool ?? r.method}</td>
                  <td data-label="Status">{r.error_code ? `${r.status} ${r.error_code}` : r.status}</td>
                  <td data-label="Credits" className="num">{r.credits}</td>
                  <td data-label="Latency" className="num">{r.latency_ms} ms</td>
                  <td data-label="Request id"><code>{r.request_id}</code></td>
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
