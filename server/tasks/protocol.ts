// A task as each protocol generation writes it (docs/tasks.md):
// - 2026-07-28, the tasks extension (io.modelcontextprotocol/tasks, SEP-2663): the server decides
//   to answer a tools/call with a task when the request's client capabilities name the extension;
//   the task is `{ taskId, status, ttlMs, pollIntervalMs, ... }` with the result or error inlined
//   by tasks/get; methods tasks/get, tasks/cancel (tasks/update: no task of ours asks for input).
// - 2025-11-25, experimental tasks (SEP-1686): the client asks with `params.task` on tools/call
//   of a tool whose `execution.taskSupport` allows it; the task is `{ taskId, status, ttl,
//   pollInterval, ... }`; methods tasks/get, tasks/result, tasks/list, tasks/cancel.
import type { TaskError, TaskRow } from './store.ts';

/** The extension's identifier (capabilities, per-request client capabilities). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** 2025-11-25: the _meta key tying a result to its task. */
export const RELATED_TASK_META_KEY = 'io.modelcontextprotocol/related-task';

/** JSON-RPC codes the specifications name for tasks. */
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
export const MISSING_REQUIRED_CLIENT_CAPABILITY = -32021;

export type TaskEra = 'modern' | 'legacy';

/** The answer to a tasks/* request, computed before the protocol layer frames it. */
export type TaskAnswer = { result: Record<string, unknown> } | { error: TaskError };

/** The methods of each generation, and the ones answered from the task store. */
export const TASK_METHODS: Readonly<Record<TaskEra, readonly string[]>> = {
  modern: ['tasks/get', 'tasks/cancel', 'tasks/update'],
  legacy: ['tasks/get', 'tasks/result', 'tasks/list', 'tasks/cancel'],
};

/** The task's own fields, without result or error. */
export function taskFields(row: TaskRow, era: TaskEra): Record<string, unknown> {
  return {
    taskId: row.id,
    status: row.status,
    ...(row.status_message !== null ? { statusMessage: row.status_message } : {}),
    createdAt: row.created_at.toISOString(),
    lastUpdatedAt: row.updated_at.toISOString(),
    ...(era === 'modern' ? { ttlMs: row.ttl_ms, pollIntervalMs: row.poll_interval_ms } : { ttl: row.ttl_ms, pollInterval: row.poll_interval_ms }),
  };
}

/** The tools/call answer that creates the task (CreateTaskResult). */
export function createTaskResult(row: TaskRow, era: TaskEra): Record<string, unknown> {
  return era === 'modern' ? { resultType: 'task', ...taskFields(row, era) } : { task: taskFields(row, era) };
}

/** tasks/get: 2026-07-28 inlines the result or error (DetailedTask); 2025-11-25 gives the task alone. */
export function getTaskResult(row: TaskRow, era: TaskEra): Record<string, unknown> {
  const fields = taskFields(row, era);
  if (era === 'legacy') return fields;
  if (row.status === 'completed' && row.result) return { ...fields, result: row.result };
  if (row.status === 'failed' && row.error) return { ...fields, error: row.error };
  return fields;
}

export function taskNotFound(id: unknown): { error: TaskError } {
  return { error: { code: INVALID_PARAMS, message: 'Failed to retrieve task: Task not found', data: { taskId: typeof id === 'string' ? id : null } } };
}

export function missingCapability(): { error: TaskError } {
  return {
    error: {
      code: MISSING_REQUIRED_CLIENT_CAPABILITY,
      message: 'Missing required client capability',
      data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    },
  };
}

/** The request's per-request client capabilities (2026-07-28) name the tasks extension. */
export function declaresTasksExtension(params: Record<string, unknown> | undefined): boolean {
  const meta = params?._meta;
  if (typeof meta !== 'object' || meta === null) return false;
  const capabilities = (meta as Record<string, unknown>)['io.modelcontextprotocol/clientCapabilities'];
  if (typeof capabilities !== 'object' || capabilities === null) return false;
  const extensions = (capabilities as Record<string, unknown>).extensions;
  return typeof extensions === 'object' && extensions !== null && TASKS_EXTENSION in extensions;
}

/** 2025-11-25: the tools/call asks to run as a task (`params.task`, an object). */
export function asksForTask(params: Record<string, unknown> | undefined): boolean {
  const task = params?.task;
  return typeof task === 'object' && task !== null && !Array.isArray(task);
}
