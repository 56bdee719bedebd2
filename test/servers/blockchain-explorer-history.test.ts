// Address histories (block scan and the Etherscan-style explorer API), fees in USD and the cache
// of final chain data. The node is the real devnet behind a counting proxy; the explorer is a
// loopback server replaying the documented Etherscan v2 answers (https://docs.etherscan.io/etherscan-v2).
import http from 'node:http';
import { getAddress } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevnet, type Devnet } from '../../server/devnet/devnet.ts';
import { loadSnapshot, SnapshotProvider } from '../../server/providers/market/snapshot.ts';
import { countingProxy, jsonRpcReplay, listen, splTokenAccount, writeManifest, type LoopbackServer } from '../helpers/chain.ts';
import { balanceOf, post, toolCall } from '../helpers/service.ts';
import { toolSuite, type ToolSuite } from '../helpers/tools.ts';

let devnet: Devnet;
let scanSuite: ToolSuite;
let explorerSuite: ToolSuite;
let proxy: Awaited<ReturnType<typeof countingProxy>>;
let explorerHandle: LoopbackServer;
const explorerRequests: URLSearchParams[] = [];
let explorerMode: 'ok' | 'bad-key' = 'ok';
let solana: LoopbackServer;
/** A node that accepts requests and never answers: the "RPC timing out" case. */
let silentNode: LoopbackServer;
const SOL_OWNER = 'A1TMhSGzQxMr1TboBKtgixKz1sS6REASMxPo1qsyTSJd';
const USDC_MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
/** Three signatures, newest first, as getSignaturesForAddress documents them. */
const SIGS = ['5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW', '4hXTCkRzt9WyecNzV1XPgCDfGAZzQKNxLXgynz5QDuWWPSAZBZSHptvWRL3BjCvzUXRdKvHL2b7yGrRQcWyaqsaB', '3AsdoALgZFuq2oUVWrDYhg2pNeaLJKPLf8hU2mQ6U8qJxeJ6hsrPVpMn9ma39DtfYCrDQSvngWRP8NnTpEhezJpE'];
const snapshot = new SnapshotProvider(loadSnapshot(undefined));

/** Two documented txlist rows: a plain transfer and a failed contract call. */
const TXLIST = [
  {
    blockNumber: '14923678', timeStamp: '1654646411', hash: '0xc52783ad354aecc04c670047754f062e3d6d04e8f5b24774472651f9c3882c60', nonce: '1', blockHash: '0x7e1638fd2c6bdd05ffd83c1cf06c63e2f67d0f802084bef076d06bdcf86d1bb0', transactionIndex: '61',
    from: '0x9aa99c23f67c81701c772b106b4f83f6e858dd2e', to: '0xd8da6bf26964af9d7eed9e03e53415d37aa96045', value: '1000000000000000000', gas: '21000', gasPrice: '30000000000', isError: '0', txreceipt_status: '1', input: '0x', contractAddress: '', cumulativeGasUsed: '4830641', gasUsed: '21000', confirmations: '1000', methodId: '0x', functionName: '',
  },
  {
    blockNumber: '14923600', timeStamp: '1654645000', hash: '0x2d3b0e4fd0a6e3b0b5b1b6c3e2c1d4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1', nonce: '0', blockHash: '0x1111111111111111111111111111111111111111111111111111111111111111', transactionIndex: '3',
    from: '0xd8da6bf26964af9d7eed9e03e53415d37aa96045', to: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', value: '0', gas: '60000', gasPrice: '20000000000', isError: '1', txreceipt_status: '0', input: '0xa9059cbb0000000000000000000000009aa99c23f67c81701c772b106b4f83f6e858dd2e0000000000000000000000000000000000000000000000000000000000000001', contractAddress: '', cumulativeGasUsed: '100000', gasUsed: '45000', confirmations: '1078', methodId: '0xa9059cbb', functionName: 'transfer(address _to, uint256 _value)',
  },
];

