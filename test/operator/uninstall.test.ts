// helm uninstall must not strand PlanPolicies. Helm's uninstall order deletes kinds it does not
// know (custom resources) after everything it knows, so the operator's Deployment is gone by the
// time the PlanPolicies are deleted, and the finalizer it keeps on them would wait for ever. The
// chart's pre-delete hook runs before any deletion — while the operator still runs, as Helm
// runs it, and a running operator puts a removed finalizer back at once (issue 34: all four
// PlanPolicies stayed Terminating). So the hook scales the operator to 0, waits until its pods
// are gone, and only then removes the finalizers, under a ServiceAccount of its own.
// Here: the real helm renders the chart; the stand-in enforces the rendered RBAC, keeps Pods for
// the operator's Deployment (its "kubelet" stops the operator when a pod terminates); the
// operator runs as its ServiceAccount and guards the PlanPolicies; then, with it RUNNING, the
// hook's own container command, environment and ServiceAccount run as a process.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLAN_FINALIZER } from '../../operator/api/types.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { StandInApiServer } from './support/apiserver.ts';
import { envOf, renderChart, type Rendered } from './support/chart.ts';
import { ROOT } from './support/crd-schema.ts';
import { eventually, startOperator, type RunningOperator } from './support/harness.ts';
import { writeKubeconfig } from './support/kubectl.ts';

const NS = 'cryptomcp';
const PLANS = ['basic', 'free', 'premium', 'pro'];
let api: StandInApiServer;
let db: TestDatabase;
let op: RunningOperator;
let operatorStopped = false;
let rendered: Rendered[];
const kubeDirs: string[] = [];

const finalizers = (name: string) => (api.get('PlanPolicy', undefined, name)?.metadata.finalizers as string[] | undefined) ?? [];
const hook = () => rendered.find((o) => o.kind === 'Job' && o.metadata.annotations?.['helm.sh/hook'] === 'pre-delete')!;
const operatorPods = () => api.list('Pod', NS).filter((p) => p.metadata.labels?.['app.kubernetes.io/component'] === 'operator');

beforeAll(async () => {
  rendered = await renderChart('shop', NS);
  api = new StandInApiServer({ bookmarkIntervalMs: 200, pods: true });
  await api.start();
  api.enforceRbac(rendered);
  db = await createTestDatabase();
  for (const pp of rendered.filter((o) => o.kind === 'PlanPolicy')) api.create(pp as never);
  // A PlanPolicy of another release (or applied by hand): the hook must leave it alone.
  api.create({ apiVersion: 'cryptomcp.dev/v1alpha1', kind: 'PlanPolicy', metadata: { name: 'other', labels: { 'app.kubernetes.io/instance': 'other', 'app.kubernetes.io/component': 'plan' } }, spec: { plan: 'other', credits: 1, renewal: 'OneTime', rateLimit: { requestsPerMinute: 5 } } } as never);
  // The operator's Deployment (two replicas, two pods); the operator below is what its pods run.
  api.create(rendered.find((o) => o.kind === 'Deployment' && o.metadata.name === 'shop-cryptomcp-operator') as never);
  await eventually(() => operatorPods().length === 2, 5000, 'operator pods');
  op = startOperator(api, db, { namespaces: [NS], eventNamespace: NS, instance: `${NS}/shop-cryptomcp-operator` }, api.tokenFor(`${NS}:shop-cryptomcp-operator`));
  // The kubelet: a terminating operator pod stops the operator (SIGTERM, lease handed back)
  // after a moment, as a pod's shutdown takes one; the operator reconciles meanwhile.
  // It goes only once the hook has seen the pod (listed the operator's pods at least once): on a
  // loaded machine the hook's first list could otherwise come after the pods are gone, and the
  // count of pods it waited for would say nothing about whether it waits.
  api.onPodTerminating = async () => {
    await eventually(() => api.requests.includes(`GET /api/v1/namespaces/${NS}/pods`), 30_000, 'the hook listing the operator pods');
    await new Promise((r) => setTimeout(r, 300));
    await op.stop();
    operatorStopped = true;
  };
  await eventually(() => [...PLANS, 'other'].every((n) => finalizers(n).includes(PLAN_FINALIZER)), 15_000, 'finalizers added');
});

