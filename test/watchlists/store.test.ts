// The watchlist store on a real PostgreSQL: the per-account cap holds under concurrent adds,
// re-adding is idempotent, and a mark moves only from the value it was read at.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountCreate } from '../../server/accounts/accounts.ts';
import { SqlWatchStore } from '../../server/watchlists/store.ts';
import { MAX_WATCHES_PER_ACCOUNT } from '../../server/watchlists/types.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { nextWallet } from '../helpers/service.ts';

let db: TestDatabase;
let store: SqlWatchStore;
const address = (i: number) => `0x${i.toString(16).padStart(40, '0')}`;
const newAccount = async () => (await accountCreate(db, { wallet: nextWallet(), chain: 'ethereum', plan: 'free' })).id;

beforeAll(async () => {
  db = await createTestDatabase();
  store = new SqlWatchStore(db);
});
afterAll(async () => {
  await db?.drop();
});

describe('SqlWatchStore', () => {
  it(`concurrent adds at the cap: exactly one of them gets the last of ${MAX_WATCHES_PER_ACCOUNT} places`, async () => {
    // Several rounds of many racers: without the account lock, two adds that both count 49 before
    // either commits would both insert (this fails within a round or two when the lock is removed).
    for (let round = 0; round < 5; round++) {
      const account = await newAccount();
      await db.query(
        `INSERT INTO watches (account_id, chain, address, last_checked_block) SELECT $1, 'ethereum', lpad(to_hex(i), 42, '0x' || repeat('0', 40)), 1 FROM generate_series(1, $2) AS i`,
        [account, MAX_WATCHES_PER_ACCOUNT - 1],
      );
      const outcomes = await Promise.all(Array.from({ length: 20 }, (_, k) => store.add(account, { chain: 'ethereum', address: address(1000 + k), note: undefined, block: 1 })));
      expect(outcomes.filter((o) => o.ok)).toHaveLength(1);
      expect(outcomes.filter((o) => !o.ok && o.code === 'LIMIT_REACHED')).toHaveLength(19);
      expect(await store.list(account)).toHaveLength(MAX_WATCHES_PER_ACCOUNT);
    }
  });

  it('adding the same address again returns the same watch with its mark, replacing the note only when one is given', async () => {
    const account = await newAccount();
    const first = await store.add(account, { chain: 'base', address: address(7), note: 'first', block: 10 });
    const again = await store.add(account, { chain: 'base', address: address(7), note: undefined, block: 99 });
    const renamed = await store.add(account, { chain: 'base', address: address(7), note: 'second', block: 99 });
    expect(first).toMatchObject({ ok: true, created: true, watch: { last_checked_block: 10, note: 'first' } });
    expect(again).toMatchObject({ ok: true, created: false, watch: { last_checked_block: 10, note: 'first' } });
    expect(renamed).toMatchObject({ ok: true, created: false, watch: { last_checked_block: 10, note: 'second' } });
    // The same address on another chain is another watch.
    expect(await store.add(account, { chain: 'ethereum', address: address(7), note: undefined, block: 5 })).toMatchObject({ created: true });
  });

  it('a mark moves only from the block it was read at (a concurrent check that moved it first wins)', async () => {
    const account = await newAccount();
    const added = await store.add(account, { chain: 'ethereum', address: address(1), note: undefined, block: 100 });
    if (!added.ok) throw new Error('not added');
    const id = added.watch.id;
    expect(await store.advance(account, [{ id, expected: 100, to: 150 }])).toBe(1);
    expect(await store.advance(account, [{ id, expected: 100, to: 120 }])).toBe(0);
    // Another account cannot move it.
    expect(await store.advance(await newAccount(), [{ id, expected: 150, to: 200 }])).toBe(0);
    expect((await store.list(account))[0]).toMatchObject({ last_checked_block: 150 });
    expect(await store.remove(account, 'ethereum', address(1))).toBe(true);
    expect(await store.remove(account, 'ethereum', address(1))).toBe(false);
  });
});
