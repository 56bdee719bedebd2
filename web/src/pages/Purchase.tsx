// Buying a plan or a credit pack in USDC: pick the chain, the service makes an order (amount,
// token, treasury, expiry), the wallet sends the transfer, and the page submits its hash until the
// service has seen it confirmed (it answers PAYMENT_UNCONFIRMED until then, and keeps checking on
// its own too). EVM wallets pay through wagmi, Solana wallets through the Wallet Standard; a
// payment sent from anywhere else is submitted by pasting its hash.
import { Fragment, useEffect, useState } from 'react';
import type { Config, Connector } from 'wagmi';
import { getConnectors, watchConnectors } from 'wagmi/actions';
import { api, ApiFailure, describeError, formatCents, formatDate, type DashboardConfig, type OrderInfo, type PaymentChain } from '../api.ts';
import type { QuoteJson } from '../../../server/public-types.ts';
import { createWagmiConfig, pickable } from '../wallets/evm.ts';
import type { Wallet } from '@wallet-standard/base';
import { payWithEvm } from '../wallets/pay-evm.ts';
import { canPaySolana, payWithSolana } from '../wallets/pay-solana.ts';
import { watchSolanaWallets } from '../wallets/solana.ts';

export interface Purchasable {
  kind: 'plan' | 'pack';
  item: string;
  label: string;
  price_cents: number;
}

const CHAIN_NAMES: Record<PaymentChain['chain'], string> = { ethereum: 'Ethereum', base: 'Base', polygon: 'Polygon', bsc: 'BNB Smart Chain', solana: 'Solana' };
const RETRY_MS = 2000;

export function Purchase({ config, what, chains, onPaid, onClose }: { config: DashboardConfig; what: Purchasable; chains: PaymentChain[]; onPaid: () => void; onClose: () => void }) {
  const [chain, setChain] = useState<PaymentChain>(chains[0]!);
  const [wagmi, setWagmi] = useState<Config>();
  const [wallets, setWallets] = useState<Connector[]>([]);
  const [order, setOrder] = useState<OrderInfo>();
  const [status, setStatus] = useState<string>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [pasted, setPasted] = useState('');
  const [solanaWallets, setSolanaWallets] = useState<Wallet[]>([]);
  const [quote, setQuote] = useState<QuoteJson>();
  useEffect(() => watchSolanaWallets((list) => setSolanaWallets(list.filter(canPaySolana))), []);

  // What this purchase does to the plan already paid for, fetched before any pay button works.
  useEffect(() => {
    let live = true;
    setQuote(undefined);
    api<{ quote: QuoteJson }>('GET', `/orders/quote?kind=${what.kind}&item=${encodeURIComponent(what.item)}`).then(
      (r) => live && setQuote(r.quote),
      (err: unknown) => live && setError(describeError(err)),
    );
    return () => {
      live = false;
    };
  }, [what.kind, what.item]);

  useEffect(() => {
    let stop = () => {};
    void createWagmiConfig(config.walletconnect_project_id).then((c) => {
      setWagmi(c);
      setWallets(pickable(getConnectors(c)));
      stop = watchConnectors(c, { onChange: (list) => setWallets(pickable(list)) });
    });
    return () => stop();
  }, [config.walletconnect_project_id]);

  const newOrder = async (): Promise<OrderInfo> => {
    const created = await api<{ order: OrderInfo; quote: QuoteJson }>('POST', '/orders', { kind: what.kind, item: what.item, chain: chain.chain });
    setOrder(created.order);
    // The account changed since the terms were shown (another purchase, a renewal): show the new
    // terms and let the person decide again before the wallet asks for anything.
    if (quote && (created.quote.rule !== quote.rule || created.quote.starts_at.slice(0, 10) !== quote.starts_at.slice(0, 10))) {
      setQuote(created.quote);
      throw new Error('What this purchase does has changed since it was shown: read it again below, then pay.');
    }
    return created.order;
  };

  /** Submits the hash until the service credits it, refuses it, or the order expires. */
  const confirm = async (o: OrderInfo, hash: string) => {
    setStatus(`Transaction sent (${hash.slice(0, 10)}…). Waiting for ${chain.confirmations} confirmation${chain.confirmations === 1 ? '' : 's'}…`);
    for (;;) {
      try {
        await api('POST', `/orders/${o.id}/submit`, { tx_hash: hash });
        setStatus(`Paid. ${what.label} is yours.`);
        onPaid();
        return;
      } catch (err) {
        const retry = err instanceof ApiFailure && (err.error.code === 'PAYMENT_UNCONFIRMED' || err.status === 503);
        if (!retry || Date.parse(o.expires_at) < Date.now()) throw err;
        if (err.error.code === 'PAYMENT_UNCONFIRMED') setStatus(`Waiting for confirmations: ${String(err.error.details.confirmations)} of ${String(err.error.details.required)}…`);
        await new Promise((r) => setTimeout(r, RETRY_MS));
      }
    }
  };

  const run = async (step: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await step();
    } catch (err) {
      setError(describeError(err));
      setStatus(undefined);
    } finally {
      setBusy(false);
    }
  };

  const payFromSolana = (wallet: Wallet) =>
    run(async () => {
      const o = order && order.chain === 'solana' && order.status === 'pending' ? order : await newOrder();
      setStatus(`Approve the transfer of ${o.amount_display} USDC in ${wallet.name}…`);
      await confirm(o, await payWithSolana(wallet, o));
    });

  const payFrom = (connector: Connector) =>
    run(async () => {
      const o = order && order.chain === chain.chain && order.status === 'pending' ? order : await newOrder();
      setStatus(`Approve the transfer of ${o.amount_display} USDC in ${connector.name}…`);
      const hash = await payWithEvm(wagmi!, connector, o, chain.chain_id!);
      await confirm(o, hash);
    });

  return (
    <section className="card purchase" aria-labelledby="purchase-title">
      <h2 id="purchase-title">
        Buy {what.label} for {formatCents(what.price_cents)}
      </h2>
      {quote ? <QuoteTerms quote={quote} /> : <p className="muted" aria-live="polite">Checking what this purchase does to your plan…</p>}
      <label className="inline">
        Pay in USDC on{' '}
        <select
          value={chain.chain}
          disabled={busy}
          onChange={(e) => {
            setChain(chains.find((c) => c.chain === e.target.value)!);
            setOrder(undefined);
          }}
        >
          {chains.map((c) => (
            <option key={c.chain} value={c.chain}>{CHAIN_NAMES[c.chain]}</option>
          ))}
        </select>
      </label>
      {chain.chain !== 'solana' ? (
        <ul className="wallets">
          {wallets.map((c) => (
            <li key={c.uid}>
              <button type="button" disabled={busy || !wagmi || !quote} onClick={() => void payFrom(c)}>
                {c.icon ? <img src={c.icon} alt="" width={20} height={20} /> : null}
                Pay with {c.name}
              </button>
            </li>
          ))}
          {wallets.length === 0 && <li className="muted">No EVM wallet found in this browser.</li>}
        </ul>
      ) : (
        <ul className="wallets">
          {solanaWallets.map((w) => (
            <li key={w.name}>
              <button type="button" disabled={busy || !quote} onClick={() => void payFromSolana(w)}>
                {w.icon ? <img src={w.icon} alt="" width={20} height={20} /> : null}
                Pay with {w.name}
              </button>
            </li>
          ))}
          {solanaWallets.length === 0 && <li className="muted">No Solana wallet that can send transactions found in this browser.</li>}
        </ul>
      )}
      <details>
        <summary>Pay from another wallet and paste the transaction</summary>
        {order && order.chain === chain.chain ? (
          <p>
            Send exactly <strong>{order.amount_display} USDC</strong> (token <code className="address">{order.token}</code>) to{' '}
            <code className="address">{order.treasury}</code> from a wallet linked to this account before {new Date(order.expires_at).toLocaleTimeString()}.
          </p>
        ) : (
          <button type="button" disabled={busy || !quote} onClick={() => void run(async () => void (await newOrder()))}>
            Show where to pay
          </button>
        )}
        <label>
          Transaction hash or signature{' '}
          <input value={pasted} onChange={(e) => setPasted(e.target.value.trim())} disabled={busy || !order} />
        </label>
        <button type="button" disabled={busy || !order || pasted === ''} onClick={() => void run(() => confirm(order!, pasted))}>
          Check payment
        </button>
      </details>
      <p aria-live="polite" className="muted">{status}</p>
      <p role="alert" className="error">{error}</p>
      <button type="button" onClick={onClose} disabled={busy}>Close</button>
    </section>
  );
}

