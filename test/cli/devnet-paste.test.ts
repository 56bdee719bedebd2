// `cryptomcp devnet` prints a block to paste into the shell the service is started from. Pasted
// as is into bash it must run without error (no placeholders, every line an `export`), and the
// environment it leaves must be one the service accepts: x402 settled on the devnet's USDC with
// a key, payments on the devnet's chain, and the devnet's manifest.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createPublicClient, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.ts';
import { readDevnetManifest } from '../../server/devnet/manifest.ts';

const REPO = path.resolve(import.meta.dirname, '../..');
const HEADING = 'paste this into the shell you run `npm start` from:';

let child: ChildProcess;
let stdout = '';
let stderr = '';
let dataDir: string;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cmcp-devnet-paste-'));
  child = spawn(process.execPath, ['server/cli.ts', 'devnet'], {
    cwd: REPO,
    env: { ...process.env, DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  await new Promise<void>((resolve, reject) => {
    const check = () => {
      if (stdout.includes('Ctrl-C stops the node.')) resolve();
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => reject(new Error(`cryptomcp devnet exited (${code}) before printing its block\n${stdout}\n${stderr}`)));
  });
}, 90_000);

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGINT');
    await exited;
  }
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

/** The lines after the heading, up to the first blank line. */
function pasteBlock(out: string): string {
  const at = out.indexOf(HEADING);
  expect(at, `no "${HEADING}" in:\n${out}`).toBeGreaterThanOrEqual(0);
  const lines = out.slice(at + HEADING.length).split('\n').slice(1);
  if (lines[0] === '') lines.shift();
  const end = lines.indexOf('');
  return lines.slice(0, end < 0 ? undefined : end).join('\n');
}

describe('cryptomcp devnet', { timeout: 60_000 }, () => {
  it('prints a block that bash runs as is and that leaves an environment the service accepts, with a settlement key funded for gas', async () => {
    const block = pasteBlock(stdout);
    expect(block).not.toMatch(/[<>]/);
    for (const line of block.split('\n')) expect(line).toMatch(/^\s*(export [A-Z0-9_]+=|#)/);

    // Paste into a clean bash and read back what it exported.
    const out = execFileSync('bash', ['-euc', `${block}\nenv -0`], { encoding: 'utf8', env: { PATH: process.env.PATH } });
    const env = Object.fromEntries(
      out
        .split('\0')
        .filter(Boolean)
        .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
    ) as Record<string, string>;

    const manifest = readDevnetManifest(env.DEVNET_MANIFEST!);
    const config = loadConfig(env);
    expect(config.devnetManifest).toBe(path.join(dataDir, 'devnet', 'manifest.json'));
    expect(config.evm.rpcUrls.ethereum).toBe(manifest.rpc_url);
    expect(config.x402).toMatchObject({
      network: `eip155:${manifest.chain_id}`,
      asset: manifest.payments.usdc.address,
      payTo: manifest.payments.treasury.address,
      rpcUrl: manifest.rpc_url,
    });
    expect(config.x402!.settlementKey).toMatch(/^0x[0-9a-f]{64}$/);
    const settler = privateKeyToAccount(config.x402!.settlementKey as Hex).address;
    expect(await createPublicClient({ transport: http(manifest.rpc_url) }).getBalance({ address: settler })).toBeGreaterThan(0n);
    expect(config.payments.chains).toEqual([
      expect.objectContaining({ chain: 'ethereum', chainId: manifest.chain_id, token: manifest.payments.usdc.address.toLowerCase(), confirmations: 1 }),
    ]);
  });
});
