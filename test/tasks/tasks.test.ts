// Long tools as MCP tasks (docs/tasks.md), over real HTTP with the SDKs' own clients, two
// replicas on one PostgreSQL:
// - 2025-11-25 experimental tasks, with the v1 SDK client (`params.task`, tasks/get,
//   tasks/result, tasks/list, tasks/cancel): a backtest_forecast started as a task on replica A
//   is polled to its result from replica B and charged once; a cancelled task is refunded and its
//   tool stopped; a failed task is refunded; another account can neither see nor cancel it;
// - 2026-07-28's tasks extension: a client that declares io.modelcontextprotocol/tasks gets a
//   CreateTaskResult (resultType "task"), and the v2 client pinned to 2026-07-28 polls it with
//   tasks/get from the other replica to the inlined result; a client that does not declare it
//   gets the plain result, and -32021 from tasks/get;
// - a task whose replica died (a real process, SIGKILLed) is failed and refunded by the sweep;
//   the metering sweep does not refund a running task's reservation early; expired tasks go.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CallToolResultSchema, CreateTaskResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { spawnServer, type ServerProcess } from '../helpers/process.ts';
import { balanceOf, createAccountWithKey, inEra, ledgerSum, mcpClient, MODERN_VERSION, post, startTestService } from '../helpers/service.ts';
import { eventually } from '../helpers/wait.ts';

const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** Fast heartbeats and sweeps, so a dead replica's task is seen in about a second. */
const TASK_ENV = { TASK_HEARTBEAT_MS: '200', TASK_ORPHAN_AFTER_MS: '1500', TASK_SWEEP_INTERVAL_MS: '300', TASK_POLL_INTERVAL_MS: '200' };

let db: TestDatabase;
let a: RunningService;
let b: RunningService;

beforeAll(async () => {
  db = await createTestDatabase();
  [a, b] = await Promise.all([startTestService(db.url, TASK_ENV), startTestService(db.url, TASK_ENV)]);
}, 60_000);
afterAll(async () => {
  await a?.close();
  await b?.close();
  await db?.drop();
});

interface LedgerRow {
  kind: string;
  delta: number;
  resolution: string | null;
}
async function ledgerOf(accountId: string): Promise<LedgerRow[]> {
  const res = await db.query<LedgerRow>('SELECT kind, delta, resolution FROM credit_ledger WHERE account_id = $1 AND kind <> $2 ORDER BY id', [accountId, 'grant']);
  return res.rows;
}

/**
 * Polls until fn returns a value, every 250 ms (a task's poll answers count against the key's
 * connect bucket, like every free method: a client polls at the task's pollInterval).
 */
