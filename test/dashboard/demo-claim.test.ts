// The demo account `npm start` creates on a fresh database (server/demo.ts) is taken over by the
// first wallet that signs in to the dashboard: the key printed in the terminal, its credits and
// its usage are then that wallet's. Only one wallet can take it, even when two sign in at once;
// every later wallet gets an account of its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { accountIdByWallet, DEMO_WALLET } from '../../server/accounts/accounts.ts';
import { ensureDemoAccount, type DemoAccount } from '../../server/demo.ts';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { post, startTestService, toolCall } from '../helpers/service.ts';
import { CookieClient, signInEvm } from './helpers.ts';

let db: TestDatabase;
let service: RunningService;
let demo: DemoAccount;

beforeAll(async () => {
  db = await createTestDatabase();
  // What `npm start` does on a fresh database, before it serves.
  demo = (await ensureDemoAccount(db))!;
  service = await startTestService(db.url, { MCP_SERVERS: 'market-intelligence', DASHBOARD_SIGN_IN_LIMIT: '1000' });
});

afterAll(async () => {
  await service?.close();
  await db?.drop();
});

const fresh = () => privateKeyToAccount(generatePrivateKey());

describe('the demo account', () => {
  it('is taken over by exactly one of two wallets signing in at once; its printed key is then in that dashboard; later wallets get their own accounts', async () => {
    expect(demo.key).toBeDefined();
    // The printed key has been used from a terminal before anyone signs in.
    const call = await post(`${service.url}/mcp/market-intelligence`, toolCall('get_prices', { assets: ['bitcoin'] }), { 'x-api-key': demo.key! });
    expect(call.status, JSON.stringify(call.body)).toBe(200);

    const clients = [new CookieClient(service.url), new CookieClient(service.url)];
    const [a, b] = await Promise.all(clients.map((c) => signInEvm(c, fresh())));
    const answers = [a!.res, b!.res];
    const claimed = answers.filter((r) => r.body.account.id === demo.account.id);
    expect(claimed).toHaveLength(1);
    expect(claimed[0]!.status).toBe(200);
    const other = answers.find((r) => r !== claimed[0])!;
    expect(other.status).toBe(201);
    expect(other.body.account.id).not.toBe(demo.account.id);

    const owner = clients[answers.indexOf(claimed[0]!)]!;
    const keys = (await owner.get('/api/keys')).body.keys as { name: string }[];
    expect(keys.map((k) => k.name)).toEqual(['demo']);
    // Its credits are the demo account's, less the call above.
    expect(claimed[0]!.body.account.balance).toBe(demo.account.balance - 1);
    expect(await accountIdByWallet(db, 'ethereum', DEMO_WALLET)).toBeUndefined();

    const later = await signInEvm(new CookieClient(service.url), fresh());
    expect(later.res.status).toBe(201);
    expect(later.res.body.account.id).not.toBe(demo.account.id);
  });
});
