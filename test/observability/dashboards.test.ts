// The dashboards and rules in dashboards/ (issue 6): the committed JSON models are what the
// TypeScript source builds; every panel has a unit and queries $datasource; every PromQL
// expression parses and names only metrics the service's registry exports (or the operator's
// agreed names, or recording rules); and every exported metric is shown or listed as unshown.
import fs from 'node:fs';
import path from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import { describe, expect, it } from 'vitest';
import { generatedFiles } from '../../dashboards/build.ts';
import { DASHBOARDS } from '../../dashboards/src/dashboards.ts';
import { OPERATOR_METRICS, OPERATOR_UNSHOWN, SCRAPE_METRICS, UNSHOWN } from '../../dashboards/src/unshown.ts';
import { createOperatorMetrics } from '../../operator/metrics.ts';
import { createMetrics } from '../../server/metrics.ts';
import { panelQueries, rules, withWindow } from './queries.ts';

const ROOT = new URL('../../dashboards/', import.meta.url).pathname;

/** Sample names a registry exposes (histograms as _bucket, _sum and _count). */
async function namesOf(registry: Pick<ReturnType<typeof createMetrics>['registry'], 'getMetricsAsJSON'>): Promise<Set<string>> {
  const names = new Set<string>();
  for (const m of await registry.getMetricsAsJSON()) {
    const type = String(m.type);
    // A counter's series is <name>_total in OpenMetrics, whether or not the name has it now:
    // prom-client's OpenMetrics registry strips _total from a counter's name when it first
    // renders it (registry.js, standardizeCounterName), and the process metrics are shared by
    // every registry in the process, so another service's scrape may have done so already.
    if (type === 'counter') names.add(`${m.name.replace(/_total$/, '')}_total`);
    else if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(`${m.name}${s}`);
    else if (type === 'summary') for (const s of ['', '_sum', '_count']) names.add(`${m.name}${s}`);
    else names.add(m.name);
  }
  return names;
}

/** What the service's registry exports. */
async function exportedNames(): Promise<Set<string>> {
  const metrics = createMetrics();
  try {
    return await namesOf(metrics.registry);
  } finally {
    metrics.close();
  }
}

/** The metric names a PromQL expression selects; throws if it does not parse. */
function selectedMetrics(expr: string): string[] {
  const text = withWindow(expr, '5m');
  const names: string[] = [];
  const errors: number[] = [];
  parser.parse(text).iterate({
    enter(node) {
      if (node.type.isError) errors.push(node.from);
      if (node.name === 'Identifier' && node.node.parent?.name === 'VectorSelector') names.push(text.slice(node.from, node.to));
    },
  });
  if (errors.length > 0) throw new Error(`does not parse at ${errors[0]}: ${text}`);
  return names;
}

describe('dashboards/', () => {
  it('the committed JSON models are what `npm run dashboards:build` makes', () => {
    const files = generatedFiles();
    for (const [file, text] of files) {
      expect(fs.readFileSync(path.join(ROOT, file), 'utf8'), `${file} is stale: run npm run dashboards:build`).toBe(text);
    }
    expect(fs.readdirSync(path.join(ROOT, 'grafana')).sort()).toEqual([...files.keys()].filter((f) => f.startsWith('grafana/')).map((f) => f.slice(8)).sort());
  });

  it('each dashboard has the $datasource variable and rows per concern', () => {
    for (const [uid, model] of Object.entries(DASHBOARDS)) {
      const variables = (model.templating?.list ?? []) as { name: string; type: string; query?: unknown }[];
      expect(variables.find((v) => v.name === 'datasource'), uid).toMatchObject({ type: 'datasource', query: 'prometheus' });
      const rows = (model.panels ?? []).filter((p) => p.type === 'row');
      expect(rows.length, uid).toBeGreaterThanOrEqual(1);
      expect(model.uid).toBe(uid);
    }
    expect(Object.keys(DASHBOARDS).sort()).toEqual(['cryptomcp-metering-database', 'cryptomcp-operator', 'cryptomcp-overview', 'cryptomcp-servers', 'cryptomcp-upstream']);
  });

  it('every panel has a unit and queries the $datasource variable', () => {
    const queries = panelQueries();
    expect(queries.length).toBeGreaterThan(30);
    for (const q of queries) {
      expect(q.unit, `${q.dashboard} / ${q.panel}`).toMatch(/^[a-z]+$/);
      expect(q.datasource, `${q.dashboard} / ${q.panel}`).toEqual({ type: 'prometheus', uid: '$datasource' });
      expect(q.targetDatasource, `${q.dashboard} / ${q.panel}`).toEqual({ type: 'prometheus', uid: '$datasource' });
    }
  });

  it('every query and rule names only metrics the service exports, the operator exports, or a recording rule defines', async () => {
    const exported = await exportedNames();
    const recorded = new Set(rules().flatMap((r) => (r.record ? [r.record] : [])));
    const known = (name: string) => exported.has(name) || recorded.has(name) || OPERATOR_METRICS.includes(name) || SCRAPE_METRICS.includes(name);
    const unknown: string[] = [];
    const exprs = [...panelQueries().map((q) => q.expr), ...rules().map((r) => r.expr)];
    for (const expr of exprs) for (const name of selectedMetrics(expr)) if (!known(name)) unknown.push(name);
    expect(unknown).toEqual([]);
  });

  it('every exported metric is shown on a dashboard or in a rule, or listed as deliberately unshown', async () => {
    const used = new Set([...panelQueries().map((q) => q.expr), ...rules().map((r) => r.expr)].flatMap(selectedMetrics));
    const family = (name: string) => name.replace(/_(bucket|sum|count)$/, '');
    const usedFamilies = new Set([...used].map(family));
    const missing = [...(await exportedNames())].filter(
      (name) => !used.has(name) && !usedFamilies.has(family(name)) && !UNSHOWN.some((u) => u.pattern.test(name)),
    );
    expect(missing).toEqual([]);
  });

  it("the operator names the dashboard uses are exactly the operator's registry, and all are shown", async () => {
    const operator = [...(await namesOf(createOperatorMetrics().registry))].filter((name) => OPERATOR_METRICS.includes(name) || !OPERATOR_UNSHOWN.test(name));
    expect([...operator].sort()).toEqual([...OPERATOR_METRICS].sort());
    const used = new Set(panelQueries().flatMap((q) => selectedMetrics(q.expr)));
    const family = (name: string) => name.replace(/_(bucket|sum|count)$/, '');
    for (const name of operator) expect([...used].some((u) => family(u) === family(name)), name).toBe(true);
  });

  it('the parser catches a broken expression and an unknown metric (the checks above can fail)', async () => {
    expect(() => selectedMetrics('sum(rate(cryptomcp_mcp_requests_total[5m])')).toThrow(/parse/);
    expect(selectedMetrics('sum(rate(cryptomcp_no_such_metric_total[5m]))')).toEqual(['cryptomcp_no_such_metric_total']);
    expect((await exportedNames()).has('cryptomcp_no_such_metric_total')).toBe(false);
  });
});
