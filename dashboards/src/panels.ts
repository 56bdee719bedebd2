// The few shapes every dashboard here is made of, on top of @grafana/grafana-foundation-sdk
// (Grafana's own typed builders, so the JSON models follow its schema). Every panel queries the
// `$datasource` variable and declares its unit.
import { DashboardBuilder, DatasourceVariableBuilder, QueryVariableBuilder, RowBuilder, VariableRefresh } from '@grafana/grafana-foundation-sdk/dashboard';
import { ReduceDataOptionsBuilder } from '@grafana/grafana-foundation-sdk/common';
import { DataqueryBuilder } from '@grafana/grafana-foundation-sdk/prometheus';
import { PanelBuilder as StatBuilder } from '@grafana/grafana-foundation-sdk/stat';
import { PanelBuilder as TimeseriesBuilder } from '@grafana/grafana-foundation-sdk/timeseries';

export const DATASOURCE = { type: 'prometheus', uid: '$datasource' };

export interface Query {
  expr: string;
  legend?: string;
}

export interface PanelSpec {
  title: string;
  description: string;
  /** A Grafana unit id: reqps, s, percentunit, short, ops, bytes, ... */
  unit: string;
  queries: Query[];
  kind?: 'timeseries' | 'stat';
  width?: number;
  /** Drawn filled (shares of a whole, e.g. requests by server). */
  stack?: boolean;
}

export interface RowSpec {
  title: string;
  panels: PanelSpec[];
}

/**
 * The filter variables every dashboard has: `cluster` and `namespace` (labels Prometheus or the
 * Prometheus Operator put on every scraped series), and `server` where the metrics carry one.
 * "All" is `.*`, which also matches a series without the label (a single-cluster Prometheus).
 */
export interface Scope {
  /** A metric every pod of the dashboard's subject exports, to list the label values from. */
  source: string;
  /** Also filter by the `server` label (the service's per-server metrics). */
  server: boolean;
}

/** Metrics of the service that carry a `server` label. */
const SERVER_LABELLED = /^cryptomcp_(mcp_request|gateway_rejections|credits_|x402_calls)/;

/**
 * Adds the scope's matchers to every selector of a raw metric (recording rules, named with ':',
 * are aggregates without those labels and are left alone).
 */
export function scoped(expr: string, scope: Scope): string {
  return expr.replace(/\b((?:cryptomcp|mcp_server)_[a-z0-9_]+)(\{([^}]*)\})?/g, (_all, metric: string, _braces: string | undefined, inner: string | undefined) => {
    const matchers = ['cluster=~"$cluster"', 'namespace=~"$namespace"'];
    if (scope.server && SERVER_LABELLED.test(metric)) matchers.push('server=~"$server"');
    return `${metric}{${[...matchers, ...(inner ? [inner] : [])].join(',')}}`;
  });
}

function targets(queries: Query[]) {
  return queries.map((q, i) =>
    new DataqueryBuilder()
      .expr(q.expr)
      .legendFormat(q.legend ?? '__auto')
      .refId(String.fromCharCode(65 + i))
      .datasource(DATASOURCE),
  );
}

function panel(spec: PanelSpec, x: number, y: number) {
  const w = spec.width ?? 8;
  const h = spec.kind === 'stat' ? 4 : 8;
  if (spec.kind === 'stat') {
    return new StatBuilder()
      .title(spec.title)
      .description(spec.description)
      .datasource(DATASOURCE)
      .unit(spec.unit)
      .gridPos({ x, y, w, h })
      // The latest value of the query (a total over $__range, or the current rate).
      .reduceOptions(new ReduceDataOptionsBuilder().calcs(['lastNotNull']).values(false))
      .targets(targets(spec.queries));
  }
  return new TimeseriesBuilder()
    .title(spec.title)
    .description(spec.description)
    .datasource(DATASOURCE)
    .unit(spec.unit)
    .gridPos({ x, y, w, h })
    .fillOpacity(spec.stack ? 30 : 10)
    .targets(targets(spec.queries));
}

function filterVariable(name: string, label: string, source: string, cluster: boolean) {
  const query = `label_values(${cluster ? source : `${source}{cluster=~"$cluster"}`}, ${name})`;
  return new QueryVariableBuilder(name)
    .label(label)
    .datasource(DATASOURCE)
    .query({ query, refId: 'PrometheusVariableQueryEditor-VariableQuery' })
    .definition(query)
    .refresh(VariableRefresh.OnTimeRangeChanged)
    .includeAll(true)
    .allValue('.*')
    .multi(true)
    .current({ text: 'All', value: '$__all' });
}

/**
 * A dashboard: the $datasource variable and the filter variables (cluster, namespace, and server
 * when the scope has one), then one collapsible-free row per concern. Every query is scoped.
 */
export function dashboard(uid: string, title: string, description: string, rows: RowSpec[], scope: Scope) {
  const builder = new DashboardBuilder(title)
    .uid(uid)
    .description(description)
    .tags(['cryptomcp'])
    .editable()
    .refresh('30s')
    .time({ from: 'now-6h', to: 'now' })
    .timezone('utc')
    .withVariable(new DatasourceVariableBuilder('datasource').label('Data source').type('prometheus'))
    .withVariable(filterVariable('cluster', 'Cluster', scope.source, true))
    .withVariable(filterVariable('namespace', 'Namespace', scope.source, false));
  if (scope.server) builder.withVariable(filterVariable('server', 'Server', scope.source, false));
  const scopedRows = rows.map((row) => ({ ...row, panels: row.panels.map((p) => ({ ...p, queries: p.queries.map((q) => ({ ...q, expr: scoped(q.expr, scope) })) })) }));
  let y = 0;
  for (const row of scopedRows) {
    builder.withRow(new RowBuilder(row.title).gridPos({ x: 0, y, w: 24, h: 1 }));
    y += 1;
    let x = 0;
    let rowHeight = 0;
    for (const spec of row.panels) {
      const w = spec.width ?? 8;
      if (x + w > 24) {
        x = 0;
        y += rowHeight;
        rowHeight = 0;
      }
      builder.withPanel(panel(spec, x, y));
      x += w;
      rowHeight = Math.max(rowHeight, spec.kind === 'stat' ? 4 : 8);
    }
    y += rowHeight;
  }
  return builder.build();
}
