// npm run dashboards:build — writes the Grafana JSON models (grafana/*.json) from src/. The Helm
// chart ships them, with rules/cryptomcp.rules.yaml, as ConfigMaps for the Grafana sidecar and a
// PrometheusRule (`npm run charts:sync` copies them into charts/cryptomcp/files/).
// test/observability/dashboards.test.ts fails when the committed JSON differs from this output.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DASHBOARDS } from './src/dashboards.ts';

const ROOT = path.dirname(fileURLToPath(import.meta.url));

export function generatedFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const [uid, model] of Object.entries(DASHBOARDS)) files.set(`grafana/${uid}.json`, `${JSON.stringify(model, null, 2)}\n`);
  return files;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const [file, text] of generatedFiles()) {
    fs.mkdirSync(path.dirname(path.join(ROOT, file)), { recursive: true });
    fs.writeFileSync(path.join(ROOT, file), text);
    console.log(`wrote dashboards/${file}`);
  }
}
