// The dashboard's payment endpoints (issue 21), mounted inside the signed-in part of /api: orders
// paid on chain, their verification, and the account's purchases with receipts (JSON, CSV and a
// printable page). Errors are the registry's payment codes (DESIGN.md §5b).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Database } from '../../db/pool.ts';
import { ApiError } from '../../errors.ts';
import type { Plan } from '../../accounts/plans.ts';
import type { KeyResolver } from '../../keys/resolver.ts';
import { formatUnits, orderView, type Payments } from '../../payments/orders.ts';
import type { PurchaseJson } from '../../public-types.ts';
import { csvLine } from '../../lib/csv.ts';
import { auditObserved } from '../audit.ts';
import { parseBody } from '../body.ts';
import { sessionOf } from '../session.ts';
import { escapeHtml } from '../../lib/text.ts';

const OrderBody = z.object({ kind: z.enum(['plan', 'pack']), item: z.string().min(1).max(64), chain: z.string().min(1).max(16) });
const QuoteQuery = z.object({ kind: z.enum(['plan', 'pack']), item: z.string().min(1).max(64) });
const SubmitBody = z.object({ tx_hash: z.string().min(1).max(200) });

/** A purchase as read from the database: the JSON one's fields, with its token's decimals and a Date. */
export interface Purchase extends Omit<PurchaseJson, 'amount_display' | 'created_at' | 'item_display'> {
  decimals: number;
  created_at: Date;
}

export async function purchaseList(db: Database, accountId: string): Promise<Purchase[]> {
  const res = await db.query<Purchase>(
    `SELECT p.id::text, p.kind, p.item, p.credits, (p.usd_micros / 10000)::int AS price_cents, p.chain, p.tx_hash, p.payer, p.token,
            p.amount::text AS amount, p.decimals, p.order_id, o.treasury, p.created_at
       FROM payments p LEFT JOIN payment_orders o ON o.id = p.order_id
      WHERE p.account_id = $1 ORDER BY p.created_at DESC, p.id DESC LIMIT 500`,
    [accountId],
  );
  return res.rows;
}

/** The item as a person reads it: "Basic plan, one month" or "1,000 credits". */
function itemDisplay(p: Pick<Purchase, 'kind' | 'item' | 'credits'>, plans: readonly Plan[]): string {
  if (p.kind === 'plan') return `${plans.find((x) => x.name === p.item)?.display_name ?? p.item ?? 'Plan'} plan, one month`;
  return `${p.credits.toLocaleString('en-US')} credits (credit pack)`;
}

export function purchaseView(p: Purchase, plans: readonly Plan[]): PurchaseJson {
  return {
    id: p.id,
    kind: p.kind,
    item: p.item,
    item_display: itemDisplay(p, plans),
    credits: p.credits,
    price_cents: p.price_cents,
    chain: p.chain,
    tx_hash: p.tx_hash,
    payer: p.payer,
    token: p.token,
    amount: p.amount,
    amount_display: formatUnits(p.amount, p.decimals),
    order_id: p.order_id,
    treasury: p.treasury,
    created_at: p.created_at.toISOString(),
  };
}

export function purchasesCsv(purchases: Purchase[]): string {
  const header = ['date', 'receipt', 'kind', 'item', 'credits', 'price_usd', 'chain', 'token', 'amount', 'payer', 'tx_hash'];
  const rows = purchases.map((p) =>
    csvLine([p.created_at.toISOString(), p.id, p.kind, p.item, p.credits, formatUnits(BigInt(p.price_cents), 2), p.chain, p.token, formatUnits(p.amount, p.decimals), p.payer, p.tx_hash]),
  );
  return [csvLine(header), ...rows].join('');
}

const html = (s: string | number | null) => escapeHtml(s ?? '');

/** Who sold it: the service's public origin, its contact when configured, and the wallet paid. */
export interface Seller {
  name: string;
  url: string;
  contact: string | undefined;
}

const CHAIN_NAMES: Record<string, string> = { ethereum: 'Ethereum', base: 'Base', polygon: 'Polygon', bsc: 'BNB Smart Chain', solana: 'Solana' };

/**
 * A self-contained printable receipt (no scripts, no external assets): seller, buyer wallet, item,
 * amount, chain and transaction, in the reader's colour scheme, with a way back to the dashboard.
 */
