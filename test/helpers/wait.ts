// Waiting for a condition instead of sleeping for a guessed time: a test waits exactly as long as
// the machine needs (a loaded machine is slower, not flakier) and fails with what it waited for.

/** Polls until fn returns a truthy value (or throws its last error after timeoutMs). */
export async function eventually<T>(fn: () => T | Promise<T>, timeoutMs = 20_000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
      last = undefined;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Returns once the current UTC day has at least `marginMs` left, waiting past midnight if it has
 * not: for a test that compares the service's "today" (the database's clock, when the calls were
 * logged) with its own, whose body takes well under the margin. Outside the day's last minute it
 * returns at once.
 */
export async function clearOfMidnight(marginMs = 60_000): Promise<void> {
  const wait = midnightWait(Date.now(), marginMs);
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}

/** How long clearOfMidnight waits at `now`: 0, or until a second past the next UTC midnight. */
export function midnightWait(now: number, marginMs: number): number {
  const nextMidnight = (Math.floor(now / 86_400_000) + 1) * 86_400_000;
  return nextMidnight - now < marginMs ? nextMidnight - now + 1000 : 0;
}
