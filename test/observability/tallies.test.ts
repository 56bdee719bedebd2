// The tallied metrics of the request path (server/telemetry/tallies.ts) expose exactly what
// prom-client's own Counter and Histogram expose for the same updates: same series, buckets,
// sums, counts and exemplars, through reset() and remove(), and a registry read counts nothing
// twice. TalliedHistogram counts into prom-client's own record of a label set, so this is also
// the check that fails if an upgrade of prom-client changes that record.
import { Counter, Histogram, Registry, type OpenMetricsContentType } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../server/metrics.ts';
import { TalliedCounter, TalliedHistogram } from '../../server/telemetry/tallies.ts';

type L = 'server' | 'outcome';
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.5, 30];

/** Exposition without exemplar timestamps (the two metrics keep theirs a few microseconds apart). */
async function exposition(registry: Registry<OpenMetricsContentType>): Promise<string> {
  return (await registry.metrics()).replace(/(# \{[^}]*\} \S+) \S+$/gm, '$1');
}

function pair() {
  const plainRegistry = new Registry<OpenMetricsContentType>();
  const talliedRegistry = new Registry<OpenMetricsContentType>();
  plainRegistry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  talliedRegistry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  const config = { name: 'x_duration_seconds', help: 'h', labelNames: ['server', 'outcome'] as L[], buckets: BUCKETS, enableExemplars: true };
  const plain = new Histogram<L>({ ...config, registers: [plainRegistry] });
  const tallied = new TalliedHistogram<L>({ ...config, registers: [talliedRegistry] });
  const counterConfig = { name: 'x_requests_total', help: 'h', labelNames: ['server', 'outcome'] as L[] };
  const plainCounter = new Counter<L>({ ...counterConfig, registers: [plainRegistry] });
  const talliedCounter = new TalliedCounter<L>({ ...counterConfig, registers: [talliedRegistry] });
  const both = async () => [await exposition(plainRegistry), await exposition(talliedRegistry)];
  const observe = (labels: Record<L, string>, value: number, exemplar?: Record<string, string>) => {
    // With exemplars enabled, prom-client's observe() takes only its object form.
    plain.observe({ labels, value, ...(exemplar ? { exemplarLabels: exemplar } : {}) });
    tallied.record(labels, value, exemplar);
    plainCounter.inc(labels);
    talliedCounter.add(labels);
  };
  return { plain, tallied, plainCounter, talliedCounter, both, observe };
}

describe('tallied metrics', () => {
  it('expose the same series as prom-client for the same updates, on bounds, above the top bucket and with exemplars', async () => {
    const { both, observe, tallied, plain } = pair();
    const ok = { server: 'market-intelligence', outcome: 'ok' };
    const failed = { server: 'market-intelligence', outcome: 'TOOL_FAILED' };
    // Values on every bound, between bounds, below the first and above the last (+Inf only).
    for (const v of [0, 0.0004, 0.001, 0.002, 0.0025, 0.004, 0.005, 0.0099, 0.01, 0.3, 0.5, 29, 30, 31, 120]) observe(ok, v);
    observe(failed, 0.2);
    // A label set first counted by prom-client's observe(), then by record(): one series.
    const other = { server: 'token-intelligence', outcome: 'ok' };
    plain.observe({ labels: other, value: 0.003 });
    tallied.observe({ labels: other, value: 0.003 });
    tallied.record(other, 0.004);
    plain.observe({ labels: other, value: 0.004 });
    // An exemplar (a sampled trace) goes into its bucket on both; a later one in the same bucket
    // replaces it; one above the top bound goes to +Inf; one on a new label set starts its record.
    observe(ok, 0.0041, { trace_id: 'f'.repeat(32) });
    observe(ok, 0.0042, { trace_id: 'a'.repeat(32) });
    observe(ok, 45, { trace_id: 'b'.repeat(32) });
    observe({ server: 'kol-analytics', outcome: 'ok' }, 0.0009, { trace_id: 'c'.repeat(32) });
    const [p, t] = await both();
    expect(t).toBe(p);
    expect(t).toContain('x_duration_seconds_bucket{le="+Inf",server="market-intelligence",outcome="ok"} 18');
    expect(t).toContain('x_duration_seconds_count{server="token-intelligence",outcome="ok"} 2');
    expect(t).toContain(`# {trace_id="${'a'.repeat(32)}"} 0.0042`);
    expect(t).not.toContain('f'.repeat(32));
    expect(t).toMatch(new RegExp(`le="\\+Inf",server="market-intelligence",outcome="ok"} 18 # \\{trace_id="${'b'.repeat(32)}"\\} 45`));
    expect(t).toContain(`# {trace_id="${'c'.repeat(32)}"} 0.0009`);
    // Reading again counts nothing twice.
    const [p2, t2] = await both();
    expect(t2).toBe(p2);
    expect(t2).toBe(t);
    expect(t).toContain('x_requests_total{server="market-intelligence",outcome="ok"} 18');
  });

  it('stay equal through reset() and remove()', async () => {
    const { both, observe, plain, tallied, plainCounter, talliedCounter } = pair();
    const ok = { server: 'a', outcome: 'ok' };
    const bad = { server: 'b', outcome: 'RATE_LIMITED' };
    observe(ok, 0.002);
    observe(bad, 0.02);
    plain.reset();
    tallied.reset();
    plainCounter.reset();
    talliedCounter.reset();
    observe(ok, 0.006);
    let [p, t] = await both();
    expect(t).toBe(p);
    expect(t).toContain('x_duration_seconds_count{server="a",outcome="ok"} 1');
    expect(t).not.toContain('server="b"');
    observe(bad, 0.02);
    plain.remove(ok);
    tallied.remove(ok);
    observe(ok, 0.007);
    [p, t] = await both();
    expect(t).toBe(p);
    expect(t).toContain('x_duration_seconds_count{server="a",outcome="ok"} 1');
    expect(t).toContain('x_duration_seconds_sum{server="a",outcome="ok"} 0.007');
  });

  it('refuses a value that is not a finite number, and an exemplar label set over 128 characters, as prom-client does', () => {
    const { tallied, plain } = pair();
    expect(() => tallied.record({ server: 'a', outcome: 'ok' }, Number.NaN)).toThrow(TypeError);
    const long = { trace_id: 'x'.repeat(121) };
    expect(() => plain.observe({ labels: { server: 'a', outcome: 'ok' }, value: 1, exemplarLabels: long as never })).toThrow(RangeError);
    expect(() => tallied.record({ server: 'a', outcome: 'ok' }, 1, long)).toThrow(RangeError);
  });

  // bench:observability weighs the tallies against prom-client's own calls (createMetrics' plain
  // option, CRYPTOMCP_BENCH_PLAIN_TELEMETRY=tallies): a fair comparison only if both expose the same.
  it("the service's registry exposes the same per-request series with the tallies as with prom-client's own calls", async () => {
    const tallied = createMetrics();
    const plain = createMetrics({ plain: true });
    try {
      for (const m of [tallied, plain]) {
        m.mcpRequests.add({ server: 'market-intelligence', method: 'tools/call', tool: 'get_price', outcome: 'ok', status: '200' });
        m.mcpRequests.add({ server: 'market-intelligence', method: 'tools/call', tool: 'get_price', outcome: 'ok', status: '200' }, 2);
        m.mcpRequestDuration.record({ server: 'market-intelligence', method: 'tools/call', tool: 'get_price', outcome: 'ok' }, 0.004, { trace_id: 'a'.repeat(32) });
        m.mcpRequestDuration.record({ server: 'market-intelligence', method: 'tools/list', tool: '', outcome: 'ok' }, 0.2);
        m.mcpOperationDuration.record({ mcp_method_name: 'tools/call', gen_ai_tool_name: 'get_price', error_type: '' }, 0.004);
        m.keyCacheHit.inc();
        m.keyCacheMiss.inc();
      }
      for (const name of ['cryptomcp_mcp_requests_total', 'cryptomcp_mcp_request_duration_seconds', 'mcp_server_operation_duration_seconds', 'cryptomcp_key_cache_lookups_total']) {
        const [t, p] = await Promise.all([tallied.registry.getSingleMetricAsString(name), plain.registry.getSingleMetricAsString(name)]);
        expect(t.replace(/(# \{[^}]*\} \S+) \S+$/gm, '$1'), name).toBe(p.replace(/(# \{[^}]*\} \S+) \S+$/gm, '$1'));
        expect(t).toMatch(/ [1-9]/);
      }
    } finally {
      tallied.close();
      plain.close();
    }
  });
});