export function receiptHtml(p: Purchase, accountId: string, seller: Seller, plans: readonly Plan[]): string {
  const rows: [string, string][] = [
    ['Receipt', `#${p.id}`],
    ['Date (UTC)', p.created_at.toISOString().replace('T', ' ').slice(0, 19)],
    ['Seller', [seller.name, seller.url, seller.contact].filter(Boolean).join(' · ')],
    ['Paid to (seller wallet)', p.treasury ?? '—'],
    ['Buyer account', accountId],
    ['Buyer wallet', p.payer],
    ['Item', itemDisplay(p, plans)],
    ['Credits', p.credits.toLocaleString('en-US')],
    ['Price', `USD ${formatUnits(BigInt(p.price_cents), 2)}`],
    ['Amount paid', `${formatUnits(p.amount, p.decimals)} USDC`],
    ['Chain', CHAIN_NAMES[p.chain] ?? p.chain],
    ['Token contract', p.token],
    ['Transaction', p.tx_hash],
  ];
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark"><title>${html(seller.name)} receipt #${html(p.id)}</title>
<style>:root{color-scheme:light dark;--fg:#111;--bg:#fff;--muted:#555;--line:#ccc;--link:#0645ad}
@media (prefers-color-scheme:dark){:root{--fg:#eee;--bg:#141414;--muted:#bbb;--line:#444;--link:#8ab4f8}}
body{font:14px/1.5 system-ui,sans-serif;margin:0;color:var(--fg);background:var(--bg)}main{max-width:42rem;margin:2rem auto;padding:0 1rem}
h1{font-size:1.4rem}a{color:var(--link)}table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:.4rem .6rem;border-bottom:1px solid var(--line);vertical-align:top}th{width:12rem}
td{font-family:ui-monospace,monospace;overflow-wrap:anywhere}.muted{color:var(--muted)}
@media (max-width:30rem){th,td{display:block;width:auto;border:0;padding:.1rem 0}td{border-bottom:1px solid var(--line);padding-bottom:.5rem}}
@media print{nav,.print-hint{display:none}:root{--fg:#000;--bg:#fff;--line:#999}}</style></head>
<body><nav><p style="max-width:42rem;margin:1rem auto;padding:0 1rem"><a href="/app/plans">← Back to the dashboard</a></p></nav>
<main><h1>${html(seller.name)} — payment receipt</h1>
<table>${rows.map(([k, v]) => `<tr><th scope="row">${html(k)}</th><td>${html(v)}</td></tr>`).join('')}</table>
<p>Paid on chain in USDC; the transaction above is the proof of payment.</p>
<p class="print-hint muted">To keep a copy, print this page or save it as PDF (Ctrl+P, or ⌘P on a Mac).</p></main></body></html>`;
}

export interface OrderRouteDeps {
  db: Database;
  payments: Payments;
  plans: () => Promise<Plan[]>;
  /** Cleared on this pod when an order is credited (the key cache holds balances and plans). */
  keys: KeyResolver;
  /** How to reach the seller (DASHBOARD_CONTACT), printed on receipts. */
  contact: string | undefined;
}

export function orderRoutes(app: FastifyInstance, deps: OrderRouteDeps): void {
  const { payments } = deps;
  const accountIdOf = (request: FastifyRequest): string => sessionOf(request).account_id;

  // What buying it would do (the plan-change rule and its numbers), asked before any order exists.
  app.get('/orders/quote', async (request, reply) => {
    const body = parseBody(QuoteQuery, request.query);
    reply.header('cache-control', 'no-store');
    return { quote: await payments.quote(accountIdOf(request), body, await deps.plans()) };
  });

  app.post('/orders', async (request, reply) => {
    const body = parseBody(OrderBody, request.body);
    const accountId = accountIdOf(request);
    const plans = await deps.plans();
    const order = await payments.create(accountId, body, plans);
    const quote = await payments.quote(accountId, body, plans);
    return reply.code(201).send({ order: orderView(order), chain_id: payments.chains.find((c) => c.chain === order.chain)?.chainId ?? null, quote });
  });

  app.get('/orders', async (request) => ({ orders: (await payments.list(accountIdOf(request))).map(orderView) }));

  app.get('/orders/:id', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    return { order: orderView(await payments.get(accountIdOf(request), (request.params as { id: string }).id)) };
  });

  app.post('/orders/:id/submit', async (request) => {
    const { tx_hash } = parseBody(SubmitBody, request.body);
    const paid = await payments.submit(accountIdOf(request), (request.params as { id: string }).id, tx_hash.trim());
    deps.keys.clear();
    await auditObserved(deps.db, request, {
      action: 'plan_purchase',
      target: paid.order.id,
      details: { kind: paid.order.kind, item: paid.order.item, chain: paid.order.chain, tx_hash: tx_hash.trim(), status: paid.order.status },
    });
    return { order: orderView(paid.order), account: { plan: paid.plan, balance: paid.balance, paid_until: paid.paid_until?.toISOString() ?? null } };
  });

  // The browser builds a Solana transfer on a recent blockhash; the page has no RPC of its own.
  app.get('/payments/solana/blockhash', async (_request, reply) => {
    if (!payments.chains.some((c) => c.chain === 'solana') || !payments.solanaBlockhash) throw new ApiError('CHAIN_NOT_CONFIGURED', undefined, { chain: 'solana' });
    reply.header('cache-control', 'no-store');
    try {
      const { blockhash, lastValidBlockHeight } = await payments.solanaBlockhash();
      return { blockhash, last_valid_block_height: lastValidBlockHeight };
    } catch {
      throw new ApiError('SERVICE_UNAVAILABLE', 'The Solana node cannot be reached; try again in a moment.', { provider: 'rpc:solana' });
    }
  });

  app.get('/purchases', async (request) => {
    const plans = await deps.plans();
    return { purchases: (await purchaseList(deps.db, accountIdOf(request))).map((p) => purchaseView(p, plans)) };
  });

  app.get('/purchases.csv', async (request, reply) =>
    reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', 'attachment; filename="cryptomcp-purchases.csv"')
      .send(purchasesCsv(await purchaseList(deps.db, accountIdOf(request)))),
  );

  app.get('/purchases/:id/receipt', async (request, reply) => {
    const accountId = accountIdOf(request);
    const id = (request.params as { id: string }).id;
    const purchase = (await purchaseList(deps.db, accountId)).find((p) => p.id === id);
    if (!purchase) throw new ApiError('NOT_FOUND', 'No purchase with this id on your account.', { purchase: id });
    const seller = { name: 'cryptomcp', url: request.server.origins.base, contact: deps.contact };
    return reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
      .send(receiptHtml(purchase, accountId, seller, await deps.plans()));
  });
}
