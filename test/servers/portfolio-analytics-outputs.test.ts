// Every portfolio-analytics tool's real answer against the output schema it declares, on the
// seeded devnet (anvil) for EVM and a loopback Solana JSON-RPC replay: priced and unpriced
// holdings, a chain that cannot be read, Solana with an unlisted mint, risk and comparison.
import { mnemonicToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../server/db/embedded.ts';
import { startDevnet, type Devnet } from '../../server/devnet/devnet.ts';
import { jsonRpcReplay, splTokenAccount, writeManifest, type LoopbackServer } from '../helpers/chain.ts';
import { caseName, expectAnswerMatchesOutput, ownTools, type OutputCase } from '../helpers/tool-outputs.ts';
import { toolSuite, type ToolSuite } from '../helpers/tools.ts';

const SERVER = 'portfolio-analytics';
const USDC_MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const UNLISTED_MINT = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';
const SOL_OWNER = 'A1TMhSGzQxMr1TboBKtgixKz1sS6REASMxPo1qsyTSJd';

let devnet: Devnet;
let solana: LoopbackServer;
let suite: ToolSuite;

/** The devnet seeds from anvil's public test mnemonic: account 1 is its exchange, 4 a fund. */
const [exchange, fund] = [1, 4].map((i) => mnemonicToAccount('test test test test test test test test test test test junk', { addressIndex: i }).address);
const some = (item: Record<string, unknown> = {}) => expect.arrayContaining([expect.objectContaining(item)]);
const priced = { wallets: some({ holdings: some({ price_usd: expect.any(Number) }) }) };
const cases: OutputCase[] = [
  { tool: 'get_portfolio', args: { addresses: [exchange, fund], chains: ['ethereum'] }, shows: { ...priced, allocation: some() } },
  { tool: 'get_portfolio', label: 'a chain unavailable', args: { addresses: [exchange], chains: ['ethereum', 'base'] }, shows: { unavailable: some({ chain: 'base' }) } },
  { tool: 'get_portfolio', label: 'solana', args: { addresses: [SOL_OWNER] }, shows: { unlisted_solana_tokens: 1 } },
  { tool: 'get_risk_metrics', args: { addresses: [exchange], chains: ['ethereum'], window_days: 90 }, shows: { measured: some() } },
  { tool: 'compare_wallets', args: { addresses: [exchange, fund], chains: ['ethereum'], window_days: 60 }, shows: { wallets: some({ risk: expect.objectContaining({ log_return_volatility_annualised: expect.any(Number), return_annualised_geometric: expect.any(Number) }) }) } },
];

beforeAll(async () => {
  devnet = await startDevnet();
  solana = await jsonRpcReplay((method) => {
    if (method === 'getBalance') return { result: { context: { slot: 341197053 }, value: 2_500_000_000 } };
    if (method === 'getTokenAccountsByOwner') {
      return { result: { context: { slot: 341197933 }, value: [splTokenAccount(SOL_OWNER, USDC_MINT, '125500000', 6), splTokenAccount(SOL_OWNER, UNLISTED_MINT, '999999000000', 6)] } };
    }
    return { error: { code: -32601, message: 'Method not found' } };
  });
  suite = await toolSuite(SERVER, 10_000, {
    ETHEREUM_RPC_URL: devnet.manifest.rpc_url,
    // Base points at a closed port: the chain that cannot be read.
    BASE_RPC_URL: `http://127.0.0.1:${await freePort()}`,
    SOLANA_RPC_URL: solana.url,
    EVM_TIMEOUT_MS: '2000',
    EVM_RETRIES: '0',
    DEVNET_MANIFEST: writeManifest(devnet.manifest),
  });
}, 120_000);
afterAll(async () => {
  await suite?.close();
  await solana?.close();
  await devnet?.stop();
});

describe('portfolio-analytics answers fit their output schemas', () => {
  it('every tool of the server declares an output schema and has a case here', () => {
    const tools = ownTools(suite, SERVER);
    expect(tools.filter((t) => !t.output).map((t) => t.name)).toEqual([]);
    expect(new Set(cases.map((c) => c.tool))).toEqual(new Set(tools.map((t) => t.name)));
  });

  it('the devnet accounts are the ones the cases name', () => {
    expect(devnet.manifest.accounts.find((a) => a.address === exchange)?.kind).toBe('exchange');
    expect(devnet.manifest.accounts.find((a) => a.address === fund)?.kind).toBe('fund');
  });

  it.each(cases.map((c) => [caseName(c), c] as const))('%s', async (_, c) => {
    await expectAnswerMatchesOutput(suite, SERVER, c);
  });
});
