// The plans as the catalog reports them, the current one marked; the account's wallets, with
// linking of another wallet. Upgrades are by contacting the operator (payments come later).
import { useEffect, useState } from 'react';
import { api, describeError, type DashboardConfig, type PlanInfo, type SessionInfo } from '../api.ts';
import { Wallets } from './Wallets.tsx';

export function PlansPage({ config, session, onLinked }: { config: DashboardConfig; session: SessionInfo; onLinked: () => void }) {
  const [plans, setPlans] = useState<{ plans: PlanInfo[]; contact: string | null }>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    api<{ plans: PlanInfo[]; contact: string | null }>('GET', '/plans').then(setPlans, (err: unknown) => setError(describeError(err)));
  }, []);
  const total = config.servers.length;
  return (
    <>
      <p role="alert" className="error">{error}</p>
      {!plans && !error && <p className="muted" aria-live="polite">Loading plans…</p>}
      <ul className="plans">
        {plans?.plans.map((p) => (
          <li key={p.name} className={`card plan${p.current ? ' current' : ''}`} aria-current={p.current ? 'true' : undefined}>
            <h2>
              {p.display_name} {p.current && <span className="badge">Your plan</span>}
            </h2>
            <p className="big">{p.credits.toLocaleString('en-US')} credits</p>
            <p>{p.renewal === 'monthly' ? 'Renewed every month (no rollover)' : 'One-time allowance'}</p>
            <dl>
              <dt>Requests per minute</dt>
              <dd>{p.requests_per_minute}</dd>
              <dt>Burst</dt>
              <dd>{p.burst}</dd>
              <dt>API keys</dt>
              <dd>{p.max_keys}</dd>
              <dt>Servers</dt>
              <dd>{p.servers.length >= total ? `all ${p.servers.length}` : p.servers.join(', ')}</dd>
            </dl>
          </li>
        ))}
      </ul>
      <p>
        To change plan, contact the operator of this service{plans?.contact ? <>: <strong>{plans.contact}</strong></> : '.'} Online payment is not
        available yet.
      </p>
      <Wallets config={config} session={session} onChanged={onLinked} />
    </>
  );
}
