// One account, several wallets (issue 24), against the real service and PostgreSQL: a wallet with
// no account met at sign-in while signed in is offered for linking (no second account appears); a
// wallet with an account of its own can be merged into the signed-in one with a signature from
// both wallets over the merge statement, moving balance, keys and wallets with the ledger invariant
// (balance = sum of the ledger) holding for both accounts, also while calls are being metered; a
// wallet can be unlinked, never the last one.
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountIdByWallet } from '../../server/accounts/accounts.ts';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { balanceOf, ledgerSum, post, startTestService, toolCall } from '../helpers/service.ts';
import { eventually } from '../helpers/wait.ts';
import { CookieClient, signInEvm, signInSolana, signStatement, siweMessage, solanaWallet, type SolanaTestWallet } from './helpers.ts';

let db: TestDatabase;
let service: RunningService;

beforeAll(async () => {
  db = await createTestDatabase();
  service = await startTestService(db.url, { MCP_SERVERS: 'market-intelligence', DASHBOARD_SIGN_IN_LIMIT: '10000' });
});

afterAll(async () => {
  await service?.close();
  await db?.drop();
});

const fresh = () => privateKeyToAccount(generatePrivateKey());

/** Signs in with A (EVM) in one browser, and with S (Solana) in another: two accounts. */
async function twoAccounts() {
  const a = fresh();
  const s = solanaWallet();
  const mine = new CookieClient(service.url);
  const x = (await signInEvm(mine, a)).res.body.account.id as string;
  const theirs = new CookieClient(service.url);
  const y = (await signInSolana(theirs, s)).res.body.account.id as string;
  return { a, s, mine, theirs, x, y };
}

/** Links S from A's session: refused with a merge offer, since S has its own account. */
async function mergeOffer(mine: CookieClient, s: SolanaTestWallet) {
  const res = (await signInSolana(mine, s, '/api/wallets/nonce', '/api/wallets')).res;
  expect(res.status).toBe(409);
  expect(res.body.error.code).toBe('WALLET_IN_USE');
  return res.body.error.details.offer;
}

async function invariantHolds(accountId: string): Promise<void> {
  const balance = await balanceOf(db, accountId);
  expect(balance).toBeGreaterThanOrEqual(0);
  expect(await ledgerSum(db, accountId)).toBe(balance);
}

