// Replicas through every door an SRE uses, against the stand-in with kubectl 1.35:
//   - `kubectl scale mcps/<name> --replicas=N` (the CRD's scale subresource) sets spec.replicas
//     and the Deployment follows; refused while autoscaling owns the count;
//   - switching from a fixed count to autoscaling never lowers the Deployment's replicas (no dip
//     to the Deployment default of 1 before the HPA raises it);
//   - a name no Service can carry is refused by the CRD, and one stored before that rule gets
//     Accepted=False with no children rather than a half-built server.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MCPServer } from '../../operator/api/types.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { StandInApiServer } from './support/apiserver.ts';
import { eventually, settled, startOperator, type RunningOperator } from './support/harness.ts';
import { kubectl, writeKubeconfig } from './support/kubectl.ts';

const NS = 'scale';
let api: StandInApiServer;
let db: TestDatabase;
let op: RunningOperator;
let k: ReturnType<typeof kubectl>;
let kubeDir: string;

const mcp = (name: string) => api.get('MCPServer', NS, name) as unknown as MCPServer | undefined;
const deploymentReplicas = (name: string) => (api.get('Deployment', NS, name)?.spec as { replicas?: number } | undefined)?.replicas;
const ready = (name: string) => mcp(name)?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') && mcp(name)?.status?.observedGeneration === mcp(name)?.metadata.generation;

function create(name: string, spec: Record<string, unknown>): void {
  api.create({ apiVersion: 'cryptomcp.dev/v1alpha1', kind: 'MCPServer', metadata: { name, namespace: NS }, spec: { server: 'kol-analytics', database: { secretRef: { name: 'db' } }, ...spec } });
}

beforeAll(async () => {
  api = new StandInApiServer({ bookmarkIntervalMs: 200 });
  await api.start();
  db = await createTestDatabase();
  const kc = writeKubeconfig(api.url, NS);
  kubeDir = kc.dir;
  k = kubectl(kc.file);
  api.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: NS }, data: { url: Buffer.from('postgres://x').toString('base64') } });
  op = startOperator(api, db);
});

afterAll(async () => {
  await op?.stop();
  await api?.stop();
  await db?.drop();
  if (kubeDir) fs.rmSync(kubeDir, { recursive: true, force: true });
});

describe('kubectl scale', () => {
  it('kubectl scale mcps/<name> --replicas=4 sets spec.replicas and the Deployment follows; status carries the selector', async () => {
    create('fixed', { replicas: 2 });
    await eventually(() => ready('fixed'), 15_000, 'fixed Ready');
    await k('scale', 'mcps/fixed', '--replicas=4');
    expect(mcp('fixed')!.spec.replicas).toBe(4);
    await eventually(() => deploymentReplicas('fixed') === 4 && ready('fixed'), 15_000, 'Deployment at 4');
    expect(mcp('fixed')!.status).toMatchObject({ replicas: 4, selector: 'app.kubernetes.io/name=cryptomcp,app.kubernetes.io/instance=fixed' });
    const { stdout } = await k('get', 'mcps/fixed', '--subresource=scale', '-o', 'jsonpath={.spec.replicas}/{.status.replicas}');
    expect(stdout).toBe('4/4');
  });

  it('is refused while autoscaling owns the count, with the CRD rule as the reason', async () => {
    create('auto', { autoscaling: { enabled: true, minReplicas: 2, maxReplicas: 6 } });
    await eventually(() => ready('auto'), 15_000, 'auto Ready');
    await expect(k('scale', 'mcps/auto', '--replicas=3')).rejects.toThrow(/either spec.replicas .* or spec.autoscaling/);
  });
});

describe('handing replicas to the HPA', () => {
  it('from 5 fixed replicas to autoscaling 2..10: the Deployment never drops below 5', async () => {
    create('handoff', { replicas: 5 });
    await eventually(() => ready('handoff') && deploymentReplicas('handoff') === 5, 15_000, 'handoff at 5');
    await settled(api);
    const before = api.versions('Deployment', NS, 'handoff').length;
    await k('patch', 'mcps/handoff', '--type=merge', '-p', JSON.stringify({ spec: { replicas: null, autoscaling: { enabled: true, minReplicas: 2, maxReplicas: 10 } } }));
    await eventually(() => api.get('HorizontalPodAutoscaler', NS, 'handoff'), 15_000, 'HPA created');
    await eventually(() => ready('handoff'), 15_000, 'Ready under the HPA');
    await settled(api);
    const seen = api.versions('Deployment', NS, 'handoff').slice(before).map((d) => (d.spec as { replicas?: number }).replicas);
    expect(seen.length).toBeGreaterThan(0);
    expect(Math.min(...seen.map((r) => r ?? 0))).toBeGreaterThanOrEqual(5);
    expect(deploymentReplicas('handoff')).toBe(5);
    // The operator no longer applies the count: the marker of a fixed count is gone.
    expect(api.get('Deployment', NS, 'handoff')!.metadata.annotations?.['cryptomcp.dev/replicas-from-spec']).toBeUndefined();
  });

  it('from 1 fixed replica to autoscaling 3..10: raised to the HPA minimum, never lowered', async () => {
    create('small', { replicas: 1 });
    await eventually(() => ready('small') && deploymentReplicas('small') === 1, 15_000, 'small at 1');
    await settled(api);
    const before = api.versions('Deployment', NS, 'small').length;
    await k('patch', 'mcps/small', '--type=merge', '-p', JSON.stringify({ spec: { replicas: null, autoscaling: { enabled: true, minReplicas: 3, maxReplicas: 10 } } }));
    await eventually(() => deploymentReplicas('small') === 3 && ready('small'), 15_000, 'small at 3');
    const seen = api.versions('Deployment', NS, 'small').slice(before).map((d) => (d.spec as { replicas?: number }).replicas ?? 0);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!, `version ${i}: ${seen.join(' → ')}`).toBeGreaterThanOrEqual(seen[i - 1]!);
  });
});

describe('names', () => {
  it('kubectl apply of an MCPServer whose name a Service could not have is refused by the CRD', async () => {
    const name = `7${'a'.repeat(71)}`;
    const file = `${kubeDir}/bad-name.json`;
    fs.writeFileSync(file, JSON.stringify({ apiVersion: 'cryptomcp.dev/v1alpha1', kind: 'MCPServer', metadata: { name, namespace: NS }, spec: { server: 'kol-analytics', database: { secretRef: { name: 'db' } } } }));
    await expect(k('apply', '-f', file)).rejects.toThrow(/metadata\/name/);
    expect(mcp(name)).toBeUndefined();
  });

  it('one stored before that rule gets Accepted=False/InvalidSpec naming the problem, and no children', async () => {
    const name = `7${'a'.repeat(71)}`;
    api.admission = false;
    try {
      create(name, {});
    } finally {
      api.admission = true;
    }
    await eventually(() => mcp(name)?.status?.conditions?.some((c) => c.type === 'Accepted' && c.status === 'False'), 10_000, 'Accepted=False');
    expect(mcp(name)!.status!.conditions!.find((c) => c.type === 'Accepted')).toMatchObject({ reason: 'InvalidSpec', message: expect.stringMatching(/DNS-1035 label/) });
    await settled(api);
    for (const kind of ['Deployment', 'Service', 'HorizontalPodAutoscaler', 'PodDisruptionBudget']) expect(api.get(kind, NS, name), kind).toBeUndefined();
  });
});