async function polled<T>(fn: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

type Envelope = { success: true; data: Record<string, unknown>; metadata: { credits_used: number } };

describe('2025-11-25 experimental tasks, v1 SDK client', () => {
  const BACKTEST = { asset: 'bitcoin', horizon: 7, origins: 20 };
  let owner: { accountId: string; key: string };
  let clientA: Client;
  let clientB: Client;
  /** The bench tools (a tool that sleeps, one that fails) are market-intelligence's. */
  let benchA: Client;

  beforeAll(async () => {
    const made = await createAccountWithKey(db);
    owner = { accountId: made.account.id, key: made.key };
    clientA = await mcpClient(a.url, 'price-prediction', owner.key);
    clientB = await mcpClient(b.url, 'price-prediction', owner.key);
    benchA = await mcpClient(a.url, 'market-intelligence', owner.key);
  });
  afterAll(async () => {
    await clientA?.close();
    await clientB?.close();
    await benchA?.close();
  });

  it('the server declares tasks for tools/call and marks the long tools taskSupport optional', async () => {
    expect(clientA.getServerCapabilities()?.tasks).toMatchObject({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await clientA.listTools();
    const backtest = tools.find((t) => t.name === 'backtest_forecast')!;
    expect(backtest.execution).toEqual({ taskSupport: 'optional' });
    expect(backtest.description).toContain("a task's result is kept for 1 hour");
    expect(tools.find((t) => t.name === 'forecast_price')!.execution).toBeUndefined();
  });

  it('a backtest_forecast started as a task on replica A is polled to its result from replica B, charged once', async () => {
    const cost = a.registry.get('price-prediction')!.tools.get('backtest_forecast')!.credits;
    const before = await balanceOf(db, owner.accountId);
    const created = await clientA.request({ method: 'tools/call', params: { name: 'backtest_forecast', arguments: BACKTEST, task: { ttl: 60_000 } } }, CreateTaskResultSchema);
    const id = created.task.taskId;
    expect(created.task).toMatchObject({ status: 'working', ttl: 3_600_000 });
    // Reserved at creation.
    expect(await balanceOf(db, owner.accountId)).toBe(before - cost);
    const done = await polled(async () => {
      const task = await clientB.experimental.tasks.getTask(id);
      return task.status === 'working' ? undefined : task;
    }, 60_000, 'the task to end');
    expect(done.status).toBe('completed');
    const result = await clientB.experimental.tasks.getTaskResult(id, CallToolResultSchema);
    const envelope = result.structuredContent as Envelope;
    expect(envelope.success).toBe(true);
    expect(envelope.data.asset).toMatchObject({ id: 'bitcoin' });
    expect(envelope.metadata.credits_used).toBe(cost);
    expect(result._meta?.['io.modelcontextprotocol/related-task']).toEqual({ taskId: id });
    // Charged once: one reservation, resolved as charged, no refund; the balance is the ledger's.
    expect(await balanceOf(db, owner.accountId)).toBe(before - cost);
    const rows = (await ledgerOf(owner.accountId)).filter((r) => r.kind !== 'reserve' || r.delta === -cost);
    expect(rows.filter((r) => r.kind === 'refund')).toEqual([]);
    expect(rows.filter((r) => r.kind === 'reserve').at(-1)).toMatchObject({ resolution: 'charged' });
    expect(await ledgerSum(db, owner.accountId)).toBe(await balanceOf(db, owner.accountId));
    // Listed for its account, on either replica.
    const listed = await clientA.experimental.tasks.listTasks();
    expect(listed.tasks.map((t) => t.taskId)).toContain(id);
  }, 90_000);

  it('a cancelled task is refunded and its tool stops; cancelling it again is an error', async () => {
    const before = await balanceOf(db, owner.accountId);
    const created = await benchA.request({ method: 'tools/call', params: { name: 'bench_sleep', arguments: { ms: 30_000 }, task: {} } }, CreateTaskResultSchema);
    // Created on market-intelligence of replica A, cancelled through price-prediction of replica B: the task is the account's.
    const id = created.task.taskId;
    expect(await balanceOf(db, owner.accountId)).toBe(before - 1);
    const cancelled = await clientB.experimental.tasks.cancelTask(id);
    expect(cancelled.status).toBe('cancelled');
    expect(await balanceOf(db, owner.accountId)).toBe(before);
    // Replica A stops the tool at its next heartbeat.
    await eventually(async () => (await runningOn(a)) === 0, 10_000, 'replica A to stop the cancelled tool');
    expect((await clientA.experimental.tasks.getTask(id)).status).toBe('cancelled');
    await expect(clientA.experimental.tasks.cancelTask(id)).rejects.toThrow(/terminal status 'cancelled'/);
    expect(await ledgerSum(db, owner.accountId)).toBe(await balanceOf(db, owner.accountId));
  }, 30_000);

  it('a failed task is refunded and tasks/result answers its error', async () => {
    const before = await balanceOf(db, owner.accountId);
    const created = await benchA.request({ method: 'tools/call', params: { name: 'bench_fail', arguments: {}, task: {} } }, CreateTaskResultSchema);
    const id = created.task.taskId;
    const done = await polled(async () => {
      const task = await clientB.experimental.tasks.getTask(id);
      return task.status === 'working' ? undefined : task;
    }, 20_000, 'the task to fail');
    expect(done.status).toBe('failed');
    expect(done.statusMessage).toContain('UPSTREAM_ERROR');
    await expect(clientB.experimental.tasks.getTaskResult(id, CallToolResultSchema)).rejects.toThrow(McpError);
    expect(await balanceOf(db, owner.accountId)).toBe(before);
    expect(await ledgerSum(db, owner.accountId)).toBe(await balanceOf(db, owner.accountId));
  }, 30_000);

  it('a page cut for size, run as a task, is charged for what it holds (delivery.ts creditsFor), not its full cost', async () => {
    const before = await balanceOf(db, owner.accountId);
    // 100 items of 1,000 characters asked at limit 100: the page holds 29 (ANSWER_ITEM_CHARS), 5 credits × 29/100 → 2.
    const created = await benchA.request({ method: 'tools/call', params: { name: 'bench_page', arguments: { items: 100, item_chars: 1000, limit: 100 }, task: {} } }, CreateTaskResultSchema);
    const id = created.task.taskId;
    // Reserved in full at creation; the page is quick to build, so by the time the balance is read
    // the task may already have ended and given back what the page does not hold.
    expect([before - 5, before - 2]).toContain(await balanceOf(db, owner.accountId));
    const done = await polled(async () => {
      const task = await clientB.experimental.tasks.getTask(id);
      return task.status === 'working' ? undefined : task;
    }, 20_000, 'the task to end');
    expect(done.status).toBe('completed');
    const envelope = (await clientB.experimental.tasks.getTaskResult(id, CallToolResultSchema)).structuredContent as Envelope & { data: { items: string[] }; metadata: { notes?: string[]; truncated: boolean } };
    expect(envelope.data.items).toHaveLength(29);
    expect(envelope.metadata.credits_used).toBe(2);
    expect(envelope.metadata.notes).toContain("This page was cut to fit the answer's size: it holds 29 of the 100 items asked for and is charged 2 of 5 credits.");
    expect(await balanceOf(db, owner.accountId)).toBe(before - 2);
    expect(await ledgerSum(db, owner.accountId)).toBe(await balanceOf(db, owner.accountId));
  }, 30_000);

  it('another account can neither get, list, fetch the result of nor cancel the task (Invalid params: task not found)', async () => {
    const created = await benchA.request({ method: 'tools/call', params: { name: 'bench_sleep', arguments: { ms: 20_000 }, task: {} } }, CreateTaskResultSchema);
    const id = created.task.taskId;
    const other = await createAccountWithKey(db);
    const intruder = await mcpClient(b.url, 'price-prediction', other.key);
    try {
      for (const attempt of [() => intruder.experimental.tasks.getTask(id), () => intruder.experimental.tasks.cancelTask(id), () => intruder.experimental.tasks.getTaskResult(id, CallToolResultSchema)]) {
        const err = await attempt().then(() => undefined, (e: unknown) => e);
        expect(err).toBeInstanceOf(McpError);
        expect(err).toMatchObject({ code: -32602 });
        expect((err as Error).message).toContain('Task not found');
      }
      expect((await intruder.experimental.tasks.listTasks()).tasks).toEqual([]);
      // Still working for its owner: the intruder's cancel changed nothing.
      expect((await clientB.experimental.tasks.getTask(id)).status).toBe('working');
    } finally {
      await intruder.close();
      await clientA.experimental.tasks.cancelTask(id);
    }
  }, 30_000);

  it('a tools/call without params.task is answered in its own exchange, as before', async () => {
    const result = await clientA.callTool({ name: 'backtest_forecast', arguments: { ...BACKTEST, origins: 10 } });
    expect((result.structuredContent as Envelope).success).toBe(true);
  }, 60_000);
});

/** The tasks a service is running now, read from its own metrics endpoint. */
async function runningOn(svc: RunningService): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${svc.metricsPort}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('cryptomcp_tasks_running '));
  return Number(line?.split(' ')[1]);
}

describe('2026-07-28 tasks extension', () => {
  const GetTask = z.looseObject({ taskId: z.string(), status: z.string(), ttlMs: z.number(), pollIntervalMs: z.number(), result: z.looseObject({}).optional() });
  const withExtension = (body: unknown) => {
    const message = body as { params: { _meta: Record<string, unknown> } };
    message.params._meta['io.modelcontextprotocol/clientCapabilities'] = { extensions: { [TASKS_EXTENSION]: {} } };
    return message;
  };

  it('server/discover declares the extension', async () => {
    const { key } = await createAccountWithKey(db);
    const m = inEra('modern', { jsonrpc: '2.0', id: 1, method: 'server/discover' }, { 'x-api-key': key });
    const res = await post(`${a.url}/mcp/price-prediction`, m.body, m.headers);
    expect((res.body as { result: { capabilities: Record<string, unknown> } }).result.capabilities).toMatchObject({ extensions: { [TASKS_EXTENSION]: {} } });
  });

  it('a client declaring the extension gets a task on replica A; the v2 client pinned to 2026-07-28 polls it on replica B to the inlined result', async () => {
    const { account, key } = await createAccountWithKey(db);
    const cost = a.registry.get('price-prediction')!.tools.get('backtest_forecast')!.credits;
    const m = inEra('modern', { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'backtest_forecast', arguments: { asset: 'ethereum', horizon: 7, origins: 20 } } }, { 'x-api-key': key });
    const res = await post(`${a.url}/mcp/price-prediction`, withExtension(m.body), m.headers);
    expect(res.status).toBe(200);
    const created = (res.body as { result: Record<string, unknown> }).result;
    expect(created).toMatchObject({ resultType: 'task', status: 'working', ttlMs: 3_600_000 });
    const id = created.taskId as string;

    const client = new V2Client({ name: 'cryptomcp-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN_VERSION } }, capabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
    await client.connect(new V2StreamableHTTPClientTransport(new URL(`${b.url}/mcp/price-prediction`), { requestInit: { headers: { 'x-api-key': key } } }));
    try {
      const done = await polled(async () => {
        const task = await client.request({ method: 'tasks/get', params: { taskId: id } }, GetTask);
        return task.status === 'working' ? undefined : task;
      }, 60_000, 'the task to end');
      expect(done.status).toBe('completed');
      const envelope = (done.result as { structuredContent: Envelope }).structuredContent;
      expect(envelope.data.asset).toMatchObject({ id: 'ethereum' });
      expect(await balanceOf(db, account.id)).toBe(150 - cost);
      // tasks/cancel of an ended task: acknowledged, nothing refunded.
      const ack = await client.request({ method: 'tasks/cancel', params: { taskId: id } }, z.looseObject({}));
      expect(Object.keys(ack).filter((k) => k !== '_meta')).toEqual([]);
      expect(await balanceOf(db, account.id)).toBe(150 - cost);
      await expect(client.request({ method: 'tasks/get', params: { taskId: '00000000-0000-4000-8000-000000000000' } }, GetTask)).rejects.toThrow(/Task not found/);
    } finally {
      await client.close();
    }
  }, 90_000);

  it('a cancelled 2026-07-28 task is refunded', async () => {
    const { account, key } = await createAccountWithKey(db);
    const m = inEra('modern', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'bench_sleep', arguments: { ms: 30_000 } } }, { 'x-api-key': key });
    const res = await post(`${a.url}/mcp/market-intelligence`, withExtension(m.body), m.headers);
    const id = (res.body as { result: { taskId: string } }).result.taskId;
    expect(await balanceOf(db, account.id)).toBe(149);
    const c = inEra('modern', { jsonrpc: '2.0', id: 2, method: 'tasks/cancel', params: { taskId: id } }, { 'x-api-key': key, 'mcp-name': id });
    const cancel = await post(`${b.url}/mcp/market-intelligence`, withExtension(c.body), c.headers);
    expect((cancel.body as { result: unknown }).result).toMatchObject({ resultType: 'complete' });
    expect(await balanceOf(db, account.id)).toBe(150);
    const g = inEra('modern', { jsonrpc: '2.0', id: 3, method: 'tasks/get', params: { taskId: id } }, { 'x-api-key': key, 'mcp-name': id });
    const got = await post(`${b.url}/mcp/market-intelligence`, withExtension(g.body), g.headers);
    expect((got.body as { result: { status: string } }).result.status).toBe('cancelled');
  }, 30_000);

  it('without the extension: the plain result, and tasks/get answers -32021', async () => {
    const { key } = await createAccountWithKey(db);
    const m = inEra('modern', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'bench_sleep', arguments: { ms: 10 } } }, { 'x-api-key': key });
    const res = await post(`${a.url}/mcp/market-intelligence`, m.body, m.headers);
    expect((res.body as { result: Record<string, unknown> }).result).toMatchObject({ resultType: 'complete', structuredContent: { data: { slept_ms: 10 } } });
    const g = inEra('modern', { jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { taskId: '00000000-0000-4000-8000-000000000000' } }, { 'x-api-key': key, 'mcp-name': '00000000-0000-4000-8000-000000000000' });
    const got = await post(`${a.url}/mcp/market-intelligence`, g.body, g.headers);
    expect((got.body as { error: { code: number } }).error.code).toBe(-32021);
  });
});

