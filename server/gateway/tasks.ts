// Long tools as MCP tasks (docs/tasks.md): a tools/call that asks for a task, of a tool the
// registry marks long-running, is answered at once with the task; the tool runs in the
// background on this replica (its heavy math in the compute pool, as any call's), and its state
// lives in PostgreSQL (server/tasks/store.ts), so any replica answers tasks/get, tasks/result,
// tasks/list and tasks/cancel for the account that owns it.
//
// Credits: the call's reservation (stage 7) becomes the task's. It is charged when the result is
// stored, refunded when the task fails or is cancelled (in the statement that changes its state),
// and its deadline is moved past the task's longest run, so the metering sweep never refunds a
// task still running. This replica writes a heartbeat for each task it runs; a task whose
// heartbeat stops (the replica died) is failed and refunded by the tasks_sweep job, and a task
// cancelled or failed elsewhere is aborted here at the next heartbeat.
import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { ApiError, toApiError } from '../errors.ts';
import type { UsageReader } from '../mcp/tool.ts';
import { TASK_RESULT_TTL_MS } from '../mcp/registry.ts';
import type { Metrics } from '../metrics.ts';
import {
  asksForTask,
  createTaskResult,
  declaresTasksExtension,
  getTaskResult,
  INTERNAL_ERROR,
  INVALID_PARAMS,
  missingCapability,
  RELATED_TASK_META_KEY,
  taskFields,
  taskNotFound,
  TASK_METHODS,
  type TaskAnswer,
} from '../tasks/protocol.ts';
import type { TaskError, TaskRow, TaskStore } from '../tasks/store.ts';
import type { Classified, Reserved } from './context.ts';
import { creditsFor } from './delivery.ts';
import { runTool, successResult } from './run-tool.ts';

export interface TaskSettings {
  /** Longest run of a task's tool; then it fails (refunded). */
  timeoutMs: number;
  /** How often this replica writes the heartbeat of the tasks it runs. */
  heartbeatMs: number;
  /** A working task whose heartbeat is older than this is failed and refunded by the sweep. */
  orphanAfterMs: number;
  /** The pollInterval / pollIntervalMs a task suggests. */
  pollIntervalMs: number;
}

export interface TaskRunnerDeps {
  store: TaskStore;
  usage: UsageReader;
  metrics: Metrics;
  settings: TaskSettings;
  log: (line: string) => void;
}

type ToolCall = Reserved & { call: { kind: 'tools/call' } };

/** Longest wait of a 2025-11-25 tasks/result for a task still working, and its polling step. */
const RESULT_WAIT_STEP_MS = 250;

export class TaskRunner {
  readonly #deps: TaskRunnerDeps;
  /** Tasks running on this replica: their abort and the promise of their end. */
  readonly #running = new Map<string, { abort: AbortController; done: Promise<void> }>();
  readonly #heartbeat: NodeJS.Timeout;
  #closed = false;

