// Requests as the gateway answered them, over the chosen range: a chart per day with successes,
// failures and rate-limited calls (429) side by side in one stack, then the same split per key, per
// server and tool, and per error code. One key can be picked to see its requests only.
import { useEffect, useRef, useState } from 'react';
import { api, describeError, type Outcomes, type UsageBreakdown as Breakdown } from '../api.ts';
import { BarChart, daysFrom, type BarData } from './BarChart.tsx';
import type { UsageRangeValue } from './UsageRange.tsx';
import { useCredentials } from '../credentials.ts';

// Okabe–Ito: blue for answers, vermillion for failures, orange for 429s (told apart without colour by the legend and tables).
const OUTCOMES = [
  { field: 'ok', label: 'Succeeded', color: '#0072B2' },
  { field: 'errors', label: 'Failed', color: '#D55E00' },
  { field: 'rate_limited', label: 'Rate-limited (429)', color: '#E69F00' },
] as const;

function outcomeSeries(b: Breakdown): BarData {
  const labels = daysFrom(b.from, b.to);
  const byDay = new Map(b.daily.map((d) => [d.day, d]));
  return {
    labels,
    datasets: OUTCOMES.map((o) => ({ label: o.label, data: labels.map((day) => byDay.get(day)?.[o.field] ?? 0), backgroundColor: o.color, stack: 'all' })),
  };
}

function OutcomeCells({ row }: { row: Outcomes }) {
  return (
    <>
      <td data-label="Requests" className="num">{row.requests}</td>
      <td data-label="Succeeded" className="num">{row.ok}</td>
      <td data-label="Failed" className="num">{row.errors}</td>
      <td data-label="Rate-limited" className="num">{row.rate_limited}</td>
      <td data-label="Credits" className="num">{row.credits}</td>
    </>
  );
}

const OUTCOME_HEADERS = (
  <>
    <th scope="col" className="num">Requests</th>
    <th scope="col" className="num">Succeeded</th>
    <th scope="col" className="num">Failed</th>
    <th scope="col" className="num">Rate-limited (429)</th>
    <th scope="col" className="num">Credits</th>
  </>
);

export function UsageBreakdown({ range, retentionDays, refresh = 0 }: { range: UsageRangeValue; retentionDays: number; refresh?: number }) {
  const { keys, nameOf } = useCredentials();
  const [key, setKey] = useState('');
  const [data, setData] = useState<Breakdown>();
  const [error, setError] = useState<string>();
  const latest = useRef(0);

  useEffect(() => {
    const mine = ++latest.current;
    setError(undefined);
    api<Breakdown>('GET', `/usage/breakdown?${range.query}${key ? `&key=${key}` : ''}`).then(
      (b) => {
        if (mine === latest.current) setData(b);
      },
      (err: unknown) => {
        if (mine === latest.current) setError(describeError(err));
      },
    );
  }, [range.query, key, refresh]);

  const keyName = nameOf;
  const total = data?.daily.reduce(
    (t, d) => ({ requests: t.requests + d.requests, ok: t.ok + d.ok, errors: t.errors + d.errors, rate_limited: t.rate_limited + d.rate_limited }),
    { requests: 0, ok: 0, errors: 0, rate_limited: 0 },
  );

  return (
    <section aria-labelledby="outcomes-title" aria-busy={!data && !error} data-testid="usage-breakdown">
      <h2 id="outcomes-title">Requests by outcome</h2>
      <p className="hint">
        Every request the gateway answered for a key of this account, from the request log ({retentionDays} days are kept). Failed means an error
        answer (4xx or 5xx); rate-limited means 429, the plan's requests per minute were exceeded.
      </p>
      <label className="inline">
        Key{' '}
        <select value={key} onChange={(e) => setKey(e.target.value)} data-testid="breakdown-key">
          <option value="">All keys</option>
          {keys.map((k) => (
            <option key={k.id} value={k.id}>{k.name}</option>
          ))}
        </select>
      </label>
      <p role="alert" className="error">{error}</p>
      {!data && !error && <p className="muted" aria-live="polite">Loading requests…</p>}
      {data && total && (
        <>
          <p data-testid="outcome-totals">
            {range.text.charAt(0).toUpperCase() + range.text.slice(1)}: {total.requests} requests, {total.ok} succeeded, {total.errors} failed, {total.rate_limited} rate-limited.
            {data.from < data.retained_from && ` Days before ${data.retained_from} are past the log's retention and show nothing.`}
          </p>
          <div className="card">
            <BarChart
              data={outcomeSeries(data)}
              testId="outcome-chart"
              label={`Stacked bars of requests per day over ${range.text}: succeeded, failed and rate-limited`}
            />
          </div>
          <h3>By key</h3>
          {data.by_key.length === 0 ? (
            <p className="muted">No requests in this range.</p>
          ) : (
            <div className="table-wrap">
              <table className="responsive" data-testid="by-key">
                <thead>
                  <tr>
                    <th scope="col">Key</th>
                    {OUTCOME_HEADERS}
                  </tr>
                </thead>
                <tbody>
                  {data.by_key.map((k) => (
                    <tr key={k.key_id ?? 'none'}>
                      <td data-label="Key" className="wrap">{keyName(k.key_id)}</td>
                      <OutcomeCells row={k} />
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <h3>By server and tool</h3>
          {data.by_tool.length > 0 && (
            <div className="table-wrap">
              <table className="responsive" data-testid="by-tool-outcomes">
                <thead>
                  <tr>
                    <th scope="col">Server</th>
                    <th scope="col">Tool or method</th>
                    {OUTCOME_HEADERS}
                  </tr>
                </thead>
                <tbody>
                  {data.by_tool.map((t) => (
                    <tr key={`${t.server}/${t.method}/${t.tool ?? ''}`}>
                      <td data-label="Server">{t.server}</td>
                      <td data-label="Tool or method" className="wrap">{t.tool ?? t.method}</td>
                      <OutcomeCells row={t} />
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {data.by_error.length > 0 && (
            <>
              <h3>Errors by code</h3>
              <ul data-testid="by-error">
                {data.by_error.map((e) => (
                  <li key={`${e.error_code}/${e.status}`}>
                    <code>{e.error_code}</code> (HTTP {e.status}): {e.requests}
                  </li>
                ))}
              </ul>
            </>
          )}
        </>
      )}
    </section>
  );
}
