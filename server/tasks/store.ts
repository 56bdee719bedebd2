// The PostgreSQL task store (migration 0017): tasks of long tools, their state, result and the
// credit reservation each owns. Every state change that ends a task charges or refunds its
// reservation in the same statement (task_finish, task_cancel, task_fail_orphans), so a task is
// charged once or refunded once, whichever replica ends it.
import type { Database } from '../db/pool.ts';

export type TaskStatus = 'working' | 'completed' | 'failed' | 'cancelled';

/** A JSON-RPC error object, as a failed task stores it. */
export interface TaskError {
  code: number;
  message: string;
  data?: unknown;
}

export interface TaskRow {
  id: string;
  account_id: string;
  server: string;
  tool: string;
  status: TaskStatus;
  status_message: string | null;
  result: Record<string, unknown> | null;
  error: TaskError | null;
  ttl_ms: number;
  poll_interval_ms: number;
  created_at: Date;
  updated_at: Date;
}

export interface NewTask {
  id: string;
  accountId: string;
  server: string;
  tool: string;
  /** The credit reservation of the call that created the task. */
  requestId: string;
  ttlMs: number;
  pollIntervalMs: number;
  /** How long from now the reservation may stay unresolved before the metering sweep refunds it. */
  reservationDeadlineMs: number;
}

const COLUMNS = 'id, account_id, server, tool, status, status_message, result, error, ttl_ms, poll_interval_ms, created_at, updated_at';

export class TaskStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  /**
   * Stores a new working task and moves its reservation's deadline past the task's longest run,
   * in one transaction: once this resolves, any replica's tasks/get finds it.
   */
  async create(task: NewTask): Promise<TaskRow> {
    return this.#db.transaction(async (client) => {
      const res = await client.query<TaskRow>(
        `INSERT INTO tasks (id, account_id, server, tool, request_id, ttl_ms, poll_interval_ms, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6::integer, $7, clock_timestamp() + make_interval(secs => $6::integer / 1000.0))
         RETURNING ${COLUMNS}`,
        [task.id, task.accountId, task.server, task.tool, task.requestId, task.ttlMs, task.pollIntervalMs],
      );
      await client.query(
        `UPDATE credit_ledger SET stale_at = clock_timestamp() + make_interval(secs => $2::double precision / 1000)
          WHERE kind = 'reserve' AND request_id = $1 AND resolved_at IS NULL`,
        [task.requestId, task.reservationDeadlineMs],
      );
      return res.rows[0]!;
    });
  }

  /** The account's task, unless it has expired; undefined for another account's or an unknown id. */
  async get(accountId: string, id: string): Promise<TaskRow | undefined> {
    if (!isUuid(id)) return undefined;
    const res = await this.#db.query<TaskRow>(`SELECT ${COLUMNS} FROM tasks WHERE id = $1 AND account_id = $2 AND expires_at > clock_timestamp()`, [id, accountId]);
    return res.rows[0];
  }

  /** The account's live tasks, newest first, after the cursor (a task id of the previous page). */
  async list(accountId: string, limit: number, after?: string): Promise<{ tasks: TaskRow[]; next?: string }> {
    const cursor = after !== undefined && isUuid(after) ? after : null;
    const res = await this.#db.query<TaskRow>(
      `SELECT ${COLUMNS} FROM tasks t
        WHERE account_id = $1 AND expires_at > clock_timestamp()
          AND ($2::uuid IS NULL OR (created_at, id) < (SELECT created_at, id FROM tasks WHERE id = $2::uuid AND account_id = $1))
        ORDER BY created_at DESC, id DESC LIMIT $3`,
      [accountId, cursor, limit + 1],
    );
    const tasks = res.rows.slice(0, limit);
    return res.rows.length > limit ? { tasks, next: tasks[tasks.length - 1]!.id } : { tasks };
  }

  /**
   * A completed task's result, charged `credits` of its reservation of `cost` (gateway/delivery.ts
   * creditsFor): nothing for an answer with no data, a part for a page cut for size, else all of
   * it. False: it was no longer working.
   */
  async complete(id: string, result: Record<string, unknown>, credits: number, cost: number): Promise<boolean> {
    const free = credits === 0;
    const part = !free && credits < cost ? credits : null;
    const res = await this.#db.query<{ done: boolean }>('SELECT task_finish($1, $2, $3, NULL, $4, $5, $6, $7) AS done', [
      id,
      'completed',
      result,
      free ? 'The answer held no data for what was asked: charged nothing.' : null,
      !free,
      part,
      part === null ? null : `A page cut for size: charged ${credits} of ${cost} credits.`,
    ]);
    return res.rows[0]?.done === true;
  }

  /** A failed task, refunded. False: it was no longer working. */
  async fail(id: string, error: TaskError, message: string): Promise<boolean> {
    const res = await this.#db.query<{ done: boolean }>('SELECT task_finish($1, $2, NULL, $3, $4, false) AS done', [id, 'failed', error, message]);
    return res.rows[0]?.done === true;
  }

  /**
   * The account asks to cancel its task: its status after, and whether this request cancelled it
   * (it was working: refunded); undefined if the account has no such task.
   */
  async cancel(accountId: string, id: string): Promise<{ status: TaskStatus; cancelled: boolean } | undefined> {
    if (!isUuid(id)) return undefined;
    const res = await this.#db.query<{ status: TaskStatus; cancelled: boolean }>('SELECT status, cancelled FROM task_cancel($1, $2)', [id, accountId]);
    return res.rows[0];
  }

  /** Keeps this replica's running tasks alive; returns the ids still working (the others were cancelled or failed elsewhere). */
  async heartbeat(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const res = await this.#db.query<{ id: string }>(
      `UPDATE tasks SET heartbeat_at = clock_timestamp() WHERE id = ANY ($1::uuid[]) AND status = 'working' RETURNING id`,
      [ids],
    );
    return new Set(res.rows.map((r) => r.id));
  }

  /**
   * The sweep (a job, one replica at a time): fails and refunds working tasks whose heartbeat is
   * older than `orphanAfterMs`, and deletes ended tasks past their TTL.
   */
  async sweep(orphanAfterMs: number): Promise<{ orphaned: number; expired: number }> {
    const orphans = await this.#db.query<{ n: number }>('SELECT task_fail_orphans(make_interval(secs => $1::double precision / 1000)) AS n', [orphanAfterMs]);
    const expired = await this.#db.query(`DELETE FROM tasks WHERE expires_at < clock_timestamp() AND status <> 'working'`);
    return { orphaned: orphans.rows[0]?.n ?? 0, expired: expired.rowCount ?? 0 };
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
function isUuid(value: string): boolean {
  return UUID.test(value);
}