  constructor(deps: TaskRunnerDeps) {
    this.#deps = deps;
    deps.metrics.watchTasks(() => this.#running.size);
    this.#heartbeat = setInterval(() => void this.#beat(), deps.settings.heartbeatMs);
    this.#heartbeat.unref();
  }

  /** The call asks to run as a task, and its tool may (2026-07-28: the extension declared; 2025-11-25: params.task). */
  static wanted(call: Classified & { call: { kind: 'tools/call' } }): boolean {
    if (call.call.tool.definition.longRunning !== true) return false;
    const params = call.message.params as Record<string, unknown> | undefined;
    return call.era === 'modern' ? declaresTasksExtension(params) : asksForTask(params);
  }

  /** A task method of this message's generation. */
  static isTaskMethod(call: Classified): boolean {
    return call.call.kind === 'connect' && TASK_METHODS[call.era].includes(call.call.method);
  }

  /**
   * Creates the task for a reserved call (durably: a tasks/get on any replica finds it once this
   * resolves), starts its tool in the background and returns the CreateTaskResult.
   */
  async start(call: ToolCall): Promise<Record<string, unknown>> {
    const { settings, store, metrics } = this.#deps;
    const tool = call.call.tool;
    const row = await store.create({
      id: randomUUID(),
      accountId: call.grant.account_id,
      server: tool.server,
      tool: tool.name,
      requestId: call.requestId,
      ttlMs: TASK_RESULT_TTL_MS,
      pollIntervalMs: settings.pollIntervalMs,
      // Past the longest run and the time the sweep takes to see a dead replica.
      reservationDeadlineMs: settings.timeoutMs + 2 * settings.orphanAfterMs + settings.heartbeatMs,
    });
    metrics.tasks.inc({ server: tool.server, tool: tool.name, state: 'created' });
    const abort = new AbortController();
    const done = this.#run(row.id, call, abort.signal).finally(() => this.#running.delete(row.id));
    this.#running.set(row.id, { abort, done });
    return createTaskResult(row, call.era);
  }

  async #run(id: string, call: ToolCall, signal: AbortSignal): Promise<void> {
    const { store, usage, settings, metrics } = this.#deps;
    const labels = { server: call.call.tool.server, tool: call.call.tool.name };
    let state: 'completed' | 'failed';
    try {
      const output = await runTool(call, { usage, timeoutMs: settings.timeoutMs, clientGone: signal });
      // The one pricing rule (delivery.ts): no data, no charge; a page cut for size, what it holds.
      // task_finish charges that (the whole reservation, a part of it, or nothing) with the result.
      const due = creditsFor(call.cost, output);
      const remaining = call.decision.balance + call.cost - due.credits;
      const result = successResult(call, output, { credits: due.credits, remaining, ...(due.note !== undefined ? { note: due.note } : {}) });
      // 2025-11-25: a task's result names its task.
      const stored = call.era === 'legacy' ? { ...result, _meta: { [RELATED_TASK_META_KEY]: { taskId: id } } } : result;
      if (!(await store.complete(id, stored as Record<string, unknown>, due.credits, call.cost))) return;
      state = 'completed';
      if (due.credits > 0) metrics.creditsConsumed.inc({ ...labels, plan: call.grant.plan }, due.credits);
    } catch (err) {
      if (signal.aborted && this.#closed === false && !(await this.#stillWorking(id))) return;
      // Stopped with its replica (SIGTERM): said as such, not as whatever the aborted tool threw.
      const apiError = signal.aborted && this.#closed ? new ApiError('SERVICE_UNAVAILABLE', 'The replica running this task was stopped before it finished.') : toApiError(err);
      if (apiError.code === 'INTERNAL_ERROR') this.#deps.log(`task ${id} (${labels.tool}) failed: ${(err as Error).message}`);
      const error: TaskError = {
        code: apiError.status === 400 || apiError.status === 404 ? INVALID_PARAMS : INTERNAL_ERROR,
        message: apiError.message,
        data: { code: apiError.code, details: apiError.details, request_id: call.requestId },
      };
      try {
        if (!(await store.fail(id, error, `${apiError.code}: ${apiError.message} Its credits were refunded.`))) return;
      } catch (storeErr) {
        // The database is away: the sweep fails and refunds the task once its heartbeat is stale.
        this.#deps.log(`task ${id}: recording its failure deferred to the sweep: ${(storeErr as Error).message}`);
        return;
      }
      state = 'failed';
      if (call.cost > 0) metrics.creditsRefunded.inc({ ...labels, plan: call.grant.plan }, call.cost);
    }
    metrics.tasks.inc({ ...labels, state });
  }

  async #stillWorking(id: string): Promise<boolean> {
    const alive = await this.#deps.store.heartbeat([id]).catch(() => new Set<string>([id]));
    return alive.has(id);
  }

