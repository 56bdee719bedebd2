// token-intelligence against the real seeded devnet (anvil): every expected value comes from the
// devnet's manifest (what the seed created) or from raw JSON-RPC reads, never from the tools.
import fs from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../server/db/embedded.ts';
import { startDevnet, type Devnet } from '../../server/devnet/devnet.ts';
import { TOKEN_FILES } from '../../server/providers/tokens.ts';
import { rawRpc, writeManifest } from '../helpers/chain.ts';
import { balanceOf, post, toolCall } from '../helpers/service.ts';
import { toolSuite, type ToolSuite } from '../helpers/tools.ts';

let devnet: Devnet;
let suite: ToolSuite;

/** totalSupply() straight from the node (selector 0x18160ddd). */
const totalSupply = async (token: string) => BigInt(await rawRpc<string>(devnet.manifest.rpc_url, 'eth_call', [{ to: token, data: '0x18160ddd' }, 'latest']));
const token = (symbol: string) => devnet.manifest.tokens.find((t) => t.symbol === symbol)!;
/** The seed's balances of a token, largest first. */
const seededHolders = (symbol: string) =>
  Object.entries(devnet.manifest.balances[symbol]!)
    .map(([address, amount]) => ({ address, amount: BigInt(amount) }))
    .sort((a, b) => (a.amount < b.amount ? 1 : a.amount > b.amount ? -1 : 0));

/** A tools/call over raw HTTP, to see the status code and error body. */
const callRaw = (name: string, args: Record<string, unknown>) => post(`${suite.svc.url}/mcp/token-intelligence`, toolCall(name, args), { 'x-api-key': suite.key });

beforeAll(async () => {
  devnet = await startDevnet();
  const manifestFile = writeManifest(devnet.manifest);
  suite = await toolSuite('token-intelligence', 1000, {
    MCP_SERVERS: 'token-intelligence',
    ETHEREUM_RPC_URL: devnet.manifest.rpc_url,
    BASE_RPC_URL: `http://127.0.0.1:${await freePort()}`,
    EVM_TIMEOUT_MS: '2000',
    EVM_RETRIES: '0',
    DEVNET_MANIFEST: manifestFile,
  });
});
afterAll(async () => {
  await suite?.close();
  await devnet?.stop();
});

describe('search_token', () => {
  it('finds the devnet token by symbol on the devnet chain, first and listed', async () => {
    const env = await suite.call<{ candidates: { chain: string; address: string; symbol: string; listed: boolean }[] }>('search_token', { query: 'DMT' });
    expect(env.data.candidates[0]).toMatchObject({ chain: 'ethereum', address: token('DMT').address, symbol: 'DMT', listed: true });
    expect(env.metadata.credits_used).toBe(0);
  });

  it('finds real tokens from the curated list: USDC on exactly the served chains the list carries it on, with its decimals', async () => {
    const list = parse(gunzipSync(fs.readFileSync(TOKEN_FILES.uniswap)), { columns: true }) as Record<string, string>[];
    const expected = list.filter((r) => r.symbol === 'USDC' && ['ethereum', 'base', 'polygon', 'bsc', 'solana'].includes(r.chain!));
    expect(expected.length).toBeGreaterThan(2);
    const env = await suite.call<{ candidates: { chain: string; address: string; symbol: string; decimals: number; listed: boolean }[] }>('search_token', { query: 'USDC', limit: 50 });
    const listed = env.data.candidates.filter((c) => c.listed && c.symbol === 'USDC');
    expect(listed.map((c) => [c.chain, c.address.toLowerCase(), c.decimals]).sort()).toEqual(
      expected.map((r) => [r.chain, r.chain === 'solana' ? r.address!.toLowerCase() : r.address, Number(r.decimals)]).sort(),
    );
  });
});

