// The operator end to end for MCPServer, driven the way an SRE drives a cluster: kubectl 1.35
// applies resources to the stand-in API server (real HTTP on loopback), the operator runs
// in-process with its list-watch loop, work queue and leader election, and the stand-in's
// simulated Deployment controller reports rollouts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MCPServer } from '../../operator/api/types.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { StandInApiServer } from './support/apiserver.ts';
import { IMAGE, bookmarkRounds, eventually, settled, startOperator, type RunningOperator } from './support/harness.ts';
import { kubectl, writeKubeconfig } from './support/kubectl.ts';
import fs from 'node:fs';
import path from 'node:path';

const NS = 'cryptomcp';
let api: StandInApiServer;
let db: TestDatabase;
let op: RunningOperator;
let k: ReturnType<typeof kubectl>;
let tmp: string;

function manifest(name: string, spec: Record<string, unknown>): string {
  const file = path.join(tmp, `${name}-${Math.random().toString(36).slice(2)}.json`);
  fs.writeFileSync(file, JSON.stringify({ apiVersion: 'cryptomcp.dev/v1alpha1', kind: 'MCPServer', metadata: { name, namespace: NS }, spec }));
  return file;
}

const children = (name: string) =>
  ['Deployment', 'Service', 'Ingress', 'HorizontalPodAutoscaler', 'PodDisruptionBudget'].filter((kind) => api.get(kind, NS, name));

const mcp = (name: string) => api.get('MCPServer', NS, name) as unknown as MCPServer | undefined;
const ready = (name: string) => mcp(name)?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' && mcp(name)?.status?.observedGeneration === mcp(name)?.metadata.generation;

beforeAll(async () => {
  api = new StandInApiServer({ bookmarkIntervalMs: 200 });
  await api.start();
  api.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'cryptomcp-database', namespace: NS }, data: { url: Buffer.from('postgres://db/one').toString('base64') } });
  db = await createTestDatabase();
  const kc = writeKubeconfig(api.url, NS);
  tmp = kc.dir;
  k = kubectl(kc.file);
  op = startOperator(api, db, { leader: { name: 'cryptomcp-operator', namespace: NS, identity: 'op-a', leaseDurationMs: 3000 } });
});

