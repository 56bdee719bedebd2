// `cryptomcp devnet`: a real local EVM node (anvil, from the @foundry-rs/anvil-linux-amd64
// package), seeded deterministically with the tokens and transfers the on-chain tools are tested
// on, and a manifest of everything it created. The same devnet backs the test suite.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { createRequire } from 'node:module';
import path from 'node:path';
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  encodeFunctionData,
  getAddress,
  http,
  parseEther,
  parseUnits,
  toHex,
  type Abi,
  type Address,
  type Hex,
} from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { freePort } from '../db/embedded.ts';
import { ApiError } from '../errors.ts';

/** Anvil's well-known test mnemonic: its accounts are public and worthless. */
export const MNEMONIC = 'test test test test test test test test test test test junk';

type Artifact = { abi: Abi; bytecode: Hex };
const ARTIFACTS = JSON.parse(fs.readFileSync(new URL('./artifacts.json', import.meta.url), 'utf8')) as Record<string, Artifact>;
const artifact = (name: string): Artifact => {
  const a = ARTIFACTS[name];
  if (!a) throw new Error(`devnet artifact ${name} missing: run npm run devnet:compile`);
  return a;
};

/** Who each seeded account stands for, in the devnet's label overlay. */
export const DEVNET_LABELS = [
  { index: 0, label: 'Devnet deployer', kind: 'wallet' },
  { index: 1, label: 'Binance (devnet)', kind: 'exchange' },
  { index: 2, label: 'Coinbase (devnet)', kind: 'exchange' },
  { index: 3, label: 'Kraken (devnet)', kind: 'exchange' },
  { index: 4, label: 'Jump Trading (devnet)', kind: 'fund' },
  { index: 5, label: 'Wintermute (devnet)', kind: 'fund' },
  { index: 6, label: 'Devnet wallet A', kind: 'wallet' },
  { index: 7, label: 'Devnet wallet B', kind: 'wallet' },
  { index: 8, label: 'Devnet wallet C', kind: 'wallet' },
  { index: 9, label: 'Devnet wallet D', kind: 'wallet' },
] as const;

/** Where Multicall3 lives on every public chain (and where the devnet installs its own). */
export const MULTICALL3: Address = '0xcA11bde05977b3631167028862bE2a173976CA11';

export interface DevnetToken {
  symbol: string;
  name: string;
  decimals: number;
  kind: 'plain' | 'six-decimals' | 'mintable-pausable' | 'eip1967-proxy';
  address: Address;
  /** For the proxy: the implementation contract behind it. */
  implementation?: Address;
  owner?: Address;
}

export interface DevnetTransfer {
  asset: string;
  from: Address;
  to: Address;
  /** In the asset's smallest unit (wei for ETH), as a decimal string. */
  amount: string;
  tx_hash: Hex;
  block: number;
}

export interface DevnetManifest {
  chain_id: number;
  rpc_url: string;
  accounts: { address: Address; label: string; kind: string }[];
  tokens: DevnetToken[];
  transfers: DevnetTransfer[];
  /** Token balances after seeding: symbol → address → amount (smallest unit, decimal string). */
  balances: Record<string, Record<string, string>>;
  payments: DevnetPayments;
}

/**
 * What paying in USDC needs on the devnet (issue 21): a USDC-like token with EIP-3009 under
 * USDC's EIP-712 domain, a treasury that receives payments, and funded payer wallets. These
 * accounts are apart from the labelled ones above, whose seeded history they never touch.
 */
export interface DevnetPayments {
  usdc: { address: Address; symbol: 'USDC'; decimals: 6; eip712: { name: string; version: string }; eip3009: true };
  treasury: { address: Address; mnemonic_index: number };
  /** Wallets holding USDC (and gas): sign in with one, then pay from it. */
  payers: { address: Address; mnemonic_index: number; usdc: string }[];
}

/** Mnemonic indices of the payment accounts (anvil funds the first ten; these get ETH by RPC). */
const PAYMENT_INDICES = { issuer: 10, treasury: 11, payers: [12, 13, 14] } as const;
/** USDC each payer starts with: 10,000.00 (6 decimals). */
const PAYER_USDC = 10_000n * 10n ** 6n;

export interface Devnet {
  manifest: DevnetManifest;
  stop(): Promise<void>;
}

function anvilBinary(): string {
  const require = createRequire(import.meta.url);
  return path.join(path.dirname(require.resolve('@foundry-rs/anvil-linux-amd64/package.json')), 'bin', 'anvil');
}

