// The free allowance is once per wallet, for ever (issue 30), replayed over HTTP as the attacker
// did: unlink a wallet, sign in with it again (a new account), link it back and merge that account
// in — with two signatures the attacker owns. Before, each round added 150 credits (150 → 1,200).
// Now the new account opens with 0 credits and says so, and a merge never moves a free allowance,
// so no round adds anything; a fresh wallet's own allowance stays on its own account too.
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { balanceOf, startTestService } from '../helpers/service.ts';
import { CookieClient, signInEvm, signInSolana, signStatement, siweMessage, solanaWallet, type Signer } from './helpers.ts';

let db: TestDatabase;
let service: RunningService;

beforeAll(async () => {
  db = await createTestDatabase();
  service = await startTestService(db.url, { MCP_SERVERS: 'market-intelligence', DASHBOARD_SIGN_IN_LIMIT: '10000', DASHBOARD_SIGN_IN_WALLET_LIMIT: '10000' });
});

afterAll(async () => {
  await service?.close();
  await db?.drop();
});

// After every test: each account's balance is its grants plus its ledger (the opening grant is a
// ledger row), and no reservation is left unresolved.
afterEach(async () => {
  const off = await db.query(
    `SELECT a.id, a.balance, coalesce(sum(l.delta), 0)::int AS ledger FROM accounts a LEFT JOIN credit_ledger l ON l.account_id = a.id
      GROUP BY a.id HAVING a.balance <> coalesce(sum(l.delta), 0)`,
  );
  expect(off.rows).toEqual([]);
  const open = await db.query(`SELECT request_id FROM credit_ledger WHERE kind = 'reserve' AND resolved_at IS NULL`);
  expect(open.rows).toEqual([]);
});

const fresh = () => privateKeyToAccount(generatePrivateKey());

/** From `client`'s session, proves `signer`'s wallet for linking; answers the HTTP result. */
async function link(client: CookieClient, signer: Signer) {
  if (signer.kind === 'solana') return (await signInSolana(client, signer.wallet, '/api/wallets/nonce', '/api/wallets')).res;
  const nonce = (await client.get('/api/wallets/nonce')).body;
  const message = siweMessage(signer.account, nonce);
  return client.post('/api/wallets', { family: 'evm', message, signature: await signer.account.signMessage({ message }) });
}

/** Links `theirs` from `client`'s session and merges its account in, both wallets signing. */
async function linkAndMerge(client: CookieClient, mine: Signer, theirs: Signer) {
  const offered = await link(client, theirs);
  expect(offered.status, JSON.stringify(offered.body)).toBe(409);
  const offer = offered.body.error.details.offer;
  const merged = await client.post('/api/merges', {
    offer_id: offer.id,
    signatures: [await signStatement(client, mine, offer.statement), await signStatement(client, theirs, offer.statement)],
  });
  expect(merged.status, JSON.stringify(merged.body)).toBe(200);
  return { offer, merged: merged.body };
}

async function signIn(signer: Signer) {
  const client = new CookieClient(service.url);
  const { res } = signer.kind === 'evm' ? await signInEvm(client, signer.account) : await signInSolana(client, signer.wallet);
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return { client, res };
}

