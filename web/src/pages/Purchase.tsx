// Buying a plan or a credit pack in USDC: pick the chain, the service makes an order (amount,
// token, treasury, expiry), the wallet sends the transfer, and the page submits its hash until the
// service has seen it confirmed (it answers PAYMENT_UNCONFIRMED until then, and keeps checking on
// its own too). EVM wallets pay through wagmi, Solana wallets through the Wallet Standard; a
// payment sent from anywhere else is submitted by pasting its hash. The paying wallet is checked
// against the account's linked wallets before the transfer is asked for (a payment from another
// wallet is not credited), with "link this wallet and pay" in place; every hash the wallet hands
// back is kept (this browser's storage and the order on the server) until it is credited, so a
// transfer sent is never lost from the screen (PendingPayments.tsx).
import { Fragment, useEffect, useState } from 'react';
import type { Config, Connector } from 'wagmi';
import { getConnectors, watchConnectors } from 'wagmi/actions';
import { connect } from 'wagmi/actions';
import { short } from '../address.ts';
import { api, ApiFailure, describeError, formatCents, formatDate, isUserRejection, type DashboardConfig, type NonceInfo, type OrderInfo, type PaymentChain, type SessionInfo } from '../api.ts';
import type { QuoteJson } from '../../../server/public-types.ts';
import { createWagmiConfig, pickable, signInWithEvm, SIGN_IN_CHAINS } from '../wallets/evm.ts';
import type { Wallet } from '@wallet-standard/base';
import { payWithEvm } from '../wallets/pay-evm.ts';
import { canPaySolana, payWithSolana } from '../wallets/pay-solana.ts';
import { signInWithSolana, watchSolanaWallets } from '../wallets/solana.ts';
import { forgetSent, rememberSent } from './PendingPayments.tsx';
import type { StandardConnectFeature } from '@wallet-standard/features';
import { Dialog } from './Dialog.tsx';

export interface Purchasable {
  kind: 'plan' | 'pack';
  item: string;
  label: string;
  price_cents: number;
}

export const CHAIN_NAMES: Record<PaymentChain['chain'], string> = { ethereum: 'Ethereum', base: 'Base', polygon: 'Polygon', bsc: 'BNB Smart Chain', solana: 'Solana' };
const RETRY_MS = 2000;

/** A wallet about to pay that is not linked to the account: what to show, and how to link it and go on. */
interface Unlinked {
  address: string;
  family: 'evm' | 'solana';
  linkAndPay: () => Promise<void>;
}

/** A reason this page stops a purchase itself, said as it is (not as a wallet's problem). */
class PaymentStop extends Error {}

/** What a wallet's refusal or failure of the transfer means for the person (nothing was sent). */
function describePayError(err: unknown): string {
  if (err instanceof PaymentStop) return err.message;
  if (isUserRejection(err)) return 'You declined the transfer in your wallet. Nothing was sent and nothing was charged; choose a wallet again when you are ready.';
  return describeError(err);
}

