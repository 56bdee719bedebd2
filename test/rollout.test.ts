// Zero-drop rollouts (issue 34): a pod that Kubernetes terminates keeps serving while its endpoint
// goes away. Kubernetes removes a terminating pod from the Service's endpoints and sends SIGTERM at
// about the same time, and every kube-proxy and ingress controller learns of the removal some time
// later; until then they still send it new connections. So on SIGTERM `serve` keeps accepting for
// DRAIN_DELAY_MS (/readyz 503, each answer closing its connection), then stops listening and
// drains. (The chart and the operator also give each pod a preStop delay before the SIGTERM.)
//
// Here: two real `serve` processes behind a round-robin TCP proxy written below (the Service), a
// replacement started as a rolling update does, continuous traffic of metered tools/call from
// clients with and without keep-alive, SIGTERM to one replica, and its removal from the proxy
// 500 ms later (the propagation delay). Every request must succeed. The same sequence with
// DRAIN_DELAY_MS=0 (what the server did before) drops requests, which shows the test can see it.
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';
import { spawnServer, stopServer, type ServerProcess } from './helpers/process.ts';
import { createAccountWithKey, createUnlimitedPlan, post, startTestService, toolCall } from './helpers/service.ts';

const PROPAGATION_MS = 500;

/** A TCP round-robin proxy over a mutable set of backends: each new connection goes to the next one. */
class RoundRobin {
  readonly #backends: number[] = [];
  #next = 0;
  readonly #server = net.createServer((client) => {
    if (this.#backends.length === 0) return client.destroy();
    const port = this.#backends[this.#next++ % this.#backends.length]!;
    const upstream = net.connect(port, '127.0.0.1');
    client.pipe(upstream).pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close);
    upstream.on('error', close);
    client.on('close', close);
    upstream.on('close', close);
  });
  port = 0;

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', () => resolve()));
    this.port = (this.#server.address() as net.AddressInfo).port;
  }
  add(port: number): void {
    this.#backends.push(port);
  }
  remove(port: number): void {
    this.#backends.splice(this.#backends.indexOf(port), 1);
  }
  close(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

let db: TestDatabase;
let key: string;
const servers: ServerProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  await createUnlimitedPlan(db, 'rollout', 10_000_000);
  ({ key } = await createAccountWithKey(db, { plan: 'rollout' }));
}, 60_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => stopServer(s.child)));
  await db?.drop();
}, 60_000);

async function replica(drainDelayMs: number): Promise<ServerProcess> {
  const s = await spawnServer(db.url, { DRAIN_DELAY_MS: String(drainDelayMs), DATABASE_POOL_MAX: '4', KEY_CACHE_TTL_MS: '60000' });
  servers.push(s);
  return s;
}

/** One tools/call through the proxy: 'ok', or what went wrong. */
function call(port: number, agent: http.Agent | false, id: number): Promise<string> {
  const body = JSON.stringify(toolCall('bench_echo', { message: `r${id}` }, id));
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/mcp/market-intelligence',
        agent,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': key, 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString('utf8')));
        res.on('end', () => resolve(res.statusCode === 200 && text.includes('"result"') && !text.includes('"isError":true') ? 'ok' : `${res.statusCode} ${text.slice(0, 120)}`));
        res.on('error', (err) => resolve(`response ${err.message}`));
      },
    );
    req.on('error', (err) => resolve(`request ${(err as NodeJS.ErrnoException).code ?? err.message}`));
    req.end(body);
  });
}

/**
 * Rolls `old` out of `proxy` as Kubernetes does, under continuous traffic from 8 clients (half on
 * keep-alive connections), and returns what every request got.
 */
async function rollUnderTraffic(proxy: RoundRobin, old: ServerProcess): Promise<{ ok: number; failed: string[] }> {
  const agents = Array.from({ length: 4 }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }));
  let running = true;
  let id = 0;
  const results: string[] = [];
  const clients = Array.from({ length: 8 }, async (_, c) => {
    while (running) results.push(await call(proxy.port, c < 4 ? agents[c]! : false, id++));
  });
  const exited = new Promise<void>((resolve) => old.child.once('exit', () => resolve()));
  // Traffic reaches every replica first.
  await expect.poll(() => results.length, { timeout: 10_000, interval: 20 }).toBeGreaterThan(100);
  old.child.kill('SIGTERM');
  // The endpoint removal reaches the proxy later.
  await new Promise((resolve) => setTimeout(resolve, PROPAGATION_MS));
  proxy.remove(old.port);
  await exited;
  const at = results.length;
  await expect.poll(() => results.length, { timeout: 10_000, interval: 20 }).toBeGreaterThan(at + 100);
  running = false;
  await Promise.all(clients);
  for (const a of agents) a.destroy();
  return { ok: results.filter((r) => r === 'ok').length, failed: results.filter((r) => r !== 'ok') };
}

describe('a rolling update under continuous traffic', { timeout: 180_000 }, () => {
  it('SIGTERM to one of two replicas, endpoint removed 500 ms later: 0 failed requests (DRAIN_DELAY_MS 1500); with DRAIN_DELAY_MS 0 requests fail', async () => {
    const proxy = new RoundRobin();
    await proxy.listen();
    try {
      const a = await replica(1500);
      const b = await replica(1500);
      proxy.add(a.port);
      proxy.add(b.port);
      // The rolling update's new pod is ready and in the endpoints before the old one goes.
      proxy.add((await replica(1500)).port);
      const drained = await rollUnderTraffic(proxy, a);
      console.log(`rollout with DRAIN_DELAY_MS=1500: ${drained.ok} requests ok, ${drained.failed.length} failed`);
      expect(drained.failed.slice(0, 5)).toEqual([]);
      expect(drained.ok).toBeGreaterThan(200);
      expect(a.child.exitCode).toBe(0);

      // Without the delay: the replica stops listening at once while the proxy still sends it connections.
      const abrupt = await replica(0);
      proxy.add(abrupt.port);
      const dropped = await rollUnderTraffic(proxy, abrupt);
      console.log(`rollout with DRAIN_DELAY_MS=0: ${dropped.ok} requests ok, ${dropped.failed.length} failed (e.g. ${dropped.failed[0]})`);
      expect(dropped.failed.length).toBeGreaterThan(0);
    } finally {
      await proxy.close();
    }
  });
});

describe('draining after SIGTERM (in process)', () => {
  it('for DRAIN_DELAY_MS the service still answers calls, each with Connection: close, and /readyz says not ready; then it stops listening', async () => {
    const svc = await startTestService(db.url, { DRAIN_DELAY_MS: '1500' });
    const closed = svc.close();
    const ready = await fetch(`${svc.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: 'not ready', checks: { serving: false } });
    const res = await post(`${svc.url}/mcp/market-intelligence`, toolCall('bench_echo', { message: 'draining' }), { 'x-api-key': key });
    expect(res.status).toBe(200);
    expect(res.headers.get('connection')).toBe('close');
    await closed;
    await expect(fetch(`${svc.url}/healthz`)).rejects.toThrow();
  });
});

