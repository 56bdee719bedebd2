// The compute pool's admission (server/compute/pool.ts), on real worker threads: one account
// never holds more than its share of the threads, waiting accounts are served in turn, the queues
// are bounded with a coded 429 (this account's) or 503 (the process's), and a job aborted while
// it waits leaves the queue at once.
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../server/errors.ts';
import { createComputePool, type ComputeSettings } from '../../server/compute/pool.ts';
import type { ComputePool } from '../../server/compute/types.ts';
import { SnapshotProvider } from '../../server/providers/market/snapshot.ts';

const snapshot = new SnapshotProvider();
const closes = (await snapshot.candles('bitcoin', { interval: 'daily' })).candles.map((c) => c.close);
/** A task that holds a thread for a few hundred milliseconds. */
const work = { closes, options: { horizon: 7, model: 'drift' as const, origins: 60, window: 365 } };

let pool: ComputePool | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
});

function open(settings: Partial<ComputeSettings>): ComputePool {
  pool = createComputePool({ workers: 1, accountShare: 1, accountQueue: 8, queue: 64, ...settings });
  return pool;
}

const job = (account: string, signal = new AbortController().signal) => ({ account, signal });

describe('the compute pool', () => {
  it('an account never holds more than its share of the threads; another account gets the free one at once', async () => {
    const p = open({ workers: 2, accountShare: 1 });
    const a = [p.run('backtest', work, job('a')), p.run('backtest', work, job('a'))];
    expect(p.stats()).toMatchObject({ running: 1, waiting: 1 });
    const b = p.run('backtest', work, job('b'));
    expect(p.stats()).toMatchObject({ running: 2, waiting: 1 });
    await Promise.all([...a, b]);
    expect(p.stats()).toMatchObject({ running: 0, waiting: 0, completed: 3 });
  });

  it('waiting accounts are served in turn: one call of b does not wait behind all of a', async () => {
    const p = open({ workers: 1, accountShare: 1 });
    const order: string[] = [];
    const runs = ['a1', 'a2', 'a3', 'a4'].map((name) => p.run('backtest', work, job('a')).then(() => order.push(name)));
    runs.push(p.run('backtest', work, job('b')).then(() => order.push('b1')));
    await Promise.all(runs);
    // a1 was running when b arrived; then the turn passes to b before a2.
    expect(order).toEqual(['a1', 'b1', 'a2', 'a3', 'a4']);
  });

  it("past this account's queue: 429 RATE_LIMITED with Retry-After; past the process's: 503 SERVICE_UNAVAILABLE", async () => {
    const p = open({ workers: 1, accountShare: 1, accountQueue: 1, queue: 2 });
    const accepted = [p.run('backtest', work, job('a')), p.run('backtest', work, job('a'))];
    const mine = await p.run('backtest', work, job('a')).catch((err: unknown) => err);
    expect(mine).toBeInstanceOf(ApiError);
    expect((mine as ApiError).code).toBe('RATE_LIMITED');
    expect((mine as ApiError).status).toBe(429);
    expect(Number((mine as ApiError).headers['retry-after'])).toBeGreaterThanOrEqual(1);
    accepted.push(p.run('backtest', work, job('b')));
    const everyone = await p.run('backtest', work, job('c')).catch((err: unknown) => err);
    expect((everyone as ApiError).code).toBe('SERVICE_UNAVAILABLE');
    expect((everyone as ApiError).status).toBe(503);
    expect((everyone as ApiError).headers['retry-after']).toBeDefined();
    await Promise.all(accepted);
    expect(p.stats()).toMatchObject({ completed: 3, refused: 2 });
  });

  it('a job aborted while it waits leaves the queue at once; the others run', async () => {
    const p = open({ workers: 1, accountShare: 1 });
    const first = p.run('backtest', work, job('a'));
    const controller = new AbortController();
    const second = p.run('backtest', work, job('a', controller.signal)).catch((err: unknown) => err);
    expect(p.stats().waiting).toBe(1);
    controller.abort();
    expect(((await second) as Error).name).toBe('AbortError');
    // At once: the first job is still running, the second did not wait for its turn to fail.
    expect(p.stats()).toMatchObject({ running: 1, waiting: 0, cancelled: 1 });
    await first;
    expect(p.stats()).toMatchObject({ running: 0, completed: 1 });
  });

  it("a task's RangeError (input it cannot use) comes back a RangeError, which tools answer as INVALID_PARAMS", async () => {
    const p = open({});
    const err = await p.run('forecast', { closes: closes.slice(0, 10), options: { horizon: 7, model: 'auto' } }, job('a')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RangeError);
    expect(p.stats().failed).toBe(1);
  });
});
