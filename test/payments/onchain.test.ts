// Paying for a plan or a credit pack in USDC from the dashboard (issue 21, DESIGN.md §5b), on the
// real anvil devnet with the real service and PostgreSQL: the order fixes amount, chain, token and
// treasury; the payer's wallet sends an ERC-20 transfer; the server verifies the receipt by RPC
// and credits it once — sequentially, concurrently, and across two replicas — and refuses, with a
// coded error and nothing credited, every transaction that does not pay the order.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { encodeFunctionData, getAddress, type Address } from 'viem';
import { startDevnet, type Devnet } from '../../server/devnet/devnet.ts';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { ledgerSum, startTestService } from '../helpers/service.ts';
import { CookieClient, rpcEnv, signInEvm, siweMessage } from '../dashboard/helpers.ts';
import { devnetAccount, devnetClients, ERC20, rpcProxy, transferToken, usdcBalance } from './helpers.ts';

let db: TestDatabase;
let devnet: Devnet;
let service: RunningService;
let replica: RunningService;
let viaProxy: RunningService;
let proxy: Awaited<ReturnType<typeof rpcProxy>>;

const payer = devnetAccount(12);
const stranger = devnetAccount(13);
let treasury: Address;
let usdc: Address;

beforeAll(async () => {
  db = await createTestDatabase();
  devnet = await startDevnet();
  const m = devnet.manifest;
  treasury = m.payments.treasury.address;
  usdc = m.payments.usdc.address;
  proxy = await rpcProxy(m.rpc_url);
  const common = { ...rpcEnv(m.rpc_url), MCP_SERVERS: 'market-intelligence', DASHBOARD_SIGN_IN_LIMIT: '1000', EVM_RETRIES: '0', EVM_TIMEOUT_MS: '1500', EVM_DEADLINE_MS: '2000' };
  // Ethereum is the devnet here, needing 2 confirmations; its sweep is slow so the tests drive verification.
  const ethereum = { ...common, PAYMENT_CHAINS: JSON.stringify({ ethereum: { treasury, token: usdc, chain_id: m.chain_id, confirmations: 2 } }), PAYMENT_VERIFY_INTERVAL_MS: '600000' };
  service = await startTestService(db.url, ethereum);
  replica = await startTestService(db.url, ethereum);
  // Base goes through a proxy that can fail; its sweep retries every 200 ms.
  viaProxy = await startTestService(db.url, {
    ...common,
    BASE_RPC_URL: proxy.url,
    PAYMENT_CHAINS: JSON.stringify({ base: { treasury, token: usdc, chain_id: m.chain_id, confirmations: 1 } }),
    PAYMENT_VERIFY_INTERVAL_MS: '200',
  });
});

afterAll(async () => {
  await viaProxy?.close();
  await replica?.close();
  await service?.close();
  await proxy?.close();
  await devnet?.stop();
  await db?.drop();
});

async function signedIn(account = payer, base = service.url) {
  const client = new CookieClient(base);
  const { res } = await signInEvm(client, account);
  expect(res.status).toBeLessThan(300);
  return { client, accountId: res.body.account.id as string };
}

const mine = (blocks = 1) => devnetClients(devnet.manifest).test.mine({ blocks });

