// The devnet: a real anvil node seeded as its manifest says, checked with independent reads.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, getAddress, http, parseAbi, parseAbiItem, type Address } from 'viem';
import { compile } from '../../scripts/devnet-compile.ts';
import { startDevnet, type Devnet } from '../../server/devnet/devnet.ts';
import artifacts from '../../server/devnet/artifacts.json' with { type: 'json' };

let devnet: Devnet;
beforeAll(async () => {
  devnet = await startDevnet();
});
afterAll(async () => {
  await devnet?.stop();
});

const erc20 = parseAbi([
  'function balanceOf(address) view returns (uint256)',
  'function decimals() view returns (uint8)',
  'function symbol() view returns (string)',
  'function owner() view returns (address)',
]);
const EIP1967_IMPLEMENTATION_SLOT = '0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc';

describe('cryptomcp devnet', () => {
  it('the committed contract artifacts are what solc compiles from the sources', () => {
    expect(compile()).toEqual(artifacts);
  });

  it('every token balance in the manifest is what the chain says', async () => {
    const client = createPublicClient({ transport: http(devnet.manifest.rpc_url) });
    expect(await client.getChainId()).toBe(31337);
    for (const token of devnet.manifest.tokens) {
      expect(await client.readContract({ address: token.address, abi: erc20, functionName: 'decimals' })).toBe(token.decimals);
      expect(await client.readContract({ address: token.address, abi: erc20, functionName: 'symbol' })).toBe(token.symbol);
      for (const account of devnet.manifest.accounts) {
        const onChain = await client.readContract({ address: token.address, abi: erc20, functionName: 'balanceOf', args: [account.address] });
        expect(onChain.toString()).toBe(devnet.manifest.balances[token.symbol]![account.address] ?? '0');
      }
    }
  });

  it('has a 6-decimals token, an owner with a mint right, and a token behind an EIP-1967 proxy', async () => {
    const client = createPublicClient({ transport: http(devnet.manifest.rpc_url) });
    const deployer = devnet.manifest.accounts[0]!.address;
    const byKind = Object.fromEntries(devnet.manifest.tokens.map((t) => [t.kind, t]));
    expect(byKind['six-decimals']!.decimals).toBe(6);
    expect(await client.readContract({ address: byKind['mintable-pausable']!.address, abi: erc20, functionName: 'owner' })).toBe(deployer);
    const slot = await client.getStorageAt({ address: byKind['eip1967-proxy']!.address, slot: EIP1967_IMPLEMENTATION_SLOT });
    expect(getAddress(`0x${slot!.slice(-40)}`)).toBe(byKind['eip1967-proxy']!.implementation);
  });

  it('the Transfer logs on chain are the seeded transfers (plus the initial mints)', async () => {
    const client = createPublicClient({ transport: http(devnet.manifest.rpc_url) });
    const event = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');
    for (const token of devnet.manifest.tokens) {
      const logs = await client.getLogs({ address: token.address as Address, event, fromBlock: 0n, toBlock: 'latest' });
      const seeded = devnet.manifest.transfers.filter((t) => t.asset === token.symbol);
      const mints = logs.filter((l) => l.args.from === '0x0000000000000000000000000000000000000000');
      expect(mints).toHaveLength(1);
      expect(logs).toHaveLength(seeded.length + 1);
      for (const t of seeded) {
        expect(logs.some((l) => l.transactionHash === t.tx_hash && l.args.to === t.to && l.args.value?.toString() === t.amount)).toBe(true);
      }
    }
    expect(devnet.manifest.accounts.filter((a) => a.kind === 'exchange')).toHaveLength(3);
  });
});

describe('cryptomcp devnet --port', () => {
  it('refuses a port another node already holds: exit 1, INVALID_PARAMS naming the port, and that node is not seeded again', async () => {
    const port = Number(new URL(devnet.manifest.rpc_url).port);
    const client = createPublicClient({ transport: http(devnet.manifest.rpc_url) });
    const deployer = devnet.manifest.accounts.find((a) => a.label === 'Devnet deployer')!.address;
    const nonceBefore = await client.getTransactionCount({ address: deployer });
    const blockBefore = await client.getBlockNumber();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'devnet-busy-'));
    const res = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ['server/cli.ts', '--json', 'devnet', '--port', String(port)], {
        cwd: path.resolve(import.meta.dirname, '../..'),
        env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
      child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
    });
    expect(res.code, res.stdout + res.stderr).toBe(1);
    const body = JSON.parse(res.stdout) as { success: boolean; error: { code: string; message: string } };
    expect(body).toMatchObject({ success: false, error: { code: 'INVALID_PARAMS' } });
    expect(body.error.message).toContain(String(port));
    expect(await client.getTransactionCount({ address: deployer })).toBe(nonceBefore);
    expect(await client.getBlockNumber()).toBe(blockBefore);
    expect(fs.existsSync(path.join(dataDir, 'devnet', 'manifest.json'))).toBe(false);
  }, 90_000);
});
