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
import { audit } from '../audit.ts';
import { parseBody } from '../body.ts';
import { sessionOf } from '../session.ts';

const OrderBody = z.object({ kind: z.enum(['plan', 'pack']), item: z.string().min(1).max(64), chain: z.string().min(1).max(16) });
const QuoteQuery = z.object({ kind: z.enum(['plan', 'pack']), item: z.string().min(1).max(64) });
const SubmitBody = z.object({ tx_hash: z.string().min(1).max(200) });

/** A purchase as read from the database: the JSON one's fields, with its token's decimals and a Date. */
export interface Purchase extends Omit<PurchaseJson, 'amount_display' | 'created_at'> {
  decimals: number;
  created_at: Date;
}

export async function purchaseList(db: Database, accountId: string): Promise<Purchase[]> {
  const res = await db.query<Purchase>(
    `SELECT id::text, kind, item, credits, (usd_micros / 10000)::int AS price_cents, chain, tx_hash, payer, token,
            amount::text AS amount, decimals, order_id, created_at
       FROM payments WHERE account_id = $1 ORDER BY created_at DESC, id DESC LIMIT 500`,
    [accountId],
  );
  return res.rows;
}

export function purchaseView(p: Purchase): PurchaseJson {
  return {
    id: p.id,
    kind: p.kind,
    item: p.item,
    credits: p.credits,
    price_cents: p.price_cents,
    chain: p.chain,
    tx_hash: p.tx_hash,
    payer: p.payer,
    token: p.token,
    amount: p.amount,
    amount_display: formatUnits(p.amount, p.decimals),
    order_id: p.order_id,
    created_at: p.created_at.toISOString(),
  };
}

const csvCell = (v: string | number | null) => {
  const s = v === null ? '' : String(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

export function purchasesCsv(purchases: Purchase[]): string {
  const header = ['date', 'receipt', 'kind', 'item', 'credits', 'price_usd', 'chain', 'token', 'amount', 'payer', 'tx_hash'];
  const rows = purchases.map((p) =>
    [p.created_at.toISOString(), p.id, p.kind, p.item, p.credits, formatUnits(BigInt(p.price_cents), 2), p.chain, p.token, formatUnits(p.amount, p.decimals), p.payer, p.tx_hash]
      .map(csvCell)
      .join(','),
  );
  return [header.join(','), ...rows].join('\n') + '\n';
}

const html = (s: string | number | null) =>
  String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** A self-contained printable receipt (no scripts, no external assets). */
export function receiptHtml(p: Purchase, accountId: string): string {
  const rows: [string, string][] = [
    ['Receipt', `#${p.id}`],
    ['Date (UTC)', p.created_at.toISOString().replace('T', ' ').slice(0, 19)],
    ['Account', accountId],
    ['Item', p.kind === 'plan' ? `Plan ${p.item ?? ''} (one month)` : `Credit pack ${p.item ?? ''}`],
    ['Credits', String(p.credits)],
    ['Price', `USD ${formatUnits(BigInt(p.price_cents), 2)}`],
    ['Paid', `${formatUnits(p.amount, p.decimals)} USDC on ${p.chain}`],
    ['Token', p.token],
    ['From', p.payer],
    ['Transaction', p.tx_hash],
  ];
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>cryptomcp receipt #${html(p.id)}</title>
<style>body{font:14px/1.5 system-ui,sans-serif;max-width:42rem;margin:2rem auto;color:#111}h1{font-size:1.4rem}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.4rem .6rem;border-bottom:1px solid #ddd;vertical-align:top}
td{font-family:ui-monospace,monospace;word-break:break-all}@media print{button{display:none}}</style></head>
<body><h1>cryptomcp — payment receipt</h1><table>${rows.map(([k, v]) => `<tr><th>${html(k)}</th><td>${html(v)}</td></tr>`).join('')}</table>
<p>Paid on chain in USDC; the transaction above is the proof of payment.</p></body></html>`;
}

export interface OrderRouteDeps {
  db: Database;
  payments: Payments;
  plans: () => Promise<Plan[]>;
  /** Cleared on this pod when an order is credited (the key cache holds balances and plans). */
  keys: KeyResolver;
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
    await audit(deps.db, request, 'plan_purchase', paid.order.id, { kind: paid.order.kind, item: paid.order.item, chain: paid.order.chain, tx_hash: tx_hash.trim(), status: paid.order.status });
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

  app.get('/purchases', async (request) => ({ purchases: (await purchaseList(deps.db, accountIdOf(request))).map(purchaseView) }));

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
    return reply.header('content-type', 'text/html; charset=utf-8').header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'").send(receiptHtml(purchase, accountId));
  });
}
