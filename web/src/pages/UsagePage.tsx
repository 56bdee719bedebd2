// Balance, plan and renewal (a paid plan lapses to Free: it is said so, with a warning from 7 days
// before); the period's spend in dollars and when the balance runs out at the recent rate; the
// 80/90/100% banner; read again every 15 s while open and on focus. Calls and credits per day by
// server and by tool (Chart.js stacked bars, with the same numbers in a table for screen readers)
// over a preset or custom range; CSV export; requests by outcome (UsageBreakdown.tsx) and the
// request log.
import { useEffect, useState } from 'react';
import { api, describeError, formatCents, formatDate, type DashboardConfig, type UsageInfo } from '../api.ts';
import type { UsageOutlookJson } from '../../../server/public-types.ts';
import { BarChart, COLORS, daysFrom } from './BarChart.tsx';
import { Purchases } from './Purchases.tsx';
import { RequestLog } from './RequestLog.tsx';
import { UsageBreakdown } from './UsageBreakdown.tsx';
import { DEFAULT_RANGE, UsageRange } from './UsageRange.tsx';
import { LapseWarning } from './LapseWarning.tsx';
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

/** How often the open Usage page reads its numbers again (and at once when the tab regains focus). */
const REFRESH_MS = 15_000;

/** A counter that moves every `ms` while the page is visible, and when the window regains focus. */
function useRefresh(ms: number): number {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const bump = () => {
      if (document.visibilityState === 'visible') setTick((t) => t + 1);
    };
    const timer = setInterval(bump, ms);
    window.addEventListener('focus', bump);
    document.addEventListener('visibilitychange', bump);
    return () => {
      clearInterval(timer);
      window.removeEventListener('focus', bump);
      document.removeEventListener('visibilitychange', bump);
    };
  }, [ms]);
  return tick;
}

const n = (v: number) => v.toLocaleString('en-US');
const day = (iso: string) => formatDate(iso, false).text;

/** The 80/90/100% banner and the lapse warning: what needs doing before the credits or the plan run out. */
function UsageWarnings({ outlook }: { outlook: UsageOutlookJson }) {
  const plans = <a href="/app/plans">See plans and credit packs</a>;
  return (
    <>
      {outlook.threshold !== null && (
        <div className="card notice" role="status" data-testid="usage-alert">
          <strong>
            {outlook.threshold >= 100 ? `You have used all of this period's ${outlook.plan_display} credits.` : `You have used ${outlook.used_percent}% of this period's ${outlook.plan_display} credits.`}
          </strong>{' '}
          {outlook.threshold >= 100 ? (outlook.topup > 0 ? `Calls now spend your ${n(outlook.topup)} top-up credits. ` : 'Paid calls are refused until the allowance resets or you add credits. ') : ''}
          {plans}
        </div>
      )}
      {outlook.lapse_soon && outlook.lapses_at && <LapseWarning plan={outlook.plan_display} lapsesAt={outlook.lapses_at} />}
    </>
  );
}

export default function UsagePage({ config, onLoaded }: { config: DashboardConfig; onLoaded: () => void }) {
  const [range, setRange] = useState(DEFAULT_RANGE);
  const [usage, setUsage] = useState<UsageInfo>();
  const [error, setError] = useState<string>();
  const tick = useRefresh(REFRESH_MS);
  useEffect(() => {
    let live = true;
    api<UsageInfo>('GET', `/usage?${range.query}`).then(
      (u) => {
        if (!live) return;
        setUsage(u);
        setError(undefined);
        onLoaded();
      },
      (err: unknown) => live && setError(describeError(err)),
    );
    return () => {
      live = false;
    };
    // onLoaded refreshes the header balance; it must not re-trigger this load.
  }, [range.query, tick]);

  if (error && !usage) return <p role="alert" className="error">{error}</p>;
  if (!usage) return <p className="muted" aria-live="polite">Loading usage…</p>;
  const o = usage.outlook;
  const planLeft = Math.max(0, usage.balance - o.topup);
  return (
    <>
      <UsageWarnings outlook={o} />
      <section className="stats" aria-label="Account">
        <div className="card stat">
          <span className="label">Balance</span>
          <span className="big" data-testid="balance">{n(usage.balance)}</span>
          <span className="muted">
            {o.topup > 0 ? `credits: ${n(planLeft)} left of the ${n(usage.allowance)} in ${o.plan_display}, plus ${n(o.topup)} top-up` : `credits left of the ${n(usage.allowance)} in ${o.plan_display}`}
          </span>
        </div>
        <div className="card stat">
          <span className="label">Plan</span>
          <span className="big">{o.plan_display}</span>
          <span className="muted">{usage.status === 'active' ? (o.price_cents !== null ? `${formatCents(o.price_cents)} a month` : 'free') : usage.status}</span>
        </div>
        <div className="card stat">
          <span className="label">{o.lapses_at ? 'Paid until' : 'Renewal'}</span>
          <span className="big">
            {o.lapses_at ? <When iso={o.lapses_at} withTime={false} /> : usage.renews_at ? <When iso={usage.renews_at} withTime={false} /> : 'none'}
          </span>
          <span className="muted" data-testid="renewal-note">
            {o.lapses_at
              ? 'then back to Free, unless you extend it'
              : o.next_plan
                ? `${o.next_plan.plan_display} starts ${day(o.next_plan.starts_at)}`
                : usage.renewal === 'monthly'
                  ? 'resets to the allowance'
                  : 'one-time allowance'}
          </span>
        </div>
        <div className="card stat">
          <span className="label">This period</span>
          <span className="big" data-testid="calls">{n(usage.calls)}</span>
          <span className="muted">
            calls, {n(usage.credits_used)} credits{o.spend_cents !== null ? <> (<span data-testid="spend">{formatCents(o.spend_cents)}</span> at the plan's price)</> : ''}
          </span>
        </div>
        <div className="card stat">
          <span className="label">At this rate</span>
          <span className="big" data-testid="runs-out">
            {o.runs_out_at === null ? 'no spending' : o.runs_out_first ? <When iso={o.runs_out_at} withTime={false} /> : 'enough'}
          </span>
          <span className="muted">
            {o.runs_out_at === null
              ? 'in the last 7 days'
              : o.runs_out_first
                ? `you run out then (${n(o.rate_per_day)} credits a day)`
                : `${n(o.rate_per_day)} credits a day lasts until ${o.lapses_at ? 'the plan ends' : 'the renewal'}`}
          </span>
        </div>
      </section>
      <p className="muted" aria-live="polite">
        Updated <When iso={o.as_of} />; refreshed every {REFRESH_MS / 1000} seconds while this page is open.{error ? ` The last refresh failed: ${error}` : ''}
      </p>
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
      <UsageBreakdown range={range} retentionDays={config.request_log_retention_days} refresh={tick} />
      <RequestLog config={config} refresh={tick} />
      <Purchases />
    </>
  );
}