beforeAll(async () => {
  devnet = await startDevnet();
  proxy = await countingProxy(devnet.manifest.rpc_url);
  const explorer = http.createServer((req, res) => {
    const q = new URL(req.url!, 'http://x').searchParams;
    explorerRequests.push(q);
    const send = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (explorerMode === 'bad-key') return send({ status: '0', message: 'NOTOK', result: 'Invalid API Key (#err2)|x' });
    if (q.get('address')?.toLowerCase() !== TXLIST[0]!.to) return send({ status: '0', message: 'No transactions found', result: [] });
    const rows = q.get('sort') === 'asc' ? [...TXLIST].reverse() : TXLIST;
    const size = Number(q.get('offset'));
    const pageNo = Number(q.get('page'));
    return send({ status: '1', message: 'OK', result: rows.slice((pageNo - 1) * size, pageNo * size) });
  });
  const explorerUrl = (explorerHandle = await listen(explorer)).url;

  solana = await jsonRpcReplay((method, params) => {
    switch (method) {
      case 'getBalance':
        return { result: { context: { slot: 341197053 }, value: 1_250_000_000 } };
      case 'getTokenAccountsByOwner':
        if ((params[1] as { programId: string }).programId.startsWith('Tokenz')) return { result: { context: { slot: 1 }, value: [] } };
        return { result: { context: { slot: 1 }, value: [splTokenAccount(SOL_OWNER, USDC_MINT, '5000000', 6)] } };
      case 'getSignaturesForAddress': {
        const opts = params[1] as { limit: number; before?: string };
        const start = opts.before ? SIGS.indexOf(opts.before) + 1 : 0;
        return { result: SIGS.slice(start, start + opts.limit).map((signature, i) => ({ signature, slot: 300 - start - i, err: null, memo: null, blockTime: 1700000000 - (start + i) * 60, confirmationStatus: 'finalized' })) };
      }
      case 'getTransaction':
        if (params[0] !== SIGS[0]) return { result: null };
        return {
          result: {
            slot: 300,
            blockTime: 1700000000,
            meta: { err: null, fee: 5000, preBalances: [1_000_000_000, 0], postBalances: [899_995_000, 100_000_000], preTokenBalances: [], postTokenBalances: [] },
            transaction: { signatures: [SIGS[0]], message: { accountKeys: [{ pubkey: SOL_OWNER, signer: true, writable: true, source: 'transaction' }, { pubkey: 'BGocb4GEpbTFm8UFV2VsDSaBXHELPfAXrvd4vtt8QWrA', signer: false, writable: true, source: 'transaction' }] } },
          },
        };
      default:
        return { error: { code: -32601, message: 'Method not found' } };
    }
  });

  silentNode = await listen(http.createServer(() => {}));

  const manifestFile = writeManifest(devnet.manifest);
  const common = { MCP_SERVERS: 'blockchain-explorer', EVM_TIMEOUT_MS: '2000', EVM_RETRIES: '0', DEVNET_MANIFEST: manifestFile };
  // Finality depth 0: every mined block counts as final, so the cache can be seen at work.
  scanSuite = await toolSuite('blockchain-explorer', 1000, { ...common, ETHEREUM_RPC_URL: proxy.url, EVM_FINALITY_DEPTH: '0', SOLANA_RPC_URL: solana.url, BSC_RPC_URL: silentNode.url });
  explorerSuite = await toolSuite('blockchain-explorer', 1000, { ...common, ETHEREUM_RPC_URL: devnet.manifest.rpc_url, EXPLORER_API_URL: `${explorerUrl}/v2/api`, EXPLORER_API_KEY: 'test-key' });
}, 120_000);
afterAll(async () => {
  await scanSuite?.close();
  await explorerSuite?.close();
  await proxy?.close();
  await explorerHandle?.close();
  await solana?.close();
  await silentNode?.close();
  await devnet?.stop();
});

type History = { method: string; total?: number; scanned?: { from_block: number; to_block: number }; transactions: { hash: string; from: string; to: string | null; status?: string; fee_wei?: string }[] };

