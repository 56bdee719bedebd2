// The work queue's contract (after client-go's workqueue): a key waits at most once, is never
// handed to two workers at once, is processed again if it changed while being processed, and
// failing keys back off exponentially until forgotten.
import { describe, expect, it } from 'vitest';
import { WorkQueue } from '../../operator/queue.ts';

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

  it('backs off exponentially per key with bounded jitter, and forget() resets it', () => {
    const q = new WorkQueue({ baseDelayMs: 100, maxDelayMs: 1000, jitter: 0.5, random: () => 1 });
    expect([q.addRateLimited('k'), q.addRateLimited('k'), q.addRateLimited('k'), q.addRateLimited('k'), q.addRateLimited('k')]).toEqual([150, 300, 600, 1200, 1500]);
    expect(q.addRateLimited('other')).toBe(150);
    q.forget('k');
    expect(q.addRateLimited('k')).toBe(150);
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
