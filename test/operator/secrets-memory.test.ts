// The operator does not cache Secrets (issue 34: it listed and watched every Secret, contents
// included; with 400 unrelated 256 KiB Secrets its memory peaked at 618–727 MiB against a 256Mi
// limit). Here the real entry point (`node operator/main.ts`, the chart's defaults: its own
// namespace) runs against the stand-in holding 400 unrelated Secrets of 256 KiB (100 MiB of
// data) beside the one its MCPServer references: it never lists or watches them, and its
// resident memory peaks well under the chart's 256Mi limit (measured here: 185 MiB, against
// 258 MiB for the build before the fix, which listed them cluster-wide). OPERATOR_MAIN=<path> measures another build (what the report's
// before/after figures came from).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { StandInApiServer } from './support/apiserver.ts';
import { eventually } from './support/harness.ts';
import { sample, spawnOperator, type OperatorProcess } from './support/process.ts';

const NS = 'cryptomcp';
const SECRETS = 400;
const SIZE = 256 * 1024;
let api: StandInApiServer;
let op: OperatorProcess;
let peakRss = 0;
let sampler: NodeJS.Timeout | undefined;

beforeAll(async () => {
  api = new StandInApiServer({ bookmarkIntervalMs: 1000 });
  await api.start();
  const payload = Buffer.alloc(SIZE, 7).toString('base64');
  for (let i = 0; i < SECRETS; i++) api.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `unrelated-${i}`, namespace: NS }, data: { blob: payload } });
  api.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: NS }, data: { url: Buffer.from('postgres://x').toString('base64') } });
  api.create({ apiVersion: 'cryptomcp.dev/v1alpha1', kind: 'MCPServer', metadata: { name: 'kol', namespace: NS }, spec: { server: 'kol-analytics', replicas: 1, database: { secretRef: { name: 'db' } } } });
  op = await spawnOperator(api, {
    OPERATOR_IMAGE: 'registry.example.com/cryptomcp:1',
    DATABASE_URL: 'postgres://127.0.0.1:1/none',
    POD_NAMESPACE: NS,
    LEADER_ELECTION: 'false',
    LOG_LEVEL: 'silent',
  }, process.env.OPERATOR_MAIN);
  // Resident memory from the start: the peak is what meets the container's limit.
  sampler = setInterval(() => {
    void fetch(`${op.base}/metrics`)
      .then((r) => r.text())
      .then((t) => (peakRss = Math.max(peakRss, sample(t, 'cryptomcp_operator_process_resident_memory_bytes'))))
      .catch(() => {});
  }, 100);
}, 60_000);

afterAll(async () => {
  clearInterval(sampler);
  await op?.stop();
  await api?.stop();
});

it(`with ${SECRETS} unrelated ${SIZE / 1024} KiB Secrets (${(SECRETS * SIZE) / 2 ** 20} MiB) in its namespace, it reads only the referenced one and its peak RSS stays under 230 MiB`, async () => {
  await eventually(() => api.get('Deployment', NS, 'kol'), 30_000, 'MCPServer reconciled');
  // A few resync-free seconds for the heap to settle after start-up, then the figures.
  await new Promise((r) => setTimeout(r, 3000)); // a measurement window, not a wait for something
  const metrics = await (await fetch(`${op.base}/metrics`)).text();
  const heapMiB = sample(metrics, 'cryptomcp_operator_nodejs_heap_size_used_bytes') / 2 ** 20;
  const rssMiB = sample(metrics, 'cryptomcp_operator_process_resident_memory_bytes') / 2 ** 20;
  process.stdout.write(`operator with ${SECRETS} x ${SIZE / 1024} KiB Secrets: heap used ${heapMiB.toFixed(1)} MiB, RSS ${rssMiB.toFixed(1)} MiB, peak RSS ${(peakRss / 2 ** 20).toFixed(1)} MiB\n`);
  // Neither listed nor watched: only the referenced Secret, by name.
  expect(api.requests.filter((r) => r.includes('/secrets')).every((r) => r === `GET /api/v1/namespaces/${NS}/secrets/db`)).toBe(true);
  expect(heapMiB).toBeGreaterThan(0);
  // The chart's limit is 256Mi; the Secrets alone would be 100 MiB more than an idle operator.
  expect(peakRss / 2 ** 20).toBeLessThan(230);
}, 90_000);
