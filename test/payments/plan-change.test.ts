// Plan purchases never lose paid value, and merges never strand a payment (issue 30), paid for real
// in USDC on the anvil devnet through the dashboard API. Before: Pro bought twice, then Basic, cut
// the paid time by a month and the balance from 15,000 to 5,000; a merge while a payment waited for
// confirmation left the payment on an account nobody could sign in to.
//
// The rule chosen: a plan bought while another is paid starts when that paid time ends (no
// arithmetic on money, so nothing to round: what was paid runs to its end, then the new plan runs
// its full month). The quote says so, with the numbers, before the wallet is asked to pay.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { LocalAccount } from 'viem';
import { startDevnet, type Devnet } from '../../server/devnet/devnet.ts';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { ledgerSum, post, startTestService, toolCall } from '../helpers/service.ts';
import { CookieClient, rpcEnv, signInEvm, siweMessage } from '../dashboard/helpers.ts';
import { devnetAccount, devnetClients, transferToken } from './helpers.ts';

let db: TestDatabase;
let devnet: Devnet;
let service: RunningService;

beforeAll(async () => {
  db = await createTestDatabase();
  devnet = await startDevnet();
  const m = devnet.manifest;
  service = await startTestService(db.url, {
    ...rpcEnv(m.rpc_url),
    MCP_SERVERS: 'market-intelligence',
    DASHBOARD_SIGN_IN_LIMIT: '1000',
    // Two confirmations: a transfer just mined is a payment in flight until one more block.
    PAYMENT_CHAINS: JSON.stringify({ ethereum: { treasury: m.payments.treasury.address, token: m.payments.usdc.address, chain_id: m.chain_id, confirmations: 2 } }),
    // The tests drive verification; the sweep stays out of the way.
    PAYMENT_VERIFY_INTERVAL_MS: '600000',
  });
});

afterAll(async () => {
  await service?.close();
  await devnet?.stop();
  await db?.drop();
});

// After every test: each account's balance equals its grants plus its ledger (grants are ledger
// rows), and no reservation is left unresolved (settlement is batched: wait for it).
afterEach(async () => {
  for (const until = Date.now() + 10_000; Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
    if (!(await db.query(`SELECT 1 FROM credit_ledger WHERE kind = 'reserve' AND resolved_at IS NULL`)).rowCount) break;
  }
  expect((await db.query(`SELECT request_id FROM credit_ledger WHERE kind = 'reserve' AND resolved_at IS NULL`)).rows).toEqual([]);
  const off = await db.query(
    `SELECT a.id FROM accounts a LEFT JOIN credit_ledger l ON l.account_id = a.id GROUP BY a.id HAVING a.balance <> coalesce(sum(l.delta), 0)`,
  );
  expect(off.rows).toEqual([]);
});

const mine = (blocks = 1) => devnetClients(devnet.manifest).test.mine({ blocks });
const treasury = () => devnet.manifest.payments.treasury.address;
const usdc = () => devnet.manifest.payments.usdc.address;

async function signedIn(wallet: LocalAccount) {
  const client = new CookieClient(service.url);
  const { res } = await signInEvm(client, wallet);
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return { client, accountId: res.body.account.id as string };
}

async function accountRow(id: string) {
  const res = await db.query<{ plan: string; balance: number; topup: number; paid_until: Date | null; period_start: Date; status: string }>(
    'SELECT plan, balance, topup, paid_until, period_start, status FROM accounts WHERE id = $1',
    [id],
  );
  return res.rows[0]!;
}

/** Orders, pays from `wallet` and submits until credited; returns the quote the order came with. */
async function buy(client: CookieClient, wallet: LocalAccount, item: { kind: 'plan' | 'pack'; item: string }) {
  const created = await client.post('/api/orders', { ...item, chain: 'ethereum' });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const hash = await transferToken(devnet.manifest, wallet, usdc(), treasury(), BigInt(created.body.order.amount));
  await mine(1);
  const paid = await client.post(`/api/orders/${created.body.order.id}/submit`, { tx_hash: hash });
  expect(paid.status, JSON.stringify(paid.body)).toBe(200);
  return { quote: created.body.quote, hash, order: created.body.order };
}

