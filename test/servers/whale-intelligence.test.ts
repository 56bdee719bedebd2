// whale-intelligence against a real seeded devnet (anvil), over the real gateway and the SDK client.
// Every expected value is recomputed here from the devnet manifest (what the seed did) and the
// snapshot's ETH price, never copied from an answer.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createPublicClient, createWalletClient, erc20Abi, formatEther, formatUnits, getAddress, http as viemHttp, parseEther, parseUnits, type Address, type Hash } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../server/db/embedded.ts';
import { startDevnet, type Devnet, type DevnetTransfer } from '../../server/devnet/devnet.ts';
import { SnapshotProvider } from '../../server/providers/market/snapshot.ts';
import { WHALE_DEFAULT_BLOCKS, WHALE_MAX_BLOCKS } from '../../server/servers/whale-intelligence/scan.ts';
import { MAX_WATCHES_PER_ACCOUNT } from '../../server/watchlists/types.ts';
import { balanceOf, createAccountWithKey, mcpClient, post, toolCall } from '../helpers/service.ts';
import { toolSuite, type ToolSuite } from '../helpers/tools.ts';

/** Anvil's public test mnemonic, which the devnet seeds from (its keys are worthless). */
const MNEMONIC = 'test test test test test test test test test test test junk';

let devnet: Devnet;
let suite: ToolSuite;
let solana: SolanaReplay;
let slowRpc: RpcProxy;
let ethUsd: number;
let lastSeedBlock: number;

const account = (label: string) => devnet.manifest.accounts.find((a) => a.label === label)!;
const kindOf = (address: string) => devnet.manifest.accounts.find((a) => a.address === address)?.kind;
const labelOf = (address: string) => devnet.manifest.accounts.find((a) => a.address === address)?.label;
const token = (symbol: string) => devnet.manifest.tokens.find((t) => t.symbol === symbol)!;
const decimalsOf = (asset: string) => (asset === 'ETH' ? 18 : token(asset).decimals);
const round2 = (x: number) => Math.round(x * 100) / 100;
const usdOfEth = (wei: string | bigint) => round2(Number(formatEther(BigInt(wei))) * ethUsd);

/** The direction rule restated: exchanges by label (each devnet exchange has one address). */
function expectedDirection(t: DevnetTransfer): string {
  const fromEx = kindOf(t.from) === 'exchange';
  const toEx = kindOf(t.to) === 'exchange';
  if (fromEx && toEx) return labelOf(t.from) === labelOf(t.to) ? 'within_exchange' : 'between_exchanges';
  return toEx ? 'to_exchange' : fromEx ? 'from_exchange' : 'none';
}

const url = () => `${suite.svc.url}/mcp/whale-intelligence`;
const raw = (name: string, args: Record<string, unknown>, key = suite.key) => post(url(), toolCall(name, args), { 'x-api-key': key });
type ErrorBody = { error: { code: string; message: string; details: { provider?: string; issues?: { path: string; message: string }[] } } };

beforeAll(async () => {
  devnet = await startDevnet();
  lastSeedBlock = Math.max(...devnet.manifest.transfers.map((t) => t.block));
  const manifestFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cmcp-whale-')), 'manifest.json');
  fs.writeFileSync(manifestFile, JSON.stringify(devnet.manifest));
  ethUsd = (await new SnapshotProvider().quotes(['ethereum']))[0]!.price_usd;
  solana = await startSolanaReplay();
  slowRpc = await startRpcProxy(devnet.manifest.rpc_url);
  // Polygon points at a closed port: the "RPC down" case.
  suite = await toolSuite('whale-intelligence', 10_000, {
    ETHEREUM_RPC_URL: devnet.manifest.rpc_url,
    POLYGON_RPC_URL: `http://127.0.0.1:${await freePort()}`,
    EVM_TIMEOUT_MS: '2000',
    EVM_RETRIES: '0',
    DEVNET_MANIFEST: manifestFile,
    SOLANA_RPC_URL: solana.url,
    // Base reaches the same devnet through a proxy that can slow block fetches down.
    BASE_RPC_URL: slowRpc.url,
  });
}, 120_000);
afterAll(async () => {
  await suite?.close();
  await devnet?.stop();
  await solana?.close();
  await slowRpc?.close();
});

type WhaleRow = { tx_hash: string; block: number; asset: string; amount: string; amount_raw: string; usd: number | null; from: string; to: string; from_label: { label: string } | null; to_label: { label: string } | null; direction: string };

