// The compute pool: CPU-bound tool work runs on worker threads so that the event loop keeps
// answering /healthz, cheap tools and socket closes while a backtest computes.
//
// Threads come from piscina rather than bare node:worker_threads. What the pool needs from a
// thread layer is exactly what piscina is built and maintained for (piscinajs, Node core
// contributors, used across the ecosystem): a task aborted by its AbortSignal while it runs has
// its thread terminated (JavaScript cannot be interrupted otherwise) and a fresh one started;
// threads past an idle timeout are torn down, so a process that never computes holds none;
// a thread that dies or runs out of memory fails its task instead of hanging it; and it loads
// our TypeScript module as Node does. Bare worker_threads would mean writing and testing that
// dispatch, termination, respawn and error transport ourselves.
//
// What piscina does not do is fairness between accounts, so admission is ours and piscina never
// queues: a job starts only when a thread is free and its account holds fewer than its share of
// the threads. Excess waits in a bounded queue where accounts take turns, so five backtests
// from one account cannot keep another account's single call waiting behind all five. Waiting
// (rather than refusing at once) because the call is already reserved and agents commonly fire a
// few heavy calls together: they finish, in turn, within the tool timeout, and a client that gives
// up while waiting is dropped from the queue and refunded. Past the bounds the call is refused
// (and refunded by the gateway): 429 RATE_LIMITED when this account's own queue is full (its
// load, its retry), 503 SERVICE_UNAVAILABLE when the process's is (everyone's load), both with
// Retry-After.
import { performance } from 'node:perf_hooks';
import { Piscina } from 'piscina';
import { ApiError } from '../errors.ts';
import { runTask, type TaskInput, type TaskName, type TaskOutput, type TaskResult } from './tasks.ts';
import type { ComputeJob, ComputePool, ComputeStats } from './types.ts';

export interface ComputeSettings {
  /** Threads, i.e. jobs running at once; 0 runs every task inline on the event loop (the control). */
  workers: number;
  /** Most jobs one account has running at once. */
  accountShare: number;
  /** Most jobs one account has waiting. */
  accountQueue: number;
  /** Most jobs waiting in the process. */
  queue: number;
  /** A thread idle this long is stopped. */
  idleTimeoutMs?: number;
  /** Each job's end: for metrics. Seconds waited for a thread and spent on it. */
  onJob?: (task: TaskName, outcome: JobOutcome, waitSeconds: number, runSeconds: number) => void;
}

export type JobOutcome = 'completed' | 'failed' | 'cancelled' | 'refused';

export function createComputePool(settings: ComputeSettings): ComputePool {
  return settings.workers > 0 ? new WorkerPool(settings) : new InlinePool(settings);
}