async function order(client: CookieClient, body: Record<string, string> = { kind: 'plan', item: 'basic', chain: 'ethereum' }) {
  const res = await client.post('/api/orders', body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.order as { id: string; amount: string; treasury: string; token: string; chain: string; price_cents: number };
}

async function accountRow(id: string) {
  const res = await db.query<{ plan: string; balance: number; topup: number; period_end: Date | null; paid_until: Date | null }>(
    'SELECT plan, balance, topup, period_end, paid_until FROM accounts WHERE id = $1',
    [id],
  );
  return res.rows[0]!;
}

const paymentsFor = async (hash: string) =>
  (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM payments WHERE tx_hash = $1', [hash.toLowerCase()])).rows[0]!.n;

// One account pays throughout; its own wallet is linked by signing in. Signed in on first use,
// so any test also runs alone (vitest -t).
let buyerOnce: Promise<{ client: CookieClient; accountId: string }> | undefined;
const theBuyer = () => (buyerOnce ??= signedIn());

describe('prices as configuration', () => {
  it('the catalog shows plan prices in integer USD cents, the credit packs and the chains paid on', async () => {
    const res = await fetch(`${service.url}/v1/catalog`);
    const body = (await res.json()) as {
      plans: { name: string; price_cents: number | null }[];
      credit_packs: { name: string; credits: number; price_cents: number }[];
      payments: { chains: { chain: string; token: string; decimals: number }[] };
    };
    expect(Object.fromEntries(body.plans.map((p) => [p.name, p.price_cents]))).toEqual({ free: null, basic: 2900, pro: 7900, premium: 19900 });
    expect(body.credit_packs).toEqual(expect.arrayContaining([{ name: 'credits-1k', credits: 1000, price_cents: 700 }]));
    for (const p of [...body.plans, ...body.credit_packs]) if (p.price_cents !== null) expect(Number.isInteger(p.price_cents)).toBe(true);
    expect(body.payments.chains).toEqual([{ chain: 'ethereum', chain_id: devnet.manifest.chain_id, token: usdc.toLowerCase(), decimals: 6 }]);
  });

  it('an order fixes amount (cents as token base units), chain, token, treasury and expiry', async () => {
    const buyer = await theBuyer();
    const o = await order(buyer.client);
    expect(o).toMatchObject({ amount: '29000000', chain: 'ethereum', token: usdc.toLowerCase(), treasury: treasury.toLowerCase(), price_cents: 2900 });
    const plans = await buyer.client.get('/api/plans');
    expect(plans.body.plans.find((p: { name: string }) => p.name === 'pro').price_cents).toBe(7900);
  });
});

describe('buying a plan on chain', () => {
  it('buy Basic from a linked wallet: unconfirmed until 2 confirmations, then plan basic, 5,000 credits, a one-month period, a purchase row with chain and hash', async () => {
    const buyer = await theBuyer();
    const o = await order(buyer.client);
    const before = await usdcBalance(devnet.manifest, treasury);
    const hash = await transferToken(devnet.manifest, payer, usdc, treasury, BigInt(o.amount));
    const early = await buyer.client.post(`/api/orders/${o.id}/submit`, { tx_hash: hash });
    expect(early.status).toBe(409);
    expect(early.body.error).toMatchObject({ code: 'PAYMENT_UNCONFIRMED', details: { confirmations: 1, required: 2 } });
    expect((await accountRow(buyer.accountId)).plan).toBe('free');

    await mine(1);
    const paid = await buyer.client.post(`/api/orders/${o.id}/submit`, { tx_hash: hash });
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(paid.body.account).toMatchObject({ plan: 'basic', balance: 5000 });
    expect(paid.body.order.status).toBe('paid');
    const row = await accountRow(buyer.accountId);
    expect(row).toMatchObject({ plan: 'basic', balance: 5000, topup: 0 });
    const month = row.period_end!.getTime() - Date.now();
    expect(month).toBeGreaterThan(27 * 86400_000);
    expect(month).toBeLessThan(32 * 86400_000);
    expect(row.paid_until!.getTime()).toBe(row.period_end!.getTime());
    expect(await usdcBalance(devnet.manifest, treasury)).toBe(before + 29_000_000n);
    const ledger = await db.query('SELECT kind, chain, tx_hash FROM credit_ledger WHERE account_id = $1 AND kind = $2', [buyer.accountId, 'purchase']);
    expect(ledger.rows).toEqual([{ kind: 'purchase', chain: 'ethereum', tx_hash: hash.toLowerCase() }]);
    expect(await ledgerSum(db, buyer.accountId)).toBe(row.balance);
    // The session reflects it at once.
    expect((await buyer.client.get('/api/session')).body.account).toMatchObject({ plan: 'basic', balance: 5000 });
    // The paid order is in the account's audit log (the refused early submission is not).
    const purchases = (await buyer.client.get('/api/audit')).body.entries.filter((e: { action: string }) => e.action === 'plan_purchase');
    expect(purchases).toEqual([expect.objectContaining({ target: o.id, details: expect.objectContaining({ item: 'basic', chain: 'ethereum', status: 'paid' }) })]);
  });

  it('the same hash submitted again — for the same order or another — is refused and credited once', async () => {
    const buyer = await theBuyer();
    const first = await order(buyer.client, { kind: 'pack', item: 'credits-1k', chain: 'ethereum' });
    const hash = await transferToken(devnet.manifest, payer, usdc, treasury, BigInt(first.amount));
    await mine(1);
    expect((await buyer.client.post(`/api/orders/${first.id}/submit`, { tx_hash: hash })).status).toBe(200);
    const balance = (await accountRow(buyer.accountId)).balance;
    const again = await buyer.client.post(`/api/orders/${first.id}/submit`, { tx_hash: hash });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('PAYMENT_ALREADY_CREDITED');
    const other = await order(buyer.client, { kind: 'pack', item: 'credits-1k', chain: 'ethereum' });
    const reuse = await buyer.client.post(`/api/orders/${other.id}/submit`, { tx_hash: hash.toUpperCase().replace('0X', '0x') });
    expect(reuse.status).toBe(409);
    expect(reuse.body.error.code).toBe('PAYMENT_ALREADY_CREDITED');
    expect((await accountRow(buyer.accountId)).balance).toBe(balance);
    expect(await paymentsFor(hash)).toBe(1);
  });

  it('two concurrent submissions of one hash, to two replicas and to one, credit it once (the unique chain+hash constraint)', async () => {
    const buyer = await theBuyer();
    const replicaClient = new CookieClient(replica.url);
    replicaClient.jar.set('cmcp_session', buyer.client.jar.get('cmcp_session')!);
    replicaClient.csrf = buyer.client.csrf;
    for (const pair of [
      [buyer.client, replicaClient],
      [buyer.client, buyer.client],
    ] as const) {
      const before = (await accountRow(buyer.accountId)).balance;
      const a = await order(buyer.client, { kind: 'pack', item: 'credits-1k', chain: 'ethereum' });
      const b = await order(buyer.client, { kind: 'pack', item: 'credits-1k', chain: 'ethereum' });
      const hash = await transferToken(devnet.manifest, payer, usdc, treasury, BigInt(a.amount));
      await mine(1);
      // The same order twice at once, and the same hash for a second order at once.
      const results = await Promise.all([
        pair[0].post(`/api/orders/${a.id}/submit`, { tx_hash: hash }),
        pair[1].post(`/api/orders/${a.id}/submit`, { tx_hash: hash }),
        pair[1].post(`/api/orders/${b.id}/submit`, { tx_hash: hash }),
      ]);
      const statuses = results.map((r) => r.status).sort();
      expect(statuses, JSON.stringify(results.map((r) => r.body))).toEqual([200, 409, 409]);
      for (const r of results.filter((x) => x.status === 409)) expect(r.body.error.code).toBe('PAYMENT_ALREADY_CREDITED');
      expect(await paymentsFor(hash)).toBe(1);
      expect((await accountRow(buyer.accountId)).balance).toBe(before + 1000);
    }
    expect(await ledgerSum(db, buyer.accountId)).toBe((await accountRow(buyer.accountId)).balance);
  });
});

describe('refusals: a coded error and nothing credited', () => {
  // The balance before each test: none of these may change it.
  let snapshotBalance: number;
  beforeEach(async () => {
    snapshotBalance = (await accountRow((await theBuyer()).accountId)).balance;
  });
  const unchanged = async () => {
    const { accountId } = await theBuyer();
    expect((await accountRow(accountId)).balance).toBe(snapshotBalance);
    expect(await ledgerSum(db, accountId)).toBe(snapshotBalance);
  };

  it('wrong token, wrong recipient, short amount: PAYMENT_MISMATCH naming the field, expected and found', async () => {
    const buyer = await theBuyer();
    // Another seeded token, sent by one of the seeded wallets that holds it.
    const other = devnet.manifest.tokens.find((t) => t.kind === 'plain')!;
    const holders = Object.entries(devnet.manifest.balances[other.symbol] ?? {}).filter(([, amount]) => BigInt(amount) >= 29_000_000n).map(([a]) => a.toLowerCase());
    const holder = Array.from({ length: 10 }, (_, i) => devnetAccount(i)).find((a) => holders.includes(a.address.toLowerCase()))!;
    const cases = [
      { send: () => transferToken(devnet.manifest, holder, other.address, treasury, 29_000_000n), field: 'token', found: other.address.toLowerCase() },
      { send: () => transferToken(devnet.manifest, payer, usdc, stranger.address, 29_000_000n), field: 'recipient', found: stranger.address.toLowerCase() },
      { send: () => transferToken(devnet.manifest, payer, usdc, treasury, 28_999_999n), field: 'amount', found: '28999999' },
    ];
    for (const c of cases) {
      const o = await order(buyer.client);
      const hash = await c.send();
      await mine(2);
      const res = await buyer.client.post(`/api/orders/${o.id}/submit`, { tx_hash: hash });
      expect(res.status, c.field).toBe(422);
      expect(res.body.error).toMatchObject({ code: 'PAYMENT_MISMATCH', details: { field: c.field, found: c.found } });
      expect(await paymentsFor(hash)).toBe(0);
      // The order stays open for a transaction that does pay it.
      expect((await buyer.client.get(`/api/orders/${o.id}`)).body.order.status).toBe('pending');
    }
    await unchanged();
  });

  it('a reverted transaction: PAYMENT_MISMATCH on status', async () => {
    const buyer = await theBuyer();
    const o = await order(buyer.client);
    const c = devnetClients(devnet.manifest);
    // More USDC than the payer holds: the token reverts. Gas is given so the wallet does not refuse to send it.
    const hash = await c.wallet(payer).sendTransaction({
      to: usdc,
      data: encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [treasury, 10n ** 30n] }),
      gas: 100_000n,
    });
    const receipt = await c.pub.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('reverted');
    await mine(2);
    const res = await buyer.client.post(`/api/orders/${o.id}/submit`, { tx_hash: hash });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: 'PAYMENT_MISMATCH', details: { field: 'status', expected: 'success', found: 'reverted' } });
    await unchanged();
  });

  it('sent from a wallet not linked to the account: WALLET_NOT_LINKED', async () => {
    const buyer = await theBuyer();
    const o = await order(buyer.client);
    const hash = await transferToken(devnet.manifest, stranger, usdc, treasury, BigInt(o.amount));
    await mine(2);
    const res = await buyer.client.post(`/api/orders/${o.id}/submit`, { tx_hash: hash });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'WALLET_NOT_LINKED', details: { senders: [stranger.address.toLowerCase()] } });
    await unchanged();
  });

  it('a transfer from a wallet not linked yet is kept on its order (status, hash, sender) and credited once that wallet is linked, even after the order expired', async () => {
    const owner = devnetAccount(14);
    const later = devnetAccount(13);
    const { client, accountId } = await signedIn(owner);
    const o = await order(client, { kind: 'pack', item: 'credits-1k', chain: 'ethereum' });
    const hash = await transferToken(devnet.manifest, later, usdc, treasury, BigInt(o.amount));
    await mine(2);
    const refused = await client.post(`/api/orders/${o.id}/submit`, { tx_hash: hash });
    expect(refused.body.error).toMatchObject({ code: 'WALLET_NOT_LINKED', details: { senders: [later.address.toLowerCase()], order: o.id, tx_hash: hash } });
    // The page can show it and claim it: the order keeps the hash and says who sent it.
    const kept = (await client.get(`/api/orders/${o.id}`)).body.order;
    expect(kept).toMatchObject({ status: 'submitted', tx_hash: hash, last_error: `wallet_not_linked:${later.address.toLowerCase()}` });
    const before = (await accountRow(accountId)).balance;
    // The order's own expiry passes meanwhile; a hash recorded in time may still be claimed.
    await db.query("UPDATE payment_orders SET expires_at = now() - interval '1 second' WHERE id = $1", [o.id]);
    // Linking is proving the wallet by its signature.
    const nonce = (await client.get('/api/wallets/nonce')).body;
    const message = siweMessage(later, nonce);
    expect((await client.post('/api/wallets', { family: 'evm', message, signature: await later.signMessage({ message }) })).status).toBeLessThan(300);
    const claimed = await client.post(`/api/orders/${o.id}/submit`, { tx_hash: hash });
    expect(claimed.status, JSON.stringify(claimed.body)).toBe(200);
    expect((await accountRow(accountId)).balance).toBe(before + 1000);
    expect((await client.post(`/api/orders/${o.id}/submit`, { tx_hash: hash })).body.error.code).toBe('PAYMENT_ALREADY_CREDITED');
  });

  it('unknown order, another account’s order, expired order, malformed hash, unconfigured chain, unknown plan', async () => {
    const buyer = await theBuyer();
    const hash = await transferToken(devnet.manifest, payer, usdc, treasury, 29_000_000n);
    await mine(2);
    const unknown = await buyer.client.post(`/api/orders/${randomUUID()}/submit`, { tx_hash: hash });
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'ORDER_NOT_FOUND']);

    const other = await signedIn(devnetAccount(14));
    const theirs = await order(other.client);
    const foreign = await buyer.client.post(`/api/orders/${theirs.id}/submit`, { tx_hash: hash });
    expect([foreign.status, foreign.body.error.code]).toEqual([404, 'ORDER_NOT_FOUND']);

    const o = await order(buyer.client);
    await db.query("UPDATE payment_orders SET expires_at = now() - interval '1 second' WHERE id = $1", [o.id]);
    const expired = await buyer.client.post(`/api/orders/${o.id}/submit`, { tx_hash: hash });
    expect([expired.status, expired.body.error.code]).toEqual([410, 'ORDER_EXPIRED']);
    expect((await buyer.client.get(`/api/orders/${o.id}`)).body.order.status).toBe('expired');

    const fresh = await order(buyer.client);
    for (const bad of ['0x1234', 'not a hash', `${hash}00`]) {
      const res = await buyer.client.post(`/api/orders/${fresh.id}/submit`, { tx_hash: bad });
      expect([res.status, res.body.error.code]).toEqual([400, 'INVALID_PARAMS']);
    }
    const polygon = await buyer.client.post('/api/orders', { kind: 'plan', item: 'basic', chain: 'polygon' });
    expect([polygon.status, polygon.body.error.code]).toEqual([400, 'CHAIN_NOT_CONFIGURED']);
    const free = await buyer.client.post('/api/orders', { kind: 'plan', item: 'free', chain: 'ethereum' });
    expect([free.status, free.body.error.code]).toEqual([404, 'NOT_FOUND']);
    expect(await paymentsFor(hash)).toBe(0);
    await unchanged();
  });

  it('a reorg before confirmation credits nothing: the transaction dropped from the chain is never credited', async () => {
    const buyer = await theBuyer();
    const o = await order(buyer.client);
    const c = devnetClients(devnet.manifest);
    const snapshot = await c.test.snapshot();
    const hash = await transferToken(devnet.manifest, payer, usdc, treasury, BigInt(o.amount));
    const early = await buyer.client.post(`/api/orders/${o.id}/submit`, { tx_hash: hash });
    expect(early.body.error).toMatchObject({ code: 'PAYMENT_UNCONFIRMED', details: { confirmations: 1 } });
    // The block holding it is replaced by a longer branch without it.
    await c.test.revert({ id: snapshot });
    await mine(3);
    const after = await buyer.client.post(`/api/orders/${o.id}/submit`, { tx_hash: hash });
    expect(after.body.error).toMatchObject({ code: 'PAYMENT_UNCONFIRMED', details: { confirmations: 0 } });
    expect(await paymentsFor(hash)).toBe(0);
    await unchanged();
  });
});