describe('get_token_profile', () => {
  it("reads the six-decimal token's metadata and supply from the chain and joins its registry entry", async () => {
    const t = token('DUSD');
    const env = await suite.call<{ is_erc20: boolean; on_chain: { symbol: string; decimals: number; total_supply: string }; registry: { listed: boolean; sources: string[] } }>(
      'get_token_profile',
      { address: t.address },
    );
    expect(env.data.is_erc20).toBe(true);
    expect(env.data.on_chain).toMatchObject({ symbol: t.symbol, decimals: 6, total_supply: (await totalSupply(t.address)).toString() });
    expect(env.data.registry).toMatchObject({ listed: true, sources: ['devnet manifest'] });
  });

  it('is NOT_FOUND for an address with no code, and charges nothing', async () => {
    const wallet = devnet.manifest.accounts.find((a) => a.kind === 'wallet')!.address;
    const before = await balanceOf(suite.db, suite.accountId);
    const res = await callRaw('get_token_profile', { address: wallet });
    expect(res.status).toBe(404);
    expect((res.body as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    expect(await balanceOf(suite.db, suite.accountId)).toBe(before);
  });

  it('is INVALID_PARAMS naming the field for a malformed address', async () => {
    const res = await callRaw('get_token_profile', { address: '0x1234' });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('address');
  });

  it('answers 502 naming the provider when the chain RPC is down, and charges nothing', async () => {
    const before = await balanceOf(suite.db, suite.accountId);
    const res = await callRaw('get_token_profile', { chain: 'base', address: token('DPT').address });
    expect(res.status).toBe(502);
    expect(JSON.stringify(res.body)).toContain('evm:base');
    expect(await balanceOf(suite.db, suite.accountId)).toBe(before);
  });
});

describe('get_holder_analysis', () => {
  it('counts exactly the seeded holders with their balances, and the top-10 share of supply', async () => {
    for (const symbol of ['DPT', 'DUSD']) {
      const t = token(symbol);
      const seeded = seededHolders(symbol);
      const supply = await totalSupply(t.address);
      const env = await suite.call<{
        holders_counted: number;
        total_supply: string;
        top_holders: { address: string; balance: string; label: string | null }[];
        concentration: { top10_share: number; hhi: number; gini: number };
      }>('get_holder_analysis', { token: t.address, top: 100 });
      expect(env.data.holders_counted).toBe(seeded.length);
      expect(env.data.total_supply).toBe(supply.toString());
      expect(env.data.top_holders.map((h) => [h.address, h.balance])).toEqual(seeded.map((h) => [h.address, h.amount.toString()]));
      // Labels come from the devnet overlay.
      const labelled = devnet.manifest.accounts.find((a) => a.address === seeded[0]!.address)!;
      expect(env.data.top_holders[0]!.label).toBe(labelled.label);
      const top10 = seeded.slice(0, 10).reduce((a, h) => a + h.amount, 0n);
      expect(env.data.concentration.top10_share).toBeCloseTo(Number(top10) / Number(supply), 6);
      const hhi = seeded.reduce((a, h) => a + (Number(h.amount) / Number(supply) * 100) ** 2, 0);
      expect(env.data.concentration.hhi).toBeCloseTo(hhi, 1);
      expect(env.metadata.credits_used).toBe(3);
    }
  });

  // Issue 35 item 7: an empty holder analysis reported Gini/HHI/top-10 as 0 (perfectly even) and was charged.
  it('a range with no transfer counts no holder: concentration null (not 0), and the call is free', async () => {
    const before = await balanceOf(suite.db, suite.accountId);
    const env = await suite.call<{ holders_counted: number; top_holders: unknown[]; concentration: { top10_share: number | null; hhi: number | null; gini: number | null } }>(
      'get_holder_analysis',
      { token: token('DPT').address, from_block: 0, to_block: 0 },
    );
    expect(env.data.holders_counted).toBe(0);
    expect(env.data.top_holders).toEqual([]);
    expect(env.data.concentration).toEqual({ top10_share: null, hhi: null, gini: null });
    expect(env.metadata.credits_used).toBe(0);
    expect(await balanceOf(suite.db, suite.accountId)).toBe(before);
  });

  it('refuses a block range over the bound, saying the bound', async () => {
    const res = await callRaw('get_holder_analysis', { token: token('DPT').address, from_block: 0, to_block: 20_000 });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('10000');
  });
});

describe('get_token_security', () => {
  it("finds the managed token's mint and pause functions and its active owner, the deployer", async () => {
    const t = token('DMT');
    const env = await suite.call<{ owner: { address: string; status: string }; findings: { id: string; evidence: { function: string; where: string }[] }[]; proxy: unknown }>(
      'get_token_security',
      { address: t.address },
    );
    expect(env.data.owner).toMatchObject({ address: t.owner, status: 'active' });
    const ids = env.data.findings.map((f) => f.id);
    expect(ids).toEqual(expect.arrayContaining(['mint', 'pause', 'ownership']));
    expect(env.data.findings.find((f) => f.id === 'mint')!.evidence.map((e) => e.function)).toContain('mint(address,uint256)');
    expect(ids).not.toContain('blacklist');
    expect(env.data.proxy).toBeNull();
  });

  it('reports the plain token with no mint, pause or owner', async () => {
    const env = await suite.call<{ owner: { status: string }; findings: { id: string }[] }>('get_token_security', { address: token('DPT').address });
    expect(env.data.findings.map((f) => f.id)).toEqual([]);
    expect(env.data.owner.status).toBe('none');
  });

  it("sees through the EIP-1967 proxy to the implementation the seed deployed", async () => {
    const t = token('DUP');
    const env = await suite.call<{ proxy: { implementation: string } }>('get_token_security', { address: t.address });
    expect(env.data.proxy.implementation).toBe(t.implementation);
  });
});

describe('get_risk_score', () => {
  it('itemises the managed token: mint with an active owner, pause, owner; the score is the sum of its items', async () => {
    const env = await suite.call<{ score: number; level: string; items: { factor: string; points: number }[] }>('get_risk_score', { address: token('DMT').address });
    const factors = env.data.items.map((i) => i.factor);
    expect(factors).toEqual(expect.arrayContaining(['mint', 'pause', 'owner']));
    expect(factors).not.toContain('unlisted');
    expect(env.data.items.find((i) => i.factor === 'mint')!.points).toBe(25);
    expect(env.data.score).toBe(Math.min(100, env.data.items.reduce((a, i) => a + i.points, 0)));
    expect(env.metadata.credits_used).toBe(3);
  });

  it('scores the proxied token as upgradeable and the plain token lower than the managed one', async () => {
    const proxied = await suite.call<{ items: { factor: string }[] }>('get_risk_score', { address: token('DUP').address });
    expect(proxied.data.items.map((i) => i.factor)).toContain('upgradeable');
    const plain = await suite.call<{ score: number }>('get_risk_score', { address: token('DPT').address });
    const managed = await suite.call<{ score: number }>('get_risk_score', { address: token('DMT').address });
    expect(plain.data.score).toBeLessThan(managed.data.score);
  });
});
