// Drift is repaired in seconds, not at the resync (set to ten minutes here, so nothing below can
// pass by waiting for it): the operator watches every kind an MCPServer owns and the Secrets it
// references, mapping each event back to the owning MCPServer, and wakes every PlanPolicy naming
// the same plan when one of them changes.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MCPServer, PlanPolicy } from '../../operator/api/types.ts';
import { CONFIG_HASH_ANNOTATION } from '../../operator/builders/mcpserver.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { StandInApiServer } from './support/apiserver.ts';
import { eventually, settled, startOperator, type RunningOperator } from './support/harness.ts';
import { kubectl, writeKubeconfig } from './support/kubectl.ts';

const NS = 'drift';
const REPAIR_MS = 5000;
let api: StandInApiServer;
let db: TestDatabase;
let op: RunningOperator;
let k: ReturnType<typeof kubectl>;
let kubeDir: string;

const mcp = (name: string) => api.get('MCPServer', NS, name) as unknown as MCPServer | undefined;
const policy = (name: string) => api.get('PlanPolicy', undefined, name) as unknown as PlanPolicy | undefined;
const podHash = () => (api.get('Deployment', NS, 'web3')?.spec as { template: { metadata: { annotations: Record<string, string> } } }).template.metadata.annotations[CONFIG_HASH_ANNOTATION];
const b64 = (s: string) => Buffer.from(s).toString('base64');

beforeAll(async () => {
  api = new StandInApiServer({ bookmarkIntervalMs: 200 });
  await api.start();
  db = await createTestDatabase();
  const kc = writeKubeconfig(api.url, NS);
  kubeDir = kc.dir;
  k = kubectl(kc.file);
  api.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: NS }, data: { url: b64('postgres://db/one') } });
  api.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'rpc', namespace: NS }, data: { ethereum: b64('https://rpc.one') } });
  api.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'unrelated', namespace: NS }, data: { x: b64('1') } });
  op = startOperator(api, db, { resyncMs: 600_000 });
  api.create({
    apiVersion: 'cryptomcp.dev/v1alpha1',
    kind: 'MCPServer',
    metadata: { name: 'web3', namespace: NS },
    spec: { server: 'blockchain-explorer', database: { secretRef: { name: 'db' } }, ingress: { enabled: true, host: 'mcp.example.com' }, providers: { evm: { ethereum: { secretRef: { name: 'rpc', key: 'ethereum' } } } } },
  });
  await eventually(() => mcp('web3')?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'), 20_000, 'web3 Ready');
  await settled(api);
});

afterAll(async () => {
  await op?.stop();
  await api?.stop();
  await db?.drop();
  if (kubeDir) fs.rmSync(kubeDir, { recursive: true, force: true });
});

describe('owned children', () => {
  for (const kind of ['Service', 'Ingress', 'HorizontalPodAutoscaler', 'PodDisruptionBudget', 'Deployment']) {
    it(`a deleted ${kind} is recreated within ${REPAIR_MS / 1000} s`, async () => {
      const before = api.get(kind, NS, 'web3')!;
      api.remove(kind, NS, 'web3');
      expect(api.get(kind, NS, 'web3')).toBeUndefined();
      const again = await eventually(() => api.get(kind, NS, 'web3'), REPAIR_MS, `${kind} recreated`);
      expect(again.metadata.uid).not.toBe(before.metadata.uid);
      expect(again.metadata.ownerReferences).toEqual([expect.objectContaining({ uid: mcp('web3')!.metadata.uid, controller: true })]);
    });
  }

  it(`an edited child is put back within ${REPAIR_MS / 1000} s`, async () => {
    await settled(api);
    await k('patch', 'service/web3', '--type=merge', '-p', '{"spec":{"type":"NodePort"}}');
    await eventually(() => (api.get('Service', NS, 'web3')!.spec as { type: string }).type === 'ClusterIP', REPAIR_MS, 'Service type restored');
  });
});

describe('referenced Secrets', () => {
  it(`a rotated database Secret rolls the pods (new config hash on the pod template) within ${REPAIR_MS / 1000} s`, async () => {
    await settled(api);
    const before = podHash();
    await k('patch', 'secret/db', '--type=merge', '-p', JSON.stringify({ data: { url: b64('postgres://db/two') } }));
    await eventually(() => podHash() !== before, REPAIR_MS, 'config hash changed');
  });

  it('a rotated RPC Secret rolls them too; an unrelated Secret changes nothing', async () => {
    // The last rotation's rollout has finished and its status is written before counting writes.
    await eventually(() => mcp('web3')?.status?.configHash === podHash() && mcp('web3')?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'), REPAIR_MS, 'rollout of the last rotation done');
    await settled(api);
    const before = podHash();
    const writes = api.writes.length;
    await k('patch', 'secret/unrelated', '--type=merge', '-p', JSON.stringify({ data: { x: b64('2') } }));
    await settled(api);
    expect(api.writes.slice(writes).filter((w) => !w.includes('Secret/'))).toEqual([]);
    await k('patch', 'secret/rpc', '--type=merge', '-p', JSON.stringify({ data: { ethereum: b64('https://rpc.two') } }));
    await eventually(() => podHash() !== before, REPAIR_MS, 'config hash changed');
  });
});

describe('PlanPolicies naming the same plan', () => {
  it(`when the owner of a plan is deleted, the policy in PlanConflict takes it over within ${REPAIR_MS / 1000} s`, async () => {
    const spec = (credits: number) => ({ plan: 'team', credits, renewal: 'Monthly', rateLimit: { requestsPerMinute: 60, burst: 10 } });
    api.create({ apiVersion: 'cryptomcp.dev/v1alpha1', kind: 'PlanPolicy', metadata: { name: 'team-a' }, spec: spec(100) });
    await eventually(() => policy('team-a')?.status?.conditions?.some((c) => c.type === 'Synced' && c.status === 'True'), 10_000, 'team-a Synced');
    api.create({ apiVersion: 'cryptomcp.dev/v1alpha1', kind: 'PlanPolicy', metadata: { name: 'team-b' }, spec: spec(200) });
    await eventually(() => policy('team-b')?.status?.conditions?.some((c) => c.reason === 'PlanConflict'), 10_000, 'team-b PlanConflict');
    await k('delete', 'planpolicy/team-a', '--wait=false');
    await eventually(() => policy('team-b')?.status?.conditions?.some((c) => c.type === 'Synced' && c.status === 'True'), REPAIR_MS, 'team-b Synced');
    expect((await db.query('SELECT credits FROM plans WHERE name = $1', ['team'])).rows[0]).toEqual({ credits: 200 });
  });
});
