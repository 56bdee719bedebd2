// portfolio-analytics against the real devnet (anvil) behind a counting proxy, and a loopback
// Solana JSON-RPC server replaying the documented response shapes. Expected balances come from
// the devnet (what the test or the seed created), prices from the snapshot file read on its own.
import fs from 'node:fs';
import { createPublicClient, createWalletClient, getAddress, http as viemHttp, parseUnits, type Abi, type Address, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../server/db/embedded.ts';
import { startDevnet, type Devnet } from '../../server/devnet/devnet.ts';
import { loadSnapshot, SnapshotProvider } from '../../server/providers/market/snapshot.ts';
import { countingProxy, jsonRpcReplay, listen, rawRpc, splTokenAccount, writeManifest, type LoopbackServer } from '../helpers/chain.ts';
import http from 'node:http';
import { loadConfig } from '../../server/config.ts';
import { DEFAULT_DEADLINE_MS } from '../../server/providers/http.ts';
import { balanceOf, post, startTestService, toolCall } from '../helpers/service.ts';
import { toolSuite, type ToolSuite } from '../helpers/tools.ts';

const MNEMONIC = 'test test test test test test test test test test test junk';
const USDC_MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const SPAM_MINT = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';
const SOL_OWNER = 'A1TMhSGzQxMr1TboBKtgixKz1sS6REASMxPo1qsyTSJd';
const artifacts = JSON.parse(fs.readFileSync(new URL('../../server/devnet/artifacts.json', import.meta.url), 'utf8')) as Record<string, { abi: Abi; bytecode: Hex }>;

let devnet: Devnet;
let suite: ToolSuite;
let proxy: Awaited<ReturnType<typeof countingProxy>>;
let solana: LoopbackServer;
let manifestFile: string;
const holder = mnemonicToAccount(MNEMONIC, { addressIndex: 15 }).address;
const fiftyTokens: { address: Address; symbol: string; supply: bigint }[] = [];
const snapshot = new SnapshotProvider(loadSnapshot(undefined));

const callRaw = (name: string, args: Record<string, unknown>) => post(`${suite.svc.url}/mcp/portfolio-analytics`, toolCall(name, args), { 'x-api-key': suite.key });

beforeAll(async () => {
  devnet = await startDevnet();
  // 50 more tokens and some ETH, all held by one fresh wallet (anvil's account 15, unused by the seed).
  const chain = { ...foundry, rpcUrls: { default: { http: [devnet.manifest.rpc_url] } } };
  const wallet = createWalletClient({ account: mnemonicToAccount(MNEMONIC, { addressIndex: 0 }), chain, transport: viemHttp(devnet.manifest.rpc_url) });
  const pub = createPublicClient({ chain, transport: viemHttp(devnet.manifest.rpc_url) });
  for (let i = 0; i < 50; i++) {
    const supply = parseUnits(String(1000 + i), 18);
    const hash = await wallet.deployContract({ abi: artifacts.DevPlainToken!.abi, bytecode: artifacts.DevPlainToken!.bytecode, args: [`Portfolio Token ${i}`, `PT${i}`, supply, holder] });
    const receipt = await pub.waitForTransactionReceipt({ hash });
    fiftyTokens.push({ address: getAddress(receipt.contractAddress!), symbol: `PT${i}`, supply });
  }

  // anvil funds accounts 0-9 only: give the holder some ETH to price.
  await pub.waitForTransactionReceipt({ hash: await wallet.sendTransaction({ to: holder, value: parseUnits('12.5', 18) }) });

  proxy = await countingProxy(devnet.manifest.rpc_url);
  solana = await jsonRpcReplay((method, params) => {
    if (method === 'getBalance') return { result: { context: { slot: 341197053 }, value: 2_500_000_000 } };
    if (method === 'getTokenAccountsByOwner') {
      const program = (params[1] as { programId: string }).programId;
      if (program.startsWith('Tokenz')) return { result: { context: { slot: 341197933 }, value: [] } };
      return { result: { context: { slot: 341197933 }, value: [splTokenAccount(SOL_OWNER, USDC_MINT, '125500000', 6), splTokenAccount(SOL_OWNER, SPAM_MINT, '999999000000', 6)] } };
    }
    return { error: { code: -32601, message: 'Method not found' } };
  });
  manifestFile = writeManifest({
    ...devnet.manifest,
    rpc_url: proxy.url,
    tokens: [...devnet.manifest.tokens, ...fiftyTokens.map((t) => ({ symbol: t.symbol, name: t.symbol, decimals: 18, kind: 'plain' as const, address: t.address }))],
  });
  suite = await toolSuite('portfolio-analytics', 1000, {
    MCP_SERVERS: 'portfolio-analytics',
    ETHEREUM_RPC_URL: proxy.url,
    BASE_RPC_URL: `http://127.0.0.1:${await freePort()}`,
    SOLANA_RPC_URL: solana.url,
    EVM_TIMEOUT_MS: '2000',
    EVM_RETRIES: '0',
    DEVNET_MANIFEST: manifestFile,
  });
}, 120_000);
afterAll(async () => {
  await suite?.close();
  await proxy?.close();
  await solana?.close();
  await devnet?.stop();
});

type Portfolio = {
  total_value_usd: number;
  wallets: { address: string; value_usd: number; holdings: { chain: string; token: string | null; symbol: string; balance_raw: string; price_usd: number | null; value_usd: number | null }[] }[];
  allocation: { asset_id: string; share: number }[];
  unavailable: { chain: string; provider: string }[];
  unlisted_solana_tokens: number;
};

describe('get_portfolio', () => {
  it('finds all 50 tokens and the native balance of a wallet in at most 2 JSON-RPC round trips on the chain', async () => {
    const before = proxy.requests();
    const env = await suite.call<Portfolio>('get_portfolio', { addresses: [holder], chains: ['ethereum'] });
    const trips = proxy.requests() - before;
    expect(trips).toBeLessThanOrEqual(2);
    const w = env.data.wallets[0]!;
    for (const t of fiftyTokens) {
      expect(w.holdings.find((h) => h.token === t.address)?.balance_raw).toBe(t.supply.toString());
    }
    const eth = w.holdings.find((h) => h.token === null)!;
    const onChain = BigInt(await rawRpc<string>(devnet.manifest.rpc_url, 'eth_getBalance', [holder, 'latest']));
    expect(eth.balance_raw).toBe(onChain.toString());
    // Priced with the snapshot's ETH quote; the devnet tokens have no price and no allocation.
    const [quote] = await snapshot.quotes(['ethereum']);
    expect(eth.price_usd).toBe(quote!.price_usd);
    // Each priced holding carries its price's day, and the answer is as old as its oldest price.
    expect((eth as { price_as_of?: string }).price_as_of).toBe(quote!.as_of);
    expect(env.metadata.data_as_of).toBe(quote!.as_of);
    expect(eth.value_usd).toBeCloseTo((Number(onChain) / 1e18) * quote!.price_usd, 1);
    expect(env.data.allocation).toEqual([expect.objectContaining({ asset_id: 'ethereum', share: 1 })]);
    expect(env.metadata.credits_used).toBe(2);
  });

  it("matches the seed's token balances of a labelled exchange account", async () => {
    const exchange = devnet.manifest.accounts.find((a) => a.kind === 'exchange')!;
    const env = await suite.call<Portfolio>('get_portfolio', { addresses: [exchange.address], chains: ['ethereum'] });
    const got = Object.fromEntries(env.data.wallets[0]!.holdings.filter((h) => h.token).map((h) => [h.symbol, h.balance_raw]));
    const expected = Object.fromEntries(Object.entries(devnet.manifest.balances).flatMap(([symbol, b]) => (b[exchange.address] ? [[symbol, b[exchange.address]]] : [])));
    expect(got).toEqual(expected);
  });

  it('answers with the chains it could read and names the ones it could not', async () => {
    const env = await suite.call<Portfolio>('get_portfolio', { addresses: [holder], chains: ['ethereum', 'base'] });
    expect(env.data.unavailable).toEqual([{ chain: 'base', code: 'UPSTREAM_ERROR', provider: 'evm:base' }]);
    expect(env.data.wallets[0]!.holdings.length).toBe(51);
  });

  it('a chain whose node never answers is listed under unavailable as UPSTREAM_TIMEOUT naming evm:<chain>, within its deadline, and the others answer', async () => {
    // Accepts connections and never answers: per attempt 20 s x 3 attempts would outlast the tool's 6 s.
    const silent = http.createServer(() => {});
    const hung = await listen(silent);
    const svc = await startTestService(suite.db.url, {
      MCP_SERVERS: 'portfolio-analytics',
      ETHEREUM_RPC_URL: proxy.url,
      POLYGON_RPC_URL: hung.url,
      EVM_TIMEOUT_MS: '20000',
      EVM_RETRIES: '2',
      EVM_DEADLINE_MS: '1000',
      TOOL_TIMEOUT_MS: '6000',
      DEVNET_MANIFEST: manifestFile,
    });
    try {
      const started = Date.now();
      const res = await post(`${svc.url}/mcp/portfolio-analytics`, toolCall('get_portfolio', { addresses: [holder], chains: ['ethereum', 'polygon'] }), { 'x-api-key': suite.key });
      expect(res.status).toBe(200);
      const env = (res.body as { result: { structuredContent: { data: Portfolio } } }).result.structuredContent;
      expect(env.data.unavailable).toEqual([{ chain: 'polygon', code: 'UPSTREAM_TIMEOUT', provider: 'evm:polygon' }]);
      expect(env.data.wallets[0]!.holdings.length).toBe(51);
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await svc.close();
      await hung.close();
    }
  }, 30_000);

  it('the default per-provider deadline is well under the 30 s tool timeout', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://x@127.0.0.1/x' });
    expect(config.evm.deadlineMs).toBeLessThanOrEqual(10_000);
    expect(config.evm.deadlineMs).toBeLessThan(config.toolTimeoutMs / 2);
    expect(DEFAULT_DEADLINE_MS).toBeLessThan(config.toolTimeoutMs / 2);
  });

  it('fails with 502 and charges nothing when no chain asked for can be read', async () => {
    const before = await balanceOf(suite.db, suite.accountId);
    const res = await callRaw('get_portfolio', { addresses: [holder], chains: ['base'] });
    expect(res.status).toBe(502);
    expect(JSON.stringify(res.body)).toContain('evm:base');
    expect(await balanceOf(suite.db, suite.accountId)).toBe(before);
  });

  it('reads Solana SOL and SPL balances, counting listed mints and filtering the unlisted one', async () => {
    const env = await suite.call<Portfolio>('get_portfolio', { addresses: [SOL_OWNER] });
    const w = env.data.wallets[0]!;
    expect(w.holdings.map((h) => [h.symbol, h.balance_raw]).sort()).toEqual([
      ['SOL', '2500000000'],
      ['USDC', '125500000'],
    ]);
    expect(env.data.unlisted_solana_tokens).toBe(1);
    const [sol] = await snapshot.quotes(['solana']);
    expect(w.holdings.find((h) => h.symbol === 'SOL')!.value_usd).toBeCloseTo(2.5 * sol!.price_usd, 1);
  });

  it('refuses malformed and duplicate addresses with INVALID_PARAMS naming the field, free of charge', async () => {
    const before = await balanceOf(suite.db, suite.accountId);
    const bad = await callRaw('get_portfolio', { addresses: ['0x12'] });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('addresses');
    const dup = await callRaw('get_portfolio', { addresses: [holder, holder.toLowerCase()] });
    expect(dup.status).toBe(400);
    expect(await balanceOf(suite.db, suite.accountId)).toBe(before);
  });
});

