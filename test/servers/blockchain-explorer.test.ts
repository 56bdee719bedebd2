// blockchain-explorer against a real seeded devnet (anvil), checked with independent JSON-RPC reads.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevnet, type Devnet } from '../../server/devnet/devnet.ts';
import { freePort } from '../../server/db/embedded.ts';
import { rawRpc as rawRpcTo, writeManifest } from '../helpers/chain.ts';
import { balanceOf, post, toolCall } from '../helpers/service.ts';
import { toolSuite, type ToolSuite } from '../helpers/tools.ts';

let devnet: Devnet;
let suite: ToolSuite;
let manifestFile: string;

/** A JSON-RPC call straight to the node, independent of the code under test. */
const rawRpc = <T>(method: string, params: unknown[]) => rawRpcTo<T>(devnet.manifest.rpc_url, method, params);

beforeAll(async () => {
  devnet = await startDevnet();
  manifestFile = writeManifest(devnet.manifest);
  // Polygon points at a closed port: the "RPC down" case.
  suite = await toolSuite('blockchain-explorer', 1000, {
    MCP_SERVERS: 'blockchain-explorer',
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

describe('get_token_transfers and get_transaction', () => {
  it("a token's Transfer events are the seeded transfers plus its mint, with amounts and labels", async () => {
    const dusd = devnet.manifest.tokens.find((t) => t.symbol === 'DUSD')!;
    const seeded = devnet.manifest.transfers.filter((t) => t.asset === 'DUSD');
    const env = await suite.call<{ total: number; transfers: { tx_hash: string; from: string; to: string; to_label: string | null; value: string }[] }>(
      'get_token_transfers',
      { token: dusd.address, from_block: 0, limit: 100 },
    );
    expect(env.data.total).toBe(seeded.length + 1);
    for (const t of seeded) {
      const row = env.data.transfers.find((r) => r.tx_hash === t.tx_hash)!;
      expect(row).toMatchObject({ from: t.from, to: t.to, value: t.amount });
      expect(row.to_label).toBe(devnet.manifest.accounts.find((a) => a.address === t.to)!.label);
    }
  });

  it("an address's transfers across tokens: the fund Wintermute received 42 units of each token", async () => {
    const fund = devnet.manifest.accounts.find((a) => a.label === 'Wintermute (devnet)')!;
    const env = await suite.call<{ transfers: { to: string; value: string; token: string }[] }>('get_token_transfers', { address: fund.address, from_block: 0 });
    expect(env.data.transfers).toHaveLength(4);
    for (const t of env.data.transfers) {
      const token = devnet.manifest.tokens.find((k) => k.address === t.token)!;
      expect(t).toMatchObject({ to: fund.address, value: (42n * 10n ** BigInt(token.decimals)).toString() });
    }
  });

  it('a range over 10,000 blocks is 400 naming the bound', async () => {
    const res = await post(`${suite.svc.url}/mcp/blockchain-explorer`, toolCall('get_token_transfers', { token: devnet.manifest.tokens[0]!.address, from_block: 0, to_block: 20_000 }), {
      'x-api-key': suite.key,
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('10000');
  });

  it('a to_block past the chain head is 400 INVALID_PARAMS naming to_block and the head (not 502), free of charge', async () => {
    const before = await balanceOf(suite.db, suite.accountId);
    const head = Number(BigInt(await rawRpc<string>('eth_blockNumber', [])));
    const url = `${suite.svc.url}/mcp/blockchain-explorer`;
    for (const [tool, args] of [
      ['get_token_transfers', { token: devnet.manifest.tokens[0]!.address, to_block: head + 1000 }],
      ['get_token_transfers', { token: devnet.manifest.tokens[0]!.address, from_block: head + 1, to_block: head + 5 }],
      ['get_address_transactions', { address: devnet.manifest.accounts[0]!.address, from_block: head + 1, to_block: head + 10 }],
    ] as const) {
      const res = await post(url, toolCall(tool, args), { 'x-api-key': suite.key });
      expect(res.status, `${tool} ${JSON.stringify(args)}`).toBe(400);
      const err = (res.body as { error: { code: string; details: { issues: { path: string }[]; latest_block: number } } }).error;
      expect(err.code).toBe('INVALID_PARAMS');
      expect(['to_block', 'from_block']).toContain(err.details.issues[0]!.path);
      expect(err.details.latest_block).toBeGreaterThanOrEqual(head);
    }
    expect(await balanceOf(suite.db, suite.accountId)).toBe(before);
  });

  it('get_transaction decodes a seeded ERC-20 transfer: the call, the Transfer log, the fee and the labels', async () => {
    const t = devnet.manifest.transfers.find((x) => x.asset === 'DPT')!;
    const token = devnet.manifest.tokens.find((k) => k.symbol === 'DPT')!;
    const env = await suite.call<{
      status: string;
      from_label: string;
      to: string;
      call: { function: string; args: Record<string, string> };
      logs: { event: string; contract: string; args: Record<string, string> }[];
      fee: { native: string };
    }>('get_transaction', { hash: t.tx_hash });
    expect(env.data.status).toBe('success');
    expect(env.data.to).toBe(token.address);
    expect(env.data.call).toEqual({ function: 'transfer', args: { recipient: t.to, amount: t.amount } });
    expect(env.data.logs).toEqual([{ event: 'Transfer', contract: token.address, args: { from: t.from, to: t.to, value: t.amount } }]);
    expect(Number(env.data.fee.native)).toBeGreaterThan(0);
    expect(env.data.from_label).toBe('Devnet deployer');
    // Issue 35 item 8: the fee is priced at a dated ETH price, so the answer is as old as that price.
    const fee = (env.data as unknown as { fee: { usd_price: { as_of: string } | null } }).fee;
    expect(fee.usd_price).not.toBeNull();
    expect(env.metadata.data_as_of).toBe(fee.usd_price!.as_of);
  });

  it('a transaction that does not exist is 404 NOT_FOUND', async () => {
    const res = await post(`${suite.svc.url}/mcp/blockchain-explorer`, toolCall('get_transaction', { hash: `0x${'ab'.repeat(32)}` }), { 'x-api-key': suite.key });
    expect(res.status).toBe(404);
  });
});

describe('read_contract and get_contract_info', () => {
  it('read_contract balanceOf returns the balance the manifest recorded', async () => {
    const dusd = devnet.manifest.tokens.find((t) => t.symbol === 'DUSD')!;
    const holder = devnet.manifest.accounts.find((a) => a.label === 'Binance (devnet)')!.address;
    const env = await suite.call<{ result: string; function: string }>('read_contract', {
      address: dusd.address,
      signature: 'function balanceOf(address) view returns (uint256)',
      args: [holder],
    });
    expect(env.data).toMatchObject({ function: 'balanceOf', result: devnet.manifest.balances.DUSD![holder] });
    expect(env.metadata.credits_used).toBe(2);
  });

  it('the proxy token is recognised as EIP-1967 with its implementation, and as an ERC-20', async () => {
    const dup = devnet.manifest.tokens.find((t) => t.kind === 'eip1967-proxy')!;
    const env = await suite.call<{ proxy: { implementation: string }; standards: { erc20: boolean; erc721: boolean }; token: { symbol: string; decimals: number } }>(
      'get_contract_info',
      { address: dup.address },
    );
    expect(env.data.proxy.implementation).toBe(dup.implementation);
    expect(env.data.standards).toMatchObject({ erc20: true, erc721: false });
    expect(env.data.token).toMatchObject({ symbol: 'DUP', decimals: 18 });
  });

  it('the managed token names its owner, the deployer, with its label', async () => {
    const dmt = devnet.manifest.tokens.find((t) => t.kind === 'mintable-pausable')!;
    const env = await suite.call<{ owner: string; owner_label: string; proxy: unknown }>('get_contract_info', { address: dmt.address });
    expect(env.data).toMatchObject({ owner: dmt.owner, owner_label: 'Devnet deployer', proxy: null });
  });

  it('an account is 404 for get_contract_info; a bad signature or a reverting call is 400; none is charged', async () => {
    const before = await balanceOf(suite.db, suite.accountId);
    const h = { 'x-api-key': suite.key };
    const url = `${suite.svc.url}/mcp/blockchain-explorer`;
    expect((await post(url, toolCall('get_contract_info', { address: devnet.manifest.accounts[3]!.address }), h)).status).toBe(404);
    expect((await post(url, toolCall('read_contract', { address: devnet.manifest.tokens[0]!.address, signature: 'not a function at all' }), h)).status).toBe(400);
    const reverting = await post(url, toolCall('read_contract', { address: devnet.manifest.accounts[3]!.address, signature: 'function symbol() view returns (string)', args: [] }), h);
    expect(reverting.status).toBe(400);
    expect(await balanceOf(suite.db, suite.accountId)).toBe(before);
  });

  it('an argument that is not of its ABI type is 400 INVALID_PARAMS naming args.<i> (was 502 UPSTREAM_ERROR), free of charge', async () => {
    const before = await balanceOf(suite.db, suite.accountId);
    const url = `${suite.svc.url}/mcp/blockchain-explorer`;
    const token = devnet.manifest.tokens[0]!.address;
    for (const [signature, args, path] of [
      ['function balanceOf(address) view returns (uint256)', ['notanaddress'], 'args.0'],
      ['function allowance(address,address) view returns (uint256)', [token, 'nope'], 'args.1'],
      ['function tokenURI(uint256) view returns (string)', ['abc'], 'args.0'],
    ] as const) {
      const res = await post(url, toolCall('read_contract', { address: token, signature, args }), { 'x-api-key': suite.key });
      expect(res.status).toBe(400);
      const err = (res.body as { error: { code: string; details: { issues: { path: string }[] } } }).error;
      expect(err).toMatchObject({ code: 'INVALID_PARAMS', details: { issues: [{ path }] } });
    }
    expect(await balanceOf(suite.db, suite.accountId)).toBe(before);
  });
});
