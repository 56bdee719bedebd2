// startService as an SRE configures it: which servers a process hosts, repriced tools, config
// that fails fast, and a shutdown that lets in-flight calls finish (and charges them).
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../server/config.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';
import { balanceOf, createAccountWithKey, createUnlimitedPlan, post, startTestService, toolCall } from './helpers/service.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await createUnlimitedPlan(db, 'runtime', 100);
});
afterAll(async () => {
  await db?.drop();
});

/** Reservation rows of the account: one appears when a paid call is admitted, before its tool runs. */
async function reserveRows(accountId: string): Promise<number> {
  const res = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM credit_ledger WHERE account_id = $1 AND kind = 'reserve'`, [accountId]);
  return res.rows[0]!.n;
}

describe('MCP_SERVERS', () => {
  it('hosts only the listed servers; others answer 404 SERVER_NOT_FOUND listing what is hosted', async () => {
    const svc = await startTestService(db.url, { MCP_SERVERS: 'kol-analytics,price-prediction' });
    try {
      const { key } = await createAccountWithKey(db, { plan: 'runtime' });
      expect((await post(`${svc.url}/mcp/kol-analytics`, toolCall('get_usage'), { 'x-api-key': key })).status).toBe(200);
      const res = await post(`${svc.url}/mcp/market-intelligence`, toolCall('get_usage'), { 'x-api-key': key });
      expect(res.status).toBe(404);
      expect((res.body as { error: { details: { available: string[] } } }).error.details.available).toEqual([
        'price-prediction',
        'kol-analytics',
      ]);
    } finally {
      await svc.close();
    }
  });

  it('rejects unknown server names at start-up with a message naming them', () => {
    expect(() => loadConfig({ MCP_SERVERS: 'kol-analytics,nft-oracle' })).toThrow(ConfigError);
    expect(() => loadConfig({ MCP_SERVERS: 'kol-analytics,nft-oracle' })).toThrow(/nft-oracle/);
  });
});

describe('TOOL_COST_OVERRIDES', () => {
  it('reprices a tool everywhere: tools/list, the catalog, the description and the charge', async () => {
    const svc = await startTestService(db.url, { TOOL_COST_OVERRIDES: '{"market-intelligence.bench_echo": 3}' });
    try {
      const { account, key } = await createAccountWithKey(db, { plan: 'runtime' });
      const list = await post(`${svc.url}/mcp/market-intelligence`, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'x-api-key': key });
      const tool = (list.body as { result: { tools: { name: string; description: string; _meta: Record<string, number> }[] } }).result.tools.find(
        (t) => t.name === 'bench_echo',
      )!;
      expect(tool._meta['cryptomcp.dev/credits']).toBe(3);
      expect(tool.description).toMatch(/Costs 3 credits\.$/);
      const catalog = (await (await fetch(`${svc.url}/v1/catalog`)).json()) as { servers: { name: string; tools: { name: string; credits: number }[] }[] };
      expect(catalog.servers.find((s) => s.name === 'market-intelligence')!.tools.find((t) => t.name === 'bench_echo')!.credits).toBe(3);
      const call = await post(`${svc.url}/mcp/market-intelligence`, toolCall('bench_echo'), { 'x-api-key': key });
      expect(call.headers.get('x-credits-used')).toBe('3');
      expect(await balanceOf(db, account.id)).toBe(97);
    } finally {
      await svc.close();
    }
  });

  it('rejects overrides that are not JSON or name unknown tools', async () => {
    expect(() => loadConfig({ TOOL_COST_OVERRIDES: 'cheap please' })).toThrow(ConfigError);
    await expect(startTestService(db.url, { TOOL_COST_OVERRIDES: '{"market-intelligence.no_such_tool": 1}' })).rejects.toThrow(/no_such_tool/);
  });
});

describe('graceful shutdown', () => {
  it('lets an in-flight call finish and charges it, while new connections are refused', async () => {
    const svc = await startTestService(db.url);
    const { account, key } = await createAccountWithKey(db, { plan: 'runtime' });
    const inFlight = post(`${svc.url}/mcp/market-intelligence`, toolCall('bench_sleep', { ms: 700 }), { 'x-api-key': key });
    // In flight for sure once its reservation is written (the tool runs after it): not after a fixed sleep.
    await expect.poll(() => reserveRows(account.id), { timeout: 15_000, interval: 20 }).toBe(1);
    const closing = svc.close();
    const res = await inFlight;
    await closing;
    expect(res.status).toBe(200);
    expect(res.headers.get('x-credits-used')).toBe('1');
    await expect(fetch(`${svc.url}/healthz`)).rejects.toThrow();
    // The final settle ran at close: the reservation is resolved as charged, not left for the sweep.
    const row = await db.query<{ resolution: string | null }>(
      `SELECT resolution FROM credit_ledger WHERE account_id = $1 AND kind = 'reserve'`,
      [account.id],
    );
    expect(row.rows).toEqual([{ resolution: 'charged' }]);
    expect(await balanceOf(db, account.id)).toBe(99);
  });
});

describe('SIGTERM on a serve process', () => {
  it('finishes the in-flight call with 200 and exits 0 (no library exits early on the signal)', async () => {
    const { spawnServer, stopServer } = await import('./helpers/process.ts');
    const server = await spawnServer(db.url);
    try {
      const { account, key } = await createAccountWithKey(db, { plan: 'runtime' });
      const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
      const inFlight = post(`${server.url}/mcp/market-intelligence`, toolCall('bench_sleep', { ms: 800 }), { 'x-api-key': key });
      // The signal must find the call in flight: wait for its reservation, not a fixed 250 ms.
      await expect.poll(() => reserveRows(account.id), { timeout: 15_000, interval: 20 }).toBe(1);
      server.child.kill('SIGTERM');
      const res = await inFlight;
      expect(res.status).toBe(200);
      expect(await exited).toBe(0);
    } finally {
      await stopServer(server.child);
    }
  });
});

describe('ports', () => {
  it('METRICS_PORT follows PORT=0 (any free port) when unset; otherwise 9464 unless set', () => {
    expect(loadConfig({ PORT: '0' }).metricsPort).toBe(0);
    expect(loadConfig({ PORT: '8080' }).metricsPort).toBe(9464);
    expect(loadConfig({}).metricsPort).toBe(9464);
    expect(loadConfig({ PORT: '0', METRICS_PORT: '9500' }).metricsPort).toBe(9500);
  });

  it('two services with PORT=0 and no METRICS_PORT start side by side, each on its own metrics port', async () => {
    const unset = { METRICS_PORT: undefined };
    const [a, b] = await Promise.all([startTestService(db.url, unset), startTestService(db.url, unset)]);
    try {
      expect(a.metricsPort).not.toBeNull();
      expect(a.metricsPort).not.toBe(b.metricsPort);
      for (const svc of [a, b]) expect((await fetch(`http://127.0.0.1:${svc.metricsPort}/metrics`)).status).toBe(200);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  for (const variable of ['PORT', 'METRICS_PORT'] as const) {
    it(`a busy ${variable} stops the start with a ConfigError naming ${variable} and the port`, async () => {
      const busy = net.createServer();
      await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
      const port = (busy.address() as net.AddressInfo).port;
      try {
        const started = startTestService(db.url, { [variable]: String(port) });
        await expect(started).rejects.toThrow(ConfigError);
        await expect(started).rejects.toThrow(new RegExp(`^${variable} ${port} is already in use on 127\\.0\\.0\\.1: `));
      } finally {
        await new Promise((resolve) => busy.close(resolve));
      }
    });
  }

  it('`cryptomcp serve` on a busy PORT exits 2 with that message on stderr, not INTERNAL_ERROR', async () => {
    const { spawn } = await import('node:child_process');
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as net.AddressInfo).port;
    try {
      const child = spawn(process.execPath, ['server/cli.ts', 'serve'], {
        env: { ...process.env, DATABASE_URL: db.url, PORT: String(port), METRICS_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(code, stderr).toBe(2);
      expect(stderr).toContain(`PORT ${port} is already in use on 127.0.0.1: set PORT to a free port`);
      expect(stderr).not.toMatch(/INTERNAL_ERROR/);
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });
});