export function Purchase({
  config,
  session,
  what,
  chains,
  onPaid,
  onLinked,
  onClose,
}: {
  config: DashboardConfig;
  session: SessionInfo;
  what: Purchasable;
  chains: PaymentChain[];
  onPaid: () => void;
  onLinked: () => void;
  onClose: () => void;
}) {
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
  const [unlinked, setUnlinked] = useState<Unlinked>();
  // Wallets linked during this purchase count as linked before the session is read again.
  const [linkedNow, setLinkedNow] = useState<string[]>([]);
  const isLinked = (family: 'evm' | 'solana', address: string) =>
    linkedNow.includes(address.toLowerCase()) ||
    session.account.wallets.some((w) => (w.chain === 'solana') === (family === 'solana') && w.address.toLowerCase() === address.toLowerCase());
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
      throw new PaymentStop('What this purchase does has changed since it was shown: read it again below, then pay.');
    }
    return created.order;
  };

  /** Submits the hash until the service credits it, refuses it, or the order expires. */
  const confirm = async (o: OrderInfo, hash: string) => {
    rememberSent(session.account.id, { order_id: o.id, tx_hash: hash, chain: o.chain, label: what.label, amount_display: o.amount_display, sent_at: new Date().toISOString() });
    setStatus(`Transaction sent (${hash.slice(0, 10)}…). Waiting for ${chain.confirmations} confirmation${chain.confirmations === 1 ? '' : 's'}…`);
    for (;;) {
      try {
        await api('POST', `/orders/${o.id}/submit`, { tx_hash: hash });
        forgetSent(session.account.id, o.id);
        setStatus(`Paid: ${what.label} added to your account.`);
        onPaid();
        return;
      } catch (err) {
        const retry = err instanceof ApiFailure && (err.error.code === 'PAYMENT_UNCONFIRMED' || err.status === 503);
        // A mismatch can never pay the order: nothing to keep. Anything else stays on screen to claim.
        if (err instanceof ApiFailure && err.error.code === 'PAYMENT_MISMATCH') forgetSent(session.account.id, o.id);
        if (!retry || Date.parse(o.expires_at) < Date.now()) {
          onPaid();
          throw err;
        }
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
      setError(describePayError(err));
      setStatus(undefined);
    } finally {
      setBusy(false);
    }
  };

  /** Links the wallet by a signature (free), then goes on to pay from it. */
  const link = async (family: 'evm' | 'solana', address: string, sign: (nonce: () => Promise<NonceInfo>) => Promise<{ message: string; signature: string }>) => {
    setStatus(`Sign the message in your wallet to link ${short(address)} to this account (signing costs nothing)…`);
    try {
      await api('POST', '/wallets', { family, ...(await sign(() => api<NonceInfo>('GET', '/wallets/nonce'))) });
    } catch (err) {
      if (err instanceof ApiFailure && err.error.code === 'WALLET_IN_USE') {
        throw new PaymentStop(`${short(address)} belongs to another cryptomcp account, so it cannot pay for this one. Pay from a wallet of this account, or merge that account under Wallets below first.`, { cause: err });
      }
      throw err;
    }
    setLinkedNow((l) => [...l, address.toLowerCase()]);
    setUnlinked(undefined);
    onLinked();
  };

  const solanaStep = async (wallet: Wallet, linkedAlready: boolean): Promise<void> => {
    const { accounts } = await (wallet.features as StandardConnectFeature)['standard:connect'].connect();
    const from = accounts[0]?.address;
    if (!from) throw new Error('The wallet shared no account.');
    if (!linkedAlready && !isLinked('solana', from)) {
      setStatus(undefined);
      setUnlinked({
        address: from,
        family: 'solana',
        linkAndPay: () =>
          run(async () => {
            await link('solana', from, (nonce) => signInWithSolana(wallet, nonce));
            await solanaStep(wallet, true);
          }),
      });
      return;
    }
    setUnlinked(undefined);
    const o = order && order.chain === 'solana' && order.status === 'pending' ? order : await newOrder();
    setStatus(`Approve the transfer of ${o.amount_display} USDC in ${wallet.name}…`);
    await confirm(o, await payWithSolana(wallet, o));
  };
  const payFromSolana = (wallet: Wallet) => run(() => solanaStep(wallet, false));

  const evmStep = async (connector: Connector, linkedAlready: boolean): Promise<void> => {
    const { accounts } = await connect(wagmi!, { connector }).catch(async (err: unknown) => {
      if (err instanceof Error && err.name === 'ConnectorAlreadyConnectedError') return { accounts: (await connector.getAccounts()) as readonly string[] };
      throw err;
    });
    const from = accounts[0];
    if (!from) throw new Error('The wallet shared no account.');
    if (!linkedAlready && !isLinked('evm', from)) {
      setStatus(undefined);
      setUnlinked({
        address: from,
        family: 'evm',
        linkAndPay: () =>
          run(async () => {
            await link('evm', from, (nonce) => signInWithEvm(wagmi!, connector, SIGN_IN_CHAINS[0].id, nonce));
            await evmStep(connector, true);
          }),
      });
      return;
    }
    setUnlinked(undefined);
    const o = order && order.chain === chain.chain && order.status === 'pending' ? order : await newOrder();
    setStatus(`Approve the transfer of ${o.amount_display} USDC in ${connector.name}…`);
    const hash = await payWithEvm(wagmi!, connector, o, chain.chain_id!);
    await confirm(o, hash);
  };
  const payFrom = (connector: Connector) => run(() => evmStep(connector, false));

  return (
    // A modal dialog: on a phone the panel opened far below the fold with focus left on the
    // button, and "Upgrade" seemed to do nothing. Escape closes it, except while a payment is
    // under way (as the Close button).
    <Dialog labelledBy="purchase-title" testId="purchase-dialog" onClose={() => (busy ? undefined : onClose())}>
      <section className="purchase" aria-labelledby="purchase-title">
        <h2 id="purchase-title" tabIndex={-1}>
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
        {unlinked && (
          <div className="card notice" role="alert" data-testid="unlinked-wallet">
            <p>
              <strong>{short(unlinked.address)} is not linked to this account.</strong> A payment from it would not be credited here, so nothing
              has been sent. Link it first (one signature, no fee) and the payment goes on, or pay from a wallet of this account.
            </p>
            <div className="actions">
              <button type="button" disabled={busy} onClick={() => void unlinked.linkAndPay()}>
                Link {short(unlinked.address)} and pay
              </button>
              <button type="button" disabled={busy} onClick={() => setUnlinked(undefined)}>
                Choose another wallet
              </button>
            </div>
          </div>
        )}
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
    </Dialog>
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
