// helm uninstall must not strand PlanPolicies. Helm's uninstall order deletes kinds it does not
// know (custom resources) after everything it knows, so the operator's Deployment is gone by the
// time the PlanPolicies are deleted, and the finalizer it keeps on them would wait for ever. The
// chart's pre-delete hook (run by Helm before any deletion) removes that finalizer.
// Here: the real helm renders the chart; its PlanPolicies are created on the stand-in and the
// operator guards them; the operator stops (as its Deployment is deleted); then
//   - without the hook, a deleted PlanPolicy stays Terminating (the defect);
//   - the hook's own container command and environment, run as a process, release every
//     PlanPolicy of the release (and no other), and the deletions complete.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { PLAN_FINALIZER } from '../../operator/api/types.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { StandInApiServer } from './support/apiserver.ts';
import { ROOT } from './support/crd-schema.ts';
import { eventually, startOperator, type RunningOperator } from './support/harness.ts';
import { kubectl, writeKubeconfig } from './support/kubectl.ts';

const run = promisify(execFile);

interface Rendered {
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: { template?: { spec: { containers: { command: string[]; env?: { name: string; value?: string }[] }[] } } };
}

let api: StandInApiServer;
let db: TestDatabase;
let op: RunningOperator;
let kube: { file: string; dir: string };
let rendered: Rendered[];

const finalizers = (name: string) => (api.get('PlanPolicy', undefined, name)?.metadata.finalizers as string[] | undefined) ?? [];

beforeAll(async () => {
  const { stdout } = await run(path.join(ROOT, '.tools/helm'), ['template', 'shop', path.join(ROOT, 'charts/cryptomcp'), '--namespace', 'cryptomcp', '--set', 'web.publicBaseUrl=https://mcp.example.com'], { maxBuffer: 32 * 1024 * 1024 });
  rendered = YAML.parseAllDocuments(stdout).map((d) => d.toJS() as Rendered | null).filter((o): o is Rendered => o !== null);
  api = new StandInApiServer({ bookmarkIntervalMs: 200 });
  await api.start();
  db = await createTestDatabase();
  kube = writeKubeconfig(api.url);
  for (const pp of rendered.filter((o) => o.kind === 'PlanPolicy')) api.create(pp as never);
  // A PlanPolicy of another release (or applied by hand): the hook must leave it alone.
  api.create({ apiVersion: 'cryptomcp.dev/v1alpha1', kind: 'PlanPolicy', metadata: { name: 'other', labels: { 'app.kubernetes.io/instance': 'other', 'app.kubernetes.io/component': 'plan' } }, spec: { plan: 'other', credits: 1, renewal: 'OneTime', rateLimit: { requestsPerMinute: 5 } } } as never);
  op = startOperator(api, db);
  await eventually(() => ['free', 'basic', 'pro', 'premium', 'other'].every((n) => finalizers(n).includes(PLAN_FINALIZER)), 15_000, 'finalizers added');
  // helm uninstall deletes the operator's Deployment before the custom resources.
  await op.stop();
});

afterAll(async () => {
  await op?.stop();
  await api?.stop();
  await db?.drop();
  if (kube) fs.rmSync(kube.dir, { recursive: true, force: true });
});

describe('helm uninstall and PlanPolicy finalizers', () => {
  it('the chart renders a pre-delete hook running operator/uninstall.ts for the release', () => {
    const hooks = rendered.filter((o) => o.kind === 'Job' && o.metadata.annotations?.['helm.sh/hook'] === 'pre-delete');
    expect(hooks).toHaveLength(1);
    const c = hooks[0]!.spec.template!.spec.containers[0]!;
    expect(c.command).toEqual(['node', 'operator/uninstall.ts']);
    expect(c.env).toEqual([{ name: 'RELEASE_NAME', value: 'shop' }]);
  });

  it('without the hook, a PlanPolicy deleted after the operator is gone stays Terminating (the defect)', async () => {
    await kubectl(kube.file)('delete', 'planpolicy/free', '--wait=false');
    expect(api.get('PlanPolicy', undefined, 'free')!.metadata.deletionTimestamp).toBeDefined();
    expect(finalizers('free')).toContain(PLAN_FINALIZER);
  });

  it("the hook's command releases the release's PlanPolicies (and only those): the deletions complete", async () => {
    const c = rendered.find((o) => o.metadata.annotations?.['helm.sh/hook'] === 'pre-delete')!.spec.template!.spec.containers[0]!;
    const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value ?? '']));
    const [command, ...args] = c.command;
    expect(command).toBe('node');
    const child = spawn(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH, KUBECONFIG: kube.file, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ release: 'shop', planpolicies: ['basic', 'free', 'premium', 'pro'], finalizers_removed: ['basic', 'free', 'premium', 'pro'] });
    // The Terminating one is gone at once; the rest go as soon as helm deletes them.
    expect(api.get('PlanPolicy', undefined, 'free')).toBeUndefined();
    for (const name of ['basic', 'premium', 'pro']) {
      expect(finalizers(name)).toEqual([]);
      api.remove('PlanPolicy', undefined, name);
      expect(api.get('PlanPolicy', undefined, name), name).toBeUndefined();
    }
    expect(finalizers('other')).toContain(PLAN_FINALIZER);
    // The plan rows stay: accounts may be on them.
    expect((await db.query<{ name: string }>('SELECT name FROM plans ORDER BY name')).rows.map((r) => r.name)).toEqual(expect.arrayContaining(['basic', 'free', 'premium', 'pro']));
  });
});