describe('get_address_transactions by block scan', () => {
  it("finds exactly the exchange's own transactions the seed made: what it sent, and the ETH it received", async () => {
    const exchange = devnet.manifest.accounts.find((a) => a.label === 'Binance (devnet)')!.address;
    const symbols = new Set(devnet.manifest.tokens.map((t) => t.symbol));
    const expected = devnet.manifest.transfers.filter((t) => t.from === exchange || (t.to === exchange && !symbols.has(t.asset))).map((t) => t.tx_hash);
    const env = await scanSuite.call<History>('get_address_transactions', { address: exchange, from_block: 0, limit: 100 });
    expect(env.data.method).toBe('block-scan');
    expect(env.data.scanned!.from_block).toBe(0);
    expect(env.data.transactions.map((t) => t.hash).sort()).toEqual(expected.sort());
    expect(env.metadata.credits_used).toBe(1);
  });

  it('refuses a scan wider than 200 blocks, naming the bound, free of charge', async () => {
    const before = await balanceOf(scanSuite.db, scanSuite.accountId);
    const res = await post(`${scanSuite.svc.url}/mcp/blockchain-explorer`, toolCall('get_address_transactions', { address: devnet.manifest.accounts[1]!.address, from_block: 0, to_block: 500 }), {
      'x-api-key': scanSuite.key,
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('200');
    expect(await balanceOf(scanSuite.db, scanSuite.accountId)).toBe(before);
  });
});

describe('a node that does not answer', () => {
  it('is 504 UPSTREAM_TIMEOUT naming evm:bsc after EVM_TIMEOUT_MS, and is not charged', async () => {
    const before = await balanceOf(scanSuite.db, scanSuite.accountId);
    const res = await post(`${scanSuite.svc.url}/mcp/blockchain-explorer`, toolCall('get_address_summary', { chain: 'bsc', address: devnet.manifest.accounts[0]!.address }), {
      'x-api-key': scanSuite.key,
    });
    expect(res.status).toBe(504);
    expect(res.body).toMatchObject({ error: { code: 'UPSTREAM_TIMEOUT', details: { provider: 'evm:bsc' } } });
    expect(await balanceOf(scanSuite.db, scanSuite.accountId)).toBe(before);
  });
});

describe('get_transaction fee in USD and the cache of final data', () => {
  it("prices the fee with the native coin's quote, and answers a final transaction again without the node", async () => {
    const t = devnet.manifest.transfers[0]!;
    const before = proxy.requests();
    const first = await scanSuite.call<{ fee: { native: string; usd: number; usd_price: { price_usd: number } } }>('get_transaction', { hash: t.tx_hash });
    expect(proxy.requests()).toBeGreaterThan(before);
    const [eth] = await snapshot.quotes(['ethereum']);
    expect(first.data.fee.usd_price.price_usd).toBe(eth!.price_usd);
    expect(first.data.fee.usd).toBeCloseTo(Number(first.data.fee.native) * eth!.price_usd, 5);
    const between = proxy.requests();
    const second = await scanSuite.call<{ fee: { native: string } }>('get_transaction', { hash: t.tx_hash });
    expect(proxy.requests()).toBe(between);
    expect(second.data.fee.native).toBe(first.data.fee.native);
  });
});

describe('with a block-explorer API', () => {
  const address = '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045';

  it('pages the whole history from the explorer, newest first, asking for chain id 1 with the key', async () => {
    explorerMode = 'ok';
    const p1 = await explorerSuite.call<History>('get_address_transactions', { address, limit: 1 });
    expect(p1.data.method).toBe('explorer');
    expect(p1.data.transactions).toEqual([expect.objectContaining({ hash: TXLIST[0]!.hash, status: 'success', fee_wei: (21000n * 30000000000n).toString() })]);
    const q = explorerRequests.at(-1)!;
    expect([q.get('chainid'), q.get('module'), q.get('action'), q.get('apikey'), q.get('sort')]).toEqual(['1', 'account', 'txlist', 'test-key', 'desc']);
    expect(p1.metadata.next_cursor).toBeDefined();
    const p2 = await explorerSuite.call<History>('get_address_transactions', { address, limit: 1, cursor: p1.metadata.next_cursor });
    expect(p2.data.transactions).toEqual([expect.objectContaining({ hash: TXLIST[1]!.hash, status: 'failed', to: getAddress(TXLIST[1]!.to), to_label: 'Centre: USD Coin' })]);
  });

  it("fills get_address_summary's first and last activity from the explorer", async () => {
    const env = await explorerSuite.call<{ activity: { first: { hash: string }; last: { hash: string }; source: string } }>('get_address_summary', { address });
    expect(env.data.activity).toMatchObject({ first: { hash: TXLIST[1]!.hash }, last: { hash: TXLIST[0]!.hash }, source: 'explorer' });
  });

  it('an address with no history is an empty page, not an error', async () => {
    const env = await explorerSuite.call<History>('get_address_transactions', { address: devnet.manifest.accounts[9]!.address });
    expect(env.data.transactions).toEqual([]);
    expect(env.metadata.next_cursor).toBeUndefined();
  });

  it("an explorer refusal (bad key) is 502 naming the explorer, and is not charged", async () => {
    explorerMode = 'bad-key';
    try {
      const before = await balanceOf(explorerSuite.db, explorerSuite.accountId);
      const res = await post(`${explorerSuite.svc.url}/mcp/blockchain-explorer`, toolCall('get_address_transactions', { address }), { 'x-api-key': explorerSuite.key });
      expect(res.status).toBe(502);
      expect(JSON.stringify(res.body)).toContain('explorer');
      expect(await balanceOf(explorerSuite.db, explorerSuite.accountId)).toBe(before);
    } finally {
      explorerMode = 'ok';
    }
  });
});

describe('Solana in blockchain-explorer', () => {
  it('summarises a Solana address: SOL, its SPL token accounts with registry symbols, its last activity', async () => {
    const env = await scanSuite.call<{ balance: string; token_accounts: { mint: string; symbol: string; listed: boolean; amount: string }[]; activity: { last: { signature: string } } }>(
      'get_address_summary',
      { chain: 'solana', address: SOL_OWNER },
    );
    expect(env.data.balance).toBe('1.25');
    expect(env.data.token_accounts).toEqual([expect.objectContaining({ mint: USDC_MINT, symbol: 'USDC', listed: true, amount: '5000000' })]);
    expect(env.data.activity.last.signature).toBe(SIGS[0]);
  });

  it("pages an address's signatures by signature, as the RPC does", async () => {
    const p1 = await scanSuite.call<{ transactions: { signature: string }[] }>('get_address_transactions', { chain: 'solana', address: SOL_OWNER, limit: 2 });
    expect(p1.data.transactions.map((t) => t.signature)).toEqual(SIGS.slice(0, 2));
    const p2 = await scanSuite.call<{ transactions: { signature: string }[] }>('get_address_transactions', { chain: 'solana', address: SOL_OWNER, limit: 2, cursor: p1.metadata.next_cursor });
    expect(p2.data.transactions.map((t) => t.signature)).toEqual(SIGS.slice(2));
    expect(p2.metadata.next_cursor).toBeUndefined();
  });

  it('decodes a Solana transaction with its fee in SOL and USD; an unknown signature is 404 and free', async () => {
    const env = await scanSuite.call<{ status: string; sol_changes: { account: string; lamports: number }[]; fee: { native: string; usd: number } }>('get_transaction', { chain: 'solana', hash: SIGS[0] });
    expect(env.data.status).toBe('success');
    expect(env.data.sol_changes).toEqual([
      { account: SOL_OWNER, lamports: -100_005_000 },
      { account: 'BGocb4GEpbTFm8UFV2VsDSaBXHELPfAXrvd4vtt8QWrA', lamports: 100_000_000 },
    ]);
    const [sol] = await snapshot.quotes(['solana']);
    expect(env.data.fee.native).toBe('0.000005');
    expect(env.data.fee.usd).toBeCloseTo(0.000005 * sol!.price_usd, 6);
    const before = await balanceOf(scanSuite.db, scanSuite.accountId);
    const res = await post(`${scanSuite.svc.url}/mcp/blockchain-explorer`, toolCall('get_transaction', { chain: 'solana', hash: SIGS[1] }), { 'x-api-key': scanSuite.key });
    expect(res.status).toBe(404);
    expect(await balanceOf(scanSuite.db, scanSuite.accountId)).toBe(before);
  });

  it('refuses an EVM address with chain solana, and a Solana address on an EVM chain, naming the field', async () => {
    const h = { 'x-api-key': scanSuite.key };
    const url = `${scanSuite.svc.url}/mcp/blockchain-explorer`;
    const a = await post(url, toolCall('get_address_summary', { chain: 'solana', address: devnet.manifest.accounts[0]!.address }), h);
    const b = await post(url, toolCall('get_address_summary', { address: SOL_OWNER }), h);
    for (const res of [a, b]) {
      expect(res.status).toBe(400);
      expect((res.body as { error: { details: { issues: { path: string }[] } } }).error.details.issues[0]!.path).toBe('address');
    }
  });
});
