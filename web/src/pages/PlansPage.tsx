// The plans as the catalog reports them with their monthly prices, the current one marked; an
// Upgrade (or Extend) button per plan for sale and the credit packs, paid in USDC from a wallet
// (Purchase.tsx); transfers sent and not credited yet, each with its claim (PendingPayments.tsx); a
// warning from 7 days before a paid plan lapses to Free; the account's wallets, with linking.
import { useCallback, useEffect, useState } from 'react';
import { api, describeError, formatCents, type DashboardConfig, type PlanInfo, type PlansInfo, type SessionInfo } from '../api.ts';
import { When } from './When.tsx';
import { LAPSE_NOTICE_DAYS, LapseWarning } from './LapseWarning.tsx';
import { PendingPayments } from './PendingPayments.tsx';
import { Purchase, type Purchasable } from './Purchase.tsx';
import { Wallets } from './Wallets.tsx';

/**
 * Sold by the month: a monthly plan with a price. A one-time allowance (Free) has no month to buy
 * or extend, whatever price a PlanPolicy gives it (the server refuses such an order too).
 */
function monthly(p: PlanInfo): boolean {
  return p.renewal === 'monthly' && p.price_cents !== null && p.price_cents > 0;
}

/** /api/plans with the plan time bought to follow the current one, and how the account opened. */
type PlansView = PlansInfo & {
  scheduled?: { plan: string; starts_at: string; ends_at: string }[];
  free_allowance?: 'granted' | 'withheld' | null;
};

export function PlansPage({ config, session, onLinked }: { config: DashboardConfig; session: SessionInfo; onLinked: () => void }) {
  const [plans, setPlans] = useState<PlansView>();
  const [error, setError] = useState<string>();
  const [buying, setBuying] = useState<Purchasable>();
  const [tick, setTick] = useState(0);
  const load = useCallback(() => {
    setTick((t) => t + 1);
    api<PlansView>('GET', '/plans').then(setPlans, (err: unknown) => setError(describeError(err)));
  }, []);
  useEffect(load, [load]);
  const total = config.servers.length;
  const forSale = (plans?.chains.length ?? 0) > 0;
  const planName = (name: string) => plans?.plans.find((p) => p.name === name)?.display_name ?? name;
  const current = plans?.plans.find((p) => p.current);
  // A paid plan lapses to Free at paid_until unless plan time was bought after it: say so from 7 days before.
  const lapsesAt = plans?.paid_until && (plans.scheduled ?? []).length === 0 ? plans.paid_until : undefined;
  const lapseSoon = lapsesAt !== undefined && Date.parse(lapsesAt) - Date.now() <= LAPSE_NOTICE_DAYS * 86_400_000 && Date.parse(lapsesAt) > Date.now();
  return (
    <>
      <p role="alert" className="error">{error}</p>
      {!plans && !error && <p className="muted" aria-live="polite">Loading plans…</p>}
      {plans && forSale && (
        <PendingPayments
          accountId={session.account.id}
          planName={planName}
          refresh={tick}
          onPaid={() => {
            load();
            onLinked();
          }}
        />
      )}
      {lapseSoon && current && lapsesAt && <LapseWarning plan={current.display_name} lapsesAt={lapsesAt} onPlansPage />}
      {plans?.free_allowance === 'withheld' && (
        <p className="card">
          This account started with 0 credits: the free allowance comes once per wallet, and this wallet had it before (on an account it
          belonged to). Buy a plan or a credit pack below to use the servers.
        </p>
      )}
      <ul className="plans">
        {plans?.plans.map((p) => (
          <li key={p.name} className={`card plan${p.current ? ' current' : ''}`} aria-current={p.current ? 'true' : undefined}>
            <h2>
              {p.display_name} {p.current && <span className="badge">Your plan</span>}
            </h2>
            <p className="big">{p.credits.toLocaleString('en-US')} credits</p>
            {monthly(p) && <p className="price">{formatCents(p.price_cents!)} / month</p>}
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
            {p.current && plans.paid_until && (
              <p className="muted">
                Paid until <When iso={plans.paid_until} withTime={false} />
                {(plans.scheduled ?? []).length === 0 ? ', then back to Free unless extended' : ''}
              </p>
            )}
            {plans.scheduled
              ?.filter((s) => s.plan === p.name)
              .map((s) => (
                <p key={s.starts_at} className="muted">
                  Bought: starts <When iso={s.starts_at} withTime={false} />, paid until <When iso={s.ends_at} withTime={false} />
                </p>
              ))}
            {forSale && monthly(p) && (
              <button type="button" onClick={() => setBuying({ kind: 'plan', item: p.name, label: `${p.display_name} (one month)`, price_cents: p.price_cents! })}>
                {p.current ? `Extend ${p.display_name} by a month` : `Upgrade to ${p.display_name}`}
              </button>
            )}
          </li>
        ))}
      </ul>
      {buying && plans && (
        <Purchase
          config={config}
          session={session}
          what={buying}
          chains={plans.chains}
          onPaid={() => {
            load();
            onLinked();
          }}
          onLinked={onLinked}
          onClose={() => setBuying(undefined)}
        />
      )}
      {forSale && plans && plans.packs.length > 0 && (
        <section className="card" aria-labelledby="packs-title">
          <h2 id="packs-title">Credit packs</h2>
          <p className="muted">Top-up credits are kept when your plan renews and are spent after its allowance. You hold {plans.topup.toLocaleString('en-US')}.</p>
          <ul className="packs">
            {plans.packs.map((pack) => (
              <li key={pack.name}>
                {pack.credits.toLocaleString('en-US')} credits for {formatCents(pack.price_cents)}{' '}
                <button type="button" onClick={() => setBuying({ kind: 'pack', item: pack.name, label: `${pack.credits.toLocaleString('en-US')} credits`, price_cents: pack.price_cents })}>
                  Buy {pack.credits.toLocaleString('en-US')} credits
                </button>
              </li>
            ))}
          </ul>
        </section>
      )}
      {!forSale && (
        <p>
          To change plan, contact the operator of this service{plans?.contact ? <>: <strong>{plans.contact}</strong></> : '.'} Online payment is not
          configured here.
        </p>
      )}
      <Wallets config={config} session={session} onChanged={onLinked} />
    </>
  );
}