describe('get_whale_transactions', () => {
  it('native transfers at or above a USD bar are exactly the seeded ETH transfers worth that much at the snapshot price, labelled, with their direction', async () => {
    const minUsd = 100_000;
    const expected = devnet.manifest.transfers.filter((t) => t.asset === 'ETH' && Number(formatEther(BigInt(t.amount))) * ethUsd >= minUsd);
    // The bar must split the seed for the test to mean something: some ETH transfers fall below it.
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(devnet.manifest.transfers.filter((t) => t.asset === 'ETH').length);
    const env = await suite.call<{ total: number; transactions: WhaleRow[]; prices: { asset_id: string; price_usd: number }[] }>('get_whale_transactions', {
      from_block: 0,
      to_block: lastSeedBlock,
      min_usd: minUsd,
    });
    expect(env.metadata.credits_used).toBe(2);
    expect(env.data.total).toBe(expected.length);
    expect(env.data.prices).toEqual([expect.objectContaining({ asset_id: 'ethereum', price_usd: ethUsd })]);
    // Newest first.
    const byNewest = [...expected].sort((a, b) => b.block - a.block);
    expect(env.data.transactions.map((r) => r.tx_hash)).toEqual(byNewest.map((t) => t.tx_hash));
    for (const t of expected) {
      const row = env.data.transactions.find((r) => r.tx_hash === t.tx_hash)!;
      expect(row).toMatchObject({ asset: 'ETH', from: t.from, to: t.to, amount_raw: t.amount, amount: formatEther(BigInt(t.amount)), usd: usdOfEth(t.amount), direction: expectedDirection(t) });
      expect(row.from_label?.label).toBe(labelOf(t.from));
      expect(row.to_label?.label).toBe(labelOf(t.to));
    }
  });

  it('an unpriced token takes a threshold in whole tokens: DPT transfers of at least 100,000 are the seeded ones plus the mint, with exchange deposits and withdrawals', async () => {
    const dpt = token('DPT');
    const bar = parseUnits('100000', dpt.decimals);
    const expected = devnet.manifest.transfers.filter((t) => t.asset === 'DPT' && BigInt(t.amount) >= bar);
    // The constructor minted the whole supply to the deployer: what all holders hold after the seed.
    const supply = Object.values(devnet.manifest.balances.DPT!).reduce((s, b) => s + BigInt(b), 0n);
    const env = await suite.call<{ total: number; transactions: (WhaleRow & { kind: string })[]; by_direction: Record<string, number> }>('get_whale_transactions', {
      token: dpt.address,
      min_amount: '100000',
      from_block: 0,
      to_block: lastSeedBlock,
    });
    expect(env.data.total).toBe(expected.length + 1);
    const mint = env.data.transactions.find((r) => r.kind === 'mint')!;
    expect(mint).toMatchObject({ from: '0x0000000000000000000000000000000000000000', to: account('Devnet deployer').address, amount_raw: supply.toString(), direction: 'none' });
    const transfers = env.data.transactions.filter((r) => r.kind === 'transfer');
    expect(new Set(transfers.map((r) => r.tx_hash))).toEqual(new Set(expected.map((t) => t.tx_hash)));
    for (const t of expected) {
      const row = transfers.find((r) => r.tx_hash === t.tx_hash)!;
      expect(row).toMatchObject({ asset: 'DPT', amount: formatUnits(BigInt(t.amount), dpt.decimals), usd: null, direction: expectedDirection(t) });
    }
    const directions = expected.map(expectedDirection);
    expect(directions).toContain('to_exchange');
    expect(directions).toContain('from_exchange');
    expect(env.data.by_direction.to_exchange).toBe(directions.filter((d) => d === 'to_exchange').length);
    expect(env.data.by_direction.from_exchange).toBe(directions.filter((d) => d === 'from_exchange').length);
  });

  it('a USD bar on a token without a price is 400 naming min_amount; a window over 1,000 blocks is 400 naming the bound; neither is charged', async () => {
    const before = await balanceOf(suite.db, suite.accountId);
    const unpriced = await raw('get_whale_transactions', { token: token('DUSD').address, min_usd: 1000 });
    expect(unpriced.status).toBe(400);
    expect((unpriced.body as ErrorBody).error.details.issues![0]!.path).toBe('min_amount');
    const wide = await raw('get_whale_transactions', { from_block: 0, to_block: WHALE_MAX_BLOCKS });
    expect(wide.status).toBe(400);
    expect((wide.body as ErrorBody).error.message).toContain(String(WHALE_MAX_BLOCKS));
    const noToken = await raw('get_whale_transactions', { min_amount: '5' });
    expect(noToken.status).toBe(400);
    expect((noToken.body as ErrorBody).error.details.issues![0]!.path).toBe('min_amount');
    expect(await balanceOf(suite.db, suite.accountId)).toBe(before);
  });
});

describe('get_exchange_flows', () => {
  type Flow = { exchange: string; addresses: string[]; inflow: string; outflow: string; net: string; net_raw: string; net_usd: number | null; transfers_in: number; transfers_out: number };

  /** Inflow and outflow per exchange label, summed from the manifest. */
  function expectedFlows(asset: string) {
    const flows = new Map<string, { inflow: bigint; outflow: bigint; in: number; out: number }>();
    const of = (label: string) => flows.get(label) ?? flows.set(label, { inflow: 0n, outflow: 0n, in: 0, out: 0 }).get(label)!;
    for (const t of devnet.manifest.transfers.filter((x) => x.asset === asset)) {
      const d = expectedDirection(t);
      if (d === 'none' || d === 'within_exchange') continue;
      if (kindOf(t.from) === 'exchange') {
        of(labelOf(t.from)!).outflow += BigInt(t.amount);
        of(labelOf(t.from)!).out += 1;
      }
      if (kindOf(t.to) === 'exchange') {
        of(labelOf(t.to)!).inflow += BigInt(t.amount);
        of(labelOf(t.to)!).in += 1;
      }
    }
    return flows;
  }

  it("a 6-decimal token's inflow, outflow and net per exchange are the seeded sums", async () => {
    const dusd = token('DUSD');
    const expected = expectedFlows('DUSD');
    expect(expected.size).toBe(devnet.manifest.accounts.filter((a) => a.kind === 'exchange').length);
    const env = await suite.call<{ exchanges: number; flows: Flow[]; totals: { net_raw: string } }>('get_exchange_flows', { token: dusd.address, from_block: 0, to_block: lastSeedBlock });
    expect(env.metadata.credits_used).toBe(3);
    expect(env.data.exchanges).toBe(expected.size);
    for (const [label, e] of expected) {
      const row = env.data.flows.find((f) => f.exchange === label)!;
      expect(row).toMatchObject({
        addresses: [devnet.manifest.accounts.find((a) => a.label === label)!.address],
        inflow: formatUnits(e.inflow, 6),
        outflow: formatUnits(e.outflow, 6),
        net: formatUnits(e.inflow - e.outflow, 6),
        net_usd: null,
        transfers_in: e.in,
        transfers_out: e.out,
      });
    }
    // Largest net first.
    const nets = env.data.flows.map((f) => BigInt(f.net_raw));
    const abs = (x: bigint) => (x < 0n ? -x : x);
    for (let i = 1; i < nets.length; i++) expect(abs(nets[i - 1]!) >= abs(nets[i]!)).toBe(true);
    const total = [...expected.values()].reduce((s, e) => s + e.inflow - e.outflow, 0n);
    expect(env.data.totals.net_raw).toBe(total.toString());
  });

  it('native flows are valued in USD at the snapshot ETH price', async () => {
    const expected = expectedFlows('ETH');
    const env = await suite.call<{ flows: Flow[] }>('get_exchange_flows', { token: 'native', from_block: 0, to_block: lastSeedBlock });
    expect(env.data.flows).toHaveLength(expected.size);
    for (const [label, e] of expected) {
      const row = env.data.flows.find((f) => f.exchange === label)!;
      expect(row).toMatchObject({ net: formatEther(e.inflow - e.outflow), transfers_in: e.in, transfers_out: e.out });
      expect(row.net_usd).toBeCloseTo(usdOfEth(e.inflow) - usdOfEth(e.outflow), 2);
    }
  });
});

