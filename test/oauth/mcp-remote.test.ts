// A third-party MCP client as a stdio-only desktop app uses it: mcp-remote (the bridge the Connect
// page recommends) pointed at a URL with no key finds the authorization server from the 401,
// registers itself, and prints the authorization URL a browser would open; the person signs in
// with a wallet and approves; mcp-remote receives the code on its loopback callback, and
// initialize and paid tools/calls then go through it, charged to that wallet's account. Once at
// /mcp/{server}, and once at the all-in-one /mcp (issue 32 [reach]): one connection, one consent
// listing all nine servers, and a tool of every server called through it, each metered under its
// own server.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { accountIdByWallet } from '../../server/accounts/accounts.ts';
import { startDevnet, type Devnet } from '../../server/devnet/devnet.ts';
import { SERVER_NAMES, type ServerName } from '../../server/mcp/names.ts';
import type { RunningService } from '../../server/runtime.ts';
import { writeManifest } from '../helpers/chain.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { balanceOf, startTestService } from '../helpers/service.ts';
import { CASES } from '../helpers/tool-cases.ts';
import { approve, openConsent } from './helpers.ts';

let db: TestDatabase;
let devnet: Devnet;
let service: RunningService;
const children: ChildProcessByStdio<Writable, Readable, Readable>[] = [];
const configDirs: string[] = [];

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  // A devnet: the chain servers' tools (explorer, tokens, portfolio, whales) read it.
  devnet = await startDevnet();
  db = await createTestDatabase();
  service = await startTestService(db.url, { ETHEREUM_RPC_URL: devnet.manifest.rpc_url, DEVNET_MANIFEST: writeManifest(devnet.manifest) });
}, 60_000);

