// The compute pool as the servers see it (ServerDeps.compute): run a named CPU-bound task off the
// event loop, on behalf of an account, stopped when the call's signal aborts.
import type { TaskInput, TaskName, TaskOutput } from './tasks.ts';

export interface ComputeJob {
  /** Whose call this is: one account never holds more than its share of the threads. */
  account: string;
  /** The tool call's signal: aborting it drops the job from the queue or stops its thread. */
  signal: AbortSignal;
}

export interface ComputePool {
  /**
   * Resolves with the task's output. Rejects with the signal's AbortError when aborted, with a
   * RangeError for input the task cannot use, or with an ApiError when the pool is full
   * (429 RATE_LIMITED for this account's queue, 503 SERVICE_UNAVAILABLE for the process's).
   */
  run<K extends TaskName>(task: K, input: TaskInput<K>, job: ComputeJob): Promise<TaskOutput<K>>;
  stats(): ComputeStats;
  /** Stops the threads; running jobs are cancelled, waiting ones refused. */
  close(): Promise<void>;
}

export interface ComputeStats {
  /** 'workers' (a thread pool) or 'inline' (COMPUTE_WORKERS=0: on the event loop, the control). */
  mode: 'workers' | 'inline';
  /** Most jobs running at once (COMPUTE_WORKERS). */
  threads: number;
  running: number;
  waiting: number;
  /** Jobs ended since start, by outcome. */
  completed: number;
  failed: number;
  /** Aborted (client gone, tool timeout) while waiting or running. */
  cancelled: number;
  /** Refused because a queue was full. */
  refused: number;
}