describe('profile_wallet', () => {
  type Profile = { class: string; label: { label: string; kind: string } | null; evidence: string[]; flow_score: number | null; flow_score_basis: string | null; is_contract: boolean };
  const profile = (address: string) => suite.call<Profile>('profile_wallet', { address, from_block: 0, to_block: lastSeedBlock });

  /** The mean over assets of (received - sent) / (received + sent), from the manifest. */
  function expectedScore(address: string): number {
    const ratios: number[] = [];
    for (const asset of new Set(devnet.manifest.transfers.map((t) => t.asset))) {
      const mine = devnet.manifest.transfers.filter((t) => t.asset === asset && (t.from === address || t.to === address));
      if (mine.length === 0) continue;
      const scale = 10 ** decimalsOf(asset);
      const received = mine.filter((t) => t.to === address).reduce((s, t) => s + Number(t.amount) / scale, 0);
      const sent = mine.filter((t) => t.from === address).reduce((s, t) => s + Number(t.amount) / scale, 0);
      ratios.push((received - sent) / (received + sent));
    }
    return ratios.reduce((a, b) => a + b, 0) / ratios.length;
  }

  it('a wallet that received far more than it sent is an accumulator, with its flow score as evidence', async () => {
    const b = account('Devnet wallet B');
    const env = await profile(b.address);
    expect(env.metadata.credits_used).toBe(3);
    expect(env.data.class).toBe('accumulator');
    expect(env.data.label).toMatchObject({ label: 'Devnet wallet B', kind: 'wallet' });
    expect(env.data.flow_score_basis).toBe('mean_per_asset');
    expect(env.data.flow_score).toBeCloseTo(expectedScore(b.address), 5);
    expect(env.data.evidence[0]).toContain('flow score');
    expect(env.data.evidence).toContain('labelled "Devnet wallet B" (wallet) by devnet manifest');
  });

  it('the deployer, which only sent out what it minted, is a distributor (mints are left out)', async () => {
    const deployer = account('Devnet deployer');
    expect(expectedScore(deployer.address)).toBe(-1);
    const env = await profile(deployer.address);
    expect(env.data.class).toBe('distributor');
    expect(env.data.flow_score).toBe(-1);
    expect(env.data.evidence.some((e) => e.includes('minted'))).toBe(true);
  });

  it('an exchange-labelled address is exchange-like by its label, and a token contract is a contract', async () => {
    const ex = await profile(account('Coinbase (devnet)').address);
    expect(ex.data.class).toBe('exchange-like');
    expect(ex.data.evidence[0]).toContain('Coinbase (devnet)');
    const contract = await profile(token('DMT').address);
    expect(contract.data).toMatchObject({ class: 'contract', is_contract: true });
    expect(contract.data.evidence[0]).toMatch(/^holds \d+ bytes of contract code/);
  });

  it('an address that moved nothing is inactive', async () => {
    // An account of the devnet mnemonic the seed never uses.
    const env = await profile(mnemonicToAccount(MNEMONIC, { addressIndex: 15 }).address);
    expect(env.data).toMatchObject({ class: 'inactive', label: null, flow_score: null });
  });
});

