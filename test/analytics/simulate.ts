// Seeded simulators for the analytics tests and bench: the same seed gives the same series on
// every machine, so nothing that uses them is flaky.

/** mulberry32: a small, well-distributed 32-bit PRNG returning floats in [0, 1). */
export function seededUniform(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Standard normal draws by the Box–Muller transform over a seeded uniform source. */
export function seededNormal(seed: number): () => number {
  const u = seededUniform(seed);
  return () => {
    const u1 = 1 - u();
    const u2 = u();
    return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  };
}

/** Unit-variance Student-t draw: normal / sqrt(chi²_df / df), rescaled by sqrt((df−2)/df). */
export function seededStudentT(seed: number, df: number): () => number {
  const z = seededNormal(seed);
  return () => {
    let chi2 = 0;
    for (let i = 0; i < df; i++) chi2 += z() ** 2;
    return (z() / Math.sqrt(chi2 / df)) * Math.sqrt((df - 2) / df);
  };
}

/** Prices of a geometric random walk: log p_t = log p_{t−1} + drift + sigma·shock. */
export function randomWalkPrices(n: number, opts: { start?: number; drift?: number; sigma?: number; shock: () => number }): number[] {
  const { start = 100, drift = 0, sigma = 0.03, shock } = opts;
  const out = [start];
  let logP = Math.log(start);
  for (let i = 1; i < n; i++) {
    logP += drift + sigma * shock();
    out.push(Math.exp(logP));
  }
  return out;
}

/** Returns from a GARCH(1,1) with the given parameters, after a burn-in of 500 draws. */
export function garchReturns(
  n: number,
  params: { mu: number; omega: number; alpha: number; beta: number },
  shock: () => number,
): number[] {
  const { mu, omega, alpha, beta } = params;
  let h = omega / (1 - alpha - beta);
  const out: number[] = [];
  for (let i = 0; i < n + 500; i++) {
    const e = Math.sqrt(h) * shock();
    if (i >= 500) out.push(mu + e);
    h = omega + alpha * e * e + beta * h;
  }
  return out;
}