afterAll(async () => {
  for (const child of children) child.kill();
  await service?.close();
  await db?.drop();
  await devnet?.stop();
  for (const dir of configDirs) fs.rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  result?: { structuredContent?: { success: boolean; data: unknown; metadata: { credits_used: number } }; tools?: { name: string }[] };
  error?: unknown;
}

/**
 * mcp-remote started against `url` (its own config folder: no tokens from another run) on a free
 * callback port. BROWSER=true: the "browser" it opens does nothing; the test is the person instead.
 */
async function startMcpRemote(url: string) {
  const callbackPort = await freePort();
  const configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-remote-'));
  configDirs.push(configDir);
  const proxy = path.resolve('node_modules/mcp-remote/dist/proxy.js');
  const child = spawn(process.execPath, [proxy, url, String(callbackPort), '--allow-http'], {
    env: { ...process.env, MCP_REMOTE_CONFIG_DIR: configDir, BROWSER: 'true' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (d) => (stderr += String(d)));
  child.stdout.on('data', (d) => (stdout += String(d)));
  const authorizeUrls = () => [...stderr.matchAll(/Please authorize this client by visiting:\s*(\S+)/g)].map((m) => m[1]!);
  await expect.poll(() => authorizeUrls().length, { timeout: 30_000 }).toBeGreaterThan(0);
  const message = (id: number) => stdout.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Answer & { id?: number }).find((m) => m.id === id);
  let nextId = 1;
  return {
    callbackPort,
    authorizeUrl: new URL(authorizeUrls()[0]!),
    authorizeUrls,
    stdout: () => stdout,
    /** Sends a request through mcp-remote's stdin and waits for its answer on stdout. */
    request: async (method: string, params: object): Promise<Answer> => {
      const id = nextId++;
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      await expect.poll(() => message(id) !== undefined, { timeout: 60_000 }).toBe(true);
      return message(id)!;
    },
    notify: (method: string) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method })}\n`),
  };
}

it('mcp-remote connects through OAuth with the wallet consent, and its paid call is charged to that wallet', async () => {
  const remote = await startMcpRemote(`${service.url}/mcp/market-intelligence`);
  const url = remote.authorizeUrl;
  expect(url.searchParams.get('code_challenge_method')).toBe('S256');
  expect(url.searchParams.get('resource')).toBe(`${service.url}/mcp/market-intelligence`);

  const wallet = privateKeyToAccount(generatePrivateKey());
  const walk = await openConsent(service.url, url, wallet);
  expect(walk.details).toMatchObject({ client: { registration: 'dynamic', redirect_host: `localhost:${remote.callbackPort}` }, servers: ['market-intelligence'] });
  const callback = await approve(walk);
  expect((await fetch(callback)).status).toBe(200);

  const init = await remote.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'stdio-app', version: '1.0.0' } });
  expect(init.result).toBeDefined();
  remote.notify('notifications/initialized');
  const accountId = (await accountIdByWallet(db, 'ethereum', wallet.address.toLowerCase()))!;
  const before = await balanceOf(db, accountId);
  const call = await remote.request('tools/call', { name: 'get_prices', arguments: { assets: ['bitcoin'] } });
  expect(call.result?.structuredContent?.success, remote.stdout()).toBe(true);
  const cost = call.result!.structuredContent!.metadata.credits_used;
  expect(cost).toBeGreaterThan(0);
  expect(await balanceOf(db, accountId)).toBe(before - cost);
}, 90_000);

/** One data tool of each server, with the arguments test/mcp/every-tool calls it with. */
const ONE_TOOL: Record<ServerName, string> = {
  'price-prediction': 'get_volatility_forecast',
  'market-intelligence': 'get_prices',
  'blockchain-explorer': 'get_gas',
  'token-intelligence': 'get_token_security',
  'portfolio-analytics': 'get_portfolio',
  'whale-intelligence': 'get_exchange_flows',
  'social-intelligence': 'get_social_volume',
  'kol-analytics': 'get_kol_profile',
  'project-intelligence': 'search_projects',
};

it('mcp-remote at the all-in-one /mcp: one OAuth connection and one consent for all nine servers, then a tool of every server through it, each metered under its server', async () => {
  const remote = await startMcpRemote(`${service.url}/mcp`);
  expect(remote.authorizeUrl.searchParams.get('resource')).toBe(`${service.url}/mcp`);

  const wallet = privateKeyToAccount(generatePrivateKey());
  const walk = await openConsent(service.url, remote.authorizeUrl, wallet);
  // One consent screen, every server on it (preselected: approve() sends what the screen lists).
  expect([...walk.details.servers].sort()).toEqual([...SERVER_NAMES].sort());
  expect((await fetch(await approve(walk))).status).toBe(200);

  const init = await remote.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'stdio-app', version: '1.0.0' } });
  expect(init.result, remote.stdout()).toBeDefined();
  remote.notify('notifications/initialized');
  const listed = (await remote.request('tools/list', {})).result?.tools?.map((t) => t.name) ?? [];
  expect(listed).toEqual(expect.arrayContaining(Object.values(ONE_TOOL)));

  const accountId = (await accountIdByWallet(db, 'ethereum', wallet.address.toLowerCase()))!;
  const before = await balanceOf(db, accountId);
  let spent = 0;
  for (const [server, tool] of Object.entries(ONE_TOOL) as [ServerName, string][]) {
    const call = await remote.request('tools/call', { name: tool, arguments: CASES[server][tool]!(devnet.manifest) });
    expect(call.result?.structuredContent?.success, `${server}.${tool}: ${JSON.stringify(call)}`).toBe(true);
    spent += call.result!.structuredContent!.metadata.credits_used;
  }
  expect(spent).toBeGreaterThan(0);
  expect(await balanceOf(db, accountId)).toBe(before - spent);
  // Metered under each tool's own server, as on the per-server URLs (the endpoint's own free tools count under "all").
  const usage = (await remote.request('tools/call', { name: 'get_usage', arguments: {} })).result?.structuredContent?.data as { by_server: { server: string; calls: number }[] };
  const calls = Object.fromEntries(usage.by_server.map((s) => [s.server, s.calls]));
  expect(Object.fromEntries(SERVER_NAMES.map((s) => [s, calls[s]]))).toEqual(Object.fromEntries(SERVER_NAMES.map((s) => [s, 1])));
  // Connected once: the one authorization, no second consent asked for.
  expect(remote.authorizeUrls()).toHaveLength(1);
}, 180_000);
