// Failures are visible where an SRE looks: Events on the object (`kubectl describe`), the
// condition's reason with the API server's own message, and the error counter by reason.
//   - a child refused by the API server (here an admission webhook) → Ready=False/ApplyFailed
//     with the webhook's message, a Warning Event ApplyFailed, errors{reason="ApplyFailed"};
//     once allowed, Ready=True again and a Normal Event says so;
//   - a PlanPolicy whose database is down → a Warning Event DatabaseError whose count grows with
//     each retry (one Event, not one per retry); PlanConflict → a Warning Event.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MCPServer, PlanPolicy } from '../../operator/api/types.ts';
import { createDatabase, type Database } from '../../server/db/pool.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { StandInApiServer } from './support/apiserver.ts';
import { eventually, startOperator, type RunningOperator } from './support/harness.ts';

interface KubeEvent {
  metadata: { name: string; namespace: string };
  involvedObject: { kind: string; name: string; uid: string };
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  count: number;
  reportingComponent: string;
}

const NS = 'ev';

function eventsFor(api: StandInApiServer, namespace: string, uid: string | undefined): KubeEvent[] {
  return (api.list('Event', namespace) as unknown as KubeEvent[]).filter((e) => e.involvedObject.uid === uid);
}

describe('MCPServer failures and transitions', () => {
  let api: StandInApiServer;
  let db: TestDatabase;
  let op: RunningOperator;
  const mcp = () => api.get('MCPServer', NS, 'kol') as unknown as MCPServer | undefined;
  const ready = () => mcp()?.status?.conditions?.find((c) => c.type === 'Ready');

  beforeAll(async () => {
    api = new StandInApiServer({ bookmarkIntervalMs: 200 });
    await api.start();
    db = await createTestDatabase();
    api.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: NS }, data: { url: Buffer.from('postgres://x').toString('base64') } });
    op = startOperator(api, db);
  });

  afterAll(async () => {
    await op?.stop();
    await api?.stop();
    await db?.drop();
  });

  it('an Ingress the API server refuses: Ready=False/ApplyFailed with its message, a Warning Event, errors counted by reason', async () => {
    api.deny('Ingress', 'hosts under example.com need a TLS secret');
    api.create({ apiVersion: 'cryptomcp.dev/v1alpha1', kind: 'MCPServer', metadata: { name: 'kol', namespace: NS }, spec: { server: 'kol-analytics', database: { secretRef: { name: 'db' } }, ingress: { enabled: true, host: 'kol.example.com' } } });
    await eventually(() => ready()?.reason === 'ApplyFailed', 10_000, 'Ready=False/ApplyFailed');
    expect(ready()).toMatchObject({ status: 'False', reason: 'ApplyFailed' });
    expect(ready()!.message).toContain('Ingress kol: admission webhook "policy.example.com" denied the request: hosts under example.com need a TLS secret');
    expect(mcp()!.status!.conditions!.find((c) => c.type === 'Accepted')).toMatchObject({ status: 'True' });

    const warning = await eventually(() => eventsFor(api, NS, mcp()!.metadata.uid).find((e) => e.reason === 'ApplyFailed'), 10_000, 'ApplyFailed Event');
    expect(warning).toMatchObject({ type: 'Warning', involvedObject: { kind: 'MCPServer', name: 'kol' }, reportingComponent: 'cryptomcp-operator' });
    expect(warning.message).toContain('denied the request: hosts under example.com need a TLS secret');
    // Retried with backoff, each retry counted on the same Event.
    await eventually(() => (eventsFor(api, NS, mcp()!.metadata.uid).find((e) => e.reason === 'ApplyFailed')?.count ?? 0) >= 2, 10_000, 'Event count grows');
    expect(eventsFor(api, NS, mcp()!.metadata.uid).filter((e) => e.reason === 'ApplyFailed')).toHaveLength(1);
    const errors = async () => (await op.metrics.reconcileErrors.get()).values.find((v) => v.labels.kind === 'MCPServer' && v.labels.reason === 'ApplyFailed')?.value ?? 0;
    await eventually(async () => (await errors()) >= 2, 10_000, 'errors{reason="ApplyFailed"} >= 2');
  });

  it('once the API server accepts it, Ready=True and a Normal Event records the transition', async () => {
    api.allow('Ingress');
    await eventually(() => ready()?.status === 'True', 15_000, 'Ready=True');
    const normal = await eventually(() => eventsFor(api, NS, mcp()!.metadata.uid).find((e) => e.type === 'Normal' && e.reason === 'RolledOut'), 10_000, 'RolledOut Event');
    expect(normal.message).toMatch(/^Ready=True: /);
  });
});

describe('PlanPolicy failures', () => {
  let api: StandInApiServer;
  let downDb: Database;
  let op: RunningOperator;
  const policy = (name: string) => api.get('PlanPolicy', undefined, name) as unknown as PlanPolicy | undefined;

  beforeAll(async () => {
    api = new StandInApiServer({ bookmarkIntervalMs: 200 });
    await api.start();
    // Nothing listens on port 1: every query fails to connect, as with the database down.
    downDb = createDatabase({ url: 'postgres://cryptomcp:x@127.0.0.1:1/cryptomcp', max: 2 });
    op = startOperator(api, downDb, { retry: { baseDelayMs: 50, maxDelayMs: 400 } });
  });

  afterAll(async () => {
    await op?.stop();
    await api?.stop();
    await downDb?.close();
  });

  it('database down: one Warning Event DatabaseError (in the default namespace) whose count grows with each retry', async () => {
    api.create({ apiVersion: 'cryptomcp.dev/v1alpha1', kind: 'PlanPolicy', metadata: { name: 'team' }, spec: { plan: 'team', credits: 7, renewal: 'Monthly', rateLimit: { requestsPerMinute: 9, burst: 3 } } });
    await eventually(() => (eventsFor(api, 'default', policy('team')?.metadata.uid).find((e) => e.reason === 'DatabaseError')?.count ?? 0) >= 3, 15_000, 'DatabaseError Event counted 3 times');
    const events = eventsFor(api, 'default', policy('team')!.metadata.uid).filter((e) => e.reason === 'DatabaseError');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'Warning', involvedObject: { kind: 'PlanPolicy', name: 'team' } });
    expect(events[0]!.message).toMatch(/^plans table not written: /);
    const errors = (await op.metrics.reconcileErrors.get()).values.find((v) => v.labels.kind === 'PlanPolicy' && v.labels.reason === 'DatabaseError');
    expect(errors?.value ?? 0).toBeGreaterThanOrEqual(3);
  });

  it('a second policy for the same plan: a Warning Event PlanConflict naming the owner', async () => {
    api.create({ apiVersion: 'cryptomcp.dev/v1alpha1', kind: 'PlanPolicy', metadata: { name: 'team-copy' }, spec: { plan: 'team', credits: 9, renewal: 'Monthly', rateLimit: { requestsPerMinute: 9, burst: 3 } } });
    const ev = await eventually(() => eventsFor(api, 'default', policy('team-copy')?.metadata.uid).find((e) => e.reason === 'PlanConflict'), 10_000, 'PlanConflict Event');
    expect(ev).toMatchObject({ type: 'Warning', message: 'plan "team" is already defined by PlanPolicy team' });
  });
});