describe('watchlists', () => {
  const chain = () => ({ ...foundry, rpcUrls: { default: { http: [devnet.manifest.rpc_url] } } });
  const wallet = (index: number) => createWalletClient({ account: mnemonicToAccount(MNEMONIC, { addressIndex: index }), chain: chain(), transport: viemHttp(devnet.manifest.rpc_url) });
  const indexOf = (label: string) => devnet.manifest.accounts.findIndex((a) => a.label === label);
  const mined = async (hash: Hash) => {
    const receipt = await createPublicClient({ chain: chain(), transport: viemHttp(devnet.manifest.rpc_url) }).waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('success');
    return Number(receipt.blockNumber);
  };
  type Activity = { watched: string; direction: string; tx_hash: string; asset: string; amount: string; usd: number | null; counterparty: string; counterparty_label: { label: string } | null };
  type ActivityData = { total: number; caught_up: boolean; activity: Activity[]; coverage: { chain: string }[] };

  it('watch → new transfers on the devnet → get_watch_activity shows exactly those → a second call shows nothing new', async () => {
    const c = account('Devnet wallet C');
    const d = account('Devnet wallet D');
    const a = account('Devnet wallet A');
    const first = await suite.call<{ created: boolean; watch: { address: string; last_checked_block: number } }>('watch_address', { address: c.address.toLowerCase(), note: 'wallet C' });
    expect(first.data).toMatchObject({ created: true, watch: { address: c.address } });
    expect(first.metadata.credits_used).toBe(1);
    // Watching the same address again is idempotent: the same watch, its mark kept.
    const again = await suite.call<{ created: boolean; watch: { last_checked_block: number; note: string } }>('watch_address', { address: c.address });
    expect(again.data).toMatchObject({ created: false, watch: { last_checked_block: first.data.watch.last_checked_block, note: 'wallet C' } });
    await suite.call('watch_address', { address: d.address });
    const list = await suite.call<{ total: number; watches: { address: string; label: { label: string } }[] }>('list_watches', {});
    expect(list.data.total).toBe(2);
    expect(list.data.watches.map((w) => [w.address, w.label.label])).toEqual([
      [c.address, 'Devnet wallet C'],
      [d.address, 'Devnet wallet D'],
    ]);

    // Nothing happened yet since the watches began.
    expect((await suite.call<ActivityData>('get_watch_activity', {})).data).toMatchObject({ total: 0, caught_up: true });

    // New activity: C pays D 7 DPT (news for both), D sends 1.5 ETH to A, and A pays B (no watched party).
    const dpt = token('DPT');
    const cToD = await wallet(indexOf('Devnet wallet C')).writeContract({ address: dpt.address, abi: erc20Abi, functionName: 'transfer', args: [d.address, parseUnits('7', dpt.decimals)] });
    await mined(cToD);
    const dToA = await wallet(indexOf('Devnet wallet D')).sendTransaction({ to: a.address, value: parseEther('1.5') });
    await mined(dToA);
    const unrelated = await wallet(indexOf('Devnet wallet A')).writeContract({ address: dpt.address, abi: erc20Abi, functionName: 'transfer', args: [account('Devnet wallet B').address, 1n] });
    await mined(unrelated);

    const before = await balanceOf(suite.db, suite.accountId);
    const env = await suite.call<ActivityData>('get_watch_activity', {});
    expect(env.metadata.credits_used).toBe(2);
    expect(await balanceOf(suite.db, suite.accountId)).toBe(before - 2);
    expect(env.data).toMatchObject({ total: 3, caught_up: true });
    expect(env.data.activity.map((x) => [x.tx_hash, x.watched, x.direction, x.asset, x.amount, x.counterparty])).toEqual([
      [cToD, c.address, 'out', 'DPT', '7', d.address],
      [cToD, d.address, 'in', 'DPT', '7', c.address],
      [dToA, d.address, 'out', 'ETH', '1.5', a.address],
    ]);
    expect(env.data.activity[2]!.usd).toBe(usdOfEth(parseEther('1.5')));
    expect(env.data.activity[2]!.counterparty_label?.label).toBe('Devnet wallet A');

    const second = await suite.call<ActivityData>('get_watch_activity', {});
    expect(second.data).toMatchObject({ total: 0, caught_up: true, activity: [] });
  });

  it('a limit stops at a block boundary and leaves the rest for the next call', async () => {
    const c = account('Devnet wallet C');
    const cWallet = wallet(indexOf('Devnet wallet C'));
    const dpt = token('DPT');
    const hashes: Hash[] = [];
    for (const amount of ['1', '2', '3']) {
      const hash = await cWallet.writeContract({ address: dpt.address, abi: erc20Abi, functionName: 'transfer', args: [account('Devnet wallet B').address as Address, parseUnits(amount, dpt.decimals)] });
      await mined(hash);
      hashes.push(hash);
    }
    const firstPage = await suite.call<ActivityData>('get_watch_activity', { limit: 2 });
    expect(firstPage.data.caught_up).toBe(false);
    expect(firstPage.data.activity.map((x) => x.tx_hash)).toEqual(hashes.slice(0, 2));
    const rest = await suite.call<ActivityData>('get_watch_activity', { limit: 2 });
    expect(rest.data).toMatchObject({ caught_up: true });
    expect(rest.data.activity.map((x) => [x.tx_hash, x.watched, x.amount])).toEqual([[hashes[2], c.address, '3']]);
  });

  it('a chain whose RPC fails is listed under unavailable with its provider while the others answer; its marks stay; all chains failing is 502, free, no mark moved', async () => {
    // A watch on polygon, whose RPC is down (inserted directly: watch_address itself needs the RPC).
    const onPolygon = account('Devnet wallet A').address;
    await suite.db.query(`INSERT INTO watches (account_id, chain, address, last_checked_block) VALUES ($1, 'polygon', $2, 5)`, [suite.accountId, onPolygon.toLowerCase()]);
    const marks = async () => (await suite.db.query<{ chain: string; address: string; last_checked_block: number }>('SELECT chain, address, last_checked_block FROM watches WHERE account_id = $1 ORDER BY id', [suite.accountId])).rows;
    const polygonMark = async () => (await marks()).find((m) => m.chain === 'polygon')!.last_checked_block;

    // Only the dead chain asked for: nothing can be answered, so the call fails whole and is free.
    const before = await balanceOf(suite.db, suite.accountId);
    const marksBefore = await marks();
    const dead = await raw('get_watch_activity', { chain: 'polygon' });
    expect(dead.status).toBe(502);
    expect((dead.body as ErrorBody).error.details.provider).toBe('evm:polygon');
    expect(await balanceOf(suite.db, suite.accountId)).toBe(before);
    expect(await marks()).toEqual(marksBefore);
    const watchDown = await raw('watch_address', { chain: 'polygon', address: account('Devnet wallet B').address });
    expect(watchDown.status).toBe(502);
    expect(await balanceOf(suite.db, suite.accountId)).toBe(before);
    expect((await marks()).length).toBe(marksBefore.length);

    // All chains: ethereum answers its new transfer, polygon is listed as unavailable and keeps its mark.
    await mined(await wallet(indexOf('Devnet wallet D')).sendTransaction({ to: account('Devnet wallet A').address, value: 1n }));
    const env = await suite.call<ActivityData & { unavailable?: { chain: string; code: string; provider: string; watches: string[] }[] }>('get_watch_activity', {});
    expect(env.data.total).toBe(1);
    expect(env.data.activity[0]).toMatchObject({ chain: 'ethereum' });
    expect(env.data.unavailable).toEqual([{ chain: 'polygon', code: 'UPSTREAM_ERROR', provider: 'evm:polygon', watches: [onPolygon] }]);
    expect(env.data.caught_up).toBe(false);
    expect(env.data.coverage.every((c) => c.chain !== 'polygon')).toBe(true);
    expect(await polygonMark()).toBe(5);
    expect(await balanceOf(suite.db, suite.accountId)).toBe(before - 2);
    await suite.db.query(`DELETE FROM watches WHERE account_id = $1 AND chain = 'polygon'`, [suite.accountId]);
    // The ethereum marks moved past what was reported: nothing new comes twice.
    const again = await suite.call<ActivityData>('get_watch_activity', { chain: 'ethereum' });
    expect(again.data.total).toBe(0);
  });

  it('unwatch removes; unwatching an unknown address is 404; a malformed or wrong-family address is 400 naming the field; none of the failures is charged', async () => {
    const c = account('Devnet wallet C');
    const removed = await suite.call<{ removed: boolean }>('unwatch_address', { address: c.address });
    expect(removed.data.removed).toBe(true);
    const list = await suite.call<{ watches: { address: string }[] }>('list_watches', {});
    expect(list.data.watches.map((w) => w.address)).toEqual([account('Devnet wallet D').address]);
    const before = await balanceOf(suite.db, suite.accountId);
    const unknown = await raw('unwatch_address', { address: c.address });
    expect(unknown.status).toBe(404);
    expect((unknown.body as ErrorBody).error.code).toBe('NOT_FOUND');
    const bad = await raw('watch_address', { address: '0xnot-an-address' });
    expect(bad.status).toBe(400);
    expect((bad.body as ErrorBody).error.details.issues![0]!.path).toBe('address');
    // An address of the other chain family is malformed for this chain.
    const evmOnSolana = await raw('watch_address', { chain: 'solana', address: c.address });
    expect(evmOnSolana.status).toBe(400);
    expect((evmOnSolana.body as ErrorBody).error.details.issues![0]!.path).toBe('address');
    const solanaOnEvm = await raw('watch_address', { chain: 'base', address: SOL_WATCHED });
    expect(solanaOnEvm.status).toBe(400);
    expect((solanaOnEvm.body as ErrorBody).error.details.issues![0]!.path).toBe('address');
    expect(await balanceOf(suite.db, suite.accountId)).toBe(before);
  });

  it(`an account watches at most ${MAX_WATCHES_PER_ACCOUNT} addresses; the next is 400 and not charged; other accounts are unaffected`, async () => {
    const { key, account: other } = await createAccountWithKey(suite.db, { plan: 'suite-whale-intelligence' });
    const client = await mcpClient(suite.svc.url, 'whale-intelligence', key);
    try {
      for (let i = 1; i <= MAX_WATCHES_PER_ACCOUNT; i++) {
        const address = getAddress(`0x${i.toString(16).padStart(40, '0')}`);
        const res = (await client.callTool({ name: 'watch_address', arguments: { address } })).structuredContent as { success: boolean };
        expect(res.success).toBe(true);
      }
      const before = await balanceOf(suite.db, other.id);
      const over = await raw('watch_address', { address: '0x00000000000000000000000000000000000000ff' }, key);
      expect(over.status).toBe(400);
      expect((over.body as ErrorBody).error.message).toContain(String(MAX_WATCHES_PER_ACCOUNT));
      expect(await balanceOf(suite.db, other.id)).toBe(before);
      // Re-watching one already on the full list is still fine (idempotent, not a new watch).
      const again = (await client.callTool({ name: 'watch_address', arguments: { address: getAddress(`0x${'1'.padStart(40, '0')}`) } })).structuredContent as { success: boolean; data: { created: boolean } };
      expect(again).toMatchObject({ success: true, data: { created: false } });
      // The first account's list is its own.
      const mine = await suite.call<{ total: number }>('list_watches', {});
      expect(mine.data.total).toBe(1);
    } finally {
      await client.close();
    }
  });
});

