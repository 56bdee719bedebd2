// A contract wallet (EIP-1271) is a wallet on the chain it was proved on only (issue 30). Two
// anvil nodes with different chain ids stand for Ethereum (1) and Base (8453); the same deployer's
// first transaction puts the same contract wallet at the same address on both, owned by different
// keys. Before, accounts were keyed by address alone and the signature was checked on whatever
// chain the message named: the Base owner signed in to the Ethereum owner's account. Now the Base
// owner is refused (401 SIGN_IN_REJECTED, reason contract_chain) at sign-in and at linking, and the
// Ethereum owner still signs in.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../server/db/embedded.ts';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { rawRpc } from '../helpers/chain.ts';
import { startTestService } from '../helpers/service.ts';
import { CookieClient, deploySmartWallet, signInEvm, siweMessage } from './helpers.ts';

let db: TestDatabase;
let service: RunningService;
const nodes: ChildProcess[] = [];
let ethereumRpc: string;
let baseRpc: string;

/** A bare anvil node with the given chain id, on a free loopback port; resolves once it answers. */
async function anvil(chainId: number): Promise<string> {
  const require = createRequire(import.meta.url);
  const binary = path.join(path.dirname(require.resolve('@foundry-rs/anvil-linux-amd64/package.json')), 'bin', 'anvil');
  const port = await freePort();
  const child = spawn(binary, ['--host', '127.0.0.1', '--port', String(port), '--silent', '--chain-id', String(chainId)], { stdio: 'ignore' });
  nodes.push(child);
  const url = `http://127.0.0.1:${port}`;
  for (const until = Date.now() + 10_000; Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
    if (child.exitCode !== null) throw new Error(`anvil exited with ${child.exitCode}`);
    try {
      if ((await rawRpc<string>(url, 'eth_chainId', [])) === `0x${chainId.toString(16)}`) return url;
    } catch {
      // not listening yet
    }
  }
  throw new Error(`anvil with chain id ${chainId} did not answer`);
}

beforeAll(async () => {
  db = await createTestDatabase();
  [ethereumRpc, baseRpc] = await Promise.all([anvil(1), anvil(8453)]);
  service = await startTestService(db.url, {
    ETHEREUM_RPC_URL: ethereumRpc,
    BASE_RPC_URL: baseRpc,
    POLYGON_RPC_URL: ethereumRpc,
    BSC_RPC_URL: ethereumRpc,
    MCP_SERVERS: 'market-intelligence',
    DASHBOARD_SIGN_IN_LIMIT: '1000',
  });
});

afterAll(async () => {
  await service?.close();
  for (const node of nodes) {
    if (node.exitCode === null) {
      const exited = new Promise((r) => node.once('exit', r));
      node.kill('SIGTERM');
      await exited;
    }
  }
  await db?.drop();
});

afterEach(async () => {
  const off = await db.query(
    `SELECT a.id FROM accounts a LEFT JOIN credit_ledger l ON l.account_id = a.id GROUP BY a.id HAVING a.balance <> coalesce(sum(l.delta), 0)`,
  );
  expect(off.rows).toEqual([]);
  expect((await db.query(`SELECT 1 FROM credit_ledger WHERE kind = 'reserve' AND resolved_at IS NULL`)).rowCount).toBe(0);
});

const fresh = () => privateKeyToAccount(generatePrivateKey());

describe('a contract wallet at the same address on two chains', () => {
  it('the chain it was first proved on keeps it: the other chain\'s owner is refused at sign-in and at linking, the first still signs in', async () => {
    const ethereumOwner = fresh();
    const baseOwner = fresh();
    const onEthereum = await deploySmartWallet(ethereumRpc, ethereumOwner.address, 1);
    const onBase = await deploySmartWallet(baseRpc, baseOwner.address, 8453);
    // Same deployer, same nonce: the same address, with another owner on each chain.
    expect(onBase).toBe(onEthereum);
    const contract = onEthereum;
    const as = (owner: typeof ethereumOwner) => ({ ...owner, address: contract }) as typeof owner;

    const first = await signInEvm(new CookieClient(service.url), as(ethereumOwner), { chainId: 1 }, ethereumOwner);
    expect(first.res.status).toBe(201);
    const accountId = first.res.body.account.id as string;
    expect(first.res.body.account).toMatchObject({ balance: 150, free_allowance: 'granted' });
    expect(first.res.body.account.wallets).toEqual([expect.objectContaining({ chain: 'ethereum', address: contract.toLowerCase() })]);

    // The Base owner's signature is valid — on Base, through the Base contract — and still refused.
    const intruder = new CookieClient(service.url);
    const taken = await signInEvm(intruder, as(baseOwner), { chainId: 8453 }, baseOwner);
    expect(taken.res.status, JSON.stringify(taken.res.body)).toBe(401);
    expect(taken.res.body.error).toMatchObject({ code: 'SIGN_IN_REJECTED', details: { reason: 'contract_chain' } });
    expect(intruder.jar.has('cmcp_session')).toBe(false);
    expect((await intruder.get('/api/session')).status).toBe(401);

    // Nor can the Base owner pull it into an account of their own by linking (no merge offer either).
    const other = new CookieClient(service.url);
    expect((await signInEvm(other, fresh())).res.status).toBe(201);
    const nonce = (await other.get('/api/wallets/nonce')).body;
    const message = siweMessage({ address: contract }, nonce, { chainId: 8453 });
    const linked = await other.post('/api/wallets', { family: 'evm', message, signature: await baseOwner.signMessage({ message }) });
    expect(linked.status).toBe(401);
    expect(linked.body.error.details.reason).toBe('contract_chain');
    expect((await db.query('SELECT 1 FROM account_wallet_offers WHERE address = $1', [contract.toLowerCase()])).rowCount).toBe(0);

    // The Ethereum owner signs in to the same account as before.
    const again = await signInEvm(new CookieClient(service.url), as(ethereumOwner), { chainId: 1 }, ethereumOwner);
    expect(again.res.status).toBe(200);
    expect(again.res.body.account.id).toBe(accountId);

    // The free allowance is recorded for the contract on its chain.
    const grants = await db.query<{ chain: string; account_id: string }>('SELECT chain, account_id FROM wallet_free_grants WHERE address = $1', [contract.toLowerCase()]);
    expect(grants.rows).toEqual([{ chain: 'ethereum', account_id: accountId }]);
    expect((await db.query<{ contract: boolean }>('SELECT contract FROM wallets WHERE address = $1', [contract.toLowerCase()])).rows).toEqual([{ contract: true }]);
  });
});