describe('the node being down', () => {
  it('answers 503 and nothing is credited; verification resumes on its own when the node returns', async () => {
    const { client, accountId } = await signedIn(devnetAccount(15), viaProxy.url);
    // Fund the new payer from the faucet payer, so it pays from its own linked wallet.
    const fresh = devnetAccount(15);
    await transferToken(devnet.manifest, payer, usdc, fresh.address, 100_000_000n);
    await devnetClients(devnet.manifest).test.setBalance({ address: fresh.address, value: 10n ** 20n });
    const o = await order(client, { kind: 'plan', item: 'pro', chain: 'base' });
    const hash = await transferToken(devnet.manifest, fresh, usdc, getAddress(o.treasury), BigInt(o.amount));
    proxy.down = true;
    const res = await client.post(`/api/orders/${o.id}/submit`, { tx_hash: hash });
    expect(res.status).toBe(503);
    expect(res.body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { provider: 'rpc:base', retrying: true } });
    // The sweep (every 200 ms) retries against the down node at least twice more, crediting nothing.
    const refused = proxy.refused;
    await expect.poll(() => proxy.refused, { timeout: 10_000, interval: 50 }).toBeGreaterThanOrEqual(refused + 2);
    expect((await accountRow(accountId)).plan).toBe('free');
    // Each failed check is counted by chain (CryptomcpPaymentVerificationFailing warns on it).
    const metrics = await (await fetch(`http://127.0.0.1:${viaProxy.metricsPort}/metrics`)).text();
    expect(Number(/cryptomcp_payments_verification_errors_total\{chain="base"\} (\d+)/.exec(metrics)?.[1] ?? 0)).toBeGreaterThanOrEqual(3);
    proxy.down = false;
    await expect.poll(async () => (await client.get(`/api/orders/${o.id}`)).body.order.status, { timeout: 10_000, interval: 100 }).toBe('paid');
    expect(await accountRow(accountId)).toMatchObject({ plan: 'pro', balance: 15000 });
    expect(await paymentsFor(hash)).toBe(1);
  });
});

