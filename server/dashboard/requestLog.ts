// The request log (migration 0009): what the gateway records for each authenticated /mcp request,
// and what the dashboard reads back. The gateway's hook is createRequestLog(db).record(entry): it
// buffers entries and writes them in one INSERT per batch, off the request path. Every value is
// made to fit its column here, at the one way in, so no caller's entry can fail a batch.
import type { Database } from '../db/pool.ts';
import type { RequestLogEntry } from '../gateway/plugin.ts';
import { csvLine } from '../lib/csv.ts';
import { logText } from '../lib/text.ts';
import type { RequestLogRowJson } from '../public-types.ts';

/** The default retention; the service's is REQUEST_LOG_RETENTION_DAYS (server/config.ts). */
export const REQUEST_LOG_RETENTION_DAYS = 30;

export type { RequestLogEntry };

export type RequestLogRow = RequestLogRowJson;

const INT4_MAX = 2_147_483_647;

/** A whole number within [min, max]; `fallback` for what is not a number at all. */
function whole(n: number, min: number, max: number, fallback: number): number {
  return Number.isFinite(n) ? Math.min(max, Math.max(min, Math.round(n))) : fallback;
}

/**
 * The entry as it is stored: text clamped to its column's length (migration 0009; `server` has no
 * limit there and gets the dashboard filter's 64) with control characters (NUL among them, which
 * a text column cannot hold) replaced, numbers whole and within their column's range. A client
 * chooses the JSON-RPC method, so any of these may arrive from outside.
 */
export function requestLogClean(e: RequestLogEntry): RequestLogEntry {
  const text = (value: unknown, max: number) => logText(String(value), max);
  const created = e.created_at instanceof Date && Number.isFinite(e.created_at.getTime()) ? e.created_at : new Date();
  return {
    account_id: e.account_id,
    key_id: e.key_id,
    request_id: text(e.request_id, 128),
    server: text(e.server, 64),
    method: text(e.method, 64),
    tool: e.tool === null || e.tool === undefined ? null : text(e.tool, 128),
    status: whole(e.status, 100, 599, 500),
    error_code: e.error_code === null || e.error_code === undefined ? null : text(e.error_code, 64),
    message: e.message === null || e.message === undefined ? null : text(e.message, 300),
    args_bytes: e.args_bytes === null || e.args_bytes === undefined ? null : whole(e.args_bytes, 0, INT4_MAX, 0),
    credits: whole(e.credits, 0, INT4_MAX, 0),
    latency_ms: whole(e.latency_ms, 0, INT4_MAX, 0),
    created_at: created,
  };
}

/**
 * Inserts many entries, and adds them to the daily counts (request_log_daily), in one statement.
 * The counts are updated in a fixed order, so two batches touching the same rows cannot deadlock.
 */
export async function requestLogInsertMany(db: Database, entries: readonly RequestLogEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const clean = entries.map(requestLogClean);
  const col = <K extends keyof RequestLogEntry>(k: K) => clean.map((e) => e[k]);
  await db.query(
    `WITH batch AS (
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::smallint[], $8::text[], $9::int[], $10::int[], $11::timestamptz[], $12::text[], $13::int[])
         AS u(account_id, key_id, request_id, server, method, tool, status, error_code, credits, latency_ms, created_at, message, args_bytes)),
     logged AS (
       INSERT INTO request_log (account_id, key_id, request_id, server, method, tool, status, error_code, credits, latency_ms, created_at, message, args_bytes)
       SELECT * FROM batch)
     INSERT INTO request_log_daily AS d (account_id, day, key_id, server, method, tool, status, error_code, requests, credits)
     SELECT account_id, (created_at AT TIME ZONE 'UTC')::date, key_id, server, method, tool, status, error_code, count(*), sum(credits)
       FROM batch GROUP BY 1, 2, 3, 4, 5, 6, 7, 8 ORDER BY 1, 2, 3, 4, 5, 6, 7, 8
     ON CONFLICT ON CONSTRAINT request_log_daily_group
     DO UPDATE SET requests = d.requests + EXCLUDED.requests, credits = d.credits + EXCLUDED.credits`,
    [
      col('account_id'),
      col('key_id'),
      col('request_id'),
      col('server'),
      col('method'),
      col('tool'),
      col('status'),
      col('error_code'),
      col('credits'),
      col('latency_ms'),
      col('created_at'),
      col('message'),
      col('args_bytes'),
    ],
  );
}

