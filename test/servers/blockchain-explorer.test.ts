// blockchain-explorer against a real seeded devnet (anvil), checked with independent JSON-RPC reads.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevnet, type Devnet } from '../../server/devnet/devnet.ts';
import { freePort } from '../../server/db/embedded.ts';
import { balanceOf, post, toolCall } from '../helpers/service.ts';
import { toolSuite, type ToolSuite } from '../helpers/tools.ts';

let devnet: Devnet;
let suite: ToolSuite;
let manifestFile: string;

/** A JSON-RPC call straight to the node, independent of the code under test. */
async function rawRpc<T>(method: string, params: unknown[]): Promise<T> {
  const res = await fetch(devnet.manifest.rpc_url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return ((await res.json()) as { result: T }).result;
}

beforeAll(async () => {
  devnet = await startDevnet();
  manifestFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cmcp-devnet-')), 'manifest.json');
  fs.writeFileSync(manifestFile, JSON.stringify(devnet.manifest));
  // Polygon points at a closed port: the "RPC down" case.
  suite = await toolSuite('blockchain-explorer', 1000, {
    ETHEREUM_RPC_URL: devnet.manifest.rpc_url,
    POLYGON_RPC_URL: `http://127.0.0.1:${await freePort()}`,
    EVM_TIMEOUT_MS: '2000',
    EVM_RETRIES: '0',
    DEVNET_MANIFEST: manifestFile,
  });
});
afterAll(async () => {
  await suite?.close();
  await devnet?.stop();
});

describe('get_address_summary', () => {
  it("gives the exchange's real balance and nonce, its devnet label, and that it is not a contract", async () => {
    const exchange = devnet.manifest.accounts.find((a) => a.label === 'Binance (devnet)')!;
    const env = await suite.call<{ balance_wei: string; nonce: number; is_contract: boolean; label: { label: string; kind: string } }>('get_address_summary', {
      address: exchange.address,
    });
    expect(env.data.balance_wei).toBe(BigInt(await rawRpc<string>('eth_getBalance', [exchange.address, 'latest'])).toString());
    expect(env.data.nonce).toBe(Number(await rawRpc<string>('eth_getTransactionCount', [exchange.address, 'latest'])));
    expect(env.data.nonce).toBe(devnet.manifest.transfers.filter((t) => t.from === exchange.address).length);
    expect(env.data.is_contract).toBe(false);
    expect(env.data.label).toMatchObject({ label: 'Binance (devnet)', kind: 'exchange' });
    expect(env.metadata.credits_used).toBe(1);
  });

  it('knows a token contract is a contract', async () => {
    const env = await suite.call<{ is_contract: boolean }>('get_address_summary', { address: devnet.manifest.tokens[0]!.address });
    expect(env.data.is_contract).toBe(true);
  });
});

describe('get_block', () => {
  it('a seeded transfer block by number and by hash is the block the node reports', async () => {
    const t = devnet.manifest.transfers[5]!;
    const raw = await rawRpc<{ hash: string; transactions: string[]; timestamp: string }>('eth_getBlockByNumber', [`0x${t.block.toString(16)}`, false]);
    const byNumber = await suite.call<{ block: { number: number; hash: string; transactions: number } }>('get_block', { number: t.block });
    expect(byNumber.data.block).toMatchObject({ number: t.block, hash: raw.hash, transactions: raw.transactions.length });
    expect(raw.transactions).toContain(t.tx_hash);
    const byHash = await suite.call<{ block: { number: number } }>('get_block', { hash: raw.hash });
    expect(byHash.data.block.number).toBe(t.block);
  });

  it('a time resolves to the last block at or before it', async () => {
    const raw = await rawRpc<{ timestamp: string; number: string }>('eth_getBlockByNumber', ['0x3', false]);
    const at = new Date(Number(BigInt(raw.timestamp)) * 1000).toISOString();
    const env = await suite.call<{ block: { number: number; timestamp: string } }>('get_block', { timestamp: at });
    expect(Date.parse(env.data.block.timestamp)).toBeLessThanOrEqual(Date.parse(at));
    const next = await rawRpc<{ timestamp: string } | null>('eth_getBlockByNumber', [`0x${(env.data.block.number + 1).toString(16)}`, false]);
    if (next) expect(Number(BigInt(next.timestamp)) * 1000).toBeGreaterThan(Date.parse(at));
  });

  it('a block that does not exist is 404 NOT_FOUND and costs nothing', async () => {
    const before = await balanceOf(suite.db, suite.accountId);
    const res = await post(`${suite.svc.url}/mcp/blockchain-explorer`, toolCall('get_block', { number: 10_000_000 }), { 'x-api-key': suite.key });
    expect(res.status).toBe(404);
    expect(await balanceOf(suite.db, suite.accountId)).toBe(before);
  });
});

describe('get_gas and bad input', () => {
  it('get_gas reads the fee history for free', async () => {
    const env = await suite.call<{ blocks: number; base_fee_gwei: { latest: number; next_block: number } }>('get_gas', {});
    expect(env.data.blocks).toBeGreaterThan(0);
    expect(env.data.base_fee_gwei.next_block).toBeGreaterThan(0);
    expect(env.metadata.credits_used).toBe(0);
  });

  it('a malformed address is 400 naming the field, Solana is 400, a dead RPC is 502 naming the provider; none is charged', async () => {
    const before = await balanceOf(suite.db, suite.accountId);
    const h = { 'x-api-key': suite.key };
    const url = `${suite.svc.url}/mcp/blockchain-explorer`;
    const bad = await post(url, toolCall('get_address_summary', { address: '0x1234' }), h);
    expect(bad.status).toBe(400);
    expect((bad.body as { error: { details: { issues: { path: string }[] } } }).error.details.issues[0]!.path).toBe('address');
    const sol = await post(url, toolCall('get_address_summary', { chain: 'solana', address: devnet.manifest.accounts[0]!.address }), h);
    expect(sol.status).toBe(400);
    const down = await post(url, toolCall('get_address_summary', { chain: 'polygon', address: devnet.manifest.accounts[0]!.address }), h);
    expect(down.status).toBe(502);
    expect((down.body as { error: { details: { provider: string } } }).error.details.provider).toBe('evm:polygon');
    expect(await balanceOf(suite.db, suite.accountId)).toBe(before);
  });
});
