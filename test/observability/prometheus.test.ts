// Checked for real (issue 6): the service runs with a failing upstream, a short mixed load goes
// through it over HTTP (successes, 401, 402, 429, tool failures), a real Prometheus scrapes its
// metrics port and evaluates the shipped recording rules, and then:
//   - Prometheus's HTTP API accepts every dashboard query and every rule expression;
//   - the traffic, credits and refusal panels return exactly what the load produced;
//   - the recording rules are evaluated and the availability SLI equals the load's 5xx share.
// Exactness: each load phase is bracketed by two scrapes (after the service's own counters show
// the whole phase), and the panels are evaluated at the second scrape over a window reaching 1 ms
// before the first (so it holds both samples whether the range is closed, as in Prometheus 2, or
// left-open, as in 3). rate() and increase() then extrapolate by only those 1 ms: a count of n
// reads n·(1 + 0.001/window), which rounds to n exactly.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createAccountWithKey, createUnlimitedPlan, post, startTestService, toolCall } from '../helpers/service.ts';
import { eventually } from '../helpers/wait.ts';
import { panelQueries, rules, RULES_FILE, withWindow } from './queries.ts';
import { PROMETHEUS_BIN, startPrometheus, type RunningPrometheus } from './prometheus.ts';

const AUTH_CODES = new Set(['MISSING_API_KEY', 'INVALID_API_KEY', 'API_KEY_EXPIRED', 'API_KEY_REVOKED']);

let db: TestDatabase;
let svc: RunningService;
let prom: RunningPrometheus;
let upstream: http.Server;
let upstreamHits = 0;
const keys = { ok: '', broke: '', slow: '' };

interface Observed {
  requests: number;
  ok: number;
  credits: number;
  byCode: Map<string, number>;
  status5xx: number;
  upstreamFailures: number;
}

/** One mixed round of load; returns what the client saw. */
async function load(times: number): Promise<Observed> {
  const seen: Observed = { requests: 0, ok: 0, credits: 0, byCode: new Map(), status5xx: 0, upstreamFailures: 0 };
  const hitsBefore = upstreamHits;
  const url = `${svc.url}/mcp/market-intelligence`;
  const calls: [unknown, Record<string, string>][] = [];
  for (let i = 0; i < times; i++) {
    calls.push([toolCall('bench_echo', { message: 'hi' }), { 'x-api-key': keys.ok }]);
    calls.push([toolCall('bench_echo', { message: 'hi' }), { 'x-api-key': keys.ok }]);
    calls.push([toolCall('bench_fail'), { 'x-api-key': keys.ok }]);
    calls.push([toolCall('get_prices', { assets: ['bitcoin'] }), { 'x-api-key': keys.ok }]);
    calls.push([toolCall('bench_echo'), {}]);
    calls.push([toolCall('bench_echo'), { 'x-api-key': 'cmcp_not-a-key' }]);
    calls.push([toolCall('bench_echo'), { 'x-api-key': keys.broke }]);
    calls.push([toolCall('bench_echo'), { 'x-api-key': keys.slow }]);
    calls.push([toolCall('bench_echo'), { 'x-api-key': keys.slow }]);
  }
  // Sequential: the rate-limited account's outcomes depend on order, and we count what we see.
  for (const [body, headers] of calls) {
    const res = await post(url, body, headers);
    seen.requests++;
    if (res.status >= 500) seen.status5xx++;
    if (res.status === 200) {
      seen.ok++;
      const envelope = (res.body as { result: { structuredContent: { metadata: { credits_used: number } } } }).result.structuredContent;
      seen.credits += envelope.metadata.credits_used;
    } else {
      const code = (res.body as { error: { code: string } }).error.code;
      seen.byCode.set(code, (seen.byCode.get(code) ?? 0) + 1);
    }
  }
  seen.upstreamFailures = upstreamHits - hitsBefore;
  return seen;
}

/** A count read from a panel: the rounded value is exact, the 1 ms extrapolation is all that is left. */
function expectCount(value: number, expected: number, what: string): void {
  expect(Math.round(value), what).toBe(expected);
  expect(Math.abs(value - expected), what).toBeLessThan(0.01 * Math.max(1, expected));
}