export interface RequestLog {
  /** Queues one entry; written within flushMs or when the batch is full. Never throws. */
  record(entry: RequestLogEntry): void;
  /** Writes what is queued now (tests, shutdown). */
  flush(): Promise<void>;
  close(): Promise<void>;
  /** Entries dropped so far because they could not be written. */
  readonly dropped: number;
}

/** A failure the values of some row caused (SQLSTATE class 22, data exception; 23, constraint violation). */
function isRowFault(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
}

/**
 * Writes a batch; when a row's values make it fail, writes each half apart, down to single rows,
 * so only the faulty rows are lost (a few statements per bad row). Any other failure (the
 * database is away) drops the batch. Returns how many entries were dropped.
 */
async function requestLogWrite(db: Database, batch: readonly RequestLogEntry[], report: (err: unknown, dropped: number) => void): Promise<number> {
  try {
    await requestLogInsertMany(db, batch);
    return 0;
  } catch (err) {
    if (batch.length === 1 || !isRowFault(err)) {
      report(err, batch.length);
      return batch.length;
    }
    const half = Math.ceil(batch.length / 2);
    return (await requestLogWrite(db, batch.slice(0, half), report)) + (await requestLogWrite(db, batch.slice(half), report));
  }
}

/**
 * The gateway's hook. What cannot be written is dropped, counted and reported to onError: the
 * log is for debugging and must never fail or slow a request.
 */
