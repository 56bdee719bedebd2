// The metrics the service exports (issue 6), read from its real /metrics port after real
// requests: labels stay bounded (an unknown JSON-RPC method counts as "other"), the MCP
// semantic-convention histogram, key-cache hits and misses, the PostgreSQL pool gauges, upstream
// attempts by provider and outcome from the one HTTP client and from the viem transport, and
// metering statement failures. (Traffic, credits and refusals are checked through a real
// Prometheus in prometheus.test.ts.)
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../server/db/pool.ts';
import { Meter } from '../../server/metering/meter.ts';
import { createMetrics } from '../../server/metrics.ts';
import { createEvmClients } from '../../server/providers/evm/chains.ts';
import { getJson } from '../../server/providers/http.ts';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createAccountWithKey, createUnlimitedPlan, post, startTestService, toolCall } from '../helpers/service.ts';

let db: TestDatabase;
let svc: RunningService;
let key = '';
let upstream: http.Server;
let upstreamUrl = '';

/** The value of one sample line `name{labels} value` of a Prometheus text exposition (0 if absent). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = Object.fromEntries([...(match[2] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(match[3]);
  }
  return 0;
}

const scrape = async () => (await fetch(`http://127.0.0.1:${svc.metricsPort}/metrics`)).text();

beforeAll(async () => {
  // A loopback upstream: /ok answers JSON, /missing 404, /slow never answers in time, and
  // POST / is a JSON-RPC node answering eth_blockNumber.
  upstream = http.createServer((req, res) => {
    if (req.method === 'POST') {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        // viem batches: an array of calls gets an array of answers.
        const calls = JSON.parse(body) as { id: number }[] | { id: number };
        const answer = (call: { id: number }) => ({ jsonrpc: '2.0', id: call.id, result: '0x10' });
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(Array.isArray(calls) ? calls.map(answer) : answer(calls)));
      });
      return;
    }
    if (req.url === '/ok') res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    else if (req.url === '/missing') res.writeHead(404).end();
    else if (req.url === '/slow') setTimeout(() => res.writeHead(200).end('{}'), 2000).unref();
    else res.writeHead(500).end();
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  db = await createTestDatabase();
  await createUnlimitedPlan(db, 'metrics-plan', 100);
  key = (await createAccountWithKey(db, { plan: 'metrics-plan' })).key;
  svc = await startTestService(db.url, { DATABASE_POOL_MAX: '7' });
}, 60_000);

afterAll(async () => {
  await svc?.close();
  await db?.drop();
  upstream?.closeAllConnections();
  await new Promise((resolve) => upstream?.close(resolve));
});

describe('service metrics', () => {
  it('counts JSON-RPC methods by name, any method outside MCP as "other" (client input never becomes a label), and a JSON-RPC error as PROTOCOL_ERROR', async () => {
    const url = `${svc.url}/mcp/market-intelligence`;
    await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'x-api-key': key });
    await post(url, { jsonrpc: '2.0', id: 2, method: 'x-attacker-chosen/0xdeadbeef' }, { 'x-api-key': key });
    const text = await scrape();
    expect(sample(text, 'cryptomcp_mcp_requests_total', { server: 'market-intelligence', method: 'tools/list', outcome: 'ok', status: '200' })).toBe(1);
    // Answered by the SDK with a JSON-RPC -32601 error under HTTP 200: a failure all the same.
    expect(sample(text, 'cryptomcp_mcp_requests_total', { server: 'market-intelligence', method: 'other', outcome: 'PROTOCOL_ERROR', status: '200' })).toBe(1);
    expect(text).not.toContain('x-attacker-chosen');
    expect(sample(text, 'mcp_server_operation_duration_seconds_count', { mcp_method_name: 'tools/list', gen_ai_tool_name: '', error_type: '' })).toBe(1);
  });

  it('the MCP histogram records a tool call with gen_ai_tool_name and its error type', async () => {
    const url = `${svc.url}/mcp/market-intelligence`;
    await post(url, toolCall('bench_echo'), { 'x-api-key': key });
    await post(url, toolCall('bench_fail'), { 'x-api-key': key });
    const text = await scrape();
    expect(sample(text, 'mcp_server_operation_duration_seconds_count', { mcp_method_name: 'tools/call', gen_ai_tool_name: 'bench_echo', error_type: '' })).toBe(1);
    expect(sample(text, 'mcp_server_operation_duration_seconds_count', { mcp_method_name: 'tools/call', gen_ai_tool_name: 'bench_fail', error_type: 'UPSTREAM_ERROR' })).toBe(1);
    expect(sample(text, 'cryptomcp_mcp_request_duration_seconds_count', { server: 'market-intelligence', method: 'tools/call', tool: 'bench_echo', outcome: 'ok' })).toBe(1);
    expect(text).not.toContain(key);
  });

  it('counts key lookups answered by the cache and by the database', async () => {
    const before = await scrape();
    const { key: fresh } = await createAccountWithKey(db, { plan: 'metrics-plan' });
    const url = `${svc.url}/mcp/market-intelligence`;
    await post(url, { jsonrpc: '2.0', id: 1, method: 'ping' }, { 'x-api-key': fresh });
    await post(url, { jsonrpc: '2.0', id: 2, method: 'ping' }, { 'x-api-key': fresh });
    const after = await scrape();
    const delta = (result: string) => sample(after, 'cryptomcp_key_cache_lookups_total', { result }) - sample(before, 'cryptomcp_key_cache_lookups_total', { result });
    expect(delta('miss')).toBe(1);
    expect(delta('hit')).toBe(1);
  });

  it('reports the PostgreSQL pool: its maximum, and connections in use plus idle', async () => {
    const text = await scrape();
    expect(sample(text, 'cryptomcp_db_pool_max')).toBe(7);
    const open = sample(text, 'cryptomcp_db_pool_connections', { state: 'in_use' }) + sample(text, 'cryptomcp_db_pool_connections', { state: 'idle' });
    expect(open).toBeGreaterThanOrEqual(1);
    expect(open).toBeLessThanOrEqual(7);
    expect(sample(text, 'cryptomcp_db_pool_waiting')).toBe(0);
  });
});

describe('upstream metrics', () => {
  it('every getJson attempt is observed under its provider with its outcome', async () => {
    const metrics = createMetrics();
    try {
      await getJson(`${upstreamUrl}/ok`, { provider: 'test:api' });
      await expect(getJson(`${upstreamUrl}/missing`, { provider: 'test:api' })).rejects.toMatchObject({ kind: 'not_found' });
      await expect(getJson(`${upstreamUrl}/broken`, { provider: 'test:api', retries: 1, sleep: async () => {} })).rejects.toMatchObject({ kind: 'error' });
      await expect(getJson(`${upstreamUrl}/slow`, { provider: 'test:api', retries: 0, timeoutMs: 100 })).rejects.toMatchObject({ kind: 'timeout' });
      const text = await metrics.registry.metrics();
      const count = (outcome: string) => sample(text, 'cryptomcp_upstream_request_duration_seconds_count', { provider: 'test:api', outcome });
      expect([count('ok'), count('not_found'), count('error'), count('timeout')]).toEqual([1, 1, 2, 1]);
    } finally {
      metrics.close();
    }
  });

  it('JSON-RPC requests of the viem clients are observed as provider evm:<network>', async () => {
    const metrics = createMetrics();
    try {
      const evm = createEvmClients({ rpcUrls: { ethereum: upstreamUrl, base: upstreamUrl, polygon: upstreamUrl, bsc: upstreamUrl }, timeoutMs: 2000, retries: 0 });
      expect(await evm.client('base').getBlockNumber()).toBe(16n);
      const text = await metrics.registry.metrics();
      expect(sample(text, 'cryptomcp_upstream_request_duration_seconds_count', { provider: 'evm:base', outcome: 'ok' })).toBe(1);
    } finally {
      metrics.close();
    }
  });

  it('a registry that was closed stops counting', async () => {
    const metrics = createMetrics();
    metrics.close();
    await getJson(`${upstreamUrl}/ok`, { provider: 'test:closed' });
    expect(sample(await metrics.registry.metrics(), 'cryptomcp_upstream_request_duration_seconds_count', { provider: 'test:closed' })).toBe(0);
  });
});

describe('metering failures', () => {
  it('a reservation whose statement fails is counted as a reserve failure', async () => {
    // A real pool pointed at a port nobody listens on: the connection is refused.
    const unreachable = createDatabase({ url: 'postgres://nobody@127.0.0.1:1/none', max: 1 });
    const failures: string[] = [];
    const meter = new Meter(unreachable, { settleIntervalMs: 1000, staleAfterMs: 60_000, onFailure: (op) => failures.push(op) });
    await expect(
      meter.reserve({ accountId: '00000000-0000-0000-0000-000000000000', requestId: 'r1', cost: 1, record: true, server: 'market-intelligence', tool: 'bench_echo', keyId: 'k' }),
    ).rejects.toThrow();
    await expect(meter.refund('r1', 'test')).rejects.toThrow();
    expect(failures).toEqual(['reserve', 'refund']);
    await unreachable.close();
  });
});

describe('METRICS_ENABLED=false', () => {
  it('opens no metrics port, and the gateway still answers and meters', async () => {
    const quiet = await startTestService(db.url, { METRICS_ENABLED: 'false' });
    try {
      expect(quiet.metricsPort).toBeNull();
      const res = await post(`${quiet.url}/mcp/market-intelligence`, toolCall('bench_echo', { message: 'quiet' }), { 'x-api-key': key });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-credits-used')).toBe('1');
    } finally {
      await quiet.close();
    }
  });
});
