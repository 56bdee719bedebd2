// Latency of one async operation run back to back: a warm-up (plans, caches), then `samples`
// timed runs; their p50 and p99 in milliseconds.
export const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

export async function timed(fn: () => Promise<unknown>, opts: { samples: number; warmup: number }): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < opts.warmup; i++) await fn();
  const xs: number[] = [];
  for (let i = 0; i < opts.samples; i++) {
    const started = performance.now();
    await fn();
    xs.push(performance.now() - started);
  }
  xs.sort((a, b) => a - b);
  return { p50: quantile(xs, 0.5), p99: quantile(xs, 0.99) };
}