async function startAnvil(port: number): Promise<ChildProcess> {
  const child = spawn(anvilBinary(), ['--host', '127.0.0.1', '--port', String(port), '--silent', '--chain-id', '31337'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 100; attempt++) {
    if (child.exitCode !== null) throw new Error(`anvil exited (${child.exitCode}): ${stderr}`);
    try {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' });
      // Answered, and by our child: it is still running (one that failed to bind has exited).
      if (res.ok && child.exitCode === null) return child;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`anvil did not answer on ${url}: ${stderr}`);
}

/**
 * Refuses a port something already listens on: anvil would fail to bind and exit, while the
 * readiness probe reached (and the seed then wrote to) the other process on that port.
 */
async function assertPortFree(port: number): Promise<void> {
  const free = await new Promise<boolean>((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
  if (!free) {
    throw new ApiError('INVALID_PARAMS', `Port ${port} is already in use on 127.0.0.1; the devnet was not started and nothing was seeded.`, {
      issues: [{ path: 'port', message: 'already in use' }],
    });
  }
}

/** Starts anvil on `port` (0: any free port), deploys and seeds; resolves when seeding is done. */
export async function startDevnet(opts: { port?: number } = {}): Promise<Devnet> {
  if (opts.port) await assertPortFree(opts.port);
  const port = opts.port || (await freePort());
  const anvil = await startAnvil(port);
  // Whatever ends this process, the node must not outlive it (kill is synchronous).
  const killOnExit = () => anvil.kill('SIGKILL');
  process.once('exit', killOnExit);
  try {
    const manifest = await seed(`http://127.0.0.1:${port}`);
    return {
      manifest,
      stop: () =>
        new Promise((resolve) => {
          process.removeListener('exit', killOnExit);
          if (anvil.exitCode !== null) return resolve();
          anvil.once('exit', () => resolve());
          anvil.kill('SIGTERM');
        }),
    };
  } catch (err) {
    anvil.kill('SIGKILL');
    throw err;
  }
}

async function seed(rpcUrl: string): Promise<DevnetManifest> {
  const chain = { ...foundry, rpcUrls: { default: { http: [rpcUrl] } } };
  const transport = http(rpcUrl);
  const pub = createPublicClient({ chain, transport });
  const accounts = DEVNET_LABELS.map((l) => mnemonicToAccount(MNEMONIC, { addressIndex: l.index }));
  const wallets = accounts.map((account) => createWalletClient({ account, chain, transport }));
  const deployer = wallets[0]!;
  const addr = (i: number) => accounts[i]!.address;

  const deploy = async (name: string, args: unknown[]): Promise<Address> => {
    const { abi, bytecode } = artifact(name);
    const hash = await deployer.deployContract({ abi, bytecode, args });
    const receipt = await pub.waitForTransactionReceipt({ hash });
    if (!receipt.contractAddress) throw new Error(`${name} was not deployed`);
    return getAddress(receipt.contractAddress);
  };

  // Multicall3's address on every public chain gets the devnet's own batch-call contract, so
  // viem's multicall (get_portfolio) works here as on mainnet. eth_call of the creation code
  // returns the runtime code without mining anything; anvil_setCode (viem's test client) puts it in place.
  const runtime = await pub.call({ data: artifact('DevMulticall').bytecode });
  if (!runtime.data) throw new Error('DevMulticall creation returned no code');
  await createTestClient({ mode: 'anvil', chain, transport }).setCode({ address: MULTICALL3, bytecode: runtime.data });

  const plain = await deploy('DevPlainToken', ['Devnet Plain Token', 'DPT', parseUnits('1000000000', 18), addr(0)]);
  const six = await deploy('DevSixDecimalsToken', ['Devnet USD', 'DUSD', parseUnits('1000000000', 6), addr(0)]);
  const managed = await deploy('DevManagedToken', ['Devnet Managed Token', 'DMT', addr(0)]);
  const implementation = await deploy('DevUpgradeableToken', []);
  const initData = encodeFunctionData({
    abi: artifact('DevUpgradeableToken').abi,
    functionName: 'initialize',
    args: ['Devnet Upgradeable Token', 'DUP', parseUnits('1000000000', 18), addr(0)],
  });
  const proxy = await deploy('DevProxy', [implementation, initData]);

  const tokens: DevnetToken[] = [
    { symbol: 'DPT', name: 'Devnet Plain Token', decimals: 18, kind: 'plain', address: plain },
    { symbol: 'DUSD', name: 'Devnet USD', decimals: 6, kind: 'six-decimals', address: six },
    { symbol: 'DMT', name: 'Devnet Managed Token', decimals: 18, kind: 'mintable-pausable', address: managed, owner: addr(0) },
    { symbol: 'DUP', name: 'Devnet Upgradeable Token', decimals: 18, kind: 'eip1967-proxy', address: proxy, implementation },
  ];
  const transfers: DevnetTransfer[] = [];
  const erc20 = artifact('DevPlainToken').abi;

  const send = async (asset: string, fromIndex: number, toIndex: number, amount: bigint) => {
    const wallet = wallets[fromIndex]!;
    const token = tokens.find((t) => t.symbol === asset);
    const hash = token
      ? await wallet.writeContract({ address: token.address, abi: erc20, functionName: 'transfer', args: [addr(toIndex), amount], chain, account: accounts[fromIndex]! })
      : await wallet.sendTransaction({ to: addr(toIndex), value: amount, chain, account: accounts[fromIndex]! });
    const receipt = await pub.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success') throw new Error(`seed transfer ${asset} ${fromIndex}->${toIndex} reverted`);
    transfers.push({ asset, from: addr(fromIndex), to: addr(toIndex), amount: amount.toString(), tx_hash: hash, block: Number(receipt.blockNumber) });
  };

  // The managed token's owner mints its supply (the owner's mint right is what tools must find).
  const mintHash = await deployer.writeContract({
    address: managed,
    abi: artifact('DevManagedToken').abi,
    functionName: 'mint',
    args: [addr(0), parseUnits('100000000', 18)],
    chain,
    account: accounts[0]!,
  });
  await pub.waitForTransactionReceipt({ hash: mintHash });

  // Transfers of many sizes: whales from the deployer to exchanges and funds, exchange withdrawals
  // to wallets, wallets depositing back, and small payments; native ETH between the same parties.
  for (const t of tokens) {
    const unit = 10n ** BigInt(t.decimals);
    await send(t.symbol, 0, 1, 50_000_000n * unit);
    await send(t.symbol, 0, 2, 20_000_000n * unit);
    await send(t.symbol, 0, 4, 5_000_000n * unit);
    await send(t.symbol, 1, 6, 250_000n * unit);
    await send(t.symbol, 1, 7, 12_345n * unit);
    await send(t.symbol, 2, 8, 999n * unit);
    await send(t.symbol, 6, 3, 100_000n * unit);
    await send(t.symbol, 7, 5, 42n * unit);
    await send(t.symbol, 4, 1, 1_000_000n * unit);
    await send(t.symbol, 8, 9, unit / 100n);
  }
  await send('ETH', 4, 1, parseEther('2500'));
  await send('ETH', 1, 6, parseEther('120'));
  await send('ETH', 6, 9, parseEther('0.5'));

  const balances: Record<string, Record<string, string>> = {};
  for (const t of tokens) {
    balances[t.symbol] = {};
    for (const a of accounts) {
      const b = (await pub.readContract({ address: t.address, abi: erc20, functionName: 'balanceOf', args: [a.address] })) as bigint;
      if (b > 0n) balances[t.symbol]![a.address] = b.toString();
    }
  }
  return {
    chain_id: await pub.getChainId(),
    rpc_url: rpcUrl,
    accounts: DEVNET_LABELS.map((l) => ({ address: addr(l.index), label: l.label, kind: l.kind })),
    tokens,
    transfers,
    balances,
    payments: await seedPayments(rpcUrl),
  };
}

/**
 * The key the service settles x402 payments with on the devnet: the USDC issuer's (test mnemonic
 * index 10), funded with gas by seedPayments. Public and worthless, like the mnemonic.
 */
export function devnetSettlementKey(): Hex {
  return toHex(mnemonicToAccount(MNEMONIC, { addressIndex: PAYMENT_INDICES.issuer }).getHdKey().privateKey!);
}

/** The payment accounts and the USDC-like token, deployed by an issuer of their own after everything else. */
async function seedPayments(rpcUrl: string): Promise<DevnetPayments> {
  const chain = { ...foundry, rpcUrls: { default: { http: [rpcUrl] } } };
  const transport = http(rpcUrl);
  const pub = createPublicClient({ chain, transport });
  const account = (index: number) => mnemonicToAccount(MNEMONIC, { addressIndex: index });
  const issuer = account(PAYMENT_INDICES.issuer);
  const treasury = account(PAYMENT_INDICES.treasury);
  const payers = PAYMENT_INDICES.payers.map(account);
  // Gas by RPC (anvil_setBalance), not by transfers: no seeded account's history changes.
  const testClient = createTestClient({ mode: 'anvil', chain, transport });
  for (const a of [issuer, treasury, ...payers]) await testClient.setBalance({ address: a.address, value: parseEther('100') });
  const { abi, bytecode } = artifact('DevUsdc');
  const hash = await createWalletClient({ account: issuer, chain, transport }).deployContract({
    abi,
    bytecode,
    args: [payers.map((p) => p.address), PAYER_USDC],
  });
  const receipt = await pub.waitForTransactionReceipt({ hash });
  if (!receipt.contractAddress) throw new Error('DevUsdc was not deployed');
  return {
    usdc: { address: getAddress(receipt.contractAddress), symbol: 'USDC', decimals: 6, eip712: { name: 'USD Coin', version: '2' }, eip3009: true },
    treasury: { address: treasury.address, mnemonic_index: PAYMENT_INDICES.treasury },
    payers: payers.map((p, i) => ({ address: p.address, mnemonic_index: PAYMENT_INDICES.payers[i]!, usdc: PAYER_USDC.toString() })),
  };
}
