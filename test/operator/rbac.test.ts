// Least privilege, tested rather than claimed: the stand-in enforces the RBAC the chart renders
// (helm template), the operator runs as the chart's ServiceAccount, and
//   - by default it watches only the release namespace, through a Role there: it reconciles the
//     MCPServers and PlanPolicies it is given with no request refused, and an MCPServer in
//     another namespace is neither watched nor touched;
//   - it never lists or watches Secrets (issue 34: it cached every Secret of the cluster,
//     contents included) — and the chart would refuse it if it tried: listing Secrets is 403 for
//     its ServiceAccount, reading the referenced one by name is allowed;
//   - with watchNamespaces it gets a Role in each, and nothing cluster-wide but PlanPolicies.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MCPServer } from '../../operator/api/types.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { StandInApiServer } from './support/apiserver.ts';
import { renderChart } from './support/chart.ts';
import { eventually, settled, startOperator, type RunningOperator } from './support/harness.ts';
import { kubectl, writeKubeconfig } from './support/kubectl.ts';

const NS = 'shop';
const SA = `${NS}:rel-cryptomcp-operator`;
let api: StandInApiServer;
let db: TestDatabase;
let op: RunningOperator;
const dirs: string[] = [];

const ready = (ns: string, name: string) => (api.get('MCPServer', ns, name) as unknown as MCPServer | undefined)?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
const mcpServer = (ns: string, name: string) => ({ apiVersion: 'cryptomcp.dev/v1alpha1', kind: 'MCPServer', metadata: { name, namespace: ns }, spec: { server: 'kol-analytics', replicas: 1, database: { secretRef: { name: 'db' } } } });
const secret = (ns: string, name: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: ns }, data: { url: Buffer.from('postgres://x').toString('base64') } });

beforeAll(async () => {
  api = new StandInApiServer({ bookmarkIntervalMs: 200 });
  await api.start();
  api.enforceRbac(await renderChart('rel', NS));
  db = await createTestDatabase();
  for (const ns of [NS, 'elsewhere']) {
    api.create(secret(ns, 'db'));
    api.create(secret(ns, 'unrelated'));
  }
  // What main.ts gives the controller for the chart's defaults (WATCH_NAMESPACES empty).
  op = startOperator(api, db, { namespaces: [NS], eventNamespace: NS, instance: `${NS}/rel-cryptomcp-operator` }, api.tokenFor(SA));
});

