// The one place background work runs: a graphile-worker job queue in PostgreSQL. Each due job is
// taken by exactly one replica (graphile-worker locks it with SELECT ... FOR UPDATE SKIP
// LOCKED), a job that throws is retried with exponential backoff, and every run is timed and
// counted by task and outcome. Recurring work is a job that, before it runs, queues its own next
// run under a job key: however many replicas start, one run of each recurring task is pending.
import { Logger, run, type JobHelpers, type Runner, type TaskList } from 'graphile-worker';
import type pg from 'pg';

export type JobOutcome = 'ok' | 'error';

/** How often each replica checks that every recurring series has a pending run. */
const SERIES_CHECK_MS = 10_000;
/** Wait before starting the pool again after it stopped on its own. */
const RESTART_DELAY_MS = 1000;

/** A task: what one job of it does with its payload. Throwing retries the job with backoff. */
export type JobTask = (payload: unknown, helpers: JobHelpers) => Promise<void>;

export interface Recurring {
  task: string;
  everyMs: number;
}

export interface JobRunnerOptions {
  pool: pg.Pool;
  tasks: Record<string, JobTask>;
  recurring: readonly Recurring[];
  /** How often the queue is polled for jobs that became due (new jobs arrive by LISTEN/NOTIFY). */
  pollIntervalMs: number;
  concurrency: number;
  onJob?: (task: string, outcome: JobOutcome, seconds: number) => void;
  log?: (line: string) => void;
  /** How often this replica renews its recurring series (SERIES_CHECK_MS); a series lives 3 of these without renewal. */
  seriesCheckMs?: number;
}

export interface JobRunner {
  stop(): Promise<void>;
}

/** Queues a job (SQL, so a caller may do it inside its own transaction). */
export async function jobAdd(
  db: { query: (text: string, values: unknown[]) => Promise<unknown> },
  task: string,
  payload: unknown,
  opts: { jobKey?: string; runAt?: Date; maxAttempts?: number; jobKeyMode?: 'replace' | 'preserve_run_at' } = {},
): Promise<void> {
  await db.query('SELECT graphile_worker.add_job($1, $2::json, run_at => $3, max_attempts => $4, job_key => $5, job_key_mode => $6)', [
    task,
    JSON.stringify(payload ?? {}),
    opts.runAt ?? null,
    opts.maxAttempts ?? null,
    opts.jobKey ?? null,
    opts.jobKeyMode ?? 'replace',
  ]);
}

/**
 * A recurring task's runs: one job key (one pending run) and no retry of a failed run (the next
 * run is already queued). Not a named queue, although that would keep runs from ever
 * overlapping: a run locked by a replica that died keeps its queue locked for graphile-worker's
 * lock timeout (4 hours), stopping the series everywhere. So a replacement queued while a run is
 * under way may start beside it; every recurring task is safe to run twice at once (idempotent
 * statements, rules claimed with SKIP LOCKED, reservations refunded by their own deadline).
 *
 * The key names the period: replicas configured with different periods (a gateway and a server
 * Deployment, or two versions during a rollout) each keep their own series. With one key for all,
 * whichever replica ran last set the next run to its period: a 300 ms sweep became a 60 s one
 * as soon as a replica with the default took a run. A run carries its series (period, and until
 * when a replica of that period was last seen: each one's keeper renews it); whoever takes it
 * queues the same series again, unless no replica of that period has been seen for a while.
 */
export const seriesKey = (task: string, everyMs: number) => `${task}@${everyMs}ms`;
interface SeriesPayload {
  every_ms: number;
  /** Epoch ms: past this, no replica of this period renewed the series; it is not queued again. */
  alive_until: number;
}
const queueSeries = (pool: pg.Pool, task: string, run: SeriesPayload, jobKeyMode: 'replace' | 'preserve_run_at') =>
  jobAdd(pool, task, run, { jobKey: seriesKey(task, run.every_ms), maxAttempts: 1, runAt: new Date(Date.now() + run.every_ms), jobKeyMode });
const isSeries = (payload: unknown): payload is SeriesPayload =>
  typeof payload === 'object' && payload !== null && typeof (payload as SeriesPayload).every_ms === 'number';

/**
 * What a runner's jobs use, while it runs. graphile-worker 0.18 keeps the compiled options of every
 * pool it ever ran in a module-level Map for the life of the process (taskIdentifiers.js,
 * `cacheByOptions`), and those options hold the task list and the logger. Reached directly, they
 * would keep every stopped runner's tasks, and through them the whole service that made them, for
 * good (a test worker that starts a service per file kept all of them). So the task list and
 * logger are made here, outside startJobRunner's scope, and reach all of it through `live`, which
 * stop() empties.
 */
