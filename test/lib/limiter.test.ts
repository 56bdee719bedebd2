// The in-memory GCRA limiter (server/lib/limiter.ts): a bucket of `burst` admits that many at once
// and then one per 1/rate; each key is its own bucket; at most maxKeys keys are remembered, the
// least recently used forgotten first (a forgotten key only ever gets let through, never refused).
import { describe, expect, it } from 'vitest';
import { Limiter } from '../../server/lib/limiter.ts';

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

describe('Limiter', () => {
  it('admits the burst at once, then one per emission interval, and says how long to wait', () => {
    const c = clock();
    const limiter = new Limiter({ requestsPerMinute: 60, burst: 3 }, { now: c.now });
    expect([1, 2, 3].map(() => limiter.take('a').ok)).toEqual([true, true, true]);
    const refused = limiter.take('a');
    expect(refused).toEqual({ ok: false, retryAfterMs: 1000 });
    c.advance(999);
    expect(limiter.take('a').ok).toBe(false);
    c.advance(1);
    expect(limiter.take('a')).toMatchObject({ ok: true, remaining: 0 });
    // Another key has a bucket of its own.
    expect(limiter.take('b')).toMatchObject({ ok: true, remaining: 2 });
  });

  it('remembers at most maxKeys keys: the least recently used is forgotten (and then starts with a full bucket)', () => {
    const c = clock();
    const limiter = new Limiter({ requestsPerMinute: 1, burst: 1 }, { now: c.now, maxKeys: 2 });
    expect(limiter.take('a').ok).toBe(true);
    expect(limiter.take('b').ok).toBe(true);
    expect(limiter.take('a').ok).toBe(false); // a is used again: b is now the least recent
    expect(limiter.take('c').ok).toBe(true); // a third key: b is forgotten
    expect(limiter.take('b').ok).toBe(true); // a full bucket again; c or a would still be refused
    expect(limiter.take('b').ok).toBe(false);
    expect(limiter.take('c').ok).toBe(false);
  });
});