describe('what a payment buys', () => {
  const at = (d: Date, ms: number) => new Date(d.getTime() + ms);

  it('top-up credits are spent after the plan allowance and survive renewal; the same plan extends by a month; an unpaid period ends on free with no second free grant', async () => {
    const { client, accountId } = await signedIn(devnetAccount(16));
    const wallet = devnetAccount(16);
    await transferToken(devnet.manifest, payer, usdc, wallet.address, 200_000_000n);
    await devnetClients(devnet.manifest).test.setBalance({ address: wallet.address, value: 10n ** 20n });
    const pay = async (body: Record<string, string>) => {
      const o = await order(client, body);
      const hash = await transferToken(devnet.manifest, wallet, usdc, treasury, BigInt(o.amount));
      await mine(1);
      const res = await client.post(`/api/orders/${o.id}/submit`, { tx_hash: hash });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    };
    await pay({ kind: 'plan', item: 'basic', chain: 'ethereum' });
    await pay({ kind: 'pack', item: 'credits-1k', chain: 'ethereum' });
    expect(await accountRow(accountId)).toMatchObject({ plan: 'basic', balance: 6000, topup: 1000 });
    const first = await accountRow(accountId);

    // 5,500 credits spent: the 5,000 of the plan first, then 500 of the top-up.
    const spendId = randomUUID();
    const spend = await db.query<{ outcome: string; balance: number }>("SELECT outcome, balance FROM meter_reserve($1, $2, 5500, true, 'market-intelligence', 'x', NULL)", [accountId, spendId]);
    expect(spend.rows[0]).toEqual({ outcome: 'ok', balance: 500 });
    expect(await accountRow(accountId)).toMatchObject({ balance: 500, topup: 500 });
    // A refund gives the top-up part back as top-up credits.
    await db.query("SELECT meter_refund($1, 'test')", [spendId]);
    expect(await accountRow(accountId)).toMatchObject({ balance: 6000, topup: 1000 });
    await db.query("SELECT meter_reserve($1, $2, 5500, true, 'market-intelligence', 'x', NULL)", [accountId, randomUUID()]);
    expect(await accountRow(accountId)).toMatchObject({ balance: 500, topup: 500 });

    // The same plan bought during the period: one more month of paid time; the period and balance run on.
    await pay({ kind: 'plan', item: 'basic', chain: 'ethereum' });
    const extended = await accountRow(accountId);
    expect(extended).toMatchObject({ plan: 'basic', balance: 500, topup: 500 });
    expect(extended.period_end!.getTime()).toBe(first.period_end!.getTime());
    const added = extended.paid_until!.getTime() - first.paid_until!.getTime();
    expect(added).toBeGreaterThan(27 * 86400_000);
    expect(added).toBeLessThan(32 * 86400_000);

    // The monthly renewal (still paid): the allowance is reset and the top-up credits are kept.
    expect(await renew(accountId, at(first.period_end!, 1000))).toBe(true);
    expect(await accountRow(accountId)).toMatchObject({ plan: 'basic', balance: 5500, topup: 500 });

    // Past the paid time: back to free, the top-up credits only (no second 150-credit grant).
    expect(await renew(accountId, at(extended.paid_until!, 1000))).toBe(true);
    const lapsed = await accountRow(accountId);
    expect(lapsed).toMatchObject({ plan: 'free', balance: 500, topup: 500, paid_until: null, period_end: null });
    const rows = await db.query<{ kind: string }>('SELECT kind FROM credit_ledger WHERE account_id = $1 ORDER BY id', [accountId]);
    expect(rows.rows.map((r) => r.kind).filter((k) => k === 'grant')).toHaveLength(1);
    expect(rows.rows.at(-1)!.kind).toBe('lapse');
    expect(await ledgerSum(db, accountId)).toBe(500);
    // And nothing renews it again.
    expect(await renew(accountId, at(extended.paid_until!, 90 * 86400_000))).toBe(false);
  });

  it('the metering statement lapses a paid plan lazily too (free plan limits apply at once)', async () => {
    const { client, accountId } = await signedIn(devnetAccount(17));
    const wallet = devnetAccount(17);
    await transferToken(devnet.manifest, payer, usdc, wallet.address, 100_000_000n);
    await devnetClients(devnet.manifest).test.setBalance({ address: wallet.address, value: 10n ** 20n });
    const o = await order(client);
    const hash = await transferToken(devnet.manifest, wallet, usdc, treasury, BigInt(o.amount));
    await mine(1);
    expect((await client.post(`/api/orders/${o.id}/submit`, { tx_hash: hash })).status).toBe(200);
    const paidUntil = (await accountRow(accountId)).paid_until!;
    const res = await db.query<{ outcome: string; plan: string; balance: number }>(
      "SELECT outcome, plan, balance FROM meter_reserve($1, $2, 1, true, 'market-intelligence', 'x', NULL, $3)",
      [accountId, randomUUID(), at(paidUntil, 1000)],
    );
    expect(res.rows[0]).toEqual({ outcome: 'insufficient_credits', plan: 'free', balance: 0 });
    expect(await ledgerSum(db, accountId)).toBe(0);
  });

  async function renew(accountId: string, now: Date): Promise<boolean> {
    return (await db.query<{ r: boolean }>('SELECT account_renew_if_due($1, $2) AS r', [accountId, now])).rows[0]!.r;
  }
});

