// A tool argument holding a NUL is 400 INVALID_PARAMS naming it, before anything is reserved, on
// every tool: PostgreSQL text cannot hold a NUL, so watch_address used to answer 500 for a note
// with one. A watch note also refuses other control characters. Nothing is stored or charged:
// each account's balance is its grants plus its ledger, with no reservation left open.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevnet, type Devnet } from '../../server/devnet/devnet.ts';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { balanceOf, createAccountWithKey, createUnlimitedPlan, ledgerSum, post, startTestService, toolCall, type RawResponse } from '../helpers/service.ts';
import { eventually } from '../helpers/wait.ts';

let db: TestDatabase;
let devnet: Devnet;
let svc: RunningService;

beforeAll(async () => {
  db = await createTestDatabase();
  devnet = await startDevnet();
  // watch_address marks the head block first: the devnet node is Ethereum here.
  svc = await startTestService(db.url, { ETHEREUM_RPC_URL: devnet.manifest.rpc_url, EVM_RETRIES: '0' });
  await createUnlimitedPlan(db, 'text-args', 100);
}, 120_000);
afterAll(async () => {
  await svc?.close();
  await devnet?.stop();
  await db?.drop();
});

const refused = (res: RawResponse, path: string) => {
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ success: false, error: { code: 'INVALID_PARAMS', details: { issues: [{ path }] } } });
  expect(res.headers.get('x-credits-used')).toBe('0');
};

/** Balance = grants + ledger, and no reservation is left unresolved (settlements are written in batches: polled). */
async function expectBalanced(accountId: string, balance: number): Promise<void> {
  const open = async () =>
    (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM credit_ledger WHERE account_id = $1 AND kind = 'reserve' AND resolved_at IS NULL`, [accountId])).rows[0]!.n;
  await eventually(async () => (await open()) === 0, 10_000, 'every reservation resolved');
  expect(await balanceOf(db, accountId)).toBe(balance);
  expect(await ledgerSum(db, accountId)).toBe(balance);
}

describe('text in tool arguments', () => {
  it('a NUL in any argument (a value, a nested value, a key) is 400 INVALID_PARAMS naming it, and charges nothing', async () => {
    const { account, key } = await createAccountWithKey(db, { plan: 'text-args' });
    const url = `${svc.url}/mcp/market-intelligence`;
    const h = { 'x-api-key': key };
    refused(await post(url, toolCall('bench_echo', { message: 'a\u0000b' }), h), 'message');
    refused(await post(url, toolCall('get_prices', { assets: ['bitcoin', 'eth\u0000'] }), h), 'assets.1');
    refused(await post(url, toolCall('bench_echo', { ['mess\u0000age']: 'x' }), h), 'mess\u0000age');
    await expectBalanced(account.id, 100);
  });

  it('watch_address refuses a note with a NUL or another control character (400, nothing watched, nothing charged) and stores a clean one', async () => {
    const { account, key } = await createAccountWithKey(db, { plan: 'text-args' });
    const url = `${svc.url}/mcp/whale-intelligence`;
    const h = { 'x-api-key': key };
    const address = devnet.manifest.accounts[0]!.address;
    refused(await post(url, toolCall('watch_address', { address, note: 'cold\u0000wallet' }), h), 'note');
    refused(await post(url, toolCall('watch_address', { address, note: '\u001b]8;;https://evil.example\u0007click\u001b]8;;\u0007' }), h), 'note');
    const watched = async () => (await db.query<{ note: string | null }>('SELECT note FROM watches WHERE account_id = $1', [account.id])).rows;
    expect(await watched()).toEqual([]);
    await expectBalanced(account.id, 100);

    const ok = await post(url, toolCall('watch_address', { address, note: 'cold wallet\nsecond line' }), h);
    expect(ok.status).toBe(200);
    expect(await watched()).toEqual([{ note: 'cold wallet\nsecond line' }]);
    await expectBalanced(account.id, 99);
  });
});
