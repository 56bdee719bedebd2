// The delivery policy against clients that do not read (issue 30, [trust] item 3), over raw
// HTTP/1.1 sockets as an attacker sends them:
// - an answer is charged when it is handed to the socket: a client that pipelines calls and then
//   does not read for longer than the stale-reservation sweep's age still pays for every answer
//   it gets (before, the sweep refunded answers still queued in the socket, then delivered them);
// - the sweep refunds only reservations with no produced answer, and only past its age;
// - a client that never reads is cut off by the write timeout, not held for ever;
// - one connection may have only so many requests unanswered; the rest get 429, uncharged;
// - one address may hold only so many connections.
// After each case the account's balance equals its grants plus its ledger and nothing is unresolved.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { balanceOf, createAccountWithKey, createUnlimitedPlan, ledgerSum, toolCall } from '../helpers/service.ts';
import { eventually } from '../helpers/wait.ts';

/** Sets the sweep age to 4 s: short for a test, long enough that a loaded machine still produces every answer within it. */
const TOOL_TIMEOUT_MS = 1500;
const SETTLE_INTERVAL_MS = 50;
/** runtime.ts: twice the tool timeout plus a settle batch plus a second. */
const STALE_AFTER_MS = 2 * TOOL_TIMEOUT_MS + SETTLE_INTERVAL_MS + 1000;
const MAX_PIPELINED = 8;
/** Enough ~80 kB answers that they cannot all sit in loopback's socket buffers: some wait in the server. */
const MANY = 400;

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  await createUnlimitedPlan(db, 'roomy', 1000);
});
afterAll(async () => {
  await db?.drop();
});

async function startService(env: Record<string, string>): Promise<RunningService> {
  const { startTestService } = await import('../helpers/service.ts');
  return startTestService(db.url, {
    TOOL_TIMEOUT_MS: String(TOOL_TIMEOUT_MS),
    SETTLE_INTERVAL_MS: String(SETTLE_INTERVAL_MS),
    SWEEP_INTERVAL_MS: '100',
    MAX_PIPELINED_REQUESTS: String(MAX_PIPELINED),
    ...env,
  });
}

/** `n` tools/call requests for one connection, written back to back (HTTP/1.1 pipelining). */
function pipelined(port: number, key: string, n: number, args: Record<string, unknown>): string {
  let out = '';
  for (let i = 0; i < n; i++) {
    const body = JSON.stringify(toolCall('bench_echo', args, i + 1));
    out +=
      `POST /mcp/market-intelligence HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
      `Accept: application/json, text/event-stream\r\nx-api-key: ${key}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  }
  return out;
}

