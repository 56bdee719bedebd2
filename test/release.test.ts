// A closed service leaves nothing of itself reachable. A process that starts services one after
// another (an embedder restarting one; the test workers, which run file after file in one process
// and start a service per file) keeps only what belongs to the process. Two things once kept every
// closed service alive for good, each through a module-level object that never goes away:
// prom-client's GC PerformanceObserver, when the default metrics were collected into each
// service's registry (server/metrics.ts, processMetrics), and graphile-worker's map of every
// pool's compiled options, which held our task list (server/jobs/runner.ts, detachedTaskList).
// With either put back, this test fails naming what stayed.
import v8 from 'node:v8';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';
import { createAccountWithKey, mcpClient, startTestService } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** Starts a service, answers a metered call and a metrics scrape, closes it; weak references to its parts. */
async function serveOnceAndClose(): Promise<Record<string, WeakRef<object>>> {
  const service = await startTestService(db.url);
  const { key } = await createAccountWithKey(db);
  const client = await mcpClient(service.url, 'market-intelligence', key);
  const result = await client.callTool({ name: 'get_prices', arguments: { assets: ['bitcoin'] } });
  expect(result.isError).toBeFalsy();
  await client.close();
  const scrape = await fetch(`http://127.0.0.1:${service.metricsPort}/metrics`);
  expect(scrape.status).toBe(200);
  await scrape.text();
  const refs = {
    'the Fastify app': new WeakRef(service.app),
    'the server registry': new WeakRef(service.registry),
    'the meter': new WeakRef(service.meter),
    'the key resolver': new WeakRef(service.keys),
  };
  await service.close();
  return refs;
}

describe('a closed service', () => {
  it('is released: nothing of it stays reachable once it has closed', async () => {
    const refs = await serveOnceAndClose();
    const stillReachable = () => {
      gc();
      return Object.entries(refs).flatMap(([name, ref]) => (ref.deref() === undefined ? [] : [name]));
    };
    // Timers a library leaves behind for a few seconds after a stop are allowed to run out
    // (graphile-worker's 5 s shutdown-abort timer holds its own pool, not our service).
    await eventually(() => stillReachable().length === 0, 15_000, 'the closed service to be collected').catch(() => {});
    const kept = stillReachable();
    expect(kept, 'still reachable after close()').toEqual([]);
  });
});