afterAll(async () => {
  await op?.stop();
  await api?.stop();
  await db?.drop();
  for (const dir of kubeDirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe('helm uninstall and PlanPolicy finalizers', () => {
  it('the chart renders a pre-delete hook running operator/uninstall.ts under its own ServiceAccount, allowed only what it needs', () => {
    const hooks = rendered.filter((o) => o.kind === 'Job' && o.metadata.annotations?.['helm.sh/hook'] === 'pre-delete');
    expect(hooks).toHaveLength(1);
    const pod = hooks[0]!.spec!.template!.spec;
    expect(pod.serviceAccountName).toBe('shop-cryptomcp-uninstall');
    expect(pod.containers[0]!.command).toEqual(['node', 'operator/uninstall.ts']);
    expect(envOf(pod.containers[0]!)).toEqual({ RELEASE_NAME: 'shop', OPERATOR_DEPLOYMENT: 'shop-cryptomcp-operator', POD_NAMESPACE: NS, PLAN_POLICIES: 'free,basic,pro,premium' });
    const role = rendered.find((o) => o.kind === 'Role' && o.metadata.name === 'shop-cryptomcp-uninstall')!;
    expect(role.rules).toEqual([
      { apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['shop-cryptomcp-operator'], verbs: ['get', 'patch'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
    ]);
    const clusterRole = rendered.find((o) => o.kind === 'ClusterRole' && o.metadata.name === `${NS}-shop-cryptomcp-uninstall`)!;
    expect(clusterRole.rules).toEqual([{ apiGroups: ['cryptomcp.dev'], resources: ['planpolicies'], resourceNames: ['free', 'basic', 'pro', 'premium'], verbs: ['get', 'patch'] }]);
    // Its RBAC is a hook too, created before the Job (a lower weight).
    for (const o of rendered.filter((x) => x.metadata.name.endsWith('-uninstall'))) expect(o.metadata.annotations).toMatchObject({ 'helm.sh/hook': 'pre-delete', 'helm.sh/hook-weight': '-10' });
  });

  it('while the operator runs, a finalizer removed from a PlanPolicy is back at once (why the hook must stop it first)', async () => {
    const pp = api.get('PlanPolicy', undefined, 'free')!;
    // What the earlier hook did, as an admin write (no token).
    const patched = { ...pp, metadata: { ...pp.metadata, finalizers: [] } };
    await fetch(`${api.url}/apis/cryptomcp.dev/v1alpha1/planpolicies/free`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(patched) });
    await eventually(() => finalizers('free').includes(PLAN_FINALIZER), 5000, 'finalizer put back by the running operator');
  });

  it("with the operator RUNNING, the hook's command scales it to 0, waits for its pods, releases the release's PlanPolicies (only those); after helm deletes them none stays Terminating", async () => {
    expect(operatorStopped).toBe(false);
    const c = hook().spec!.template!.spec.containers[0]!;
    const [command, ...args] = c.command;
    expect(command).toBe('node');
    const kube = writeKubeconfig(api.url, NS, api.tokenFor(`${NS}:${hook().spec!.template!.spec.serviceAccountName}`));
    kubeDirs.push(kube.dir);
    const child = spawn(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH, KUBECONFIG: kube.file, ...envOf(c) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const from = api.writes.length;
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, stderr).toBe(0);
    // helm deletes the rest: the operator's Deployment (its pods, and so the operator, go with
    // it) first, the custom resources last.
    api.remove('Deployment', NS, 'shop-cryptomcp-operator');
    await op.stop();
    for (const name of PLANS) {
      api.remove('PlanPolicy', undefined, name);
      expect(api.get('PlanPolicy', undefined, name)?.metadata.deletionTimestamp, `${name} stays Terminating`).toBeUndefined();
      expect(api.get('PlanPolicy', undefined, name), `${name} is gone`).toBeUndefined();
    }
    expect(JSON.parse(stdout)).toEqual({ release: 'shop', operator_pods_waited_for: expect.any(Number), planpolicies: ['free', 'basic', 'pro', 'premium'], finalizers_removed: ['free', 'basic', 'pro', 'premium'] });
    expect(JSON.parse(stdout).operator_pods_waited_for).toBeGreaterThan(0);
    expect(operatorStopped).toBe(true);
    // In this order: scaled to 0, both pods gone, then the finalizers.
    const writes = api.writes.slice(from);
    const scaled = writes.indexOf(`patch Deployment/${NS}/shop-cryptomcp-operator`);
    const podsGone = writes.map((w, i) => (w.startsWith(`delete Pod/${NS}/shop-cryptomcp-operator-`) ? i : -1)).filter((i) => i >= 0);
    const released = writes.findIndex((w) => w.startsWith('patch PlanPolicy/'));
    expect(scaled).toBeGreaterThanOrEqual(0);
    expect(podsGone).toHaveLength(2);
    expect(Math.max(...podsGone)).toBeLessThan(released);
    expect(scaled).toBeLessThan(Math.min(...podsGone));
    expect(operatorPods()).toEqual([]);
    expect(writes).toContain(`patch Deployment/${NS}/shop-cryptomcp-operator`);
    // Everything the hook asked for was granted by its own rules.
    expect(api.forbidden).toEqual([]);
    expect(finalizers('other')).toContain(PLAN_FINALIZER);
    // The plan rows stay: accounts may be on them.
    expect((await db.query<{ name: string }>('SELECT name FROM plans ORDER BY name')).rows.map((r) => r.name)).toEqual(expect.arrayContaining(PLANS));
  });
});
