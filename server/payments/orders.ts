// Orders paid on chain from the dashboard (issue 21): create one at a fixed price, submit the
// transaction that pays it, verify it by RPC, and credit it once (order_credit in SQL). Money
// stays in integer base units: cents in, token base units out, bigint in between.
import type { Plan } from '../accounts/plans.ts';
import type { CreditPack, PaymentChain, PaymentChainName, PaymentsConfig } from '../config.ts';
import type { Database } from '../db/pool.ts';
import { ApiError } from '../errors.ts';
import type { OrderJson, QuoteJson } from '../public-types.ts';
import { ChainUnavailableError, type ChainVerifier, type Verdict } from './verify.ts';

/** An order as stored: the JSON one's fields (orderView), with dates and the stored status. */
export interface Order extends Omit<OrderJson, 'amount_display' | 'status' | 'created_at' | 'expires_at' | 'paid_at'> {
  account_id: string;
  /** 'expired' is not stored: orderView derives it from expires_at. */
  status: 'pending' | 'submitted' | 'paid';
  submitted_at: Date | null;
  paid_at: Date | null;
  created_at: Date;
  expires_at: Date;
}

const ORDER_COLUMNS =
  'id, account_id, kind, item, credits, price_cents, chain, token, decimals, amount::text AS amount, treasury, status, tx_hash, submitted_at, paid_at, last_error, created_at, expires_at';

/** USD cents as token base units: cents × 10^(decimals - 2), exact. */
export function centsToBaseUnits(cents: number, decimals: number): bigint {
  const c = BigInt(cents);
  return decimals >= 2 ? c * 10n ** BigInt(decimals - 2) : c / 10n ** BigInt(2 - decimals);
}

/** Base units as a decimal token amount, e.g. 29000000 (6 decimals) -> "29.00". */
export function formatUnits(amount: bigint | string, decimals: number): string {
  const v = BigInt(amount);
  const scale = 10n ** BigInt(decimals);
  const whole = v / scale;
  const fraction = (v % scale).toString().padStart(decimals, '0').replace(/0+$/, '').padEnd(2, '0');
  return decimals === 0 ? whole.toString() : `${whole}.${fraction}`;
}

export interface OrderRequest {
  kind: 'plan' | 'pack';
  item: string;
  chain: string;
}

export type SubmitResult =
  | { status: 'paid'; order: Order; balance: number; plan: string; paid_until: Date | null }
  /** Thrown as ApiError by the HTTP layer; kept as a value for the sweep. */
  | { status: 'refused'; error: ApiError };

export class Payments {
  readonly #db: Database;
  readonly #config: PaymentsConfig;
  readonly #verifiers: Map<PaymentChainName, ChainVerifier>;
  readonly #onCredited: ((order: Order) => void) | undefined;
  readonly #onVerifyError: ((chain: string) => void) | undefined;

  /** A recent Solana blockhash for the browser's wallet to build the transfer on (no RPC in the page). */
  readonly solanaBlockhash: (() => Promise<{ blockhash: string; lastValidBlockHeight: number }>) | undefined;

  constructor(
    db: Database,
    config: PaymentsConfig,
    verifiers: Map<PaymentChainName, ChainVerifier>,
    opts: { onCredited?: (order: Order) => void; onVerifyError?: (chain: string) => void; solanaBlockhash?: () => Promise<{ blockhash: string; lastValidBlockHeight: number }> } = {},
  ) {
    this.#db = db;
    this.#config = config;
    this.#verifiers = verifiers;
    this.#onCredited = opts.onCredited;
    this.#onVerifyError = opts.onVerifyError;
    this.solanaBlockhash = opts.solanaBlockhash;
  }

  get chains(): PaymentChain[] {
    return this.#config.chains;
  }

  get packs(): CreditPack[] {
    return this.#config.packs;
  }

