// The account's purchases paid on chain, newest first, each with its transaction and a printable
// receipt; all of them as CSV.
import { useEffect, useState } from 'react';
import { short } from '../address.ts';
import { api, describeError, formatCents, formatDate, type PurchaseInfo } from '../api.ts';
import { CHAIN_NAMES } from './Purchase.tsx';

export function Purchases() {
  const [purchases, setPurchases] = useState<PurchaseInfo[]>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    api<{ purchases: PurchaseInfo[] }>('GET', '/purchases').then((r) => setPurchases(r.purchases), (err: unknown) => setError(describeError(err)));
  }, []);
  if (error) return <p role="alert" className="error">{error}</p>;
  if (!purchases || purchases.length === 0) return null;
  return (
    <section className="card" aria-labelledby="purchases-title">
      <h2 id="purchases-title">Purchases</h2>
      <table className="responsive" data-testid="purchases">
          <thead>
            <tr>
              <th scope="col">Date</th>
              <th scope="col">Item</th>
              <th scope="col">Credits</th>
              <th scope="col">Price</th>
              <th scope="col">Paid</th>
              <th scope="col">Receipt</th>
            </tr>
          </thead>
          <tbody>
            {purchases.map((p) => {
              const when = formatDate(p.created_at);
              return (
                <tr key={p.id}>
                  <td data-label="Date" title={when.utc}>{when.text}</td>
                  <td data-label="Item">{p.item_display}</td>
                  <td data-label="Credits">{p.credits.toLocaleString('en-US')}</td>
                  <td data-label="Price">{formatCents(p.price_cents)}</td>
                  <td data-label="Paid">
                    {p.amount_display} USDC on {CHAIN_NAMES[p.chain as keyof typeof CHAIN_NAMES] ?? p.chain} from <code className="address">{short(p.payer)}</code>, transaction{' '}
                    <code className="address">{p.tx_hash.slice(0, 12)}…</code>
                  </td>
                  <td data-label="Receipt">
                    <a href={`/api/purchases/${p.id}/receipt`}>Receipt #{p.id}</a>
                  </td>
                </tr>
              );
            })}
          </tbody>
      </table>
      <a href="/api/purchases.csv" download>
        Download purchases (CSV)
      </a>
    </section>
  );
}