afterAll(async () => {
  if (process.env.OPERATOR_TEST_DEBUG) console.log(op.logs.join('\n'), '\n---\n', api.writes.filter((w) => !w.includes('Lease')).join('\n'), '\n---\n', api.requests.filter((r) => !r.includes('lease')).slice(-80).join('\n'), JSON.stringify(api.list('MCPServer', NS).map((m) => m.status)));
  await op?.stop();
  await api?.stop();
  await db?.drop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('MCPServer lifecycle through kubectl', () => {
  it('kubectl apply → children with owner references → simulated rollout → Ready=True, and kubectl wait succeeds', async () => {
    await k('apply', '--server-side', '-f', 'crds/examples/mcpserver-market-intelligence.yaml');
    await eventually(() => children('market-intelligence').length === 5, 20_000, 'five children');
    const uid = mcp('market-intelligence')!.metadata.uid;
    for (const kind of children('market-intelligence')) {
      const owners = (api.get(kind, NS, 'market-intelligence')!.metadata.ownerReferences ?? []) as { uid: string; controller?: boolean }[];
      expect(owners).toEqual([expect.objectContaining({ uid, controller: true })]);
    }
    const { stdout } = await k('wait', '--for=condition=Ready', 'mcpserver/market-intelligence', '--timeout=30s');
    expect(stdout).toMatch(/condition met/);
    const status = mcp('market-intelligence')!.status!;
    expect(status).toMatchObject({ observedGeneration: 1, url: 'https://mcp.example.com/mcp/market-intelligence' });
    expect(status.conditions!.map((c) => [c.type, c.status, c.observedGeneration])).toEqual([
      ['Accepted', 'True', 1],
      ['Available', 'True', 1],
      ['Ready', 'True', 1],
    ]);
    const dep = api.get('Deployment', NS, 'market-intelligence')!;
    expect(JSON.stringify(dep)).toContain(IMAGE);
    const table = await k('get', 'mcpservers');
    expect(table.stdout).toMatch(/NAME\s+READY\s+REPLICAS\s+URL\s+AGE/);
    expect(table.stdout).toMatch(/market-intelligence\s+True\s+2\/2\s+https:\/\/mcp\.example\.com\/mcp\/market-intelligence/);
  });

  it('a settled operator writes nothing more: no status loop, no re-apply churn', async () => {
    await settled(api);
    const before = api.writes.length;
    await bookmarkRounds(api); // bookmarks flow meanwhile; none may cause writes
    // Lease renewals are the only writes a settled leader makes.
    expect(api.writes.slice(before).filter((w) => !w.includes(' Lease/'))).toEqual([]);
  });

  it('changing the spec rolls out: fixed replicas replace the HPA, a new tool cost changes the config hash, Ready follows the new generation', async () => {
    const hashBefore = mcp('market-intelligence')!.status!.configHash;
    const spec = { server: 'market-intelligence', database: { secretRef: { name: 'cryptomcp-database' } }, replicas: 3, toolCostOverrides: { get_prices: 5 } };
    await k('apply', '--server-side', '--force-conflicts', '-f', manifest('market-intelligence', spec));
    await eventually(() => !api.get('HorizontalPodAutoscaler', NS, 'market-intelligence') && !api.get('Ingress', NS, 'market-intelligence'), 20_000, 'HPA and Ingress pruned');
    await k('wait', '--for=condition=Ready', 'mcpserver/market-intelligence', '--timeout=30s');
    const dep = api.get('Deployment', NS, 'market-intelligence')! as unknown as { spec: { replicas: number; template: { metadata: { annotations: Record<string, string> }; spec: { containers: { env: { name: string; value?: string }[] }[] } } } };
    expect(dep.spec.replicas).toBe(3);
    expect(dep.spec.template.spec.containers[0]!.env.find((e) => e.name === 'TOOL_COST_OVERRIDES')!.value).toBe('{"market-intelligence.get_prices":5}');
    const status = mcp('market-intelligence')!.status!;
    expect(status.configHash).not.toBe(hashBefore);
    expect(dep.spec.template.metadata.annotations['cryptomcp.dev/config-hash']).toBe(status.configHash);
    expect(status).toMatchObject({ observedGeneration: mcp('market-intelligence')!.metadata.generation, replicas: 3, readyReplicas: 3, url: 'http://market-intelligence.cryptomcp.svc:8080/mcp/market-intelligence' });
  });

  it('pruning deletes only what this MCPServer controls: a same-named HPA and Ingress someone else made survive a reconcile', async () => {
    // The MCPServer now wants neither an HPA nor an Ingress (fixed replicas, no ingress). Someone
    // made both by hand under its name: no owner, or owned (not controlled) by it.
    const uid = mcp('market-intelligence')!.metadata.uid!;
    api.create({ apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'market-intelligence', namespace: NS }, spec: {} });
    api.create({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'market-intelligence', namespace: NS, ownerReferences: [{ kind: 'MCPServer', name: 'market-intelligence', uid }] },
      spec: {},
    });
    try {
      const spec = { server: 'market-intelligence', database: { secretRef: { name: 'cryptomcp-database' } }, replicas: 3, toolCostOverrides: { get_prices: 6 } };
      await k('apply', '--server-side', '--force-conflicts', '-f', manifest('market-intelligence', spec));
      await eventually(() => ready('market-intelligence'), 20_000, 'Ready at the new generation');
      await settled(api);
      expect(api.get('HorizontalPodAutoscaler', NS, 'market-intelligence'), 'the hand-made HPA').toBeDefined();
      expect(api.get('Ingress', NS, 'market-intelligence'), 'the Ingress it owns but does not control').toBeDefined();
    } finally {
      api.remove('HorizontalPodAutoscaler', NS, 'market-intelligence');
      api.remove('Ingress', NS, 'market-intelligence');
    }
  });

  it('rotating a referenced secret rolls the pods (new config hash) on the next pass', async () => {
    const before = mcp('market-intelligence')!.status!.configHash;
    const secret = api.get('Secret', NS, 'cryptomcp-database')!;
    api.remove('Secret', NS, 'cryptomcp-database');
    api.create({ ...secret, metadata: { name: 'cryptomcp-database', namespace: NS }, data: { url: Buffer.from('postgres://db/two').toString('base64') } });
    // Secrets are not watched: a touch of the MCPServer (or the periodic resync) brings the pass.
    await k('annotate', 'mcpserver/market-intelligence', 'example.com/rotated=1');
    await eventually(() => mcp('market-intelligence')!.status!.configHash !== before, 20_000, 'new config hash');
  });

  it('Ready is False while a rollout is in progress and True once it completes', async () => {
    api.holdRollouts = true;
    const spec = { server: 'market-intelligence', database: { secretRef: { name: 'cryptomcp-database' } }, replicas: 2 };
    await k('apply', '--server-side', '--force-conflicts', '-f', manifest('market-intelligence', spec));
    await eventually(() => mcp('market-intelligence')!.status!.conditions!.find((c) => c.type === 'Ready')!.status === 'False', 20_000, 'Ready=False during rollout');
    expect(mcp('market-intelligence')!.status!.conditions!.find((c) => c.type === 'Ready')!.reason).toBe('Progressing');
    api.releaseRollouts();
    await eventually(() => ready('market-intelligence'), 20_000, 'Ready again');
  });

  it('an invalid spec stored under an older schema gets Accepted=False with the reason, and no retry storm', async () => {
    api.admission = false;
    api.create({ apiVersion: 'cryptomcp.dev/v1alpha1', kind: 'MCPServer', metadata: { name: 'broken', namespace: NS }, spec: { server: 'weather', database: { secretRef: { name: 'cryptomcp-database' } }, replicas: 1, autoscaling: { enabled: true } } });
    api.admission = true;
    await eventually(() => mcp('broken')?.status?.conditions?.find((c) => c.type === 'Accepted')?.status === 'False', 20_000, 'Accepted=False');
    const accepted = mcp('broken')!.status!.conditions!.find((c) => c.type === 'Accepted')!;
    expect(accepted.reason).toBe('InvalidSpec');
    expect(accepted.message).toMatch(/weather/);
    expect(children('broken')).toEqual([]);
    await settled(api);
    const errors = await op.metrics.reconcileTotal.get();
    expect(errors.values.find((v) => v.labels.kind === 'MCPServer' && v.labels.result === 'error')?.value ?? 0).toBe(0);
  });

  it('kubectl delete → the children are garbage-collected', async () => {
    await k('delete', 'mcpserver/market-intelligence', '--wait=true', '--timeout=30s');
    await eventually(() => children('market-intelligence').length === 0, 20_000, 'children collected');
    await k('delete', 'mcpserver/broken', '--wait=true', '--timeout=30s');
  });

  it('exports the reconcile, queue, watch and leader metrics', async () => {
    const text = await op.metrics.registry.metrics();
    expect(text).toMatch(/cryptomcp_operator_reconcile_total\{kind="MCPServer",result="success"\} [1-9]/);
    expect(text).toMatch(/cryptomcp_operator_reconcile_duration_seconds_bucket\{le="[^"]+",kind="MCPServer"\}/);
    expect(text).toMatch(/cryptomcp_operator_workqueue_depth\{kind="MCPServer"\} 0/);
    expect(text).toContain('cryptomcp_operator_watch_restarts_total');
    expect(text).toMatch(/cryptomcp_operator_is_leader 1/);
  });
});

describe('every example applies and becomes Ready', () => {
  it('the nine example MCPServers converge with exactly one of each child', async () => {
    await k('apply', '--server-side', '-f', 'crds/examples/');
    const names = fs.readdirSync('crds/examples').filter((f) => f.startsWith('mcpserver-')).map((f) => f.replace(/^mcpserver-|\.yaml$/g, ''));
    expect(names).toHaveLength(9);
    await k('wait', '--for=condition=Ready', 'mcpservers', '--all', '--timeout=60s');
    for (const n of names) expect(ready(n)).toBe(true);
    expect(api.list('Deployment', NS)).toHaveLength(9);
    expect(api.list('Service', NS)).toHaveLength(9);
    expect(api.list('HorizontalPodAutoscaler', NS)).toHaveLength(8); // portfolio-analytics has replicas: 3
  });
});