describe('a watch far behind the chain', () => {
  it(`is brought up to date ${WHALE_MAX_BLOCKS} blocks per call, never skipping a block`, async () => {
    const rpc = (method: string, params: unknown[]) =>
      fetch(devnet.manifest.rpc_url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) }).then(
        async (r) => ((await r.json()) as { result: unknown }).result,
      );
    const d = account('Devnet wallet D');
    // D is watched (from the tests above), its mark at the head; one and a half windows of empty blocks pass, then D moves.
    await suite.call<ActivityCheck>('get_watch_activity', {});
    const mark = Number(BigInt((await rpc('eth_blockNumber', [])) as string));
    await rpc('anvil_mine', [`0x${((WHALE_MAX_BLOCKS * 3) / 2).toString(16)}`]);
    const wallet = createWalletClient({ account: mnemonicToAccount(MNEMONIC, { addressIndex: devnet.manifest.accounts.indexOf(d) }), chain: foundry, transport: viemHttp(devnet.manifest.rpc_url) });
    const hash = await wallet.sendTransaction({ to: account('Devnet wallet A').address, value: 2n });
    const block = Number((await createPublicClient({ chain: foundry, transport: viemHttp(devnet.manifest.rpc_url) }).waitForTransactionReceipt({ hash })).blockNumber);
    expect(block - mark).toBeGreaterThan(WHALE_MAX_BLOCKS);

    const first = await suite.call<ActivityCheck>('get_watch_activity', {});
    expect(first.data).toMatchObject({ total: 0, caught_up: false, coverage: [{ address: d.address, from_block: mark + 1, to_block: mark + WHALE_MAX_BLOCKS, caught_up: false }] });
    const second = await suite.call<ActivityCheck>('get_watch_activity', {});
    expect(second.data).toMatchObject({ total: 1, caught_up: true, coverage: [{ from_block: mark + WHALE_MAX_BLOCKS + 1, to_block: block }] });
    expect(second.data.activity[0]).toMatchObject({ tx_hash: hash, watched: d.address, direction: 'out', amount_raw: '2' });
  });
});

