// The job runner (server/jobs) on a real PostgreSQL, two runners standing for two replicas, each
// with its own pool: a queued job runs exactly once between them; a job that throws is retried
// (graphile-worker's backoff) and counted as an error then ok; a recurring task has one pending
// run however many replicas start it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../server/db/pool.ts';
import { jobAdd, startJobRunner, type JobRunner, type JobRunnerOptions, type JobTask } from '../../server/jobs/runner.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
const pools: Database[] = [];
const runners: JobRunner[] = [];
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await Promise.all(runners.map((r) => r.stop()));
  await Promise.all(pools.map((p) => p.close()));
  await db?.drop();
});

async function replica(
  tasks: Record<string, JobTask>,
  recurring: { task: string; everyMs: number }[] = [],
  onJob?: (task: string, outcome: string) => void,
  extra: Pick<JobRunnerOptions, 'seriesCheckMs'> = {},
): Promise<JobRunner> {
  const pool = createDatabase({ url: db.url, max: 6 });
  pools.push(pool);
  const runner = await startJobRunner({ pool: pool.pool, tasks, recurring, pollIntervalMs: 50, concurrency: 3, onJob, ...extra });
  runners.push(runner);
  return runner;
}

async function until(what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('the job runner', () => {
  it('runs each of 60 queued jobs exactly once across two replicas; a failing job is retried with backoff and counted error then ok; a recurring task keeps one pending run', async () => {
    const runs = new Map<number, number>();
    const outcomes: string[] = [];
    let failures = 0;
    let ticks = 0;
    const tasks: Record<string, JobTask> = {
      count: async (payload) => {
        const n = (payload as { n: number }).n;
        runs.set(n, (runs.get(n) ?? 0) + 1);
      },
      flaky: async () => {
        if (failures++ === 0) throw new Error('first attempt fails');
      },
      tick: async () => {
        ticks++;
      },
    };
    const record = (task: string, outcome: string) => outcomes.push(`${task}:${outcome}`);
    await replica(tasks, [{ task: 'tick', everyMs: 100 }], record);
    await replica(tasks, [{ task: 'tick', everyMs: 100 }], record);

    for (let n = 0; n < 60; n++) await jobAdd(db, 'count', { n });
    await jobAdd(db, 'flaky', {}, { maxAttempts: 3 });
    await until('every job ran', () => runs.size === 60);
    expect([...runs.values()].every((k) => k === 1)).toBe(true);

    // graphile-worker retries after exp(attempts) seconds: about 2.7 s for the second attempt.
    await until('the retry', () => failures >= 2, 15_000);
    expect(outcomes.filter((o) => o.startsWith('flaky:'))).toEqual(['flaky:error', 'flaky:ok']);

    await until('a few ticks', () => ticks >= 5);
    const pending = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE task_identifier = 'tick' AND locked_at IS NULL");
    expect(pending.rows[0]!.n).toBeLessThanOrEqual(1);
    // Still exactly once, after the runs above.
    expect([...runs.values()].every((k) => k === 1)).toBe(true);
  }, 60_000);
  it('replicas configured with different periods keep their own series: one with a 60 s period does not slow a 100 ms one down', async () => {
    const runsBy = { fast: 0, slow: 0 };
    const task = (who: 'fast' | 'slow'): JobTask => async () => {
      runsBy[who]++;
    };
    // Two replicas register the same task; only the period differs (a gateway and a server
    // Deployment, or two versions in a rollout). Either may take any run.
    await replica({ sweep_like: task('fast') }, [{ task: 'sweep_like', everyMs: 100 }]);
    await replica({ sweep_like: task('slow') }, [{ task: 'sweep_like', everyMs: 60_000 }]);
    // With one series for both, the first run the slow replica took queued the next in 60 s.
    await until('twenty runs within the fast period', () => runsBy.fast + runsBy.slow >= 20, 15_000);
    const keys = await db.query<{ key: string }>("SELECT key FROM graphile_worker.jobs WHERE task_identifier = 'sweep_like' AND key IS NOT NULL ORDER BY key");
    expect(keys.rows.map((r) => r.key)).toEqual(['sweep_like@100ms', 'sweep_like@60000ms']);
  }, 30_000);

  it('a series no live replica of its period renews ends: another replica runs it until its alive_until, then it is not queued again', async () => {
    let runs = 0;
    const tasks: Record<string, JobTask> = {
      orphan: async () => {
        runs++;
      },
    };
    // The replica whose period this is renews the series every 200 ms (it lives 600 ms unrenewed)...
    const owner = await replica(tasks, [{ task: 'orphan', everyMs: 100 }], undefined, { seriesCheckMs: 200 });
    // ...and another replica (a different Deployment: it knows the task, not this period) takes runs too.
    await replica(tasks, []);
    await until('the series runs', () => runs >= 3);
    await owner.stop();
    // Whoever takes a run queues the next one only until the series' alive_until: without it the
    // other replica would keep the series going for ever. Once no run is pending, none can come.
    await until('the series ended', async () => (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE key = 'orphan@100ms'")).rows[0]!.n === 0, 15_000);
  }, 30_000);
});
