// Transfers sent and not credited yet, kept on screen until they are: each hash a wallet handed
// back is stored in this browser (per account) as soon as it exists, and the server keeps it on
// the order (status submitted, also when the sending wallet is not linked yet). Each one is
// claimed with one click: the order's submit, which credits it once the transfer is confirmed and
// its wallet linked.
import { useCallback, useEffect, useState } from 'react';
import { short } from '../address.ts';
import { api, ApiFailure, describeError, type OrderInfo } from '../api.ts';

export interface SentTransfer {
  order_id: string;
  tx_hash: string;
  chain: string;
  label: string;
  amount_display: string;
  sent_at: string;
}

const storageKey = (accountId: string) => `cryptomcp:sent:${accountId}`;

function readSent(accountId: string): SentTransfer[] {
  try {
    const parsed = JSON.parse(localStorage.getItem(storageKey(accountId)) ?? '[]') as unknown;
    return Array.isArray(parsed) ? (parsed as SentTransfer[]) : [];
  } catch {
    return [];
  }
}

function writeSent(accountId: string, list: SentTransfer[]): void {
  try {
    if (list.length === 0) localStorage.removeItem(storageKey(accountId));
    else localStorage.setItem(storageKey(accountId), JSON.stringify(list));
  } catch {
    // Storage full or blocked: the server's copy of the hash (the order) still holds it.
  }
  window.dispatchEvent(new Event('cryptomcp:sent'));
}

/** Keeps a hash the moment the wallet hands it back (before any check of it). */
export function rememberSent(accountId: string, t: SentTransfer): void {
  writeSent(accountId, [...readSent(accountId).filter((x) => x.order_id !== t.order_id), t]);
}

/** Drops a transfer once it is credited, or can never pay its order. */
export function forgetSent(accountId: string, orderId: string): void {
  writeSent(accountId, readSent(accountId).filter((x) => x.order_id !== orderId));
}

/** Why an order's recorded transfer is not credited yet, in words. */
function reasonOf(lastError: string | null): string {
  if (!lastError) return 'Not confirmed when last checked.';
  if (lastError.startsWith('wallet_not_linked')) {
    const senders = lastError.split(':')[1]?.trim().split(' ').filter(Boolean) ?? [];
    return `Sent from ${senders.map(short).join(', ') || 'a wallet'}, which is not linked to this account: link it under Wallets below, then claim.`;
  }
  if (lastError === 'unconfirmed') return 'Waiting for confirmations on the chain.';
  if (lastError === 'rpc_unavailable') return 'The chain could not be reached; it is checked again automatically.';
  return `Not credited: ${lastError}.`;
}

export function PendingPayments({ accountId, onPaid, planName, refresh = 0 }: { accountId: string; onPaid: () => void; planName: (plan: string) => string; refresh?: number }) {
  const [orders, setOrders] = useState<OrderInfo[]>([]);
  const [local, setLocal] = useState<SentTransfer[]>(() => readSent(accountId));
  const [busy, setBusy] = useState<string>();
  const [notes, setNotes] = useState<Record<string, string>>({});
  // Claimed here: said so until the page is left, after the transfer itself leaves the list.
  const [credited, setCredited] = useState<string[]>([]);

  const load = useCallback(() => {
    setLocal(readSent(accountId));
    api<{ orders: OrderInfo[] }>('GET', '/orders').then(
      (r) => {
        setOrders(r.orders);
        // Credited meanwhile (by the sweep, or in another tab): nothing left to claim here.
        for (const o of r.orders) if (o.status === 'paid') forgetSent(accountId, o.id);
      },
      () => {},
    );
  }, [accountId]);
  useEffect(load, [load, refresh]);
  useEffect(() => {
    window.addEventListener('cryptomcp:sent', load);
    return () => window.removeEventListener('cryptomcp:sent', load);
  }, [load]);

  const byId = new Map(orders.map((o) => [o.id, o]));
  const pending = new Map<string, { order_id: string; tx_hash: string; chain: string; what: string; reason: string }>();
  for (const o of orders) {
    if (o.status === 'submitted' && o.tx_hash) {
      pending.set(o.id, { order_id: o.id, tx_hash: o.tx_hash, chain: o.chain, what: `${o.amount_display} USDC for ${o.kind === 'plan' ? `${planName(o.item)} (one month)` : `${o.credits.toLocaleString('en-US')} credits`}`, reason: reasonOf(o.last_error) });
    }
  }
  for (const t of local) {
    const o = byId.get(t.order_id);
    if (o?.status === 'paid' || pending.has(t.order_id)) continue;
    pending.set(t.order_id, { order_id: t.order_id, tx_hash: t.tx_hash, chain: t.chain, what: `${t.amount_display} USDC for ${t.label}`, reason: 'Sent from this browser and not credited yet.' });
  }
  if (pending.size === 0 && credited.length === 0) return null;

  const claim = async (p: { order_id: string; tx_hash: string; what: string }) => {
    setBusy(p.order_id);
    try {
      await api('POST', `/orders/${p.order_id}/submit`, { tx_hash: p.tx_hash });
      forgetSent(accountId, p.order_id);
      setCredited((c) => [...c, `Credited: ${p.what}.`]);
      onPaid();
    } catch (err) {
      if (err instanceof ApiFailure && (err.error.code === 'PAYMENT_MISMATCH' || err.error.code === 'PAYMENT_ALREADY_CREDITED')) forgetSent(accountId, p.order_id);
      const senders = err instanceof ApiFailure && err.error.code === 'WALLET_NOT_LINKED' ? ((err.error.details.senders as string[] | undefined) ?? []) : [];
      setNotes((n) => ({
        ...n,
        [p.order_id]: senders.length > 0 ? `Sent from ${senders.map(short).join(', ')}, not linked to this account: link it under Wallets below, then claim again.` : describeError(err),
      }));
    } finally {
      setBusy(undefined);
      load();
    }
  };

  return (
    <section className="card notice" aria-labelledby="pending-title" data-testid="pending-payments">
      <h2 id="pending-title">{pending.size > 0 ? 'Payments sent, not credited yet' : 'Payments claimed'}</h2>
      {credited.map((c) => (
        <p key={c} role="status">{c}</p>
      ))}
      <ul>
        {[...pending.values()].map((p) => (
          <li key={p.order_id}>
            <p>
              {p.what} on {p.chain}, transaction <code className="address">{p.tx_hash}</code>. {p.reason}
            </p>
            <button type="button" disabled={busy !== undefined} onClick={() => void claim(p)}>
              {busy === p.order_id ? 'Checking…' : 'Claim this payment'}
            </button>
            <p role="status">{notes[p.order_id]}</p>
          </li>
        ))}
      </ul>
    </section>
  );
}