describe('a wallet with no account, met at sign-in while signed in', () => {
  it('is offered for linking instead of opening a second account; accepting links it', async () => {
    const client = new CookieClient(service.url);
    const first = await signInEvm(client, fresh());
    const x = first.res.body.account.id;
    const s = solanaWallet();
    const accountsBefore = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM accounts')).rows[0]!.n;

    const { res } = await signInSolana(client, s);
    expect(res.status).toBe(202);
    expect(res.body.offer).toMatchObject({ kind: 'link', wallet: { family: 'solana', chain: 'solana', address: s.address } });
    expect((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM accounts')).rows[0]!.n).toBe(accountsBefore);
    expect(await accountIdByWallet(db, 'solana', s.address)).toBeUndefined();
    // Still signed in to the first account.
    expect((await client.get('/api/session')).body.account.id).toBe(x);

    const linked = await client.post(`/api/wallets/offers/${res.body.offer.id}/link`);
    expect(linked.status).toBe(201);
    expect(linked.body.wallets.map((w: { chain: string }) => w.chain)).toEqual(['ethereum', 'solana']);
    expect(await accountIdByWallet(db, 'solana', s.address)).toBe(x);
    // An offer is used once.
    const again = await client.post(`/api/wallets/offers/${res.body.offer.id}/link`);
    expect(again.status).toBe(410);
    expect(again.body.error.code).toBe('OFFER_EXPIRED');
  });

  it('can open a separate account instead, and the browser switches to it', async () => {
    const client = new CookieClient(service.url);
    const x = (await signInEvm(client, fresh())).res.body.account.id;
    const s = solanaWallet();
    const { res } = await signInSolana(client, s);
    expect(res.status).toBe(202);
    const separate = await client.post(`/api/wallets/offers/${res.body.offer.id}/separate-account`);
    expect(separate.status).toBe(201);
    client.csrf = separate.body.csrf_token;
    expect(separate.body.account).toMatchObject({ created: true, balance: 150 });
    expect(separate.body.account.id).not.toBe(x);
    expect((await client.get('/api/session')).body.account.id).toBe(separate.body.account.id);
  });

  it('an offer belongs to the session that proved the wallet', async () => {
    const client = new CookieClient(service.url);
    await signInEvm(client, fresh());
    const { res } = await signInSolana(client, solanaWallet());
    const other = new CookieClient(service.url);
    await signInEvm(other, fresh());
    const stolen = await other.post(`/api/wallets/offers/${res.body.offer.id}/link`);
    expect(stolen.status).toBe(410);
  });
});

describe('merging the account of a wallet into the signed-in one', () => {
  it('needs a signature from both wallets; then balance, keys and wallets move, the ledger records it and the invariant holds', async () => {
    const { a, s, mine, theirs, x, y } = await twoAccounts();
    // The other account has a key and has spent a credit with it.
    theirs.csrf = (await theirs.get('/api/session')).body.csrf_token;
    const key = (await theirs.post('/api/keys', { name: 'solana bot' })).body;
    const paid = await post(`${service.url}/mcp/market-intelligence`, toolCall('bench_echo', { message: 'hi' }), { 'x-api-key': key.plaintext });
    expect(paid.status).toBe(200);
    const [bx, by] = [await balanceOf(db, x), await balanceOf(db, y)];
    expect(by).toBe(149);
    // The gateway's log of that call (written in batches) is there before the merge.
    for (const until = Date.now() + 10_000; Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
      if ((await db.query('SELECT 1 FROM request_log WHERE key_id = $1', [key.key.id])).rowCount) break;
    }

    const offer = await mergeOffer(mine, s);
    expect(offer).toMatchObject({ kind: 'merge', source: { id: y, balance: by, active_keys: 1, plan: 'free' } });
    expect(offer.statement).toContain(y);
    expect(offer.statement).toContain(x);

    // One wallet's signature is not enough, whichever it is; nor a message that states something else.
    const onlyS = await mine.post('/api/merges', {
      offer_id: offer.id,
      signatures: [await signStatement(mine, { kind: 'solana', wallet: s }, offer.statement), await signStatement(mine, { kind: 'solana', wallet: s }, offer.statement)],
    });
    expect(onlyS.body.error).toMatchObject({ code: 'MERGE_REFUSED', details: { reason: 'missing_signature' } });
    const onlyA = await mine.post('/api/merges', {
      offer_id: offer.id,
      signatures: [await signStatement(mine, { kind: 'evm', account: a }, offer.statement), await signStatement(mine, { kind: 'evm', account: a }, offer.statement)],
    });
    expect(onlyA.body.error.details.reason).toBe('missing_signature');
    const wrong = await mine.post('/api/merges', {
      offer_id: offer.id,
      signatures: [await signStatement(mine, { kind: 'evm', account: a }, 'Sign in to the cryptomcp dashboard.'), await signStatement(mine, { kind: 'solana', wallet: s }, offer.statement)],
    });
    expect(wrong.body.error.details.reason).toBe('wrong_statement');
    expect(await balanceOf(db, y)).toBe(by);

    const merged = await mine.post('/api/merges', {
      offer_id: offer.id,
      signatures: [await signStatement(mine, { kind: 'evm', account: a }, offer.statement), await signStatement(mine, { kind: 'solana', wallet: s }, offer.statement)],
    });
    expect(merged.status).toBe(200);
    // Both are free accounts: the other's free allowance stays behind (one per account); nothing else was bought.
    expect(merged.body.merged).toMatchObject({ source_account_id: y, target_account_id: x, credits: 0, free_credits_not_moved: by, keys: 1, wallets: 1, balance: bx });
    expect(merged.body.account.balance).toBe(bx);
    expect(merged.body.account.wallets.map((w: { address: string }) => w.address)).toEqual([a.address.toLowerCase(), s.address]);
    // The merge is in the target account's audit log, with the wallet merged in.
    const merge = (await mine.get('/api/audit')).body.entries.find((e: { action: string }) => e.action === 'account_merge');
    expect(merge).toMatchObject({ target: y, details: { wallet: `solana:${s.address}` }, wallet: { family: 'evm', address: a.address.toLowerCase() } });

    expect(await balanceOf(db, x)).toBe(bx);
    expect(await balanceOf(db, y)).toBe(0);
    await invariantHolds(x);
    await invariantHolds(y);
    const rows = await db.query<{ account_id: string; delta: number; kind: string; request_id: string }>(
      `SELECT account_id, delta, kind, request_id FROM credit_ledger WHERE request_id LIKE 'merge:' || $1 || ':%' ORDER BY delta, request_id`,
      [offer.id],
    );
    expect(rows.rows).toEqual([
      { account_id: y, delta: -by, kind: 'adjust', request_id: `merge:${offer.id}:free` },
      { account_id: x, delta: 0, kind: 'adjust', request_id: `merge:${offer.id}:in` },
      { account_id: y, delta: 0, kind: 'adjust', request_id: `merge:${offer.id}:out` },
    ]);

    // The key's logged requests and their daily counts moved with it.
    const usage = (await mine.get(`/api/usage/breakdown?days=1&key=${key.key.id}`)).body;
    expect(usage.daily).toEqual([expect.objectContaining({ requests: 1, ok: 1, credits: 1 })]);
    expect((await db.query('SELECT 1 FROM request_log_daily WHERE account_id = $1', [y])).rowCount).toBe(0);
    expect((await db.query('SELECT 1 FROM request_log WHERE account_id = $1', [y])).rowCount).toBe(0);

    // The key moved: it works and charges the merged-into account.
    const after = await post(`${service.url}/mcp/market-intelligence`, toolCall('bench_echo', { message: 'again' }), { 'x-api-key': key.plaintext });
    expect(after.status).toBe(200);
    expect(await balanceOf(db, x)).toBe(bx - 1);
    expect((await mine.get('/api/keys')).body.keys.map((k: { name: string }) => k.name)).toContain('solana bot');

    // The merged account is no longer a login: its session ended, and its wallet reaches the other account.
    expect((await theirs.get('/api/session')).status).toBe(401);
    expect((await signInSolana(new CookieClient(service.url), s)).res.body.account.id).toBe(x);
    // The offer is used: the same signatures cannot merge again.
    const replay = await mine.post('/api/merges', { offer_id: offer.id, signatures: [] });
    expect(replay.status).toBe(400);
    const reuse = await mine.post('/api/merges', {
      offer_id: offer.id,
      signatures: [await signStatement(mine, { kind: 'evm', account: a }, offer.statement), await signStatement(mine, { kind: 'solana', wallet: s }, offer.statement)],
    });
    expect(reuse.body.error.code).toBe('OFFER_EXPIRED');
  });

  it('while both accounts\' keys are being charged, no credit is lost or made: each balance equals its ledger and the total equals what was not spent', async () => {
    const { a, s, mine, theirs, x, y } = await twoAccounts();
    mine.csrf = (await mine.get('/api/session')).body.csrf_token;
    theirs.csrf = (await theirs.get('/api/session')).body.csrf_token;
    const keyX = (await mine.post('/api/keys', { name: 'x' })).body.plaintext;
    const keyY = (await theirs.post('/api/keys', { name: 'y' })).body.plaintext;
    const before = await balanceOf(db, x);
    const offer = await mergeOffer(mine, s);

    let stop = false;
    const url = `${service.url}/mcp/market-intelligence`;
    const hammer = async (key: string) => {
      let n = 0;
      while (!stop) {
        const r = await post(url, toolCall('bench_echo', { message: String(n++) }), { 'x-api-key': key });
        if (r.status !== 200 && r.status !== 429 && r.status !== 402 && r.status !== 403) throw new Error(`unexpected ${r.status}`);
      }
    };
    const load = [hammer(keyX), hammer(keyY), hammer(keyY)];
    // A call of the other account still open makes the merge wait: it is retried, as the page does.
    let result;
    for (let attempt = 0; attempt < 100; attempt++) {
      result = await mine.post('/api/merges', {
        offer_id: offer.id,
        signatures: [await signStatement(mine, { kind: 'evm', account: a }, offer.statement), await signStatement(mine, { kind: 'solana', wallet: s }, offer.statement)],
      });
      if (result.status === 200 || result.body.error?.details?.reason !== 'calls_in_flight') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(result!.status).toBe(200);
    // Calls keep coming for a while after the merge (part of the case: they go to the merged account).
    await new Promise((r) => setTimeout(r, 300));
    stop = true;
    await Promise.all(load);
    // Every call is answered: write the settlements still queued and wait until no reservation
    // is open, then count what was charged (reservations not refunded).
    await service.meter.flushSettled();
    await eventually(
      async () =>
        (await db.query(`SELECT 1 FROM credit_ledger WHERE account_id = ANY ($1::uuid[]) AND kind = 'reserve' AND resolution IS NULL`, [[x, y]])).rowCount === 0,
      10_000,
      'every reservation resolved',
    );
    const charged = await db.query<{ n: number }>(
      `SELECT coalesce(-sum(delta), 0)::int AS n FROM credit_ledger WHERE account_id = ANY ($1::uuid[]) AND kind IN ('reserve', 'refund')`,
      [[x, y]],
    );
    await invariantHolds(x);
    await invariantHolds(y);
    expect(await balanceOf(db, y)).toBe(0);
    // What x did not spend, plus nothing of y: y's free allowance is not moved (one per account).
    const spentByX = await db.query<{ n: number }>(
      `SELECT coalesce(-sum(delta), 0)::int AS n FROM credit_ledger WHERE account_id = $1 AND kind IN ('reserve', 'refund')`,
      [x],
    );
    expect(await balanceOf(db, x)).toBe(before - spentByX.rows[0]!.n);
    expect(charged.rows[0]!.n).toBeGreaterThanOrEqual(spentByX.rows[0]!.n);
    // Nothing was reserved on the merged account after the merge (its keys had moved, and it is suspended).
    const late = await db.query(
      `SELECT 1 FROM credit_ledger l JOIN account_merges m ON m.source_account_id = l.account_id
        WHERE l.account_id = $1 AND l.kind = 'reserve' AND l.delta <> 0 AND l.created_at > m.merged_at`,
      [y],
    );
    expect(late.rowCount).toBe(0);
  });

  it('bought top-up credits move as top-up credits: the target keeps them at its renewals, and both ledgers still sum to the balances', async () => {
    const { a, s, mine, x, y } = await twoAccounts();
    // The other account bought a pack of 500 credits (as order_credit writes it: balance and topup up, one purchase row).
    await db.query(`UPDATE accounts SET balance = balance + 500, topup = topup + 500 WHERE id = $1`, [y]);
    await db.query(
      `INSERT INTO credit_ledger (account_id, request_id, kind, delta, balance_after, note, chain, tx_hash)
       SELECT id, 'order:test-pack', 'purchase', 500, balance, 'pack of 500', 'base', '0x' || repeat('ab', 32) FROM accounts WHERE id = $1`,
      [y],
    );
    const [bx, by] = [await balanceOf(db, x), await balanceOf(db, y)];
    const offer = await mergeOffer(mine, s);
    const merged = await mine.post('/api/merges', {
      offer_id: offer.id,
      signatures: [await signStatement(mine, { kind: 'evm', account: a }, offer.statement), await signStatement(mine, { kind: 'solana', wallet: s }, offer.statement)],
    });
    expect(merged.status).toBe(200);
    const topups = await db.query<{ id: string; balance: number; topup: number }>('SELECT id, balance, topup FROM accounts WHERE id = ANY($1::uuid[])', [[x, y]]);
    const byId = new Map(topups.rows.map((r) => [r.id, r]));
    // Only the bought credits move; the rest of y's free allowance stays behind.
    expect(byId.get(x)).toMatchObject({ balance: bx + 500, topup: 500 });
    expect(by).toBeGreaterThan(500);
    expect(byId.get(y)).toMatchObject({ balance: 0, topup: 0 });
    await invariantHolds(x);
    await invariantHolds(y);
    const rows = await db.query<{ account_id: string; topup_delta: number | null }>(
      `SELECT account_id, topup_delta FROM credit_ledger WHERE request_id LIKE 'merge:' || $1 || ':%' ORDER BY delta`,
      [offer.id],
    );
    expect(rows.rows).toEqual([
      { account_id: y, topup_delta: -500 },
      { account_id: y, topup_delta: null }, // merge:…:free, the free allowance left (-150)
      { account_id: x, topup_delta: 500 },
    ]);
  });

  it('two merges of one offer at once: exactly one happens', async () => {
    const { a, s, mine, x, y } = await twoAccounts();
    const offer = await mergeOffer(mine, s);
    const bodies = [];
    for (let i = 0; i < 4; i++) {
      bodies.push({
        offer_id: offer.id,
        signatures: [await signStatement(mine, { kind: 'evm', account: a }, offer.statement), await signStatement(mine, { kind: 'solana', wallet: s }, offer.statement)],
      });
    }
    const results = await Promise.all(bodies.map((b) => mine.post('/api/merges', b)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    // x keeps its own 150; y's free 150 is not a second allowance for x.
    expect(await balanceOf(db, x)).toBe(150);
    await invariantHolds(x);
    await invariantHolds(y);
  });

  it('is refused when the keys together would exceed the plan\'s cap, and nothing moves', async () => {
    const { a, s, mine, theirs, x, y } = await twoAccounts();
    mine.csrf = (await mine.get('/api/session')).body.csrf_token;
    theirs.csrf = (await theirs.get('/api/session')).body.csrf_token;
    for (const n of ['1', '2']) await mine.post('/api/keys', { name: n });
    for (const n of ['3', '4']) await theirs.post('/api/keys', { name: n });
    const offer = await mergeOffer(mine, s);
    // Said with the offer, before either wallet is asked to sign.
    expect(offer.source.blocked).toMatchObject({ reason: 'key_limit', active_keys: 4, max_keys: 3, message: expect.stringContaining('Revoke 1 first') });
    const res = await mine.post('/api/merges', {
      offer_id: offer.id,
      signatures: [await signStatement(mine, { kind: 'evm', account: a }, offer.statement), await signStatement(mine, { kind: 'solana', wallet: s }, offer.statement)],
    });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'MERGE_REFUSED', details: { reason: 'key_limit', active_keys: 4, max_keys: 3 } });
    expect(await balanceOf(db, y)).toBe(150);
    expect(await accountIdByWallet(db, 'solana', s.address)).toBe(y);
    expect((await mine.get('/api/keys')).body.keys).toHaveLength(2);
    await invariantHolds(x);
  });
});

describe('unlinking a wallet', () => {
  it('removes a wallet and ends its sessions; never the last wallet, nor the one signed in with', async () => {
    const a = fresh();
    const s = solanaWallet();
    const client = new CookieClient(service.url);
    await signInEvm(client, a);
    expect((await signInSolana(client, s, '/api/wallets/nonce', '/api/wallets')).res.status).toBe(201);
    const viaS = new CookieClient(service.url);
    await signInSolana(viaS, s);

    const self = await client.post('/api/wallets/unlink', { family: 'evm', address: a.address });
    expect(self.body.error).toMatchObject({ code: 'UNLINK_REFUSED', details: { reason: 'current_wallet' } });

    const res = await client.post('/api/wallets/unlink', { family: 'solana', address: s.address });
    expect(res.status).toBe(200);
    expect(res.body.wallets.map((w: { chain: string }) => w.chain)).toEqual(['ethereum']);
    expect((await viaS.get('/api/session')).status).toBe(401);
    expect(await accountIdByWallet(db, 'solana', s.address)).toBeUndefined();

    const last = await client.post('/api/wallets/unlink', { family: 'evm', address: a.address });
    expect(last.body.error).toMatchObject({ code: 'UNLINK_REFUSED', details: { reason: 'last_wallet' } });
    // Audited: the link, the Solana wallet's own sign-in, the unlink (refusals are not actions).
    const actions = (await client.get('/api/audit')).body.entries.map((e: { action: string; target: string | null }) => `${e.action} ${e.target ?? ''}`.trim());
    expect(actions.filter((x: string) => !x.startsWith('sign_in'))).toEqual([`wallet_unlink solana:${s.address}`, `wallet_link solana:${s.address}`]);
    expect(actions.filter((x: string) => x.startsWith('sign_in'))).toHaveLength(2);
  });

  it('of two sessions unlinking each other\'s wallet at once, one wallet always stays', async () => {
    const a = fresh();
    const b = fresh();
    const viaA = new CookieClient(service.url);
    const x = (await signInEvm(viaA, a)).res.body.account.id;
    const nonce = (await viaA.get('/api/wallets/nonce')).body;
    const message = siweMessage(b, nonce);
    expect((await viaA.post('/api/wallets', { family: 'evm', message, signature: await b.signMessage({ message }) })).status).toBe(201);
    const viaB = new CookieClient(service.url);
    await signInEvm(viaB, b);
    const [r1, r2] = await Promise.all([
      viaA.post('/api/wallets/unlink', { family: 'evm', address: b.address }),
      viaB.post('/api/wallets/unlink', { family: 'evm', address: a.address }),
    ]);
    // The loser is refused (last wallet) or finds its own session ended by the winner's unlink.
    expect([r1.status, r2.status].filter((st) => st === 200)).toHaveLength(1);
    const left = await db.query('SELECT 1 FROM wallets WHERE account_id = $1', [x]);
    expect(left.rowCount).toBe(1);
  });
});