const count = (o: Observed, pick: (code: string) => boolean) => [...o.byCode].filter(([c]) => pick(c)).reduce((n, [, k]) => n + k, 0);

/** Sum of a metric family on the service's own /metrics (what the next scrape will see). */
async function scrapeSum(name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${svc.metricsPort}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/**
 * Waits until the service's counters show `requests` answered requests (its hooks run just after
 * the answer leaves) and then for a Prometheus scrape started after that; returns its timestamp.
 */
async function settledScrape(requests: number, consumed: number): Promise<number> {
  await eventually(
    async () => (await scrapeSum('cryptomcp_mcp_requests_total')) >= requests && (await scrapeSum('cryptomcp_credits_consumed_total')) >= consumed,
    20_000,
    `${requests} requests and ${consumed} credits on /metrics`,
  );
  const after = Date.now() / 1000;
  return eventually(
    async () => {
      const [sample] = await prom.query('timestamp(up{job="cryptomcp"})');
      const at = sample ? Number(sample.value[1]) : 0;
      return at > after ? at : undefined;
    },
    30_000,
    'a Prometheus scrape after the requests',
  );
}

let phase: Observed;
let t0 = 0;
let t1 = 0;

beforeAll(async () => {
  // The market data API for live quotes: always 500, so every attempt is an upstream failure
  // (get_prices then answers from the snapshot fallback).
  upstream = http.createServer((_req, res) => {
    upstreamHits++;
    res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"down"}');
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  db = await createTestDatabase();
  await createUnlimitedPlan(db, 'obs-unlimited', 1_000_000);
  await createUnlimitedPlan(db, 'obs-broke', 0);
  await createUnlimitedPlan(db, 'obs-slow', 1_000, { requests_per_minute: 1, burst: 1 });
  keys.ok = (await createAccountWithKey(db, { plan: 'obs-unlimited' })).key;
  keys.broke = (await createAccountWithKey(db, { plan: 'obs-broke' })).key;
  keys.slow = (await createAccountWithKey(db, { plan: 'obs-slow' })).key;
  svc = await startTestService(db.url, {
    MARKET_DATA: 'live',
    COINGECKO_BASE_URL: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/api/v3`,
    COINGECKO_TIMEOUT_MS: '2000',
  });
  prom = await startPrometheus({ targets: [`127.0.0.1:${svc.metricsPort}`], ruleFiles: [RULES_FILE] });
  await prom.waitForTargetsUp();

  // Phase 1 creates every labelled series the measured phase touches, so that each has a sample
  // at the window's start; phase 2 is measured.
  const first = await load(1);
  t0 = await settledScrape(first.requests, first.credits);
  phase = await load(3);
  t1 = await settledScrape(first.requests + phase.requests, first.credits + phase.credits);
}, 180_000);

afterAll(async () => {
  await prom?.stop();
  await svc?.close();
  await db?.drop();
  await new Promise((resolve) => upstream?.close(resolve));
});

describe('a real Prometheus scraping the service', () => {
  it('runs the Debian prometheus binary', () => {
    expect(fs.existsSync(PROMETHEUS_BIN)).toBe(true);
  });

  it('accepts every dashboard query and every rule expression', async () => {
    const exprs: [string, string][] = [
      ...panelQueries().map((q): [string, string] => [`${q.dashboard} / ${q.panel}`, q.expr]),
      ...rules().map((r): [string, string] => [r.record ?? r.alert ?? '?', r.expr]),
    ];
    const rejected: string[] = [];
    for (const [where, expr] of exprs) {
      const answer = await prom.queryRaw(withWindow(expr, '1m'));
      if (answer.status !== 'success') rejected.push(`${where}: ${expr} -> ${answer.error}`);
    }
    expect(rejected).toEqual([]);
    expect(exprs.length).toBeGreaterThan(40);
  });

  /** The panel's single query, evaluated at t1 over exactly the measured phase. */
  async function panelValue(title: string): Promise<number> {
    const matches = panelQueries().filter((q) => q.panel === title);
    expect(matches, title).toHaveLength(1);
    const windowMs = Math.round((t1 - t0) * 1000) + 1;
    const result = await prom.query(withWindow(matches[0]!.expr, `${windowMs}ms`), t1);
    expect(result, `${title} returned no series`).toHaveLength(1);
    return Number(result[0]!.value[1]);
  }

  /** Per-second rate panels: the rate times the window is the count. */
  async function panelSeries(title: string, label: string): Promise<Map<string, number>> {
    const [q] = panelQueries().filter((p) => p.panel === title);
    const windowS = (Math.round((t1 - t0) * 1000) + 1) / 1000;
    const result = await prom.query(withWindow(q!.expr, `${Math.round(windowS * 1000)}ms`), t1);
    return new Map(result.map((s) => [s.metric[label] ?? '', Number(s.value[1]) * windowS]));
  }

  it('the load was mixed as intended', () => {
    expect(phase.ok).toBeGreaterThan(0);
    expect(count(phase, (c) => AUTH_CODES.has(c))).toBe(6);
    expect(phase.byCode.get('INSUFFICIENT_CREDITS')).toBe(3);
    expect(phase.byCode.get('RATE_LIMITED') ?? 0).toBeGreaterThan(0);
    expect(phase.byCode.get('UPSTREAM_ERROR')).toBe(3);
    expect(phase.upstreamFailures).toBeGreaterThan(0);
  });

  it('traffic panels count every request of the load', async () => {
    expectCount(await panelValue('Requests in range'), phase.requests, 'Requests in range');
    expectCount(await panelValue('Tool calls in range'), phase.requests - count(phase, (c) => AUTH_CODES.has(c)), 'Tool calls in range');
    expectCount(await panelValue('Successful tool calls in range'), phase.ok, 'Successful tool calls in range');
  });

  it('refusal panels count each refusal by its code', async () => {
    expectCount(await panelValue('Auth failures in range'), count(phase, (c) => AUTH_CODES.has(c)), 'Auth failures in range');
    expectCount(await panelValue('Rate limited in range'), phase.byCode.get('RATE_LIMITED') ?? 0, 'Rate limited in range');
    expectCount(await panelValue('Out of credits in range'), phase.byCode.get('INSUFFICIENT_CREDITS') ?? 0, 'Out of credits in range');
    const byCode = await panelSeries('Refusals by code', 'code');
    const expected = new Map([...phase.byCode].filter(([c]) => AUTH_CODES.has(c) || c === 'RATE_LIMITED' || c === 'INSUFFICIENT_CREDITS'));
    expect(new Map([...byCode].filter(([, v]) => v > 0.5).map(([c, v]) => [c, Math.round(v)]))).toEqual(expected);
    for (const [code, n] of expected) expectCount(byCode.get(code) ?? 0, n, code);
  });

  it('credit panels show what was charged and what was refunded', async () => {
    expectCount(await panelValue('Credits consumed in range'), phase.credits, 'Credits consumed in range');
    // Every UPSTREAM_ERROR here is bench_fail (cost 1), reserved and then refunded.
    expectCount(await panelValue('Credits refunded in range'), phase.byCode.get('UPSTREAM_ERROR') ?? 0, 'Credits refunded in range');
  });

  it('the upstream panel counts the failed attempts the upstream received', async () => {
    expectCount(await panelValue('Failed upstream attempts in range'), phase.upstreamFailures, 'Failed upstream attempts in range');
  });

  it('the recording rules are evaluated, and the availability SLI is the 5xx share of the load', async () => {
    const recorded = await prom.query('cryptomcp:mcp_availability_errors:ratio_rate5m');
    expect(recorded).toHaveLength(1);
    const value = Number(recorded[0]!.value[1]);
    expect(value).toBeGreaterThan(0);
    expect(value).toBeLessThan(1);
    const rule = rules().find((r) => r.record === 'cryptomcp:mcp_availability_errors:ratio_rate5m')!;
    const windowMs = Math.round((t1 - t0) * 1000) + 1;
    const [exact] = await prom.query(rule.expr.replaceAll('[5m]', `[${windowMs}ms]`), t1);
    // A ratio of two counts over the same window: the extrapolation cancels out.
    expect(Number(exact!.value[1])).toBeCloseTo(phase.status5xx / phase.requests, 6);
    const slow = await prom.query('cryptomcp:mcp_latency_slow:ratio_rate5m');
    expect(slow).toHaveLength(1);
    expect(Number(slow[0]!.value[1])).toBeGreaterThanOrEqual(0);
  });
});
