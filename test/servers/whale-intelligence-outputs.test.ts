// Every whale-intelligence tool's real answer against the output schema it declares, on the seeded
// devnet (anvil): priced and whole-token thresholds, native and ERC-20 exchange flows, a wallet and
// a contract profiled, and the watch tools in the order a user calls them, with new transfers.
import { createWalletClient, erc20Abi, http as viemHttp, parseEther, parseUnits, type Hash } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevnet, type Devnet } from '../../server/devnet/devnet.ts';
import { rawRpc, writeManifest } from '../helpers/chain.ts';
import { expectAnswerMatchesOutput, ownTools, type OutputCase } from '../helpers/tool-outputs.ts';
import { toolSuite, type ToolSuite } from '../helpers/tools.ts';

const SERVER = 'whale-intelligence';
const MNEMONIC = 'test test test test test test test test test test test junk';
let devnet: Devnet;
let suite: ToolSuite;
let lastSeedBlock: number;

beforeAll(async () => {
  devnet = await startDevnet();
  lastSeedBlock = Math.max(...devnet.manifest.transfers.map((t) => t.block));
  suite = await toolSuite(SERVER, 10_000, { ETHEREUM_RPC_URL: devnet.manifest.rpc_url, EVM_RETRIES: '0', DEVNET_MANIFEST: writeManifest(devnet.manifest) });
}, 120_000);
afterAll(async () => {
  await suite?.close();
  await devnet?.stop();
});

const some = (item: Record<string, unknown> = {}) => expect.arrayContaining([expect.objectContaining(item)]);
const address = (label: string) => devnet.manifest.accounts.find((a) => a.label === label)!.address;
const token = (symbol: string) => devnet.manifest.tokens.find((t) => t.symbol === symbol)!.address;
const seeded = () => ({ from_block: 0, to_block: lastSeedBlock });

/** Cases are built once the devnet has told its addresses. */
const scans: [string, () => OutputCase][] = [
  ['get_whale_transactions', () => ({ tool: 'get_whale_transactions', args: { ...seeded(), min_usd: 0 }, shows: { transactions: some({ usd: expect.any(Number) }) } })],
  ['get_whale_transactions (whole tokens)', () => ({ tool: 'get_whale_transactions', args: { ...seeded(), token: token('DPT'), min_amount: '1' }, shows: { threshold: { min_amount: '1' }, transactions: some() } })],
  ['get_exchange_flows (native)', () => ({ tool: 'get_exchange_flows', args: { ...seeded(), token: 'native' }, shows: { flows: some({ net_usd: expect.any(Number) }) } })],
  ['get_exchange_flows (unpriced token)', () => ({ tool: 'get_exchange_flows', args: { ...seeded(), token: token('DUSD') }, shows: { flows: some({ net_usd: null }) } })],
  ['profile_wallet', () => ({ tool: 'profile_wallet', args: { ...seeded(), address: address('Binance (devnet)') }, shows: { label: expect.anything(), assets: some(), top_counterparties: some() } })],
  ['profile_wallet (a contract)', () => ({ tool: 'profile_wallet', args: { ...seeded(), address: token('DPT') }, shows: { class: 'contract' } })],
];
const WATCH_TOOLS = ['watch_address', 'list_watches', 'get_watch_activity', 'unwatch_address'];

describe('whale-intelligence answers fit their output schemas', () => {
  it('every tool of the server declares an output schema and has a case here', () => {
    const tools = ownTools(suite, SERVER);
    expect(tools.filter((t) => !t.output).map((t) => t.name)).toEqual([]);
    expect(new Set([...scans.map(([name]) => name.split(' ')[0]), ...WATCH_TOOLS])).toEqual(new Set(tools.map((t) => t.name)));
  });

  it.each(scans)('%s', async (_, c) => {
    await expectAnswerMatchesOutput(suite, SERVER, c());
  });

  it('the watch tools, in the order a user calls them, with transfers in between', async () => {
    const [a, b] = [address('Devnet wallet A'), address('Devnet wallet B')];
    const call = (c: OutputCase) => expectAnswerMatchesOutput(suite, SERVER, c);
    await call({ tool: 'watch_address', args: { address: a, note: 'wallet A' }, shows: { created: true, label: expect.anything() } });
    await call({ tool: 'watch_address', label: 'again', args: { address: a.toLowerCase() }, shows: { created: false, watch: { note: 'wallet A' } } });
    await call({ tool: 'watch_address', label: 'unlabelled', args: { address: mnemonicToAccount(MNEMONIC, { addressIndex: 17 }).address }, shows: { label: null } });

    // A receives ETH and pays B some DPT: news in both directions, priced and not.
    const chain = { ...foundry, rpcUrls: { default: { http: [devnet.manifest.rpc_url] } } };
    const wallet = (i: number) => createWalletClient({ account: mnemonicToAccount(MNEMONIC, { addressIndex: i }), chain, transport: viemHttp(devnet.manifest.rpc_url) });
    const mined = async (hash: Hash) => {
      await expect.poll(() => rawRpc<unknown>(devnet.manifest.rpc_url, 'eth_getTransactionReceipt', [hash])).toBeTruthy();
    };
    await mined(await wallet(0).sendTransaction({ to: a, value: parseEther('2') }));
    await mined(await wallet(6).writeContract({ address: token('DPT'), abi: erc20Abi, functionName: 'transfer', args: [b, parseUnits('3', 18)] }));

    await call({ tool: 'get_watch_activity', args: {}, shows: { caught_up: true, activity: some({ direction: 'in', usd: expect.any(Number) }), prices: some() } });
    await call({ tool: 'get_watch_activity', label: 'nothing new', args: { chain: 'ethereum' }, shows: { total: 0 } });
    await call({ tool: 'list_watches', args: {}, shows: { total: 2, watches: some({ label: expect.anything() }) } });
    await call({ tool: 'unwatch_address', args: { address: a } });
    await call({ tool: 'list_watches', label: 'a chain with none', args: { chain: 'solana' }, shows: { total: 0 } });
  });
});