  /** Writes the heartbeat of this replica's tasks; aborts the ones no longer working (cancelled or failed elsewhere). */
  async #beat(): Promise<void> {
    const ids = [...this.#running.keys()];
    if (ids.length === 0) return;
    try {
      const alive = await this.#deps.store.heartbeat(ids);
      for (const id of ids) if (!alive.has(id)) this.#running.get(id)?.abort.abort();
    } catch (err) {
      this.#deps.log(`task heartbeat deferred: ${(err as Error).message}`);
    }
  }

  /** The answer to a tasks/* request of the caller's account (another account's task is not found). */
  async answer(call: Classified): Promise<TaskAnswer> {
    const method = call.call.kind === 'connect' ? call.call.method : '';
    const params = (call.message.params as Record<string, unknown> | undefined) ?? {};
    const account = call.grant.account_id;
    const { store } = this.#deps;
    // 2026-07-28: only a client that declares the extension may use its methods.
    if (call.era === 'modern' && !declaresTasksExtension(params)) return missingCapability();
    if (method === 'tasks/list') {
      const page = await store.list(account, 50, typeof params.cursor === 'string' ? params.cursor : undefined);
      return { result: { tasks: page.tasks.map((t) => taskFields(t, 'legacy')), ...(page.next !== undefined ? { nextCursor: page.next } : {}) } };
    }
    const id = params.taskId;
    if (typeof id !== 'string') return { error: { code: INVALID_PARAMS, message: 'params.taskId must be a string.' } };
    switch (method) {
      case 'tasks/get': {
        const row = await store.get(account, id);
        return row ? { result: getTaskResult(row, call.era) } : taskNotFound(id);
      }
      case 'tasks/cancel':
        return this.#cancel(call, account, id);
      case 'tasks/result':
        return this.#result(account, id);
      default:
        // tasks/update: no task here ever asks for input, so no update is awaited.
        return (await store.get(account, id)) ? { result: {} } : taskNotFound(id);
    }
  }

  async #cancel(call: Classified, account: string, id: string): Promise<TaskAnswer> {
    const outcome = await this.#deps.store.cancel(account, id);
    if (outcome === undefined) return taskNotFound(id);
    const row = await this.#deps.store.get(account, id);
    if (outcome.cancelled) {
      this.#running.get(id)?.abort.abort();
      if (row) this.#deps.metrics.tasks.inc({ server: row.server, tool: row.tool, state: 'cancelled' });
    }
    if (call.era === 'modern') return { result: {} };
    // 2025-11-25: cancelling a task already in a terminal state is an error; otherwise the task.
    if (!row) return taskNotFound(id);
    if (!outcome.cancelled) return { error: { code: INVALID_PARAMS, message: `Cannot cancel task: already in terminal status '${outcome.status}'` } };
    return { result: taskFields(row, 'legacy') };
  }

  /** 2025-11-25 tasks/result: waits for the task to end (up to the task timeout), then its result or error. */
  async #result(account: string, id: string): Promise<TaskAnswer> {
    const until = Date.now() + this.#deps.settings.timeoutMs;
    let row: TaskRow | undefined = await this.#deps.store.get(account, id);
    while (row?.status === 'working' && Date.now() < until && !this.#closed) {
      await new Promise((resolve) => setTimeout(resolve, RESULT_WAIT_STEP_MS));
      row = await this.#deps.store.get(account, id);
    }
    if (!row) return taskNotFound(id);
    if (row.status === 'completed' && row.result) return { result: row.result as CallToolResult as Record<string, unknown> };
    if (row.status === 'failed' && row.error) return { error: row.error };
    if (row.status === 'cancelled') return { error: { code: INVALID_PARAMS, message: 'Task was cancelled: it has no result.' } };
    return { error: { code: INTERNAL_ERROR, message: 'Task is still working; poll tasks/get.' } };
  }

  /** Fails this replica's running tasks (refunded) and waits for them to record it, as the process stops. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#heartbeat);
    for (const { abort } of this.#running.values()) abort.abort();
    await Promise.allSettled([...this.#running.values()].map((r) => r.done));
  }

  get running(): number {
    return this.#running.size;
  }
}
