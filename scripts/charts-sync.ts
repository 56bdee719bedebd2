// Copies the files the Helm charts must carry inside themselves (helm reads nothing outside a
// chart's folder): crds/*.yaml into charts/cryptomcp-crds/templates/, and the Grafana dashboards
// and Prometheus rule files from dashboards/ into charts/cryptomcp/files/. The chart tests fail
// when a copy drifts from its source; run `npm run charts:sync` after editing the sources.
import fs from 'node:fs';
import path from 'node:path';

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

if (import.meta.main) {
  for (const { from, to } of syncPlan()) {
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(from, to);
    process.stdout.write(`${path.relative(root, from)} -> ${path.relative(root, to)}\n`);
  }
}
