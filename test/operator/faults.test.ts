// Fault injection: 409 storms, dropped and idle watch streams, 410 Gone and a restarting API
// server. After each, the operator must converge — the MCPServer Ready, exactly one of each
// child, a settled API server (no status loop) — and the watch-restart metric names the cause.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MCPServer } from '../../operator/api/types.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { StandInApiServer } from './support/apiserver.ts';
import { bookmarkRounds, eventually, settled, startOperator, type RunningOperator } from './support/harness.ts';

const NS = 'faults';
let api: StandInApiServer;
let db: TestDatabase;
let op: RunningOperator;
let n = 0;

function newServer(spec: Record<string, unknown> = {}): string {
  n += 1;
  const name = `srv-${n}`;
  api.create({ apiVersion: 'cryptomcp.dev/v1alpha1', kind: 'MCPServer', metadata: { name, namespace: NS }, spec: { server: 'kol-analytics', database: { secretRef: { name: 'db' } }, ...spec } });
  return name;
}

const mcp = (name: string) => api.get('MCPServer', NS, name) as unknown as MCPServer | undefined;
function ready(name: string): boolean {
  const m = mcp(name);
  return m?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' && m.status.observedGeneration === m.metadata.generation;
}

async function expectConverged(name: string): Promise<void> {
  await eventually(() => ready(name), 30_000, `${name} Ready`);
  await settled(api);
  const fixed = (mcp(name)!.spec as { replicas?: number }).replicas !== undefined;
  for (const kind of ['Deployment', 'Service', 'HorizontalPodAutoscaler', 'PodDisruptionBudget']) {
    const want = kind === 'HorizontalPodAutoscaler' && fixed ? 0 : 1;
    expect(api.list(kind, NS).filter((o) => o.metadata.name === name), `${kind}/${name}`).toHaveLength(want);
  }
  expect(ready(name)).toBe(true);
}

async function restarts(reason: string): Promise<number> {
  const m = await op.metrics.watchRestarts.get();
  return m.values.filter((v) => v.labels.reason === reason).reduce((s, v) => s + v.value, 0);
}

beforeAll(async () => {
  api = new StandInApiServer({ bookmarkIntervalMs: 100 });
  await api.start();
  api.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: NS }, data: { url: Buffer.from('postgres://x').toString('base64') } });
  db = await createTestDatabase();
  // A short idle watchdog: bookmarks every 100 ms keep healthy streams well inside it.
  op = startOperator(api, db, { watchIdleMs: 1500, resyncMs: 60_000 });
  await op.controller.synced();
});

afterEach(() => {
  api.idleWatches = false;
  api.holdRollouts = false;
  api.conflicts(0);
});

afterAll(async () => {
  await op?.stop();
  await api?.stop();
  await db?.drop();
});

describe('the operator converges after', () => {
  it('a 409 storm on its writes (applies and status patches retry with backoff)', async () => {
    // Six conflicts in a row on one key: retries after 50, 100, 200, ... ms (doubling, jittered).
    api.conflicts(6);
    const name = newServer();
    await expectConverged(name);
    const errors = (await op.metrics.reconcileTotal.get()).values.find((v) => v.labels.result === 'error')?.value ?? 0;
    expect(errors).toBeGreaterThan(0);
  });

  it('dropped watch streams (it watches again from the last version and misses nothing)', async () => {
    const before = await restarts('error') + (await restarts('closed'));
    api.dropWatches();
    const name = newServer();
    await expectConverged(name);
    expect((await restarts('error')) + (await restarts('closed'))).toBeGreaterThan(before);
  });

  it('a watch that goes silent (the idle watchdog restarts it)', async () => {
    const before = await restarts('idle');
    api.idleWatches = true;
    const name = newServer();
    await eventually(async () => (await restarts('idle')) > before, 20_000, 'idle restart');
    api.idleWatches = false;
    // The restarted watch replays what the silent one swallowed.
    await expectConverged(name);
  });

  it('410 Gone after compaction (it relists from a fresh list and converges)', async () => {
    const keep = newServer();
    const gone = newServer();
    await expectConverged(keep);
    await expectConverged(gone);
    const before = await restarts('expired');
    api.idleWatches = true; // nothing is delivered while history is thrown away
    api.remove('MCPServer', NS, gone);
    const changed = newServer();
    api.compact();
    api.dropWatches();
    api.idleWatches = false;
    await eventually(async () => (await restarts('expired')) > before, 20_000, 'expired restart');
    await expectConverged(changed);
    expect(api.list('Deployment', NS).some((d) => d.metadata.name === gone)).toBe(false);
  });

  it('an API server restart (connections refused for a moment, storage kept)', async () => {
    const name = newServer();
    await expectConverged(name);
    await api.restart();
    const after = newServer({ replicas: 2 });
    await expectConverged(after);
    expect(ready(name)).toBe(true);
  });

  it('all of it at once, with no duplicate children and no status loop', async () => {
    const names = [newServer(), newServer({ replicas: 1 }), newServer()];
    api.conflicts(5);
    api.dropWatches();
    await api.restart();
    api.compact();
    for (const name of names) await expectConverged(name);
    const statusWrites = api.writes.filter((w) => w.endsWith('/status')).length;
    await bookmarkRounds(api); // watches stay live meanwhile; nothing may write status again
    expect(api.writes.filter((w) => w.endsWith('/status')).length).toBe(statusWrites);
  });
});