afterAll(async () => {
  await op?.stop();
  await api?.stop();
  await db?.drop();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** kubectl as a ServiceAccount (impersonation: kubectl sends no bearer token over plain HTTP). */
function asServiceAccount(serviceAccount: string) {
  const kube = writeKubeconfig(api.url, NS);
  dirs.push(kube.dir);
  const k = kubectl(kube.file);
  return (...args: string[]) => k(`--as=system:serviceaccount:${serviceAccount}`, ...args);
}

describe('the operator under the RBAC the chart renders (defaults: the release namespace)', () => {
  it('reconciles an MCPServer and a PlanPolicy with no request refused', async () => {
    api.create(mcpServer(NS, 'kol'));
    api.create({ apiVersion: 'cryptomcp.dev/v1alpha1', kind: 'PlanPolicy', metadata: { name: 'team' }, spec: { plan: 'team', credits: 7, renewal: 'Monthly', rateLimit: { requestsPerMinute: 9, burst: 3 } } } as never);
    await eventually(() => ready(NS, 'kol'), 20_000, 'MCPServer Ready');
    await eventually(() => (api.get('PlanPolicy', undefined, 'team')?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.some((c) => c.type === 'Synced' && c.status === 'True'), 20_000, 'PlanPolicy Synced');
    for (const kind of ['Deployment', 'Service', 'PodDisruptionBudget']) expect(api.get(kind, NS, 'kol'), kind).toBeDefined();
    // Events about the cluster-scoped PlanPolicy land in the release namespace, where it may write them.
    expect(api.list('Event', NS).some((e) => (e as { involvedObject?: { kind?: string } }).involvedObject?.kind === 'PlanPolicy')).toBe(true);
    await settled(api);
    expect(api.forbidden).toEqual([]);
    // Every request of the operator was authenticated as its ServiceAccount (RBAC applied to it).
    expect(api.authenticated.filter((r) => r.startsWith(`system:serviceaccount:${SA} `)).length).toBeGreaterThan(20);
  });

  it('leaves an MCPServer in another namespace alone, and asks nothing outside its own', async () => {
    api.create(mcpServer('elsewhere', 'kol'));
    await settled(api);
    expect(api.get('Deployment', 'elsewhere', 'kol')).toBeUndefined();
    expect(api.get('MCPServer', 'elsewhere', 'kol')!.status).toBeUndefined();
    expect(api.forbidden).toEqual([]);
  });

  it('never lists or watches Secrets; reads the referenced one by name', () => {
    const secretRequests = api.requests.filter((r) => r.includes('/secrets'));
    expect(secretRequests.length).toBeGreaterThan(0);
    expect(secretRequests.every((r) => /^GET \/api\/v1\/namespaces\/shop\/secrets\/db$/.test(r)), secretRequests.join('\n')).toBe(true);
  });

  it("the chart would refuse it: for the operator's ServiceAccount, listing or watching Secrets is 403, reading one by name is allowed", async () => {
    const k = asServiceAccount(SA);
    await expect(k('get', 'secrets', '-n', NS)).rejects.toThrow(/secrets is forbidden: User "system:serviceaccount:shop:rel-cryptomcp-operator" cannot list resource "secrets" in API group "" in the namespace "shop"/);
    await expect(k('get', 'secrets', '-n', NS, '--watch', '--request-timeout=2s')).rejects.toThrow(/forbidden/);
    await expect(k('get', 'secret', 'db', '-n', NS, '-o', 'name')).resolves.toMatchObject({ stdout: 'secret/db\n' });
    await expect(k('get', 'secret', 'db', '-n', 'elsewhere')).rejects.toThrow(/cannot get resource "secrets" in API group "" in the namespace "elsewhere"/);
    // Nor may it touch Deployments outside the namespaces it watches, or any cluster-wide.
    await expect(k('get', 'deployments', '-A')).rejects.toThrow(/cannot list resource "deployments" in API group "apps" at the cluster scope/);
    await expect(k('delete', 'deployment', 'kol', '-n', 'elsewhere')).rejects.toThrow(/forbidden/);
  });
});

describe('watchNamespaces', () => {
  it('a Role and RoleBinding in each watched namespace; cluster-wide, only PlanPolicies', async () => {
    const objects = await renderChart('rel', NS, '--set', 'operator.watchNamespaces={team-a,team-b}');
    const roles = objects.filter((o) => o.kind === 'Role' && o.metadata.name === 'rel-cryptomcp-operator');
    expect(roles.map((r) => r.metadata.namespace).sort()).toEqual(['team-a', 'team-b']);
    const bindings = objects.filter((o) => o.kind === 'RoleBinding' && o.metadata.name === 'rel-cryptomcp-operator');
    expect(bindings.map((b) => b.metadata.namespace).sort()).toEqual(['team-a', 'team-b']);
    const clusterRoles = objects.filter((o) => o.kind === 'ClusterRole' && o.metadata.labels?.['app.kubernetes.io/component'] === 'operator');
    expect(clusterRoles.map((c) => c.metadata.name)).toEqual([`${NS}-rel-cryptomcp-operator-planpolicies`]);
    expect(new Set(clusterRoles[0]!.rules!.flatMap((r) => r.resources))).toEqual(new Set(['planpolicies', 'planpolicies/status', 'planpolicies/finalizers']));
    for (const role of roles) {
      const secrets = role.rules!.filter((r) => r.resources.includes('secrets'));
      expect(secrets).toEqual([{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]);
      for (const r of role.rules!) expect([...r.verbs, ...r.resources, ...r.apiGroups]).not.toContain('*');
    }
  });

  it('["*"]: every namespace through a ClusterRole (one installation per cluster), still no list or watch of Secrets', async () => {
    const objects = await renderChart('rel', NS, '--set', 'operator.watchNamespaces={*}');
    expect(objects.filter((o) => o.kind === 'Role' && o.metadata.name === 'rel-cryptomcp-operator')).toEqual([]);
    const all = objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === `${NS}-rel-cryptomcp-operator`)!;
    expect(all.rules!.find((r) => r.resources.includes('secrets'))!.verbs).toEqual(['get']);
  });
});