/** The task's result as the caller sees it: its value, or its error rebuilt on this thread. */
function unwrap<T>(result: TaskResult): T {
  if (result.ok) return result.value as T;
  throw result.name === 'RangeError' ? new RangeError(result.message) : new Error(result.message);
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

interface Waiting {
  task: TaskName;
  input: unknown;
  account: string;
  signal: AbortSignal;
  queuedAt: number;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  onAbort: () => void;
}

class WorkerPool implements ComputePool {
  readonly #settings: ComputeSettings;
  readonly #piscina: Piscina;
  /** Waiting jobs per account, oldest first. */
  readonly #waiting = new Map<string, Waiting[]>();
  readonly #runningBy = new Map<string, number>();
  /** When each account with jobs in the pool last had one started (a sequence number). */
  readonly #lastServed = new Map<string, number>();
  #tick = 0;
  #running = 0;
  #waitingCount = 0;
  #closed = false;
  /** A running mean of job run time, for Retry-After. */
  #meanRunSeconds = 1;
  readonly #counts = { completed: 0, failed: 0, cancelled: 0, refused: 0 };

  constructor(settings: ComputeSettings) {
    this.#settings = settings;
    this.#piscina = new Piscina({
      filename: new URL('./worker.ts', import.meta.url).href,
      minThreads: 0,
      maxThreads: settings.workers,
      idleTimeout: settings.idleTimeoutMs ?? 60_000,
      // Admission above never hands piscina more jobs than threads; its queue only holds a job
      // for the moment a replacement thread starts.
      maxQueue: settings.workers,
      // The pool times its jobs itself (onJob); piscina's histograms would be a second copy.
      recordTiming: false,
    });
  }

  run<K extends TaskName>(task: K, input: TaskInput<K>, job: ComputeJob): Promise<TaskOutput<K>> {
    const { account, signal } = job;
    if (signal.aborted) {
      this.#end(task, 'cancelled', 0, 0);
      return Promise.reject(abortReason(signal));
    }
    if (this.#closed) return Promise.reject(new ApiError('SERVICE_UNAVAILABLE', 'The service is shutting down; retry on another instance.'));
    return new Promise<TaskOutput<K>>((resolve, reject) => {
      const entry: Waiting = {
        task,
        input,
        account,
        signal,
        queuedAt: performance.now(),
        resolve: resolve as (value: unknown) => void,
        reject,
        onAbort: () => this.#dropWaiting(entry),
      };
      if (this.#running < this.#settings.workers && (this.#runningBy.get(account) ?? 0) < this.#settings.accountShare) {
        this.#start(entry);
        return;
      }
      const mine = this.#waiting.get(account);
      if ((mine?.length ?? 0) >= this.#settings.accountQueue) return this.#refuse(entry, 'account');
      if (this.#waitingCount >= this.#settings.queue) return this.#refuse(entry, 'process');
      if (mine) mine.push(entry);
      else this.#waiting.set(account, [entry]);
      this.#waitingCount++;
      signal.addEventListener('abort', entry.onAbort, { once: true });
    });
  }

  #refuse(entry: Waiting, whose: 'account' | 'process'): void {
    const seconds = Math.max(1, Math.ceil((this.#meanRunSeconds * (this.#waitingCount + 1)) / this.#settings.workers));
    const headers = { 'retry-after': String(seconds) };
    this.#end(entry.task, 'refused', 0, 0);
    entry.reject(
      whose === 'account'
        ? new ApiError(
            'RATE_LIMITED',
            `This account already has ${this.#settings.accountShare} compute-heavy call(s) running and ${this.#settings.accountQueue} waiting here; retry later.`,
            { retry_after_seconds: seconds, running_limit: this.#settings.accountShare, waiting_limit: this.#settings.accountQueue },
            headers,
          )
        : new ApiError('SERVICE_UNAVAILABLE', 'The service is busy with compute-heavy calls; retry later.', { retry_after_seconds: seconds }, headers),
    );
  }

  #dropWaiting(entry: Waiting): void {
    const mine = this.#waiting.get(entry.account);
    const at = mine?.indexOf(entry) ?? -1;
    if (!mine || at < 0) return;
    mine.splice(at, 1);
    if (mine.length === 0) {
      this.#waiting.delete(entry.account);
      if (!this.#runningBy.has(entry.account)) this.#lastServed.delete(entry.account);
    }
    this.#waitingCount--;
    this.#end(entry.task, 'cancelled', (performance.now() - entry.queuedAt) / 1000, 0);
    entry.reject(abortReason(entry.signal));
  }

  #start(entry: Waiting): void {
    entry.signal.removeEventListener('abort', entry.onAbort);
    this.#running++;
    this.#runningBy.set(entry.account, (this.#runningBy.get(entry.account) ?? 0) + 1);
    this.#lastServed.set(entry.account, ++this.#tick);
    const started = performance.now();
    const waited = (started - entry.queuedAt) / 1000;
    // piscina terminates the thread of a running task whose signal aborts: the work stops there.
    (this.#piscina.run({ task: entry.task, input: entry.input }, { signal: entry.signal }) as Promise<TaskResult>).then(
      (result) => {
        const ran = (performance.now() - started) / 1000;
        this.#meanRunSeconds = 0.8 * this.#meanRunSeconds + 0.2 * ran;
        this.#finish(entry, result.ok ? 'completed' : 'failed', waited, ran);
        try {
          entry.resolve(unwrap(result));
        } catch (err) {
          entry.reject(err);
        }
        this.#dispatch();
      },
      (err: unknown) => {
        const aborted = entry.signal.aborted;
        this.#finish(entry, aborted ? 'cancelled' : 'failed', waited, (performance.now() - started) / 1000);
        // A job cut short by shutdown (past the drain timeout) is the service going away, not a fault.
        entry.reject(aborted ? abortReason(entry.signal) : this.#closed ? new ApiError('SERVICE_UNAVAILABLE', 'The service is shutting down; retry on another instance.') : err);
        this.#dispatch();
      },
    );
  }

  /** A running job ended: its thread and its account's share are free before its caller hears. */
  #finish(entry: Waiting, outcome: JobOutcome, waited: number, ran: number): void {
    this.#running--;
    const left = (this.#runningBy.get(entry.account) ?? 1) - 1;
    if (left > 0) this.#runningBy.set(entry.account, left);
    else {
      this.#runningBy.delete(entry.account);
      if (!this.#waiting.has(entry.account)) this.#lastServed.delete(entry.account);
    }
    this.#end(entry.task, outcome, waited, ran);
  }

  /**
   * Fills free threads: of the accounts waiting and under their share, the one whose last job
   * started longest ago (or never) goes first, so accounts take turns whatever their backlog.
   */
  #dispatch(): void {
    while (this.#running < this.#settings.workers && this.#waitingCount > 0) {
      let pick: string | undefined;
      let oldest = Infinity;
      for (const account of this.#waiting.keys()) {
        if ((this.#runningBy.get(account) ?? 0) >= this.#settings.accountShare) continue;
        const served = this.#lastServed.get(account) ?? 0;
        if (served < oldest) {
          oldest = served;
          pick = account;
        }
      }
      if (pick === undefined) return;
      const jobs = this.#waiting.get(pick)!;
      const next = jobs.shift()!;
      if (jobs.length === 0) this.#waiting.delete(pick);
      this.#waitingCount--;
      this.#start(next);
    }
  }

  #end(task: TaskName, outcome: JobOutcome, waitSeconds: number, runSeconds: number): void {
    this.#counts[outcome]++;
    this.#settings.onJob?.(task, outcome, waitSeconds, runSeconds);
  }

  stats(): ComputeStats {
    return { mode: 'workers', threads: this.#settings.workers, running: this.#running, waiting: this.#waitingCount, ...this.#counts };
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const jobs of this.#waiting.values()) {
      for (const entry of jobs) {
        entry.signal.removeEventListener('abort', entry.onAbort);
        this.#end(entry.task, 'refused', (performance.now() - entry.queuedAt) / 1000, 0);
        entry.reject(new ApiError('SERVICE_UNAVAILABLE', 'The service is shutting down; retry on another instance.'));
      }
    }
    this.#waiting.clear();
    this.#waitingCount = 0;
    await this.#piscina.destroy();
  }
}

/**
 * COMPUTE_WORKERS=0: the task runs on the event loop, synchronously, as the tools did before the
 * pool. Kept as the control of the benchmark and of the tests (and for a one-core debug session).
 */
class InlinePool implements ComputePool {
  readonly #settings: ComputeSettings;
  readonly #counts = { completed: 0, failed: 0, cancelled: 0, refused: 0 };

  constructor(settings: ComputeSettings) {
    this.#settings = settings;
  }

  run<K extends TaskName>(task: K, input: TaskInput<K>, job: ComputeJob): Promise<TaskOutput<K>> {
    if (job.signal.aborted) {
      this.#end(task, 'cancelled', 0);
      return Promise.reject(abortReason(job.signal));
    }
    const started = performance.now();
    const result = runTask(task, input);
    this.#end(task, result.ok ? 'completed' : 'failed', (performance.now() - started) / 1000);
    try {
      return Promise.resolve(unwrap<TaskOutput<K>>(result));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  #end(task: TaskName, outcome: JobOutcome, runSeconds: number): void {
    this.#counts[outcome]++;
    this.#settings.onJob?.(task, outcome, 0, runSeconds);
  }

  stats(): ComputeStats {
    return { mode: 'inline', threads: 0, running: 0, waiting: 0, ...this.#counts };
  }

  async close(): Promise<void> {}
}
