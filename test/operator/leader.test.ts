// Leader election on a coordination.k8s.io Lease: with two operator replicas only one reconciles
// (is_leader 1, the other 0); a leader that shuts down hands the lease over at once; a holder
// that stops renewing loses the lease after its duration; a leader whose renewal hangs steps
// down before the standby can take over, so there is never a moment with two leaders; and the
// standby's /readyz is OK.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { StandInApiServer } from './support/apiserver.ts';
import { eventually, startOperator, type RunningOperator } from './support/harness.ts';

const NS = 'ops';
let api: StandInApiServer;
let db: TestDatabase;
const running: RunningOperator[] = [];

const lease = () => api.get('Lease', NS, 'cryptomcp-operator') as unknown as { spec: { holderIdentity: string | null; leaseTransitions: number } } | undefined;
const leaderGauge = async (op: RunningOperator) => (await op.metrics.isLeader.get()).values[0]?.value ?? 0;

function replica(identity: string, extra: { requestTimeoutMs?: number } = {}): RunningOperator {
  const op = startOperator(api, db, { leader: { name: 'cryptomcp-operator', namespace: NS, identity, leaseDurationMs: 1500, retryPeriodMs: 100, renewDeadlineMs: 1000, ...extra } });
  running.push(op);
  return op;
}

beforeAll(async () => {
  api = new StandInApiServer();
  await api.start();
  db = await createTestDatabase();
});

afterAll(async () => {
  for (const op of running) await op.stop();
  await api?.stop();
  await db?.drop();
});

describe('leader election', () => {
  it('two replicas: exactly one leads and reconciles; the standby reconciles nothing', async () => {
    const a = replica('op-a');
    await eventually(() => lease()?.spec.holderIdentity === 'op-a', 10_000, 'op-a holds the lease');
    // The stand-in stores the lease before op-a has read the answer; op-a starts leading (and sets
    // its gauge) only then, so wait for that too rather than count on the sleep below.
    await eventually(() => a.controller.isLeading, 10_000, 'op-a leads');
    const b = replica('op-b');
    await new Promise((r) => setTimeout(r, 600)); // several retry periods for op-b to try
    expect(lease()!.spec.holderIdentity).toBe('op-a');
    expect(a.controller.isLeading).toBe(true);
    expect(b.controller.isLeading).toBe(false);
    expect(await leaderGauge(a)).toBe(1);
    expect(await leaderGauge(b)).toBe(0);
    expect(b.controller.readiness().ok).toBe(true); // a standby is ready: it serves probes and waits
    api.create({ apiVersion: 'cryptomcp.dev/v1alpha1', kind: 'PlanPolicy', metadata: { name: 'team' }, spec: { plan: 'team', credits: 10, renewal: 'Monthly', rateLimit: { requestsPerMinute: 10, burst: 1 } } });
    await eventually(async () => (await db.query('SELECT 1 FROM plans WHERE name = $1', ['team'])).rowCount === 1, 10_000, 'leader synced the plan');
    const bReconciles = (await b.metrics.reconcileTotal.get()).values.reduce((s, v) => s + v.value, 0);
    expect(bReconciles).toBe(0);
  });

  it('a leader that shuts down releases the lease and the standby takes over at once', async () => {
    const [a, b] = running as [RunningOperator, RunningOperator];
    const transitions = lease()!.spec.leaseTransitions;
    await a.stop();
    await eventually(() => b.controller.isLeading, 5_000, 'op-b leads');
    expect(lease()!.spec).toMatchObject({ holderIdentity: 'op-b', leaseTransitions: transitions + 1 });
    expect(await leaderGauge(a)).toBe(0);
    expect(await leaderGauge(b)).toBe(1);
  });

  it('a holder that stops renewing (crashed) loses the lease after leaseDuration, measured on the candidate\'s clock', async () => {
    const [, b] = running as [RunningOperator, RunningOperator];
    await b.stop();
    // A crashed holder: the lease names it and was renewed just now, then never again.
    const cur = api.get('Lease', NS, 'cryptomcp-operator')!;
    api.remove('Lease', NS, 'cryptomcp-operator');
    api.create({ ...cur, metadata: { name: 'cryptomcp-operator', namespace: NS }, spec: { holderIdentity: 'crashed', leaseDurationSeconds: 2, renewTime: new Date().toISOString(), leaseTransitions: 5 } } as never);
    const started = Date.now();
    const c = replica('op-c');
    await eventually(() => c.controller.isLeading, 10_000, 'op-c leads');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    expect(lease()!.spec).toMatchObject({ holderIdentity: 'op-c', leaseTransitions: 6 });
  });

  it('a leader whose renewal hangs steps down within its renew deadline; the standby takes over; never two leaders at once', async () => {
    for (const op of running.splice(0)) await op.stop();
    if (lease()) api.remove('Lease', NS, 'cryptomcp-operator');
    const a = replica('hang-a');
    await eventually(() => a.controller.isLeading, 10_000, 'hang-a leads');
    const b = replica('hang-b');
    let overlap = 0;
    const sampler = setInterval(() => {
      if (a.controller.isLeading && b.controller.isLeading) overlap += 1;
    }, 5);
    try {
      const hungAt = Date.now();
      api.hangLeaseWritesBy('hang-a');
      await eventually(() => !a.controller.isLeading, 5_000, 'hang-a steps down');
      // Renew deadline 1 s after the last renewal (which was at most one retry period before).
      expect(Date.now() - hungAt).toBeLessThan(1500);
      await eventually(() => b.controller.isLeading, 10_000, 'hang-b leads');
      expect(lease()!.spec.holderIdentity).toBe('hang-b');
      expect(await leaderGauge(a)).toBe(0);
      expect(await leaderGauge(b)).toBe(1);
      // hang-a keeps campaigning (its calls time out instead of hanging) and stays a standby.
      await new Promise((r) => setTimeout(r, 500)); // a few retry periods in which nothing may change
      expect(a.controller.isLeading).toBe(false);
    } finally {
      clearInterval(sampler);
      api.releaseHungLeases();
    }
    expect(overlap).toBe(0);
  });
});
