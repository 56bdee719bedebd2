// Two installations in one cluster must not fight (issue 34: both operators watched every
// namespace and the production Deployment's image flipped between the two releases' tags 37
// times in 10 s). Here two releases, blue (namespace blue) and green (namespace green, told to
// watch blue too), each operator under the RBAC its own chart renders, with different images.
// Blue manages blue's MCPServer and PlanPolicy first; green, meeting them, refuses: an Event and
// Owned=False, never a write to the children — the Deployment's image never flips, and the two
// never rewrite each other's status (the API server settles).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MCPServer, PlanPolicy } from '../../operator/api/types.ts';
import { OPERATOR_ANNOTATION } from '../../operator/builders/ownership.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { StandInApiServer } from './support/apiserver.ts';
import { renderChart } from './support/chart.ts';
import { eventually, settled, startOperator, type RunningOperator } from './support/harness.ts';

const BLUE_IMAGE = 'registry.example.com/cryptomcp:blue';
const GREEN_IMAGE = 'registry.example.com/cryptomcp:green';
let api: StandInApiServer;
let db: TestDatabase;
const running: RunningOperator[] = [];

const mcp = () => api.get('MCPServer', 'blue', 'kol') as unknown as MCPServer;
const condition = (o: { status?: { conditions?: { type: string; status: string; reason: string; message: string }[] } } | undefined, type: string) => o?.status?.conditions?.find((c) => c.type === type);
const images = () => api.versions('Deployment', 'blue', 'kol').map((d) => (d.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0]!.image);

beforeAll(async () => {
  api = new StandInApiServer({ bookmarkIntervalMs: 200 });
  await api.start();
  api.enforceRbac(await renderChart('blue', 'blue'));
  api.enforceRbac(await renderChart('green', 'green', '--set', 'operator.watchNamespaces={blue,green}'));
  db = await createTestDatabase();
  api.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'blue' }, data: { url: Buffer.from('postgres://x').toString('base64') } });
  api.create({ apiVersion: 'cryptomcp.dev/v1alpha1', kind: 'MCPServer', metadata: { name: 'kol', namespace: 'blue' }, spec: { server: 'kol-analytics', replicas: 1, database: { secretRef: { name: 'db' } } } });
  api.create({ apiVersion: 'cryptomcp.dev/v1alpha1', kind: 'PlanPolicy', metadata: { name: 'team' }, spec: { plan: 'team', credits: 7, renewal: 'Monthly', rateLimit: { requestsPerMinute: 9, burst: 3 } } } as never);
  running.push(startOperator(api, db, { image: BLUE_IMAGE, namespaces: ['blue'], eventNamespace: 'blue', instance: 'blue/blue-cryptomcp-operator' }, api.tokenFor('blue:blue-cryptomcp-operator')));
  await eventually(() => condition(mcp(), 'Ready')?.status === 'True', 20_000, 'blue reconciled kol');
  await eventually(() => condition(api.get('PlanPolicy', undefined, 'team') as never, 'Synced')?.status === 'True', 20_000, 'blue synced team');
  running.push(startOperator(api, db, { image: GREEN_IMAGE, namespaces: ['blue', 'green'], eventNamespace: 'green', instance: 'green/green-cryptomcp-operator' }, api.tokenFor('green:green-cryptomcp-operator')));
  await eventually(() => condition(mcp(), 'Owned')?.status === 'False', 20_000, 'green refused kol');
  await settled(api, 1000);
});

afterAll(async () => {
  for (const op of running) await op.stop();
  await api?.stop();
  await db?.drop();
});

describe('a second installation watching the same namespace', () => {
  it("never flips the Deployment: every version of it ran blue's image", () => {
    expect(images().length).toBeGreaterThan(0);
    expect(new Set(images())).toEqual(new Set([BLUE_IMAGE]));
    expect(api.get('Deployment', 'blue', 'kol')!.metadata.annotations?.[OPERATOR_ANNOTATION]).toBe('blue/blue-cryptomcp-operator');
  });

  it('says why on the MCPServer: Owned=False / ManagedByAnotherOperator, a Warning Event; Ready stays the manager’s', () => {
    expect(condition(mcp(), 'Owned')).toMatchObject({ status: 'False', reason: 'ManagedByAnotherOperator' });
    expect(condition(mcp(), 'Owned')!.message).toMatch(/Deployment kol is held by operator blue\/blue-cryptomcp-operator.*operator green\/green-cryptomcp-operator leaves it alone/);
    expect(condition(mcp(), 'Ready')).toMatchObject({ status: 'True' });
    const events = api.list('Event', 'blue').filter((e) => e.reason === 'ManagedByAnotherOperator');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'Warning', involvedObject: { kind: 'MCPServer', name: 'kol' }, reportingComponent: 'cryptomcp-operator' });
  });

  it("leaves blue's PlanPolicy alone (its finalizer, its database row), with Owned=False and an Event", () => {
    const pp = api.get('PlanPolicy', undefined, 'team') as unknown as PlanPolicy;
    expect(pp.metadata.annotations?.[OPERATOR_ANNOTATION]).toBe('blue/blue-cryptomcp-operator');
    expect(condition(pp as never, 'Owned')).toMatchObject({ status: 'False', reason: 'ManagedByAnotherOperator' });
    expect(condition(pp as never, 'Synced')).toMatchObject({ status: 'True' });
    expect(api.list('Event', 'green').some((e) => e.reason === 'ManagedByAnotherOperator' && (e as { involvedObject?: { kind?: string } }).involvedObject?.kind === 'PlanPolicy')).toBe(true);
  });

  it('the two settle: a window with no write but Leases, each under its own RBAC with nothing refused', async () => {
    const before = api.writes.length;
    await new Promise((r) => setTimeout(r, 1500)); // a measurement window: any write in it is a fight
    expect(api.writes.slice(before).filter((w) => !w.includes(' Lease/'))).toEqual([]);
    expect(new Set(images())).toEqual(new Set([BLUE_IMAGE]));
    expect(api.forbidden).toEqual([]);
  });
});
