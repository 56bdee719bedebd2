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
