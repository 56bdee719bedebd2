// Every PromQL expression the dashboards and rules ship, with where it comes from, and the
// Grafana variables replaced so that Prometheus itself can evaluate them.
import fs from 'node:fs';
import YAML from 'yaml';
import { DASHBOARDS } from '../../dashboards/src/dashboards.ts';

export const RULES_FILE = new URL('../../dashboards/rules/cryptomcp.rules.yaml', import.meta.url).pathname;
export const RULES_TEST_FILE = new URL('../../dashboards/rules/cryptomcp.rules.test.yaml', import.meta.url).pathname;
export const OPERATOR_RULES_FILE = new URL('../../dashboards/rules/cryptomcp-operator.rules.yaml', import.meta.url).pathname;
export const OPERATOR_RULES_TEST_FILE = new URL('../../dashboards/rules/cryptomcp-operator.rules.test.yaml', import.meta.url).pathname;
/** Each rule file with its promtool unit tests. */
export const RULE_SETS = [
  { rules: RULES_FILE, tests: RULES_TEST_FILE },
  { rules: OPERATOR_RULES_FILE, tests: OPERATOR_RULES_TEST_FILE },
];

export interface PanelQuery {
  dashboard: string;
  panel: string;
  type: string;
  unit: string | undefined;
  datasource: unknown;
  targetDatasource: unknown;
  expr: string;
}

interface PanelModel {
  type: string;
  title: string;
  datasource?: unknown;
  fieldConfig?: { defaults?: { unit?: string } };
  targets?: { expr?: string; datasource?: unknown }[];
}

export function panelQueries(): PanelQuery[] {
  const out: PanelQuery[] = [];
  for (const [uid, model] of Object.entries(DASHBOARDS)) {
    for (const panel of (model.panels ?? []) as PanelModel[]) {
      if (panel.type === 'row') continue;
      for (const target of panel.targets ?? []) {
        out.push({
          dashboard: uid,
          panel: panel.title,
          type: panel.type,
          unit: panel.fieldConfig?.defaults?.unit,
          datasource: panel.datasource,
          targetDatasource: target.datasource,
          expr: target.expr ?? '',
        });
      }
    }
  }
  return out;
}

export interface RuleModel {
  record?: string;
  alert?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** The rules of one file, or of every rule file. */
export function rules(file?: string): RuleModel[] {
  return (file ? [file] : RULE_SETS.map((s) => s.rules)).flatMap((f) => {
    const doc = YAML.parse(fs.readFileSync(f, 'utf8')) as { groups: { rules: RuleModel[] }[] };
    return doc.groups.flatMap((g) => g.rules);
  });
}

/** Grafana's interval variables replaced by a PromQL duration. */
export function withWindow(expr: string, window: string): string {
  // The dashboards' filter variables (cluster, namespace, server) as Grafana's "All": `.*`.
  return expr.replaceAll('$__rate_interval', window).replaceAll('$__range', window).replace(/\$(cluster|namespace|server)\b/g, '.*');
}
