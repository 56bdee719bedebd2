// The work queue's contract (after client-go's workqueue): a key waits at most once, is never
// handed to two workers at once, is processed again if it changed while being processed, and
// failing keys back off exponentially until forgotten.
import { describe, expect, it } from 'vitest';
import { QUEUE_DEFAULTS, WorkQueue, backoffSettings } from '../../operator/queue.ts';

describe('WorkQueue', () => {
  it('deduplicates: many adds of one waiting key yield one item', async () => {
    const q = new WorkQueue();
    for (let i = 0; i < 5; i++) q.add('ns/a');
    q.add('ns/b');
    expect(q.depth).toBe(2);
    expect(await q.get()).toBe('ns/a');
    expect(await q.get()).toBe('ns/b');
    expect(q.depth).toBe(0);
  });

  it('a key added while processed is held back and handed out again after done()', async () => {
    const q = new WorkQueue();
    q.add('k');
    const key = await q.get();
    q.add('k'); // changed meanwhile
    expect(q.depth).toBe(0); // not given to a second worker
    let second: string | undefined;
    void q.get().then((k) => (second = k));
    await Promise.resolve();
    expect(second).toBeUndefined();
    q.done(key!);
    await Promise.resolve();
    expect(second).toBe('k');
  });

  it('backs off exponentially per key with jitter, never beyond maxDelayMs, and forget() resets it', () => {
    const q = new WorkQueue({ baseDelayMs: 100, maxDelayMs: 1000, jitter: 0.5, random: () => 1 });
    expect([q.addRateLimited('k'), q.addRateLimited('k'), q.addRateLimited('k'), q.addRateLimited('k'), q.addRateLimited('k')]).toEqual([150, 300, 600, 1000, 1000]);
    expect(q.addRateLimited('other')).toBe(150);
    q.forget('k');
    expect(q.addRateLimited('k')).toBe(150);
    q.shutdown();
  });

  it('cannot be misconfigured: an undefined, NaN, zero or negative setting means the default, never a 0 or NaN delay', () => {
    for (const bad of [undefined, Number.NaN, 0, -5, Number.POSITIVE_INFINITY]) {
      expect(backoffSettings({ baseDelayMs: bad, maxDelayMs: bad, jitter: bad, retryRate: bad, retryBurst: bad })).toEqual({ ...QUEUE_DEFAULTS, ...(bad === 0 ? { jitter: 0 } : {}) }); // no jitter is a valid choice
      const q = new WorkQueue({ baseDelayMs: bad, random: () => 0 });
      expect(q.addRateLimited('k')).toBe(QUEUE_DEFAULTS.baseDelayMs);
      q.shutdown();
    }
    // A maximum below the base would invert the bound: the base's default maximum applies.
    expect(backoffSettings({ baseDelayMs: 1000, maxDelayMs: 10 }).maxDelayMs).toBe(QUEUE_DEFAULTS.maxDelayMs);
    expect(backoffSettings({ jitter: 3 }).jitter).toBe(QUEUE_DEFAULTS.jitter);
  });

  it('bounds retries across keys: past the burst, failing keys are spread at retryRate per second', () => {
    const q = new WorkQueue({ baseDelayMs: 10, retryRate: 10, retryBurst: 5, random: () => 0 });
    const delays = Array.from({ length: 10 }, (_, i) => q.addRateLimited(`k${i}`));
    // The first five go after their own 10 ms; the next five wait 100 ms more each.
    expect(delays.slice(0, 5)).toEqual([10, 10, 10, 10, 10]);
    const spread = delays.slice(5);
    for (let i = 1; i < spread.length; i++) expect(spread[i]! - spread[i - 1]!).toBeGreaterThanOrEqual(99);
    expect(spread.at(-1)).toBeGreaterThanOrEqual(450);
    q.shutdown();
  });

  it('reports its depth and releases waiting workers on shutdown', async () => {
    const depths: number[] = [];
    const q = new WorkQueue({ onDepth: (d) => depths.push(d) });
    q.add('a');
    q.add('b');
    expect(depths).toEqual([1, 2]);
    await q.get();
    await q.get();
    const waiting = q.get();
    q.shutdown();
    expect(await waiting).toBeUndefined();
    expect(depths.at(-1)).toBe(0);
  });
});
