// WATCH_NAMESPACES: an operator limited to some namespaces manages MCPServers there and leaves
// the rest of the cluster alone (several installations can share a cluster).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { StandInApiServer } from './support/apiserver.ts';
import { eventually, settled, startOperator, type RunningOperator } from './support/harness.ts';

let api: StandInApiServer;
let db: TestDatabase;
let op: RunningOperator;

beforeAll(async () => {
  api = new StandInApiServer();
  await api.start();
  db = await createTestDatabase();
  op = startOperator(api, db, { namespaces: ['team-a', 'team-b'] });
});

afterAll(async () => {
  await op?.stop();
  await api?.stop();
  await db?.drop();
});

it('reconciles MCPServers in the watched namespaces only', async () => {
  for (const ns of ['team-a', 'team-b', 'elsewhere']) {
    api.create({ apiVersion: 'cryptomcp.dev/v1alpha1', kind: 'MCPServer', metadata: { name: 'pp', namespace: ns }, spec: { server: 'price-prediction', replicas: 1, database: { secretRef: { name: 'db' } } } });
  }
  await eventually(() => api.get('Deployment', 'team-a', 'pp') && api.get('Deployment', 'team-b', 'pp'), 20_000, 'children in watched namespaces');
  await settled(api);
  expect(api.get('Deployment', 'elsewhere', 'pp')).toBeUndefined();
  expect(api.get('MCPServer', 'elsewhere', 'pp')!.status).toBeUndefined();
  // Namespaced list and watch requests only: no cluster-wide MCPServer or Deployment access.
  expect(api.requests.filter((r) => /^GET \/apis\/(cryptomcp\.dev\/v1alpha1\/mcpservers|apps\/v1\/deployments)$/.test(r))).toEqual([]);
});
