// Balance, plan and renewal; calls and credits per day by server and by tool (Chart.js stacked
// bars, with the same numbers in a table for screen readers); CSV export.
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js';
import { useEffect, useRef, useState } from 'react';
import { api, describeError, type DashboardConfig, type UsageInfo } from '../api.ts';
import { Purchases } from './Purchases.tsx';
import { RequestLog } from './RequestLog.tsx';
import { When } from './When.tsx';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

// A colour-blind-safe palette (Okabe–Ito), dark enough against white.
const COLORS = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#7a6f00', '#000000', '#999999'];

function dayRange(days: number): string[] {
  const out: string[] = [];
  const today = new Date();
  for (let i = days - 1; i >= 0; i--) out.push(new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - i)).toISOString().slice(0, 10));
  return out;
}

function series(usage: UsageInfo, by: 'server' | 'tool', metric: 'calls' | 'credits') {
  const labels = dayRange(usage.days);
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
    datasets: [...groups].map(([label, data], i) => ({ label, data, backgroundColor: COLORS[i % COLORS.length], stack: 'all' })),
  };
}

function BarChart({ data, label }: { data: ReturnType<typeof series>; label: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    // Axis and legend text in the page's colours (light or dark, from the system preference).
    const style = getComputedStyle(document.documentElement);
    Chart.defaults.color = style.getPropertyValue('--muted').trim() || '#57606a';
    Chart.defaults.borderColor = style.getPropertyValue('--line').trim() || '#d0d7de';
    const chart = new Chart(canvas.current, {
      type: 'bar',
      data,
      options: {
        animation: false,
        maintainAspectRatio: false,
        scales: { x: { stacked: true, ticks: { autoSkip: true, maxRotation: 0, callback: (_v, i) => data.labels[i]?.slice(5) } }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } },
        plugins: { legend: { position: 'bottom' } },
      },
    });
    return () => chart.destroy();
  }, [data]);
  return (
    <div className="chart">
      <canvas ref={canvas} role="img" aria-label={label} />
    </div>
  );
}

export default function UsagePage({ config, onLoaded }: { config: DashboardConfig; onLoaded: () => void }) {
  const [days, setDays] = useState(30);
  const [usage, setUsage] = useState<UsageInfo>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    api<UsageInfo>('GET', `/usage?days=${days}`).then(
      (u) => {
        setUsage(u);
        onLoaded();
      },
      (err: unknown) => setError(describeError(err)),
    );
    // onLoaded refreshes the header balance; it must not re-trigger this load.
  }, [days]);

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
        <label className="inline">
          Show{' '}
          <select value={days} onChange={(e) => setDays(Number(e.target.value))}>
            <option value={7}>7 days</option>
            <option value={30}>30 days</option>
            <option value={90}>90 days</option>
          </select>
        </label>
        <a className="button" href={`/api/usage.csv?days=${days}`} download>Export CSV</a>
      </div>
      <section className="card">
        <h2>Calls per day by server</h2>
        <BarChart data={series(usage, 'server', 'calls')} label={`Stacked bars of tool calls per day by server over ${days} days`} />
      </section>
      <section className="card">
        <h2>Credits per day by tool</h2>
        <BarChart data={series(usage, 'tool', 'credits')} label={`Stacked bars of credits per day by tool over ${days} days`} />
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
      <RequestLog config={config} />
      <Purchases />
    </>
  );
}