describe('get_risk_metrics', () => {
  it("measures the wallet's priced holding (ETH) with the volatility of ETH's own closes over the window", async () => {
    const env = await suite.call<{
      measured: { asset_id: string; weight: number }[];
      excluded: { symbol: string; reason: string }[];
      log_return_volatility_annualised: number;
      from: string;
      to: string;
      concentration: { hhi: number };
      var_95_1d: { fraction: number };
      beta_to_btc: number | null;
    }>('get_risk_metrics', { addresses: [holder], chains: ['ethereum'], window_days: 90 });
    expect(env.data.measured).toEqual([expect.objectContaining({ asset_id: 'ethereum', weight: 1 })]);
    expect(env.data.excluded.filter((e) => e.reason === 'no price')).toHaveLength(50);
    expect(env.data.concentration.hhi).toBe(10000);
    // One asset held: the portfolio's volatility is the asset's, from the snapshot's closes.
    const closes = (await snapshot.candles('ethereum', { interval: 'daily', from: env.data.from, to: env.data.to })).candles.map((c) => c.close);
    const r = closes.slice(1).map((c, i) => Math.log(c / closes[i]!));
    const m = r.reduce((a, b) => a + b, 0) / r.length;
    const sd = Math.sqrt(r.reduce((a, b) => a + (b - m) ** 2, 0) / (r.length - 1));
    expect(env.data.log_return_volatility_annualised).toBeCloseTo(sd * Math.sqrt(365), 5);
    expect(env.data.var_95_1d.fraction).toBeGreaterThan(0);
    expect(env.data.beta_to_btc).not.toBeNull();
    expect(env.metadata.credits_used).toBe(3);
  });

  it('is NOT_FOUND, free of charge, when nothing held has a price', async () => {
    const before = await balanceOf(suite.db, suite.accountId);
    // A fresh address on the devnet holds nothing at all.
    const res = await callRaw('get_risk_metrics', { addresses: ['0x000000000000000000000000000000000000dEaD'], chains: ['ethereum'] });
    expect(res.status).toBe(404);
    expect(await balanceOf(suite.db, suite.accountId)).toBe(before);
  });
});

describe('compare_wallets', () => {
  it('puts two wallets side by side with their shared assets', async () => {
    const other = devnet.manifest.accounts.find((a) => a.kind === 'fund')!.address;
    const env = await suite.call<{ wallets: { address: string; holdings: number; top_holding: { asset_id: string } | null }[]; shared_assets: string[] }>('compare_wallets', {
      addresses: [holder, other],
      chains: ['ethereum'],
    });
    expect(env.data.wallets.map((w) => w.address)).toEqual([holder, getAddress(other)]);
    expect(env.data.wallets[0]!.holdings).toBe(51);
    expect(env.data.shared_assets).toEqual(['ethereum']);
    expect(env.metadata.credits_used).toBe(4);
  });
});
