// The platform chart as the real helm renders it, for tests that run the operator under the
// RBAC the chart grants (StandInApiServer.enforceRbac) or run its hooks.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import YAML from 'yaml';
import { ROOT } from './crd-schema.ts';

const run = promisify(execFile);

export interface Rendered {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  rules?: { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] }[];
  spec?: { template?: { spec: { serviceAccountName?: string; containers: { command: string[]; env?: { name: string; value?: string }[] }[] } } } & Record<string, unknown>;
  [key: string]: unknown;
}

/** `helm template <release> charts/cryptomcp --namespace <namespace> <args>`, every document. */
export async function renderChart(release: string, namespace: string, ...args: string[]): Promise<Rendered[]> {
  const { stdout } = await run(path.join(ROOT, '.tools/helm'), ['template', release, path.join(ROOT, 'charts/cryptomcp'), '--namespace', namespace, '--set', 'web.publicBaseUrl=https://mcp.example.com', ...args], { maxBuffer: 32 * 1024 * 1024 });
  return YAML.parseAllDocuments(stdout)
    .map((d) => d.toJS() as Rendered | null)
    .filter((o): o is Rendered => o !== null);
}

/** The env of a rendered container as a plain record. */
export function envOf(c: { env?: { name: string; value?: string }[] }): Record<string, string> {
  return Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value ?? '']));
}