describe('replicas that die, sweeps and expiry', () => {
  let doomed: ServerProcess | undefined;
  afterAll(() => {
    doomed?.child.kill('SIGKILL');
  });

  it('a task whose replica died (SIGKILL) is failed and refunded by the sweep of another replica', async () => {
    const { account, key } = await createAccountWithKey(db);
    doomed = await spawnServer(db.url, TASK_ENV);
    const started = await post(`${doomed.url}/mcp/market-intelligence`, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'bench_sleep', arguments: { ms: 60_000 }, task: {} } }, { 'x-api-key': key });
    const id = (started.body as { result: { task: { taskId: string } } }).result.task.taskId;
    expect(await balanceOf(db, account.id)).toBe(149);
    doomed.child.kill('SIGKILL');
    const client = await mcpClient(b.url, 'market-intelligence', key);
    try {
      const ended = await polled(async () => {
        const task = await client.experimental.tasks.getTask(id);
        return task.status === 'working' ? undefined : task;
      }, 30_000, 'the orphaned task to be failed');
      expect(ended.status).toBe('failed');
      expect(ended.statusMessage).toMatch(/replica running this task stopped/);
      expect(await balanceOf(db, account.id)).toBe(150);
      expect(await ledgerSum(db, account.id)).toBe(150);
    } finally {
      await client.close();
    }
  }, 60_000);

  it('a replica that stops (SIGTERM path) fails its running tasks, refunded, saying why', async () => {
    const stopping = await startTestService(db.url, TASK_ENV);
    const { account, key } = await createAccountWithKey(db);
    const started = await post(`${stopping.url}/mcp/market-intelligence`, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'bench_sleep', arguments: { ms: 30_000 }, task: {} } }, { 'x-api-key': key });
    const id = (started.body as { result: { task: { taskId: string } } }).result.task.taskId;
    expect(await balanceOf(db, account.id)).toBe(149);
    await stopping.close();
    const row = (await db.query<{ status: string; status_message: string }>('SELECT status, status_message FROM tasks WHERE id = $1', [id])).rows[0];
    expect(row).toMatchObject({ status: 'failed' });
    expect(row!.status_message).toContain('stopped before it finished');
    expect(await balanceOf(db, account.id)).toBe(150);
  }, 30_000);

  it('the metering sweep leaves a running task\'s reservation alone past the call deadline; the task is charged once when it ends', async () => {
    // A replica whose own calls go stale after 2 x 200 ms + 50 + 1000 ms, swept every 200 ms.
    const quick = await startTestService(db.url, { ...TASK_ENV, TOOL_TIMEOUT_MS: '200', SETTLE_INTERVAL_MS: '50', SWEEP_INTERVAL_MS: '200' });
    try {
      const { account, key } = await createAccountWithKey(db);
      const started = await post(`${quick.url}/mcp/market-intelligence`, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'bench_sleep', arguments: { ms: 3500 }, task: {} } }, { 'x-api-key': key });
      const id = (started.body as { result: { task: { taskId: string } } }).result.task.taskId;
      await eventually(async () => (await db.query<{ status: string }>('SELECT status FROM tasks WHERE id = $1', [id])).rows[0]?.status === 'completed', 20_000, 'the task to complete');
      const rows = await ledgerOf(account.id);
      expect(rows.filter((r) => r.kind === 'refund')).toEqual([]);
      expect(rows).toEqual([{ kind: 'reserve', delta: -1, resolution: 'charged' }]);
      expect(await balanceOf(db, account.id)).toBe(149);
    } finally {
      await quick.close();
    }
  }, 40_000);

  it('a task past its TTL is gone: not found, and deleted by the sweep', async () => {
    const { key } = await createAccountWithKey(db);
    const client = await mcpClient(a.url, 'market-intelligence', key);
    try {
      const created = await client.request({ method: 'tools/call', params: { name: 'bench_sleep', arguments: { ms: 1 }, task: {} } }, CreateTaskResultSchema);
      const id = created.task.taskId;
      await polled(async () => ((await client.experimental.tasks.getTask(id)).status === 'completed' ? true : undefined), 10_000, 'the task to complete');
      await db.query(`UPDATE tasks SET expires_at = clock_timestamp() - interval '1 second' WHERE id = $1`, [id]);
      await expect(client.experimental.tasks.getTask(id)).rejects.toThrow(/Task not found/);
      await eventually(async () => (await db.query('SELECT 1 FROM tasks WHERE id = $1', [id])).rowCount === 0, 10_000, 'the sweep to delete it');
    } finally {
      await client.close();
    }
  }, 30_000);
});