describe('the block-fetch budget of get_watch_activity', () => {
  it('on a slow node one call scans what it can in its time budget, moves the mark only that far, and the next call goes on from there', async () => {
    const rpc = (method: string, params: unknown[]) =>
      fetch(devnet.manifest.rpc_url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) }).then(
        async (r) => ((await r.json()) as { result: unknown }).result,
      );
    const c = account('Devnet wallet C');
    const watched = await suite.call<{ watch: { last_checked_block: number } }>('watch_address', { chain: 'base', address: c.address });
    const mark = watched.data.watch.last_checked_block;
    await rpc('anvil_mine', [`0x${WHALE_MAX_BLOCKS.toString(16)}`]);
    // Every batch of blocks now takes a second: the 10 s budget cannot cover 1,000 blocks (40 batches).
    slowRpc.blockDelayMs = 1000;
    const slow = await suite.call<ActivityCheck>('get_watch_activity', { chain: 'base' });
    slowRpc.blockDelayMs = 0;
    const reached = slow.data.coverage[0]!.to_block;
    expect(slow.data).toMatchObject({ caught_up: false, coverage: [{ from_block: mark + 1, caught_up: false }] });
    expect(reached - mark).toBeGreaterThan(0);
    expect(reached - mark).toBeLessThan(WHALE_MAX_BLOCKS);
    const next = await suite.call<ActivityCheck>('get_watch_activity', { chain: 'base' });
    expect(next.data).toMatchObject({ caught_up: true, coverage: [{ from_block: reached + 1 }] });
    await suite.call('unwatch_address', { chain: 'base', address: c.address });
  }, 90_000);
});

describe('default window', () => {
  it(`without from_block and to_block a call covers the last ${WHALE_DEFAULT_BLOCKS} blocks`, async () => {
    const head = await createPublicClient({ chain: foundry, transport: viemHttp(devnet.manifest.rpc_url) }).getBlockNumber({ cacheTime: 0 });
    expect(Number(head)).toBeGreaterThan(WHALE_DEFAULT_BLOCKS);
    const env = await suite.call<{ from_block: number; to_block: number }>('get_whale_transactions', {});
    expect(env.data).toMatchObject({ from_block: Number(head) - WHALE_DEFAULT_BLOCKS + 1, to_block: Number(head) });
  });
});

type ActivityCheck = {
  total: number;
  caught_up: boolean;
  coverage: { address: string; from_block: number; to_block: number; caught_up: boolean }[];
  activity: { tx_hash: string; watched: string; direction: string; amount_raw: string }[];
};

