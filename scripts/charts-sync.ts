// Copies the files the Helm charts must carry inside themselves (helm reads nothing outside a
// chart's folder): crds/*.yaml into charts/cryptomcp-crds/templates/, the Grafana dashboards
// and Prometheus rule files from dashboards/ into charts/cryptomcp/files/, and the MCPServer
// spec schema into charts/cryptomcp/values.schema.json. The chart tests fail
// when a copy drifts from its source; run `npm run charts:sync` after editing the sources.
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';

const root = path.resolve(import.meta.dirname, '..');

export function syncPlan(): { from: string; to: string }[] {
  const plan: { from: string; to: string }[] = [];
  const crds = path.join(root, 'crds');
  for (const f of fs.readdirSync(crds).filter((f) => f.endsWith('.yaml'))) {
    plan.push({ from: path.join(crds, f), to: path.join(root, 'charts/cryptomcp-crds/templates', f) });
  }
  const dash = path.join(root, 'dashboards');
  if (fs.existsSync(dash)) {
    for (const f of fs.readdirSync(dash, { recursive: true }).map(String).sort()) {
      const from = path.join(dash, f);
      if (!fs.statSync(from).isFile()) continue;
      if (f.endsWith('.json')) plan.push({ from, to: path.join(root, 'charts/cryptomcp/files/dashboards', path.basename(f)) });
      // Rule files, not promtool's test files beside them.
      else if (/\.rules\.ya?ml$/.test(f) && !/test/.test(path.basename(f))) plan.push({ from, to: path.join(root, 'charts/cryptomcp/files/rules', path.basename(f)) });
    }
  }
  return plan;
}

export const VALUES_SCHEMA = path.join(root, 'charts/cryptomcp/values.schema.json');

/**
 * values.schema.json with `definitions.mcpServerSpec` taken from the MCPServer CRD's spec schema
 * (minus `required`: the chart sets server and database itself), which servers.defaults and
 * servers.overrides refer to, so `helm install` refuses what the API server would refuse later.
 * CEL rules (x-kubernetes-validations) are not JSON Schema; validators ignore them.
 */
export function valuesSchemaText(): string {
  const crd = YAML.parse(fs.readFileSync(path.join(root, 'crds/mcpservers.cryptomcp.dev.yaml'), 'utf8')) as {
    spec: { versions: { schema: { openAPIV3Schema: { properties: { spec: Record<string, unknown> } } } }[] };
  };
  const spec = Object.fromEntries(Object.entries(crd.spec.versions[0]!.schema.openAPIV3Schema.properties.spec).filter(([key]) => key !== 'required'));
  const schema = JSON.parse(fs.readFileSync(VALUES_SCHEMA, 'utf8')) as Record<string, unknown>;
  schema.definitions = { ...(schema.definitions as object | undefined), mcpServerSpec: { ...spec, additionalProperties: false } };
  return `${JSON.stringify(schema, null, 2)}\n`;
}

if (import.meta.main) {
  for (const { from, to } of syncPlan()) {
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(from, to);
    process.stdout.write(`${path.relative(root, from)} -> ${path.relative(root, to)}\n`);
  }
  fs.writeFileSync(VALUES_SCHEMA, valuesSchemaText());
  process.stdout.write(`crds/mcpservers.cryptomcp.dev.yaml (spec) -> ${path.relative(root, VALUES_SCHEMA)} (definitions.mcpServerSpec)\n`);
}