export function createRequestLog(
  db: Database,
  opts: { flushMs?: number; maxBatch?: number; onError?: (err: unknown) => void } = {},
): RequestLog {
  const flushMs = opts.flushMs ?? 1000;
  const maxBatch = opts.maxBatch ?? 500;
  let queue: RequestLogEntry[] = [];
  let writing: Promise<void> = Promise.resolve();
  let dropped = 0;
  const report = (err: unknown, n: number) => {
    const message = err instanceof Error ? err.message : String(err);
    opts.onError?.(new Error(`${n} request log ${n === 1 ? 'entry' : 'entries'} dropped: ${message}`, { cause: err }));
  };
  const flush = async () => {
    const batch = queue;
    queue = [];
    writing = writing.then(async () => {
      if (batch.length === 0) return;
      dropped += await requestLogWrite(db, batch, report);
    });
    await writing;
  };
  const timer = setInterval(() => void flush(), flushMs);
  timer.unref();
  return {
    record(entry) {
      queue.push(entry);
      if (queue.length >= maxBatch) void flush();
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
    get dropped() {
      return dropped;
    },
  };
}

export interface RequestLogFilter {
  key_id?: string;
  server?: string;
  tool?: string;
  /** One request, by the id its answer quoted (x-request-id, details.request_id). */
  request_id?: string;
  /** 'ok' (no error), 'error' (4xx/5xx but 429, or an error code), 'rate_limited' (429), or one HTTP status. */
  status?: 'ok' | 'error' | 'rate_limited' | number;
  /** Written at or after / before these instants (a range of UTC days, from the route). */
  since?: Date;
  until?: Date;
  /** Keyset cursor: rows written before this row id (ids follow write order, which is time order within a batch's second). */
  before?: number;
  limit: number;
}

const ROW_COLUMNS = 'id, account_id, key_id, request_id, server, method, tool, status, error_code, message, args_bytes, credits, latency_ms, created_at';

/** The WHERE clause and its values for one account's rows matching `f`, within the retention. */
function requestLogWhere(accountId: string, f: Omit<RequestLogFilter, 'limit'>, retentionDays: number): { where: string; values: unknown[] } {
  // Only the filters given become conditions (no "$n IS NULL OR …"), so the planner walks the
  // primary key (account_id, id) backwards, newest first, and stops after limit + 1 matching rows.
  const values: unknown[] = [accountId, retentionDays];
  const where = ['account_id = $1', 'created_at > now() - make_interval(days => $2)'];
  const add = (sql: (n: string) => string, value: unknown) => {
    values.push(value);
    where.push(sql(`$${values.length}`));
  };
  if (f.key_id !== undefined) add((n) => `key_id = ${n}::uuid`, f.key_id);
  if (f.server !== undefined) add((n) => `server = ${n}`, f.server);
  if (f.tool !== undefined) add((n) => `tool = ${n}`, f.tool);
  if (f.request_id !== undefined) add((n) => `request_id = ${n}`, f.request_id);
  if (f.since !== undefined) add((n) => `created_at >= ${n}::timestamptz`, f.since);
  if (f.until !== undefined) add((n) => `created_at < ${n}::timestamptz`, f.until);
  if (f.before !== undefined) add((n) => `id < ${n}::bigint`, f.before);
  if (typeof f.status === 'number') add((n) => `status = ${n}::smallint`, f.status);
  // As in the usage breakdown: a JSON-RPC error answered with HTTP 200 carries an error code and is a failure.
  else if (f.status === 'ok') where.push('status < 400 AND error_code IS NULL');
  else if (f.status === 'rate_limited') where.push('status = 429');
  else if (f.status === 'error') where.push('status <> 429 AND (status >= 400 OR error_code IS NOT NULL)');
  return { where: where.join(' AND '), values };
}

const toRow = (r: Omit<RequestLogRow, 'created_at'> & { created_at: Date }): RequestLogRow => ({ ...r, id: Number(r.id), created_at: r.created_at.toISOString() });

/** One page of an account's log, newest first, within the retention period. */
export async function requestLogPage(
  db: Database,
  accountId: string,
  f: RequestLogFilter,
  retentionDays = REQUEST_LOG_RETENTION_DAYS,
): Promise<{ rows: RequestLogRow[]; next: string | null }> {
  const { where, values } = requestLogWhere(accountId, f, retentionDays);
  values.push(f.limit + 1);
  const res = await db.query<Omit<RequestLogRow, 'created_at'> & { created_at: Date }>(
    `SELECT ${ROW_COLUMNS} FROM request_log WHERE ${where} ORDER BY id DESC LIMIT $${values.length}`,
    values,
  );
  const rows = res.rows.slice(0, f.limit).map(toRow);
  const last = rows.at(-1);
  const next = res.rows.length > f.limit && last ? String(last.id) : null;
  return { rows, next };
}

export const REQUEST_LOG_CSV_HEADER = ['time', 'request_id', 'key_id', 'server', 'method', 'tool', 'status', 'error_code', 'message', 'credits', 'latency_ms', 'args_bytes'];

export function requestLogCsvLine(r: RequestLogRow): string {
  return csvLine([r.created_at, r.request_id, r.key_id, r.server, r.method, r.tool, r.status, r.error_code, r.message, r.credits, r.latency_ms, r.args_bytes]);
}

/**
 * Every matching row, newest first, as CSV lines, read in keyset pages of `page` rows so an
 * export of the whole retention never holds it in memory at once.
 */
export async function* requestLogCsv(
  db: Database,
  accountId: string,
  f: Omit<RequestLogFilter, 'limit' | 'before'>,
  retentionDays = REQUEST_LOG_RETENTION_DAYS,
  page = 1000,
): AsyncGenerator<string> {
  yield csvLine(REQUEST_LOG_CSV_HEADER);
  let before: number | undefined;
  for (;;) {
    const { rows, next } = await requestLogPage(db, accountId, { ...f, before, limit: page }, retentionDays);
    for (const r of rows) yield requestLogCsvLine(r);
    if (next === null) return;
    before = Number(next);
  }
}

/**
 * Deletes rows past the retention period (run by the dashboard's periodic sweep), in batches of
 * `batch` rows so lowering the retention never holds one long transaction over a big table.
 * The daily counts of days wholly past the retention go too. Returns how many log rows were deleted.
 */
export async function requestLogSweep(db: Database, retentionDays = REQUEST_LOG_RETENTION_DAYS, batch = 10_000): Promise<number> {
  let deleted = 0;
  for (;;) {
    const res = await db.query(
      `DELETE FROM request_log WHERE ctid = ANY (ARRAY(
         SELECT ctid FROM request_log WHERE created_at < now() - make_interval(days => $1) LIMIT $2))`,
      [retentionDays, batch],
    );
    deleted += res.rowCount ?? 0;
    if ((res.rowCount ?? 0) < batch) break;
  }
  // The daily counts go by whole UTC days: a day is dropped once all of it is past the retention.
  await db.query(`DELETE FROM request_log_daily WHERE day < ((now() AT TIME ZONE 'UTC') - make_interval(days => $1))::date`, [retentionDays]);
  return deleted;
}
