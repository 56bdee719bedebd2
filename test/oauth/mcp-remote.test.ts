// A third-party MCP client as a stdio-only desktop app uses it: mcp-remote (the bridge the Connect
// page recommends) pointed at /mcp/{server} with no key finds the authorization server from the
// 401, registers itself, and prints the authorization URL a browser would open; the person signs
// in with a wallet and approves; mcp-remote receives the code on its loopback callback, and
// initialize and a paid tools/call then go through it, charged to that wallet's account.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { accountIdByWallet } from '../../server/accounts/accounts.ts';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { balanceOf, startTestService } from '../helpers/service.ts';
import { approve, openConsent } from './helpers.ts';

let db: TestDatabase;
let service: RunningService;
let child: ChildProcessByStdio<Writable, Readable, Readable> | undefined;
const configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-remote-'));

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  db = await createTestDatabase();
  service = await startTestService(db.url);
});

afterAll(async () => {
  child?.kill();
  await service?.close();
  await db?.drop();
  fs.rmSync(configDir, { recursive: true, force: true });
});

it('mcp-remote connects through OAuth with the wallet consent, and its paid call is charged to that wallet', async () => {
  const callbackPort = await freePort();
  const proxy = path.resolve('node_modules/mcp-remote/dist/proxy.js');
  // BROWSER=true: the "browser" it opens does nothing; this test is the person instead.
  child = spawn(process.execPath, [proxy, `${service.url}/mcp/market-intelligence`, String(callbackPort), '--allow-http'], {
    env: { ...process.env, MCP_REMOTE_CONFIG_DIR: configDir, BROWSER: 'true' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (d) => (stderr += String(d)));
  child.stdout.on('data', (d) => (stdout += String(d)));
  const authorizeUrl = () => /Please authorize this client by visiting:\s*(\S+)/.exec(stderr)?.[1];
  await expect.poll(authorizeUrl, { timeout: 30_000 }).toBeDefined();
  const url = new URL(authorizeUrl()!);
  expect(url.searchParams.get('code_challenge_method')).toBe('S256');
  expect(url.searchParams.get('resource')).toBe(`${service.url}/mcp/market-intelligence`);

  const wallet = privateKeyToAccount(generatePrivateKey());
  const walk = await openConsent(service.url, url, wallet);
  expect(walk.details).toMatchObject({ client: { registration: 'dynamic', redirect_host: `localhost:${callbackPort}` }, servers: ['market-intelligence'] });
  const callback = await approve(walk);
  expect((await fetch(callback)).status).toBe(200);

  const send = (message: object) => child!.stdin.write(`${JSON.stringify(message)}\n`);
  const answer = async (id: number) => {
    await expect.poll(() => stdout.split('\n').some((l) => l.includes(`"id":${id}`)), { timeout: 30_000 }).toBe(true);
    return JSON.parse(stdout.split('\n').find((l) => l.includes(`"id":${id}`))!) as { result?: { structuredContent?: { success: boolean; metadata: { credits_used: number } } } };
  };
  send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'stdio-app', version: '1.0.0' } } });
  expect((await answer(1)).result).toBeDefined();
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const accountId = (await accountIdByWallet(db, 'ethereum', wallet.address.toLowerCase()))!;
  const before = await balanceOf(db, accountId);
  send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_prices', arguments: { assets: ['bitcoin'] } } });
  const call = await answer(2);
  expect(call.result?.structuredContent?.success, stdout).toBe(true);
  const cost = call.result!.structuredContent!.metadata.credits_used;
  expect(cost).toBeGreaterThan(0);
  expect(await balanceOf(db, accountId)).toBe(before - cost);
}, 90_000);
