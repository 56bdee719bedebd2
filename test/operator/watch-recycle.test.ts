// cryptomcp_operator_watch_restarts_total counts abnormal restarts only (issue 34: it counted
// the client's normal watch recycling, so a healthy operator's metric ticked for ever). With the
// API server's realistic bookmark interval (about a minute), client-node's Watch ends every
// stream that is quiet for 30 s, and the API server ends watches at their timeout: both are
// normal, continue at once from the last version, and are not counted. The abnormal ones (an
// error, a 410, the idle watchdog) are counted: test/operator/faults.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { DEFAULT_BOOKMARK_INTERVAL_MS, StandInApiServer } from './support/apiserver.ts';
import { eventually, settled, startOperator, type RunningOperator } from './support/harness.ts';

const NS = 'quiet';
let api: StandInApiServer;
let db: TestDatabase;
let op: RunningOperator;

const restarts = async () => (await op.metrics.watchRestarts.get()).values.reduce((s, v) => s + v.value, 0);
const watchRequests = () => api.requests.filter((r) => r === `GET /apis/cryptomcp.dev/v1alpha1/namespaces/${NS}/mcpservers`).length;
const deployment = (name: string) => api.get('Deployment', NS, name);

beforeAll(async () => {
  // Bookmarks as kube-apiserver sends them: about once a minute.
  expect(DEFAULT_BOOKMARK_INTERVAL_MS).toBe(60_000);
  api = new StandInApiServer();
  await api.start();
  db = await createTestDatabase();
  api.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: NS }, data: { url: Buffer.from('postgres://x').toString('base64') } });
  op = startOperator(api, db, { namespaces: [NS], watchIdleMs: 300_000 });
  await op.controller.synced();
});

afterAll(async () => {
  await op?.stop();
  await api?.stop();
  await db?.drop();
});

describe('normal watch recycling is not a restart', () => {
  it('the API server ending every watch at its timeout: watched again at once, nothing missed, nothing counted', async () => {
    await eventually(() => api.openWatches('MCPServer') === 1 && api.openWatches('PlanPolicy') === 1, 10_000, 'watches open');
    await new Promise((r) => setTimeout(r, 1500)); // the streams have lived a while, as at a server timeout
    const before = watchRequests();
    api.endWatches();
    api.create({ apiVersion: 'cryptomcp.dev/v1alpha1', kind: 'MCPServer', metadata: { name: 'a', namespace: NS }, spec: { server: 'kol-analytics', replicas: 1, database: { secretRef: { name: 'db' } } } });
    await eventually(() => deployment('a'), 10_000, 'reconciled after the watches ended');
    expect(watchRequests()).toBeGreaterThan(before);
    await settled(api);
    expect(await restarts()).toBe(0);
  });

  it('a quiet watch recycled by the client after 30 s without a byte (bookmarks come once a minute): watched again, not counted', async () => {
    const before = watchRequests();
    // Real time: client-node's 30 s inactivity timeout is not configurable.
    await eventually(() => watchRequests() > before, 45_000, 'the MCPServer watch recycled by the client');
    api.create({ apiVersion: 'cryptomcp.dev/v1alpha1', kind: 'MCPServer', metadata: { name: 'b', namespace: NS }, spec: { server: 'kol-analytics', replicas: 1, database: { secretRef: { name: 'db' } } } });
    await eventually(() => deployment('b'), 10_000, 'reconciled on the recycled watch');
    expect(await restarts()).toBe(0);
  }, 60_000);

  it('an abnormal end still counts: a stream dropped mid-way', async () => {
    api.dropWatches();
    await eventually(async () => (await restarts()) > 0, 10_000, 'a counted restart');
  });
});