describe('Solana watches (against a loopback server replaying the documented JSON-RPC shapes)', () => {
  type Row = { chain: string; watched: string; direction: string; block: number; tx_hash: string; asset: string | null; token: string | null; amount: string; usd: number | null; counterparty: string | null };
  type SolActivity = { total: number; caught_up: boolean; coverage: { unit: string; from_block: number; to_block: number }[]; activity: Row[] };

  it('a Solana watch starts at the newest slot, then reports exactly the new successful transactions (SOL less its own fee, SPL tokens), once', async () => {
    solana.reset();
    solana.addSignature(SOL_WATCHED, 'old', 100);
    const watched = await suite.call<{ created: boolean; watch: { chain: string; address: string; last_checked_block: number } }>('watch_address', { chain: 'solana', address: SOL_WATCHED });
    expect(watched.data).toMatchObject({ created: true, watch: { chain: 'solana', address: SOL_WATCHED, last_checked_block: 100 } });

    // New: SOL out (the watched address pays the fee), a failed transaction, SPL tokens in (another pays the fee).
    const solOut = solana.solTransfer({ slot: 105, from: SOL_WATCHED, to: SOL_OTHER, lamports: 1_500_000_000, fee: 5000 });
    solana.addSignature(SOL_WATCHED, 'failed', 106, { InstructionError: [0, 'Custom'] });
    const tokenIn = solana.tokenTransfer({ slot: 107, from: SOL_PAYER, to: SOL_WATCHED, mints: [SOL_MINT], amount: 250_000_000n, decimals: 6, fee: 5000 });

    const env = await suite.call<SolActivity>('get_watch_activity', { chain: 'solana' });
    expect(env.metadata.credits_used).toBe(2);
    const solUsd = (await new SnapshotProvider().quotes(['solana']))[0]!.price_usd;
    expect(env.data).toMatchObject({ total: 2, caught_up: true, coverage: [{ unit: 'slot', from_block: 101, to_block: 107 }] });
    expect(env.data.activity).toEqual([
      { chain: 'solana', watched: SOL_WATCHED, watched_label: null, direction: 'out', block: 105, tx_hash: solOut, asset: 'SOL', token: null, amount: '1.5', amount_raw: '1500000000', usd: Math.round(1.5 * solUsd * 100) / 100, counterparty: SOL_OTHER, counterparty_label: null },
      { chain: 'solana', watched: SOL_WATCHED, watched_label: null, direction: 'in', block: 107, tx_hash: tokenIn, asset: null, token: SOL_MINT, amount: '250', amount_raw: '250000000', usd: null, counterparty: SOL_PAYER, counterparty_label: null },
    ]);
    expect((await suite.call<SolActivity>('get_watch_activity', { chain: 'solana' })).data).toMatchObject({ total: 0, caught_up: true });
  });

  it('a Solana RPC failure is 502 naming the provider, charges nothing and keeps the mark; the same news comes on the next call', async () => {
    const marks = async () => (await suite.db.query<{ last_checked_block: number }>(`SELECT last_checked_block FROM watches WHERE account_id = $1 AND chain = 'solana'`, [suite.accountId])).rows;
    const markBefore = await marks();
    const later = solana.solTransfer({ slot: 120, from: SOL_OTHER, to: SOL_WATCHED, lamports: 2_000_000, fee: 5000 });
    solana.down = true;
    const before = await balanceOf(suite.db, suite.accountId);
    const res = await raw('get_watch_activity', { chain: 'solana' });
    expect(res.status).toBe(502);
    expect((res.body as ErrorBody).error.details.provider).toBe('solana');
    expect(await balanceOf(suite.db, suite.accountId)).toBe(before);
    expect(await marks()).toEqual(markBefore);
    solana.down = false;
    const env = await suite.call<SolActivity>('get_watch_activity', { chain: 'solana' });
    expect(env.data.activity.map((r) => [r.tx_hash, r.direction, r.amount, r.counterparty])).toEqual([[later, 'in', '0.002', SOL_OTHER]]);
    await suite.call('unwatch_address', { chain: 'solana', address: SOL_WATCHED });
  });

  it('an answer never outgrows the result cap: whole slots wait for the next call, and every row arrives exactly once', async () => {
    // 40 transactions in 40 slots, each bringing 4 tokens: 160 rows, far more than one answer holds.
    const mints = [SOL_MINT, 'So11111111111111111111111111111111111111112', 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB', 'DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263'];
    await suite.call('watch_address', { chain: 'solana', address: SOL_WATCHED });
    const sent = Array.from({ length: 40 }, (_, i) => solana.tokenTransfer({ slot: 1000 + i, from: SOL_PAYER, to: SOL_WATCHED, mints, amount: 1_000_000n, decimals: 6, fee: 5000 }));
    const seen: string[] = [];
    let calls = 0;
    for (;;) {
      const env = await suite.call<SolActivity>('get_watch_activity', { chain: 'solana', limit: 50 });
      expect(env.metadata).toMatchObject({ truncated: false });
      seen.push(...env.data.activity.map((r) => `${r.tx_hash}/${r.token}`));
      calls += 1;
      if (env.data.caught_up) break;
      expect(calls).toBeLessThan(40);
    }
    expect(calls).toBeGreaterThan(1);
    expect(seen).toEqual(sent.flatMap((sig) => mints.map((m) => `${sig}/${m}`)));
    await suite.call('unwatch_address', { chain: 'solana', address: SOL_WATCHED });
  });
});

// --- A loopback Solana JSON-RPC server: getSignaturesForAddress and getTransaction (jsonParsed)
// in the shapes https://solana.com/docs/rpc/http documents, over state the tests write.
const SOL_WATCHED = 'A1TMhSGzQxMr1TboBKtgixKz1sS6REASMxPo1qsyTSJd';
const SOL_OTHER = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const SOL_PAYER = 'GdnSyH3YtwcxFvQrVVJMm1JhTS4QVX7MFsX56uJLUfiZ';
const SOL_MINT = '2cHr7QS3xfuSV8wdxo3ztuF4xbiarF6Nrgx3qpx3HzXR';
const SYSTEM = '11111111111111111111111111111111';
const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';

interface SolanaReplay {
  url: string;
  down: boolean;
  reset(): void;
  addSignature(address: string, name: string, slot: number, err?: unknown): string;
  solTransfer(t: { slot: number; from: string; to: string; lamports: number; fee: number }): string;
  /** One transaction moving `amount` of each mint from `from` to `to` (the sender pays the fee). */
  tokenTransfer(t: { slot: number; from: string; to: string; mints: string[]; amount: bigint; decimals: number; fee: number }): string;
  close(): Promise<void>;
}

async function startSolanaReplay(): Promise<SolanaReplay> {
  let signatures = new Map<string, { signature: string; slot: number; err: unknown }[]>();
  let transactions = new Map<string, unknown>();
  let counter = 0;
  // base58 signatures, unique per test run.
  const signatureOf = (name: string) => `${name.replace(/[^1-9A-HJ-NP-Za-km-z]/g, '')}${'1'.repeat(20)}${(++counter).toString().replace(/0/g, 'z')}`.padEnd(88, 'x');
  const add = (address: string, signature: string, slot: number, err: unknown = null) => {
    const list = signatures.get(address) ?? [];
    list.push({ signature, slot, err });
    list.sort((a, b) => b.slot - a.slot);
    signatures.set(address, list);
  };
  const account = (pubkey: string, signer: boolean) => ({ pubkey, signer, source: 'transaction', writable: true });
  const replay: SolanaReplay = {
    url: '',
    down: false,
    reset() {
      signatures = new Map();
      transactions = new Map();
    },
    addSignature(address, name, slot, err = null) {
      const sig = signatureOf(name);
      add(address, sig, slot, err);
      return sig;
    },
    solTransfer({ slot, from, to, lamports, fee }) {
      const sig = signatureOf('sol');
      for (const a of [from, to]) add(a, sig, slot);
      transactions.set(sig, {
        slot,
        blockTime: 1_700_000_000 + slot,
        meta: { err: null, fee, preBalances: [10_000_000_000, 1_000_000_000, 1], postBalances: [10_000_000_000 - lamports - fee, 1_000_000_000 + lamports, 1], preTokenBalances: [], postTokenBalances: [], logMessages: [] },
        transaction: { signatures: [sig], message: { accountKeys: [account(from, true), account(to, false), { ...account(SYSTEM, false), writable: false }], instructions: [], recentBlockhash: 'EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N' } },
        version: 0,
      });
      return sig;
    },
    tokenTransfer({ slot, from, to, mints, amount, decimals, fee }) {
      const sig = signatureOf('spl');
      for (const a of [from, to]) add(a, sig, slot);
      const balance = (accountIndex: number, mint: string, owner: string, value: bigint) => ({
        accountIndex,
        mint,
        owner,
        programId: TOKEN_PROGRAM,
        uiTokenAmount: { amount: value.toString(), decimals, uiAmount: Number(value) / 10 ** decimals, uiAmountString: formatUnits(value, decimals) },
      });
      const start = amount * 4n;
      // Keys: the fee payer, then a sender and a receiver token account per mint, then the token program.
      const tokenAccounts = mints.flatMap((_, i) => [account(`${i + 1}SenderTokenAccount${'1'.repeat(20)}`, false), account(`${i + 1}ReceiverTokenAccount${'1'.repeat(18)}`, false)]);
      const keys = [account(from, true), ...tokenAccounts, { ...account(TOKEN_PROGRAM, false), writable: false }];
      const lamports = keys.map((_, i) => (i === 0 ? 5_000_000_000 : i === keys.length - 1 ? 1 : 2_039_280));
      transactions.set(sig, {
        slot,
        blockTime: 1_700_000_000 + slot,
        meta: {
          err: null,
          fee,
          preBalances: lamports,
          postBalances: lamports.map((l, i) => (i === 0 ? l - fee : l)),
          preTokenBalances: mints.flatMap((mint, i) => [balance(1 + 2 * i, mint, from, start), balance(2 + 2 * i, mint, to, 0n)]),
          postTokenBalances: mints.flatMap((mint, i) => [balance(1 + 2 * i, mint, from, start - amount), balance(2 + 2 * i, mint, to, amount)]),
          logMessages: [],
        },
        transaction: { signatures: [sig], message: { accountKeys: keys, instructions: [], recentBlockhash: 'EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N' } },
        version: 0,
      });
      return sig;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      if (replay.down) return void res.writeHead(503, { 'content-type': 'application/json' }).end('{}');
      const msg = JSON.parse(body) as { id: number; method: string; params: unknown[] };
      const reply = (result: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
      if (msg.method === 'getSignaturesForAddress') {
        const [address, opts] = msg.params as [string, { limit?: number; before?: string }];
        let list = signatures.get(address) ?? [];
        if (opts.before) list = list.slice(list.findIndex((s) => s.signature === opts.before) + 1);
        return reply(list.slice(0, opts.limit ?? 1000).map((s) => ({ signature: s.signature, slot: s.slot, err: s.err, memo: null, blockTime: 1_700_000_000 + s.slot, confirmationStatus: 'confirmed' })));
      }
      if (msg.method === 'getTransaction') return reply(transactions.get((msg.params as [string])[0]) ?? null);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'Method not found' } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  replay.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return replay;
}

// --- A JSON-RPC proxy in front of the devnet that can delay block fetches (a slow node).
interface RpcProxy {
  url: string;
  blockDelayMs: number;
  close(): Promise<void>;
}

async function startRpcProxy(target: string): Promise<RpcProxy> {
  const proxy: RpcProxy = { url: '', blockDelayMs: 0, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', async () => {
      if (proxy.blockDelayMs > 0 && body.includes('eth_getBlockByNumber')) await new Promise((r) => setTimeout(r, proxy.blockDelayMs));
      const answer = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return proxy;
}