  #chain(name: string): PaymentChain {
    const chain = this.#config.chains.find((c) => c.chain === name);
    if (!chain) throw new ApiError('CHAIN_NOT_CONFIGURED', undefined, { chain: name, configured: this.#config.chains.map((c) => c.chain) });
    return chain;
  }

  #priced(request: Omit<OrderRequest, 'chain'>, plans: Plan[]): { credits: number; price: number } {
    if (request.kind === 'plan') {
      const plan = plans.find((p) => p.name === request.item);
      if (!plan || plan.price_cents === null || plan.price_cents <= 0) {
        throw new ApiError('NOT_FOUND', `No plan named "${request.item}" is for sale.`, { plan: request.item });
      }
      // Plan time is sold by the month, and a one-time allowance has no months to buy or extend
      // (a PlanPolicy may still give it a price: the dashboard offers no button for it either).
      if (plan.renewal !== 'monthly') {
        throw new ApiError('INVALID_PARAMS', `${plan.display_name} is a one-time allowance: it is not sold or extended by the month.`, {
          issues: [{ path: 'item', message: 'a one-time plan cannot be bought by the month' }],
          plan: request.item,
        });
      }
      return { credits: plan.credits, price: plan.price_cents };
    }
    const pack = this.#config.packs.find((p) => p.name === request.item);
    if (!pack) throw new ApiError('NOT_FOUND', `No credit pack named "${request.item}".`, { pack: request.item });
    return { credits: pack.credits, price: pack.price_cents };
  }

  async create(accountId: string, request: OrderRequest, plans: Plan[]): Promise<Order> {
    const chain = this.#chain(request.chain);
    const { credits, price } = this.#priced(request, plans);
    const amount = centsToBaseUnits(price, chain.decimals);
    const res = await this.#db.query<Order>(
      `INSERT INTO payment_orders (account_id, kind, item, credits, price_cents, chain, token, decimals, amount, treasury, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now() + make_interval(secs => $11))
       RETURNING ${ORDER_COLUMNS}`,
      [accountId, request.kind, request.item, credits, price, chain.chain, chain.token, chain.decimals, amount.toString(), chain.treasury, this.#config.orderTtlSeconds],
    );
    return res.rows[0]!;
  }

