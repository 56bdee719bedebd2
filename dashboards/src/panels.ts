// The few shapes every dashboard here is made of, on top of @grafana/grafana-foundation-sdk
// (Grafana's own typed builders, so the JSON models follow its schema). Every panel queries the
// `$datasource` variable and declares its unit.
import { DashboardBuilder, DatasourceVariableBuilder, RowBuilder } from '@grafana/grafana-foundation-sdk/dashboard';
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

/** A dashboard: the $datasource variable, then one collapsible-free row per concern. */
export function dashboard(uid: string, title: string, description: string, rows: RowSpec[]) {
  const builder = new DashboardBuilder(title)
    .uid(uid)
    .description(description)
    .tags(['cryptomcp'])
    .editable()
    .refresh('30s')
    .time({ from: 'now-6h', to: 'now' })
    .timezone('utc')
    .withVariable(new DatasourceVariableBuilder('datasource').label('Data source').type('prometheus'));
  let y = 0;
  for (const row of rows) {
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