const RULE_TITLES: Record<QuoteJson['rule'], string> = {
  starts_now: 'Starts now',
  extends: 'Adds a month after the time already paid',
  scheduled: 'Starts when the plan time already paid ends',
  adds_topup: 'Added to your balance now',
};

const day = (iso: string) => formatDate(iso, false).text;

/** The plan-change rule and its numbers, shown above the pay buttons. */
function QuoteTerms({ quote }: { quote: QuoteJson }) {
  const c = quote.current;
  return (
    <section className="quote" aria-labelledby="quote-title">
      <h3 id="quote-title">{RULE_TITLES[quote.rule]}</h3>
      <p>{quote.summary}</p>
      <dl>
        <dt>Your plan now</dt>
        <dd>
          {c.plan_display}, {c.balance.toLocaleString('en-US')} credits{c.topup > 0 ? ` (${c.topup.toLocaleString('en-US')} of them top-up)` : ''}
          {c.paid_until ? `, paid until ${day(c.paid_until)}` : ''}
        </dd>
        {c.remaining_value_cents > 0 && (
          <>
            <dt>Paid time left</dt>
            <dd>{formatCents(c.remaining_value_cents)}{c.paid_through ? ` (through ${day(c.paid_through)})` : ''}, kept in full</dd>
          </>
        )}
        {c.scheduled.map((s) => (
          <Fragment key={s.starts_at}>
            <dt>Already bought</dt>
            <dd>
              {s.plan_display} from {day(s.starts_at)} to {day(s.ends_at)}
            </dd>
          </Fragment>
        ))}
        <dt>You pay</dt>
        <dd>{formatCents(quote.price_cents)}</dd>
        <dt>{quote.kind === 'plan' ? 'New plan time' : 'Credits'}</dt>
        <dd>
          {quote.kind === 'plan' && quote.ends_at
            ? `${quote.item_display}, ${quote.credits.toLocaleString('en-US')} credits a month, from ${quote.rule === 'starts_now' ? 'now' : day(quote.starts_at)} to ${day(quote.ends_at)}`
            : `${quote.credits.toLocaleString('en-US')} top-up credits, now`}
        </dd>
      </dl>
    </section>
  );
}
