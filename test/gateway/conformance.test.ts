// Third-party clients against the running service over real HTTP: the official MCP conformance
// suite (@modelcontextprotocol/conformance, its server scenarios that apply to a tools-only
// server) on every server, and mcp-remote, the stdio bridge desktop apps use for remote servers.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../server/runtime.ts';
import { SERVER_NAMES } from '../../server/mcp/names.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { acquireSharedService } from '../helpers/shared-service.ts';
import { startKeyProxy } from '../helpers/key-proxy.ts';
import { createAccountWithKey } from '../helpers/service.ts';

let db: TestDatabase;
let svc: RunningService;
let release: (() => Promise<void>) | undefined;
let key: string;
const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cryptomcp-conformance-'));

beforeAll(async () => {
  // The worker's default service (test/helpers/shared-service.ts): this file works on its own accounts.
  ({ db, svc, release } = await acquireSharedService());
  ({ key } = await createAccountWithKey(db));
});
afterAll(async () => {
  await release?.();
  fs.rmSync(outDir, { recursive: true, force: true });
});

function run(command: string, args: string[], input?: string, timeoutMs = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} timed out\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    if (input !== undefined) child.stdin.end(input);
  });
}

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

/** The conformance scenarios that apply to a server with tools only (no resources, prompts, logging). */
const SCENARIOS = ['server-initialize', 'ping', 'tools-list'];

describe('the official MCP conformance suite', () => {
  it.each(SERVER_NAMES)('%s passes every applicable server scenario', async (server) => {
    // One run of the CLI's whole active suite per server: the CLI takes about 0.7 CPU-s to start,
    // and one run of its 30 scenarios takes about a second (a process per scenario cost 27 starts).
    // The scenarios that do not apply (resources, prompts, logging, sampling, elicitation) fail by
    // design and are not judged. The suite sends its requests within a second, over a plan's rate
    // limit, so each server's run has an account and key of its own.
    const { key: own } = await createAccountWithKey(db);
    const ownProxy = await startKeyProxy(svc.url, own);
    try {
      const dir = path.join(outDir, server);
      const res = await run(process.execPath, ['node_modules/@modelcontextprotocol/conformance/dist/index.js', 'server', '--url', `${ownProxy.url}/mcp/${server}`, '-o', dir]);
      const files = fs.readdirSync(dir, { recursive: true }).map(String).filter((f) => f.endsWith('checks.json'));
      for (const scenario of SCENARIOS) {
        // Results go to server-<scenario>-<ISO time>/checks.json.
        const ofScenario = new RegExp(`^server-${scenario}-\\d{4}-\\d{2}-\\d{2}T`);
        const mine = files.filter((f) => ofScenario.test(f));
        expect(mine.length, `${scenario}: no checks.json\n${res.stdout}\n${res.stderr}`).toBe(1);
        const checks = mine.flatMap((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as Check[]);
        const failed = checks.filter((c) => c.status !== 'SUCCESS' && c.status !== 'INFO');
        expect(failed, `${server} ${scenario}`).toEqual([]);
        expect(checks.length).toBeGreaterThan(0);
      }
    } finally {
      await ownProxy.close();
    }
  });
});

describe('mcp-remote (the stdio bridge for desktop apps that only launch local commands)', () => {
  it.each(SERVER_NAMES)('%s: a stdio MCP client reaches it through mcp-remote with the key as a header, lists its tools and calls one', async (server) => {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cryptomcp-mcp-remote-'));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['node_modules/mcp-remote/dist/proxy.js', `${svc.url}/mcp/${server}`, '--header', `x-api-key:${key}`],
      env: { ...(process.env as Record<string, string>), MCP_REMOTE_CONFIG_DIR: configDir },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'desktop-app', version: '1.0.0' });
    try {
      await client.connect(transport);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('get_capabilities');
      const result = await client.callTool({ name: 'get_capabilities', arguments: {} });
      const env = result.structuredContent as { success: boolean; data: { server: string }; metadata: { credits_used: number } };
      expect(env.success).toBe(true);
      expect(env.data.server).toBe(server);
      expect(env.metadata.credits_used).toBe(0);
      if (server === 'market-intelligence') {
        const prices = await client.callTool({ name: 'get_prices', arguments: { assets: ['bitcoin'] } });
        const paid = prices.structuredContent as { data: { prices: { asset_id: string }[] }; metadata: { credits_used: number } };
        expect(paid.data.prices[0]?.asset_id).toBe('bitcoin');
        expect(paid.metadata.credits_used).toBe(1);
      }
    } finally {
      await client.close();
      fs.rmSync(configDir, { recursive: true, force: true });
    }
  });
});
