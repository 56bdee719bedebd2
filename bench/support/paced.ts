// An open-loop load at a fixed rate, for latency at a given load: request i is due at
// start + i/rate whatever happened to the ones before it, and its latency is counted from when it
// was due, not from when it was sent (as wrk2 does: a server that stalls is charged for the
// requests that queued behind the stall, with no coordinated omission).
//
// Why not autocannon's overallRate: autocannon paces per second, not per request. Each connection
// sends back to back until it has made its share of the second, then waits for the next second's
// tick; at "half load" the server runs flat out for half of every second and idles for the other
// half, so its p99 is the saturated p99. It then records every latency with an expected interval
// of ceil(1/rate) = 1 ms, which adds a synthetic sample for every millisecond a response took and
// inflates the tail further. Latency at half load is what a server shows when requests arrive
// spread out, which is what this generator does.
import type { ChildProcess } from 'node:child_process';
import { Pool } from 'undici';
import { cpuSeconds } from './processes.ts';

export interface PacedSample {
  /** Requests answered per second, over the whole run including the tail of in-flight ones. */
  rps: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
  /** How late the generator itself sent requests, at its p99 (ms): a check that the load generator kept up. */
  sendLagP99: number;
  errors: number;
  non2xx: number;
  cpuUs: number;
}

export interface PacedRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** The q-quantile of sorted values (nearest rank). */
function quantileOf(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

/**
 * Sends `requests` round-robin at `rate` per second for `seconds` over up to `connections`
 * keep-alive connections (a request finding them all busy waits for one, and that wait counts in
 * its latency, as it would for a client).
 */
export async function pacedLoad(
  target: { port: number; child?: ChildProcess },
  requests: PacedRequest[],
  opts: { rate: number; seconds: number; connections: number },
): Promise<PacedSample> {
  const pool = new Pool(`http://127.0.0.1:${target.port}`, { connections: opts.connections, pipelining: 1 });
  const total = Math.round(opts.rate * opts.seconds);
  const intervalMs = 1000 / opts.rate;
  const latencies: number[] = [];
  const sendLags: number[] = [];
  let errors = 0;
  let non2xx = 0;
  let sent = 0;
  const cpuBefore = target.child ? cpuSeconds(target.child.pid) : 0;
  const start = performance.now();
  const inFlight = new Set<Promise<void>>();

  const send = (due: number, req: PacedRequest) => {
    sendLags.push(performance.now() - due);
    const p = pool
      .request({ method: 'POST', path: req.path, headers: req.headers, body: req.body })
      .then(async (res) => {
        await res.body.dump();
        if (res.statusCode < 200 || res.statusCode >= 300) non2xx++;
        else latencies.push(performance.now() - due);
      })
      .catch(() => {
        errors++;
      })
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  };

  await new Promise<void>((resolve) => {
    // A timer per millisecond at most (Node's timer resolution); each tick sends every request
    // that has come due, each with its own due time.
    const tick = () => {
      const now = performance.now();
      while (sent < total && start + sent * intervalMs <= now) {
        send(start + sent * intervalMs, requests[sent % requests.length]!);
        sent++;
      }
      if (sent >= total) return resolve();
      const next = start + sent * intervalMs - performance.now();
      setTimeout(tick, Math.max(0, next));
    };
    tick();
  });
  await Promise.all(inFlight);
  const elapsed = (performance.now() - start) / 1000;
  await pool.close();
  latencies.sort((x, y) => x - y);
  sendLags.sort((x, y) => x - y);
  return {
    rps: latencies.length / elapsed,
    p50: quantileOf(latencies, 0.5),
    p99: quantileOf(latencies, 0.99),
    p999: quantileOf(latencies, 0.999),
    max: latencies[latencies.length - 1] ?? NaN,
    sendLagP99: quantileOf(sendLags, 0.99),
    errors,
    non2xx,
    cpuUs: target.child ? ((cpuSeconds(target.child.pid) - cpuBefore) / Math.max(1, latencies.length)) * 1e6 : NaN,
  };
}