/** Status codes of the HTTP responses in a raw byte stream (bodies are JSON: no line starts with HTTP/1.1). */
function statuses(raw: string): number[] {
  return [...raw.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
}

async function unresolved(accountId: string): Promise<number> {
  const res = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM credit_ledger WHERE account_id = $1 AND kind = 'reserve' AND resolution IS NULL`, [accountId]);
  return res.rows[0]!.n;
}

async function until(what: string, check: () => Promise<boolean> | boolean, deadlineMs = 10_000): Promise<void> {
  await eventually(check, deadlineMs, what);
}

async function expectBalanced(accountId: string, expected: number): Promise<void> {
  await until('every reservation resolved', async () => (await unresolved(accountId)) === 0);
  expect(await balanceOf(db, accountId)).toBe(expected);
  expect(await ledgerSum(db, accountId)).toBe(expected);
}

describe('a client that pipelines calls and does not read', () => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService({ WRITE_TIMEOUT_MS: '60000', MAX_PIPELINED_REQUESTS: String(MANY) });
  });
  afterAll(async () => svc?.close());

  it('pays for every answer it gets, even after not reading for longer than the sweep age', async () => {
    const { account, key } = await createAccountWithKey(db, { plan: 'roomy' });
    const socket = net.connect(svc.port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    const chunks: Buffer[] = [];
    socket.pause();
    // Large answers, so they cannot all sit in the kernel's buffers: some wait in the server's.
    socket.write(pipelined(svc.port, key, MANY, { pad: 30_000 }));
    // Not reading for longer than the sweep's age (the sweep runs every 100 ms): the client's
    // slowness is the case under test, so this waits a fixed time on purpose.
    await new Promise((r) => setTimeout(r, STALE_AFTER_MS + 1500));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.resume();
    await until('all answers read', () => statuses(Buffer.concat(chunks).toString('latin1')).length === MANY, 60_000);
    socket.destroy();
    expect(statuses(Buffer.concat(chunks).toString('latin1'))).toEqual(Array(MANY).fill(200));
    // Every delivered answer charged exactly once; the sweep refunded none of them.
    await expectBalanced(account.id, 1000 - MANY);
    const refunds = await db.query(`SELECT 1 FROM credit_ledger WHERE account_id = $1 AND kind = 'refund'`, [account.id]);
    expect(refunds.rowCount).toBe(0);
  });

});

describe('requests waiting on one connection', () => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService({});
  });
  afterAll(async () => svc?.close());

  it('past the bound are refused with 429 and cost nothing', async () => {
    const { account, key } = await createAccountWithKey(db, { plan: 'roomy' });
    const socket = net.connect(svc.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(pipelined(svc.port, key, MAX_PIPELINED * 3, {}));
    await closed;
    const got = statuses(Buffer.concat(chunks).toString('latin1'));
    const ok = got.filter((s) => s === 200).length;
    expect(ok).toBeGreaterThanOrEqual(1);
    expect(ok).toBeLessThanOrEqual(MAX_PIPELINED);
    expect(got.filter((s) => s === 429).length).toBeGreaterThanOrEqual(1);
    expect(got.every((s) => s === 200 || s === 429)).toBe(true);
    await expectBalanced(account.id, 1000 - ok);
  });
});

describe('the stale-reservation sweep', () => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService({ SWEEP_INTERVAL_MS: '600000' });
  });
  afterAll(async () => svc?.close());

  it('refunds a reservation with no answer only once it is older than its age', async () => {
    const { account, keyId } = await createAccountWithKey(db);
    // A reservation whose pod died mid-call: written by the metering statement, never resolved.
    const decision = await svc.meter.reserve({ accountId: account.id, requestId: `orphan-${account.id}`, cost: 5, record: true, server: 'market-intelligence', tool: 'bench_echo', keyId });
    expect(decision.outcome).toBe('ok');
    expect(await balanceOf(db, account.id)).toBe(145);
    // Younger than the age: the sweep leaves it alone (an answer could still be on its way).
    expect(await svc.meter.refundStale()).toBe(0);
    expect(await unresolved(account.id)).toBe(1);
    // Its deadline is the age past the reservation (set by the reserving pod, 0015).
    const { rows } = await db.query<{ age_ms: number }>(
      `SELECT extract(epoch FROM stale_at - created_at) * 1000 AS age_ms FROM credit_ledger WHERE request_id = $1 AND kind = 'reserve'`,
      [`orphan-${account.id}`],
    );
    expect(Number(rows[0]!.age_ms)).toBe(STALE_AFTER_MS);
    // Made older than the age: refunded, once.
    await db.query(
      `UPDATE credit_ledger SET created_at = created_at - make_interval(secs => $2), stale_at = stale_at - make_interval(secs => $2) WHERE request_id = $1`,
      [`orphan-${account.id}`, STALE_AFTER_MS / 1000 + 1],
    );
    // Refunded once: by this sweep, or by the 100 ms sweep of another service of this file on the
    // same database (each period keeps its own series), whichever came first.
    await svc.meter.refundStale();
    expect(await unresolved(account.id)).toBe(0);
    expect(await svc.meter.refundStale()).toBe(0);
    await expectBalanced(account.id, 150);
  });
});

describe('a client that never reads', () => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService({ WRITE_TIMEOUT_MS: '1000', MAX_PIPELINED_REQUESTS: String(MANY) });
  });
  afterAll(async () => svc?.close());

  it('is cut off by the write timeout; the answers it was handed stay charged', async () => {
    const { account, key } = await createAccountWithKey(db, { plan: 'roomy' });
    const socket = net.connect(svc.port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.pause();
    socket.write(pipelined(svc.port, key, MANY, { pad: 30_000 }));
    // A paused socket does not see the server close it: look only after the write timeout (a
    // client that does not read for that long is the case under test).
    await new Promise((r) => setTimeout(r, 3000));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => {});
    const closed = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 5000);
      socket.once('close', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    socket.resume();
    // Cut by the server (not held open with the rest of the answers still coming).
    expect(await closed).toBe(true);
    expect(statuses(Buffer.concat(chunks).toString('latin1')).length).toBeLessThan(MANY);
    await until('every reservation resolved', async () => (await unresolved(account.id)) === 0);
    const charged = 1000 - (await balanceOf(db, account.id));
    expect(charged).toBeGreaterThanOrEqual(1);
    expect(charged).toBeLessThanOrEqual(MANY);
    expect(await ledgerSum(db, account.id)).toBe(1000 - charged);
  });
});

describe('connections per client address', () => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService({ MAX_CONNECTIONS_PER_ADDRESS: '20' });
  });
  afterAll(async () => svc?.close());

  it('past the cap, new connections from the same address are closed at once; others still work', async () => {
    const sockets = await Promise.all(
      Array.from({ length: 40 }, () => {
        const s = net.connect(svc.port, '127.0.0.1');
        return new Promise<net.Socket>((resolve) => s.once('connect', () => resolve(s)));
      }),
    );
    const closedByServer = await Promise.all(
      sockets.map(
        (s) =>
          new Promise<boolean>((resolve) => {
            if (s.destroyed) return resolve(true);
            const timer = setTimeout(() => resolve(false), 1500);
            s.once('close', () => {
              clearTimeout(timer);
              resolve(true);
            });
          }),
      ),
    );
    expect(closedByServer.filter(Boolean).length).toBe(20);
    for (const s of sockets) s.destroy();
    await until('the held sockets released', async () => (await fetch(`${svc.url}/healthz`).then((r) => r.status).catch(() => 0)) === 200);
  });
});