  /**
   * What buying `request.item` would do now, from the same SQL rule that credits the order
   * (plan_purchase_rule), after applying any renewal or scheduled start that is due.
   */
  async quote(accountId: string, request: Omit<OrderRequest, 'chain'>, plans: Plan[]): Promise<QuoteJson> {
    const { credits, price } = this.#priced(request, plans);
    await this.#db.query('SELECT account_renew_if_due($1)', [accountId]);
    const acc = await this.#db.query<{ plan: string; balance: number; topup: number; paid_until: Date | null; period_start: Date; period_end: Date | null }>(
      'SELECT plan, balance, topup, paid_until, period_start, period_end FROM accounts WHERE id = $1',
      [accountId],
    );
    const a = acc.rows[0];
    if (!a) throw new ApiError('SESSION_REQUIRED');
    const sched = await this.#db.query<{ plan: string; starts_at: Date; ends_at: Date }>(
      'SELECT plan, starts_at, ends_at FROM plan_schedule WHERE account_id = $1 ORDER BY starts_at',
      [accountId],
    );
    const now = Date.now();
    const priceOf = (name: string) => plans.find((p) => p.name === name)?.price_cents ?? 0;
    const nameOf = (name: string) => plans.find((p) => p.name === name)?.display_name ?? name;
    let remaining = 0;
    if (a.paid_until && a.paid_until.getTime() > now) {
      // The unused share of the current period, then the whole months paid after it.
      const periodEnd = Math.min(a.period_end?.getTime() ?? a.paid_until.getTime(), a.paid_until.getTime());
      const period = periodEnd - a.period_start.getTime();
      if (period > 0) remaining += Math.floor((priceOf(a.plan) * Math.max(0, periodEnd - now)) / period);
      remaining += priceOf(a.plan) * monthsBetween(new Date(periodEnd), a.paid_until);
    }
    for (const s of sched.rows) remaining += priceOf(s.plan) * monthsBetween(s.starts_at, s.ends_at);
    const paidThrough = sched.rows.at(-1)?.ends_at ?? (a.paid_until && a.paid_until.getTime() > now ? a.paid_until : null);
    const current = {
      plan: a.plan,
      plan_display: nameOf(a.plan),
      balance: a.balance,
      topup: a.topup,
      paid_until: a.paid_until?.toISOString() ?? null,
      paid_through: paidThrough?.toISOString() ?? null,
      remaining_value_cents: remaining,
      scheduled: sched.rows.map((s) => ({ plan: s.plan, plan_display: nameOf(s.plan), starts_at: s.starts_at.toISOString(), ends_at: s.ends_at.toISOString() })),
    };
    const usd = (c: number) => `$${(c / 100).toFixed(2)}`;
    const day = (d: Date) => d.toISOString().slice(0, 10);
    if (request.kind === 'pack') {
      return {
        kind: 'pack', item: request.item, item_display: `${credits.toLocaleString('en-US')} credits`, price_cents: price, credits, rule: 'adds_topup', starts_at: new Date(now).toISOString(), ends_at: null, current,
        summary: `${credits.toLocaleString('en-US')} top-up credits for ${usd(price)}, added now to your balance; your plan does not change.`,
      };
    }
    const rule = await this.#db.query<{ rule: 'starts_now' | 'extends' | 'scheduled'; starts_at: Date; ends_at: Date }>(
      'SELECT rule, starts_at, ends_at FROM plan_purchase_rule($1, $2)',
      [accountId, request.item],
    );
    const r = rule.rows[0]!;
    const item = nameOf(request.item);
    const kept = remaining > 0 ? ` The ${usd(remaining)} of paid time you have left is kept in full.` : '';
    const summary =
      r.rule === 'starts_now'
        ? `${item} starts now for ${usd(price)}: ${credits.toLocaleString('en-US')} credits for one month, until ${day(r.ends_at)}` +
          (a.balance - a.topup > 0 ? `, in place of the ${(a.balance - a.topup).toLocaleString('en-US')} unpaid ${nameOf(a.plan)} credits left` : '') +
          (a.topup > 0 ? `; your ${a.topup.toLocaleString('en-US')} top-up credits are kept.` : '.')
        : r.rule === 'extends'
          ? `One more month of ${item} for ${usd(price)}, from ${day(r.starts_at)} to ${day(r.ends_at)}; nothing changes before then.${kept}`
          : `${item} for ${usd(price)} starts on ${day(r.starts_at)}, when the plan time already paid ends, and runs to ${day(r.ends_at)}; until then you keep ${nameOf(a.plan)} and its ${a.balance.toLocaleString('en-US')} credits.${kept}`;
    return { kind: 'plan', item: request.item, item_display: item, price_cents: price, credits, rule: r.rule, starts_at: r.starts_at.toISOString(), ends_at: r.ends_at.toISOString(), current, summary };
  }

  async get(accountId: string, orderId: string): Promise<Order> {
    if (!/^[0-9a-f-]{36}$/i.test(orderId)) throw new ApiError('ORDER_NOT_FOUND', undefined, { order: orderId });
    const res = await this.#db.query<Order>(`SELECT ${ORDER_COLUMNS} FROM payment_orders WHERE id = $1 AND account_id = $2`, [orderId, accountId]);
    const order = res.rows[0];
    if (!order) throw new ApiError('ORDER_NOT_FOUND', undefined, { order: orderId });
    return order;
  }

  async list(accountId: string, limit = 50): Promise<Order[]> {
    const res = await this.#db.query<Order>(`SELECT ${ORDER_COLUMNS} FROM payment_orders WHERE account_id = $1 ORDER BY created_at DESC LIMIT $2`, [accountId, limit]);
    return res.rows;
  }

  /**
   * The wallet sent the transfer: check it pays the order and credit it once. A hash is
   * remembered on the order, so the sweep keeps verifying it if it is not confirmed yet or the
   * node is down. Throws ApiError for every refusal; nothing is credited unless it returns paid.
   */
  async submit(accountId: string, orderId: string, txHash: string): Promise<Extract<SubmitResult, { status: 'paid' }>> {
    const order = await this.get(accountId, orderId);
    const verifier = this.#verifiers.get(order.chain);
    if (!verifier || !this.#config.chains.some((c) => c.chain === order.chain)) throw new ApiError('CHAIN_NOT_CONFIGURED', undefined, { chain: order.chain });
    const hash = order.chain === 'solana' ? txHash : txHash.toLowerCase();
    if (!verifier.wellFormed(hash)) {
      throw new ApiError('INVALID_PARAMS', 'tx_hash is not a transaction id on this chain.', {
        issues: [{ path: 'tx_hash', message: order.chain === 'solana' ? 'expected a base58 signature' : 'expected 0x and 64 hex digits' }],
      });
    }
    if (order.status === 'paid') {
      if (order.tx_hash === hash) throw new ApiError('PAYMENT_ALREADY_CREDITED', undefined, { tx_hash: hash, order: order.id });
      throw new ApiError('PAYMENT_ALREADY_CREDITED', 'This order has already been paid by another transaction.', { order: order.id, tx_hash: order.tx_hash });
    }
    // A hash recorded before the order expired may still be claimed while the sweep would check
    // it (as long again as the order's lifetime): a transfer sent in time is never lost.
    const recorded = order.status === 'submitted' && order.tx_hash === hash && order.expires_at.getTime() + this.#config.orderTtlSeconds * 1000 > Date.now();
    if (order.expires_at.getTime() <= Date.now() && !recorded) throw new ApiError('ORDER_EXPIRED', undefined, { order: order.id, expired_at: order.expires_at.toISOString() });
    const credited = await this.#db.query('SELECT 1 FROM payments WHERE chain = $1 AND tx_hash = $2', [order.chain, hash]);
    if (credited.rowCount) throw new ApiError('PAYMENT_ALREADY_CREDITED', undefined, { tx_hash: hash });
    // Under a share lock on the account: a merge (which takes it exclusively) either sees this
    // payment in flight and refuses, or has already moved the order away (then nothing matches).
    const marked = await this.#db.query(
      `UPDATE payment_orders o SET status = 'submitted', tx_hash = $2, submitted_at = now(), last_error = NULL
         FROM (SELECT id FROM accounts WHERE id = $3 FOR SHARE) a
        WHERE o.id = $1 AND o.account_id = a.id AND o.status <> 'paid'`,
      [order.id, hash, accountId],
    );
    if (!marked.rowCount) {
      const now = await this.get(accountId, orderId);
      if (now.status === 'paid') throw new ApiError('PAYMENT_ALREADY_CREDITED', undefined, { order: order.id, tx_hash: now.tx_hash });
      throw new ApiError('ORDER_NOT_FOUND', undefined, { order: orderId });
    }
    const result = await this.#verifyAndCredit({ ...order, tx_hash: hash });
    if (result.status === 'refused') throw result.error;
    return result;
  }

  async #verifyAndCredit(order: Order & { tx_hash: string }): Promise<SubmitResult> {
    const verifier = this.#verifiers.get(order.chain)!;
    let verdict: Verdict;
    try {
      const linked = await this.#linkedWallets(order.account_id, order.chain);
      verdict = await verifier.verify(order.tx_hash, { token: order.token, treasury: order.treasury, amount: BigInt(order.amount) }, linked);
    } catch (err) {
      if (err instanceof ChainUnavailableError) {
        this.#onVerifyError?.(order.chain);
        await this.#note(order.id, 'rpc_unavailable', true);
        return { status: 'refused', error: new ApiError('SERVICE_UNAVAILABLE', `The ${order.chain} node cannot be reached; the payment is checked again when it returns.`, { provider: `rpc:${order.chain}`, retrying: true }) };
      }
      throw err;
    }
    if (!verdict.ok) {
      if (verdict.kind === 'unconfirmed') {
        await this.#note(order.id, 'unconfirmed', true);
        return { status: 'refused', error: new ApiError('PAYMENT_UNCONFIRMED', undefined, { confirmations: verdict.confirmations, required: verdict.required, retrying: true }) };
      }
      // Sent from a wallet the account has not linked (yet): the transfer pays the order, so its
      // hash stays on the order for the page to show and claim once that wallet is linked (and
      // the sweep credits it by itself then).
      if (verdict.kind === 'not_linked') {
        await this.#note(order.id, `wallet_not_linked:${verdict.senders.join(' ')}`.slice(0, 500), true);
        return { status: 'refused', error: new ApiError('WALLET_NOT_LINKED', undefined, { senders: verdict.senders, order: order.id, tx_hash: order.tx_hash }) };
      }
      // A transaction that can never pay the order: forget it, so another can be submitted.
      await this.#note(order.id, `mismatch:${verdict.field}`, false);
      return { status: 'refused', error: new ApiError('PAYMENT_MISMATCH', undefined, { field: verdict.field, expected: verdict.expected, found: verdict.found }) };
    }
    const res = await this.#db.query<{ outcome: string; balance: number | null; plan: string | null; paid_until: Date | null }>(
      'SELECT * FROM order_credit($1, $2, $3)',
      [order.id, order.tx_hash, verdict.payer],
    );
    const row = res.rows[0]!;
    if (row.outcome === 'credited') {
      const paid = await this.get(order.account_id, order.id);
      this.#onCredited?.(paid);
      return { status: 'paid', order: paid, balance: row.balance!, plan: row.plan!, paid_until: row.paid_until };
    }
    if (row.outcome === 'already_credited') return { status: 'refused', error: new ApiError('PAYMENT_ALREADY_CREDITED', undefined, { tx_hash: order.tx_hash }) };
    return { status: 'refused', error: new ApiError('PAYMENT_ALREADY_CREDITED', 'This order has already been paid by another transaction.', { order: order.id }) };
  }

  async #linkedWallets(accountId: string, chain: PaymentChainName): Promise<Set<string>> {
    const family = chain === 'solana' ? 'solana' : 'evm';
    const res = await this.#db.query<{ address: string }>('SELECT address FROM wallets WHERE account_id = $1 AND family = $2', [accountId, family]);
    return new Set(res.rows.map((r) => r.address));
  }

  /** Records why the order is not paid yet; `keep` leaves the hash to be checked again. */
  async #note(orderId: string, error: string, keep: boolean): Promise<void> {
    await this.#db.query(
      keep
        ? "UPDATE payment_orders SET last_error = $2 WHERE id = $1 AND status = 'submitted'"
        : "UPDATE payment_orders SET last_error = $2, status = 'pending', tx_hash = NULL, submitted_at = NULL WHERE id = $1 AND status = 'submitted'",
      [orderId, error],
    );
  }

  /**
   * Verifies every submitted, unpaid order again: until it is confirmed, or until as long again
   * as the order's lifetime has passed since it expired (the hash was sent in time; confirming
   * it may take longer). Returns how many were credited.
   */
  async sweep(chains: readonly string[] = [...this.#verifiers.keys()]): Promise<number> {
    const res = await this.#db.query<Order & { tx_hash: string }>(
      `SELECT ${ORDER_COLUMNS} FROM payment_orders
        WHERE status = 'submitted' AND tx_hash IS NOT NULL AND expires_at + make_interval(secs => $1) > now() AND chain = ANY ($2)
        ORDER BY submitted_at LIMIT 200`,
      [this.#config.orderTtlSeconds, chains.filter((c) => this.#verifiers.has(c as PaymentChainName))],
    );
    let credited = 0;
    for (const order of res.rows) {
      const result = await this.#verifyAndCredit(order);
      if (result.status === 'paid') credited++;
    }
    return credited;
  }
}

/** Whole calendar months from `a` to `b` (scheduled plan time is bought by the month). */
function monthsBetween(a: Date, b: Date): number {
  return Math.max(0, Math.round((b.getTime() - a.getTime()) / (30.44 * 86_400_000)));
}

/** What the dashboard and the receipt show of an order. */
export function orderView(o: Order): OrderJson {
  return {
    id: o.id,
    kind: o.kind,
    item: o.item,
    credits: o.credits,
    price_cents: o.price_cents,
    chain: o.chain,
    token: o.token,
    decimals: o.decimals,
    amount: o.amount,
    amount_display: formatUnits(o.amount, o.decimals),
    treasury: o.treasury,
    status: o.status === 'paid' ? 'paid' : o.expires_at.getTime() <= Date.now() && o.status === 'pending' ? 'expired' : o.status,
    tx_hash: o.tx_hash,
    last_error: o.last_error,
    created_at: o.created_at.toISOString(),
    expires_at: o.expires_at.toISOString(),
    paid_at: o.paid_at?.toISOString() ?? null,
  };
}