describe('receipts', () => {
  it('Usage lists purchases with chain and hash, as CSV and as a printable receipt page', async () => {
    const buyer = await theBuyer();
    // The Basic plan bought above; bought here when this test runs alone.
    if (!(await buyer.client.get('/api/purchases')).body.purchases.some((p: { kind: string }) => p.kind === 'plan')) {
      const o = await order(buyer.client);
      const hash = await transferToken(devnet.manifest, payer, usdc, treasury, BigInt(o.amount));
      await mine(1);
      expect((await buyer.client.post(`/api/orders/${o.id}/submit`, { tx_hash: hash })).status).toBe(200);
    }
    const list = await buyer.client.get('/api/purchases');
    expect(list.status).toBe(200);
    const plan = list.body.purchases.find((p: { kind: string }) => p.kind === 'plan');
    expect(plan).toMatchObject({ item: 'basic', credits: 5000, price_cents: 2900, chain: 'ethereum', amount: '29000000', amount_display: '29.00' });
    expect(plan.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    const csv = await buyer.client.get('/api/purchases.csv');
    expect(csv.headers.get('content-type')).toMatch(/text\/csv/);
    expect(csv.body as string).toContain(`plan,basic,5000,29.00,ethereum,${usdc.toLowerCase()},29.00,${payer.address.toLowerCase()},${plan.tx_hash}`);
    const page = await buyer.client.get(`/api/purchases/${plan.id}/receipt`);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.body as string).toContain(plan.tx_hash);
    expect(page.body as string).toContain('USD 29.00');
    // What a business files: the seller (its address and the wallet paid), the buyer's wallet, the item, amount and chain.
    for (const part of ['<main>', 'Seller', buyer.client.base, treasury.toLowerCase(), payer.address.toLowerCase(), 'Basic plan, one month', '29.00 USDC', 'Ethereum', 'prefers-color-scheme:dark', 'href="/app/plans"']) {
      expect(page.body as string).toContain(part);
    }
    expect((await buyer.client.get('/api/purchases/999999/receipt')).status).toBe(404);
  });
});