describe('the wallet-cycling farm', () => {
  it('unlink, sign in again, link and merge back, three rounds with each wallet: the balance never gains a second 150', async () => {
    const w1: Signer = { kind: 'evm', account: fresh() };
    const w2: Signer = { kind: 'solana', wallet: solanaWallet() };
    const first = await signIn(w1);
    expect(first.res.status).toBe(201);
    expect(first.res.body.account).toMatchObject({ balance: 150, free_allowance: 'granted' });
    const a = first.res.body.account.id as string;
    // The second wallet is linked to the account (it never had an account of its own).
    expect((await link(first.client, w2)).status).toBe(201);

    for (let round = 0; round < 3; round++) {
      for (const [cycled, stays] of [
        [w1, w2],
        [w2, w1],
      ] as const) {
        // Signed in with the wallet that stays, remove the other one.
        const keeper = await signIn(stays);
        expect(keeper.res.body.account.id).toBe(a);
        const address = cycled.kind === 'evm' ? cycled.account.address.toLowerCase() : cycled.wallet.address;
        const unlinked = await keeper.client.post('/api/wallets/unlink', { family: cycled.kind, address });
        expect(unlinked.status, JSON.stringify(unlinked.body)).toBe(200);

        // Signing in with it again opens a new account — with nothing, and the answer says why.
        const again = await signIn(cycled);
        expect(again.res.status).toBe(201);
        expect(again.res.body.account).toMatchObject({ created: true, plan: 'free', balance: 0, free_allowance: 'withheld' });
        const b = again.res.body.account.id as string;
        expect(b).not.toBe(a);
        expect((await again.client.get('/api/plans')).body.free_allowance).toBe('withheld');

        // Linking it back and merging that account in adds nothing.
        const { merged } = await linkAndMerge(keeper.client, stays, cycled);
        expect(merged.merged).toMatchObject({ source_account_id: b, target_account_id: a, credits: 0 });
        expect(await balanceOf(db, a)).toBe(150);
        expect(await balanceOf(db, b)).toBe(0);
      }
    }
    const grants = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM credit_ledger WHERE kind = 'grant' AND delta > 0 AND account_id IN (
      SELECT $1::uuid UNION SELECT source_account_id FROM account_merges WHERE target_account_id = $1)`, [a]);
    expect(grants.rows[0]!.n).toBe(1);
  });

  it('a fresh wallet has its own allowance once, but merging its account in does not bring it along', async () => {
    const w1: Signer = { kind: 'evm', account: fresh() };
    const a = await signIn(w1);
    const w3: Signer = { kind: 'evm', account: fresh() };
    const other = await signIn(w3);
    expect(other.res.body.account).toMatchObject({ created: true, balance: 150, free_allowance: 'granted' });
    const { merged, offer } = await linkAndMerge(a.client, w1, w3);
    expect(merged.merged).toMatchObject({ credits: 0, free_credits_not_moved: 150 });
    expect(merged.account.balance).toBe(150);
    // The merged account's ledger writes its free allowance off; the target's ledger gains nothing.
    const rows = await db.query<{ request_id: string; delta: number }>(
      `SELECT request_id, delta FROM credit_ledger WHERE request_id LIKE 'merge:' || $1 || ':%' ORDER BY request_id`,
      [offer.id],
    );
    expect(rows.rows).toEqual([
      { request_id: `merge:${offer.id}:free`, delta: -150 },
      { request_id: `merge:${offer.id}:in`, delta: 0 },
      { request_id: `merge:${offer.id}:out`, delta: 0 },
    ]);
    // And w3, unlinked later and signing in again, gets nothing either.
    await a.client.post('/api/wallets/unlink', { family: 'evm', address: w3.kind === 'evm' ? w3.account.address.toLowerCase() : '' });
    const again = await signIn(w3);
    expect(again.res.body.account).toMatchObject({ created: true, balance: 0, free_allowance: 'withheld' });
  });

  it('a wallet opening a separate account from a link offer gets the allowance once, and only once', async () => {
    const a = await signIn({ kind: 'evm', account: fresh() });
    const s = solanaWallet();
    const offered = (await signInSolana(a.client, s)).res;
    expect(offered.status).toBe(202);
    const separate = await a.client.post(`/api/wallets/offers/${offered.body.offer.id}/separate-account`);
    expect(separate.body.account).toMatchObject({ created: true, balance: 150, free_allowance: 'granted' });
    expect((await db.query('SELECT 1 FROM wallet_free_grants WHERE family = $1 AND address = $2', ['solana', s.address])).rowCount).toBe(1);
  });
});