const quote = async (client: CookieClient, kind: string, item: string) => {
  const res = await client.get(`/api/orders/quote?kind=${kind}&item=${item}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.quote;
};

const MONTH_MIN = 27 * 86400_000;
const MONTH_MAX = 32 * 86400_000;

describe('buying another plan', () => {
  it('Pro twice, then Basic: nothing paid is lost — balance and paid time are kept, Basic starts when Pro\'s paid time ends, and the quote said so first', async () => {
    const wallet = devnetAccount(12);
    const { client, accountId } = await signedIn(wallet);

    // Bad questions get coded 4xx answers.
    for (const [q, status, code] of [
      ['kind=plan', 400, 'INVALID_PARAMS'],
      ['kind=gift&item=pro', 400, 'INVALID_PARAMS'],
      ['kind=plan&item=free', 404, 'NOT_FOUND'],
      ['kind=pack&item=credits-0', 404, 'NOT_FOUND'],
    ] as const) {
      const bad = await client.get(`/api/orders/quote?${q}`);
      expect([bad.status, bad.body.error.code], q).toEqual([status, code]);
    }

    const first = await quote(client, 'plan', 'pro');
    expect(first).toMatchObject({ rule: 'starts_now', price_cents: 7900, credits: 15000, current: { plan: 'free', remaining_value_cents: 0 } });
    await buy(client, wallet, { kind: 'plan', item: 'pro' });
    const p1 = (await accountRow(accountId)).paid_until!;
    expect(await accountRow(accountId)).toMatchObject({ plan: 'pro', balance: 15000 });

    const second = await quote(client, 'plan', 'pro');
    expect(second).toMatchObject({ rule: 'extends', starts_at: p1.toISOString() });
    await buy(client, wallet, { kind: 'plan', item: 'pro' });
    const p2 = (await accountRow(accountId)).paid_until!;
    expect(p2.getTime() - p1.getTime()).toBeGreaterThan(MONTH_MIN);
    expect(p2.getTime() - p1.getTime()).toBeLessThan(MONTH_MAX);

    // One credit spent through a key, so the balance is not just the allowance.
    client.csrf = (await client.get('/api/session')).body.csrf_token;
    const key = (await client.post('/api/keys', { name: 'k' })).body.plaintext;
    expect((await post(`${service.url}/mcp/market-intelligence`, toolCall('bench_echo', { message: 'x' }), { 'x-api-key': key })).status).toBe(200);
    const before = await accountRow(accountId);
    expect(before).toMatchObject({ plan: 'pro', balance: 14999 });

    // Asked before any order exists, and again beside the order, before the wallet pays.
    const third = await quote(client, 'plan', 'basic');
    expect(third).toMatchObject({ rule: 'scheduled', price_cents: 2900, credits: 5000, starts_at: p2.toISOString(), current: { plan: 'pro', balance: 14999, paid_until: p2.toISOString() } });
    // Pro's paid time left is worth between one and two months of Pro.
    expect(third.current.remaining_value_cents).toBeGreaterThan(7900);
    expect(third.current.remaining_value_cents).toBeLessThanOrEqual(2 * 7900);
    expect(third.summary).toContain(p2.toISOString().slice(0, 10));
    const bought = await buy(client, wallet, { kind: 'plan', item: 'basic' });
    expect(bought.quote).toMatchObject({ rule: 'scheduled', starts_at: p2.toISOString() });

    // After: still Pro, same balance, same paid time; Basic waits for its turn.
    const after = await accountRow(accountId);
    expect(after).toMatchObject({ plan: 'pro', balance: 14999, topup: 0 });
    expect(after.paid_until!.toISOString()).toBe(p2.toISOString());
    const plans = (await client.get('/api/plans')).body;
    expect(plans.scheduled).toHaveLength(1);
    expect(plans.scheduled[0]).toMatchObject({ plan: 'basic', starts_at: p2.toISOString() });
    const p3 = new Date(plans.scheduled[0].ends_at);
    expect(p3.getTime() - p2.getTime()).toBeGreaterThan(MONTH_MIN);
    expect(p3.getTime() - p2.getTime()).toBeLessThan(MONTH_MAX);
    // Buying Basic again now extends the scheduled Basic.
    expect(await quote(client, 'plan', 'basic')).toMatchObject({ rule: 'extends', starts_at: p3.toISOString() });

    // When Pro's paid time ends, Basic starts with its full allowance, paid until p3; then free.
    const renew = async (at: Date) => (await db.query<{ r: boolean }>('SELECT account_renew_if_due($1, $2) AS r', [accountId, at])).rows[0]!.r;
    expect(await renew(new Date(p2.getTime() + 1000))).toBe(true);
    const basic = await accountRow(accountId);
    expect(basic).toMatchObject({ plan: 'basic', balance: 5000 });
    expect(basic.period_start.toISOString()).toBe(p2.toISOString());
    expect(basic.paid_until!.toISOString()).toBe(p3.toISOString());
    expect(await renew(new Date(p3.getTime() + 1000))).toBe(true);
    expect(await accountRow(accountId)).toMatchObject({ plan: 'free', balance: 0, paid_until: null });
    expect(await ledgerSum(db, accountId)).toBe(0);
  });
});

const fresh = () => privateKeyToAccount(generatePrivateKey());

/** A link-nonce message stating `statement`, signed by an EVM key (what the merge dialog asks for). */
async function signStatement(client: CookieClient, signer: PrivateKeyAccount | LocalAccount, statement: string) {
  const nonce = (await client.get('/api/wallets/nonce')).body;
  const message = siweMessage(signer, nonce, { statement });
  return { family: 'evm', message, signature: await signer.signMessage({ message }) };
}

/** From `client`'s session (signed in as `mine`), asks to merge the account of `theirs`. */
async function tryMerge(client: CookieClient, mine: PrivateKeyAccount, theirs: LocalAccount) {
  const nonce = (await client.get('/api/wallets/nonce')).body;
  const message = siweMessage(theirs, nonce);
  const offered = await client.post('/api/wallets', { family: 'evm', message, signature: await theirs.signMessage({ message }) });
  expect(offered.status).toBe(409);
  const offer = offered.body.error.details.offer;
  return client.post('/api/merges', {
    offer_id: offer.id,
    signatures: [await signStatement(client, mine, offer.statement), await signStatement(client, theirs, offer.statement)],
  });
}

describe('merging an account that has paid', () => {
  it('is refused (409 payment_in_flight) while a payment waits for confirmation; once credited, the merge moves the order, the purchase and its credits', async () => {
    const me = fresh();
    const target = await signedIn(me);
    const wallet = devnetAccount(13);
    const source = await signedIn(wallet);

    const created = await source.client.post('/api/orders', { kind: 'pack', item: 'credits-1k', chain: 'ethereum' });
    expect(created.body.quote).toMatchObject({ rule: 'adds_topup', credits: 1000, price_cents: 700 });
    const hash = await transferToken(devnet.manifest, wallet, usdc(), treasury(), BigInt(created.body.order.amount));
    const early = await source.client.post(`/api/orders/${created.body.order.id}/submit`, { tx_hash: hash });
    expect(early.body.error).toMatchObject({ code: 'PAYMENT_UNCONFIRMED', details: { confirmations: 1, required: 2 } });

    const refused = await tryMerge(target.client, me, wallet);
    expect(refused.status, JSON.stringify(refused.body)).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'MERGE_REFUSED', details: { reason: 'payment_in_flight', order: created.body.order.id } });
    // Nothing moved: the source still signs in and still holds its wallet, order and session.
    expect(await accountRow(source.accountId)).toMatchObject({ status: 'active', balance: 150 });
    expect((await source.client.get('/api/session')).status).toBe(200);

    await mine(1);
    const paid = await source.client.post(`/api/orders/${created.body.order.id}/submit`, { tx_hash: hash });
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(await accountRow(source.accountId)).toMatchObject({ balance: 1150, topup: 1000 });

    const merged = await tryMerge(target.client, me, wallet);
    expect(merged.status, JSON.stringify(merged.body)).toBe(200);
    // The bought credits move; the source's free allowance does not (the target had its own).
    expect(merged.body.merged).toMatchObject({ credits: 1000, free_credits_not_moved: 150 });
    expect(await accountRow(target.accountId)).toMatchObject({ balance: 1150, topup: 1000 });
    expect(await accountRow(source.accountId)).toMatchObject({ status: 'suspended', balance: 0 });
    // The order and the purchase (with its receipt) are the target's now.
    const orders = (await target.client.get('/api/orders')).body.orders;
    expect(orders.map((o: { id: string; status: string }) => [o.id, o.status])).toContainEqual([created.body.order.id, 'paid']);
    const purchases = (await target.client.get('/api/purchases')).body.purchases;
    expect(purchases.map((p: { tx_hash: string }) => p.tx_hash)).toEqual([hash.toLowerCase()]);
    expect((await target.client.get(`/api/purchases/${purchases[0].id}/receipt`)).status).toBe(200);
    expect((await db.query('SELECT 1 FROM payments WHERE account_id = $1', [source.accountId])).rowCount).toBe(0);
  });

  it('is refused (409 paid_plan) while the other account has paid plan time, which would otherwise be thrown away', async () => {
    const me = fresh();
    const target = await signedIn(me);
    const wallet = devnetAccount(14);
    const source = await signedIn(wallet);
    await buy(source.client, wallet, { kind: 'plan', item: 'basic' });
    const refused = await tryMerge(target.client, me, wallet);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'MERGE_REFUSED', details: { reason: 'paid_plan', plan: 'basic' } });
    expect(await accountRow(source.accountId)).toMatchObject({ status: 'active', plan: 'basic', balance: 5000 });
  });
});