interface Attached {
  live?: Pick<JobRunnerOptions, 'pool' | 'tasks' | 'onJob' | 'log'>;
}

function detachedTaskList(names: readonly string[], attached: Attached): TaskList {
  const taskList: TaskList = {};
  for (const name of names) {
    taskList[name] = async (payload, helpers) => {
      const current = attached.live;
      if (current === undefined) throw new Error('the job runner has stopped');
      // The next run is queued first: a run that fails or crashes does not end the series.
      if (isSeries(payload) && Date.now() <= payload.alive_until) await queueSeries(current.pool, name, payload, 'replace');
      const started = performance.now();
      try {
        await current.tasks[name]!(payload, helpers);
        current.onJob?.(name, 'ok', (performance.now() - started) / 1000);
      } catch (err) {
        current.onJob?.(name, 'error', (performance.now() - started) / 1000);
        current.log?.(`job ${name} failed: ${(err as Error).message}`);
        throw err;
      }
    };
  }
  return taskList;
}

function detachedLogger(attached: Attached): Logger {
  return new Logger(() => (level, message) => {
    if (level === 'error' || level === 'warning') attached.live?.log?.(`job runner ${level}: ${message}`);
  });
}

export async function startJobRunner(opts: JobRunnerOptions): Promise<JobRunner> {
  const { pool } = opts;
  const seriesCheckMs = opts.seriesCheckMs ?? SERIES_CHECK_MS;
  /** How long a series lives without a replica of its period renewing it. */
  const seriesAliveMs = 3 * seriesCheckMs;
  // What graphile-worker is given reaches our tasks and callbacks only through `attached`, which
  // stop() empties (see detachedTaskList).
  const attached: Attached = { live: { pool, tasks: opts.tasks, onJob: opts.onJob, log: opts.log } };
  const taskList = detachedTaskList(Object.keys(opts.tasks), attached);
  // Each replica makes sure every series exists, at start and then periodically: a run that
  // could not queue its successor (the database was away) or died with its process is replaced;
  // one already pending keeps its time.
  // A series' next run is one period from now, as a timer's would be (not at start-up). At start a
  // replica sets it to its own period ('replace'): a series the database kept from an earlier
  // process (which may have run with another period, or died holding the run's lock) does not
  // hold this one back. Later checks only re-create a missing series ('preserve_run_at').
  const ensureSeries = async (jobKeyMode: 'replace' | 'preserve_run_at') => {
    for (const r of opts.recurring) await queueSeries(pool, r.task, { every_ms: r.everyMs, alive_until: Date.now() + seriesAliveMs }, jobKeyMode);
  };
  await ensureSeries('replace');
  const keeper = setInterval(() => {
    ensureSeries('preserve_run_at').catch(() => {});
  }, seriesCheckMs);
  keeper.unref();
  const options = {
    pgPool: pool,
    taskList,
    concurrency: opts.concurrency,
    pollInterval: opts.pollIntervalMs,
    // No named prepared statements: behind PgBouncer in transaction mode two clients' statements
    // of the same name collide ("prepared statement … already exists"), as ours did.
    noPreparedStatements: true,
    noHandleSignals: true,
    // A job's end recorded through graphile-worker's batcher (0 ms: no added wait), which retries
    // and, if the database stays away, stops the pool (restarted below). Unbatched, a failed
    // "fail job" write is a promise nobody awaits: an unhandled rejection, which ends a Node
    // process, during any database outage that catches a job failing.
    preset: { worker: { completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
    logger: detachedLogger(attached),
  };
  // graphile-worker stops its whole pool when it cannot record a job's end (the database went
  // away mid-job), expecting its process to be restarted; here the service lives on, so the
  // pool is started again (the job it could not release is retried once its lock expires).
  let stopping = false;
  let runner: Runner = await run(options);
  /** The current pool has not stopped on its own (a stopped one refuses stop()). */
  let running = true;
  const supervise = (current: Runner) => {
    running = true;
    const ended = () => {
      if (runner === current) running = false;
      return restart();
    };
    current.promise.then(ended, ended);
  };
  const restart = async () => {
    while (!stopping) {
      opts.log?.('job runner stopped unexpectedly; restarting');
      await new Promise((r) => setTimeout(r, RESTART_DELAY_MS));
      if (stopping) return;
      try {
        runner = await run(options);
        supervise(runner);
        // stop() came while this pool was starting: it stopped the previous one only.
        if (stopping) await runner.stop();
        return;
      } catch (err) {
        opts.log?.(`job runner restart failed: ${(err as Error).message}`);
      }
    }
  };
  supervise(runner);
  return {
    async stop() {
      stopping = true;
      clearInterval(keeper);
      if (running) await runner.stop();
      attached.live = undefined;
    },
  };
}
