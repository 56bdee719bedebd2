// Balance, plan and renewal; calls and credits per day by server and by tool (Chart.js stacked
// bars, with the same numbers in a table for screen readers) over a preset or custom range; CSV
// export; requests by outcome (UsageBreakdown.tsx) and the request log.
import { useEffect, useState } from 'react';
import { api, describeError, type DashboardConfig, type UsageInfo } from '../api.ts';
import { BarChart, COLORS, daysFrom } from './BarChart.tsx';
import { Purchases } from './Purchases.tsx';
import { RequestLog } from './RequestLog.tsx';
import { UsageBreakdown } from './UsageBreakdown.tsx';
import { DEFAULT_RANGE, UsageRange } from './UsageRange.tsx';
import { When } from './When.tsx';

function series(usage: UsageInfo, by: 'server' | 'tool', metric: 'calls' | 'credits') {
  const labels = daysFrom(usage.from, usage.to);
  const groups = new Map<string, number[]>();
  for (const row of usage.daily) {
    const name = by === 'server' ? row.server : `${row.server} · ${row.tool}`;
    const values = groups.get(name) ?? labels.map(() => 0);
    const i = labels.indexOf(row.day);
    if (i >= 0) values[i]! += row[metric];
    groups.set(name, values);
  }
  return {
    labels,
    datasets: [...groups].map(([label, data], i) => ({ label, data, backgroundColor: COLORS[i % COLORS.length]!, stack: 'all' })),
  };
}

export default function UsagePage({ config, onLoaded }: { config: DashboardConfig; onLoaded: () => void }) {
  const [range, setRange] = useState(DEFAULT_RANGE);
  const [usage, setUsage] = useState<UsageInfo>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    api<UsageInfo>('GET', `/usage?${range.query}`).then(
      (u) => {
        setUsage(u);
        onLoaded();
      },
      (err: unknown) => setError(describeError(err)),
    );
    // onLoaded refreshes the header balance; it must not re-trigger this load.
  }, [range.query]);

  if (error) return <p role="alert" className="error">{error}</p>;
  if (!usage) return <p className="muted" aria-live="polite">Loading usage…</p>;
  return (
    <>
      <section className="stats" aria-label="Account">
        <div className="card stat">
          <span className="label">Balance</span>
          <span className="big" data-testid="balance">{usage.balance.toLocaleString('en-US')}</span>
          <span className="muted">of {usage.allowance.toLocaleString('en-US')} credits</span>
        </div>
        <div className="card stat">
          <span className="label">Plan</span>
          <span className="big">{usage.plan.charAt(0).toUpperCase() + usage.plan.slice(1)}</span>
          <span className="muted">{usage.status === 'active' ? 'active' : usage.status}</span>
        </div>
        <div className="card stat">
          <span className="label">Renewal</span>
          <span className="big">{usage.renews_at ? <When iso={usage.renews_at} withTime={false} /> : 'none'}</span>
          <span className="muted">{usage.renewal === 'monthly' ? 'resets to the allowance' : 'one-time allowance'}</span>
        </div>
        <div className="card stat">
          <span className="label">This period</span>
          <span className="big" data-testid="calls">{usage.calls}</span>
          <span className="muted">calls, {usage.credits_used} credits</span>
        </div>
      </section>
      <div className="toolbar">
        <UsageRange value={range} onChange={setRange} />
        <a className="button" href={`/api/usage.csv?${range.query}`} download>Export CSV</a>
      </div>
      <section className="card">
        <h2>Calls per day by server</h2>
        <BarChart data={series(usage, 'server', 'calls')} label={`Stacked bars of tool calls per day by server over ${range.text}`} />
      </section>
      <section className="card">
        <h2>Credits per day by tool</h2>
        <BarChart data={series(usage, 'tool', 'credits')} label={`Stacked bars of credits per day by tool over ${range.text}`} />
      </section>
      <section>
        <h2>By tool this period</h2>
        {usage.by_tool.length === 0 ? (
          <p className="muted">No calls yet this period.</p>
        ) : (
          <table data-testid="by-tool" className="responsive">
            <thead>
              <tr>
                <th scope="col">Server</th>
                <th scope="col">Tool</th>
                <th scope="col" className="num">Calls</th>
                <th scope="col" className="num">Credits</th>
              </tr>
            </thead>
            <tbody>
              {usage.by_tool.map((t) => (
                <tr key={`${t.server}/${t.tool}`}>
                  <td data-label="Server">{t.server}</td>
                  <td data-label="Tool">{t.tool}</td>
                  <td data-label="Calls" className="num">{t.calls}</td>
                  <td data-label="Credits" className="num">{t.credits}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <UsageBreakdown range={range} retentionDays={config.request_log_retention_days} />
      <RequestLog config={config} />
      <Purchases />
    </>
  );
}
