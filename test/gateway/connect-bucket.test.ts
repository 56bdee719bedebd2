// The connect bucket's arithmetic (gateway/rate-limit.ts, GCRA), on an injected clock so the
// bounds are exact: a key gets exactly `burst` requests at once, then one per emission interval;
// refusals say when to come back; keys do not share a bucket.
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../server/errors.ts';
import { ConnectLimiter } from '../../server/gateway/rate-limit.ts';
import { Limiter } from '../../server/lib/limiter.ts';

function admitted(limiter: ConnectLimiter, key: string, tries: number): number {
  let n = 0;
  for (let i = 0; i < tries; i++) {
    try {
      limiter.admit(key);
      n++;
    } catch (err) {
      if (!(err instanceof ApiError) || err.code !== 'RATE_LIMITED') throw err;
    }
  }
  return n;
}

describe('the connect bucket', () => {
  it('admits exactly the burst at once, then one per emission interval (60/min: one a second)', () => {
    let now = 1_000_000;
    const limiter = new ConnectLimiter({ requestsPerMinute: 60, burst: 5 }, { now: () => now });
    expect(admitted(limiter, 'k', 20)).toBe(5);
    now += 999;
    expect(admitted(limiter, 'k', 5)).toBe(0);
    now += 1;
    expect(admitted(limiter, 'k', 5)).toBe(1);
    // A long pause refills to the burst, never beyond it.
    now += 3_600_000;
    expect(admitted(limiter, 'k', 20)).toBe(5);
  });

  it('a refusal is 429 RATE_LIMITED with the seconds until the next admission, and the remaining count is honest', () => {
    const now = 5_000;
    const limiter = new ConnectLimiter({ requestsPerMinute: 30, burst: 3 }, { now: () => now });
    expect(limiter.admit('k').remaining).toBe(2);
    expect(limiter.admit('k').remaining).toBe(1);
    expect(limiter.admit('k').remaining).toBe(0);
    try {
      limiter.admit('k');
      expect.unreachable('the fourth request at once must be refused');
    } catch (err) {
      expect(err).toBeInstanceOf(ApiError);
      const e = err as ApiError;
      expect(e.status).toBe(429);
      expect(e.headers['retry-after']).toBe('2');
      expect(e.details).toMatchObject({ bucket: 'connect', limit_per_minute: 30, retry_after_seconds: 2 });
    }
  });

  it('keys have their own buckets', () => {
    const limiter = new ConnectLimiter({ requestsPerMinute: 60, burst: 2 }, { now: () => 0 });
    expect(admitted(limiter, 'a', 5)).toBe(2);
    expect(admitted(limiter, 'b', 5)).toBe(2);
  });
});

describe('the shared limiter as "at most N per window" (sign-ins, nonces, registrations, metadata fetches)', () => {
  it('admits N at once, refuses the next with the time until one refills, and refills N over the window', () => {
    let now = 0;
    const limiter = Limiter.perWindow(3, 60_000, { now: () => now });
    expect([1, 2, 3].map(() => limiter.take('a').ok)).toEqual([true, true, true]);
    const refused = limiter.take('a');
    expect(refused).toEqual({ ok: false, retryAfterMs: 20_000 });
    now = 60_000;
    expect([1, 2, 3, 4].map(() => limiter.take('a').ok)).toEqual([true, true, true, false]);
  });
});
