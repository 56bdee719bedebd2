// npm run bench:observability — what metrics and tracing cost the gateway, side by side in one run.
//   (a) the service as it is: metrics on, tracing off (the default)
//   (b) tracing on, every request sampled, spans exported over OTLP/HTTP to a loopback sink
//   (c) tracing on, 10% of traces sampled (OTEL_TRACES_SAMPLER=parentbased_traceidratio)
//   (d) the service with observability off: METRICS_ENABLED=false and no tracing
// Same workload as bench:gateway (tools/call of bench_echo from many accounts, autocannon over
// loopback), rounds interleaved (a b c d a b c d ...), median round reported. Target (issue 6):
// metrics and tracing together within 10% of off (c/d >= 0.9); bench:gateway prints the same
// comparison as f/e beside its other runs. Metering is bypassed in all four by default
// (BENCH_METERED=1 keeps it): on a shared machine the PostgreSQL round trip's noise would hide
// the CPU that observability costs, which is what this measures.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { startEmbedded } from '../server/db/embedded.ts';
import { migrate } from '../server/db/migrate.ts';
import { createDatabase } from '../server/db/pool.ts';
import { createBenchAccounts, createBenchPlan } from './support/accounts.ts';
import { spawnServer, stopServer, type ServerProcess } from '../test/helpers/process.ts';

const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 100);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const METERING: Record<string, string> = process.env.BENCH_METERED === '1' ? {} : { CRYPTOMCP_BENCH_UNMETERED: '1' };

const BODY = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'bench_echo', arguments: { message: 'ping' } } });

interface Sample {
  rps: number;
  p50: number;
  p99: number;
  failed: number;
}

async function load(port: number, keys: string[], seconds: number): Promise<Sample> {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: CONNECTIONS,
    duration: seconds,
    requests: keys.map((key) => ({
      method: 'POST' as const,
      path: '/mcp/market-intelligence',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': key },
      body: BODY,
    })),
  });
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, failed: result.errors + result.timeouts + result.non2xx };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cmcp-bench-obs-'));
  fs.chmodSync(root, 0o755);
  const servers: ServerProcess[] = [];
  // The OTLP sink: accepts every export and counts the bytes, as a collector would take them.
  let exportedBytes = 0;
  const sink = http.createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (exportedBytes += chunk.length));
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const otlp = { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(sink.address() as AddressInfo).port}`, OTEL_METRICS_EXPORTER: 'none', OTEL_LOGS_EXPORTER: 'none' };

  const pg = process.env.DATABASE_URL ? undefined : await startEmbedded(path.join(root, 'pg'));
  const databaseUrl = process.env.DATABASE_URL ?? pg!.url;
  const db = createDatabase({ url: databaseUrl, max: 4 });
  try {
    await migrate(db.pool);
    await createBenchPlan(db, 'bench');
    const { keys } = await createBenchAccounts(db, { count: ACCOUNTS, plan: 'bench', walletTag: 'c', keys: true });

    const targets: { label: string; name: string; server: ServerProcess }[] = [];
    const add = async (label: string, name: string, env: Record<string, string>) => {
      const server = await spawnServer(databaseUrl, { ...METERING, ...env });
      servers.push(server);
      targets.push({ label, name, server });
    };
    await add('a', 'metrics on, tracing off', {});
    await add('b', 'tracing on, all sampled', otlp);
    await add('c', 'tracing on, 10% sampled', { ...otlp, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' });
    await add('d', 'metrics and tracing off', { METRICS_ENABLED: 'false' });

    console.log(`bench:observability — ${ACCOUNTS} accounts, ${CONNECTIONS} connections, ${SECONDS}s x ${ROUNDS} interleaved rounds, ${os.cpus().length} cores, metering ${METERING.CRYPTOMCP_BENCH_UNMETERED ? 'bypassed' : 'on'}`);
    for (const t of targets) await load(t.server.port, keys, 3); // warm-up: JIT, key cache, pool
    const samples = new Map<string, Sample[]>(targets.map((t) => [t.label, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const t of targets) samples.get(t.label)!.push(await load(t.server.port, keys, SECONDS));
    }
    const m = new Map<string, Sample>();
    console.log('\n  run                                   req/s   p50 ms   p99 ms   failed');
    for (const t of targets) {
      const s = samples.get(t.label)!;
      const row = { rps: median(s.map((x) => x.rps)), p50: median(s.map((x) => x.p50)), p99: median(s.map((x) => x.p99)), failed: s.reduce((n, x) => n + x.failed, 0) };
      m.set(t.label, row);
      console.log(`  (${t.label}) ${t.name.padEnd(33)} ${row.rps.toFixed(0).padStart(6)}  ${row.p50.toFixed(1).padStart(6)}  ${row.p99.toFixed(1).padStart(7)}  ${String(row.failed).padStart(6)}`);
    }
    const ratio = (x: string, y: string) => m.get(x)!.rps / m.get(y)!.rps;
    const verdict = (r: number) => (r >= 0.9 ? 'within 10%' : 'MORE than 10%');
    console.log('\nratios (throughput)');
    console.log(`  a/d = ${ratio('a', 'd').toFixed(2)}   metrics on vs off (${verdict(ratio('a', 'd'))})`);
    console.log(`  c/d = ${ratio('c', 'd').toFixed(2)}   metrics and tracing 10% vs both off (${verdict(ratio('c', 'd'))}; the target)`);
    console.log(`  b/d = ${ratio('b', 'd').toFixed(2)}   metrics and tracing every request vs both off (${verdict(ratio('b', 'd'))})`);
    console.log(`  c/a = ${ratio('c', 'a').toFixed(2)}   tracing 10% vs tracing off (${verdict(ratio('c', 'a'))})`);
    console.log(`  OTLP bytes received by the sink: ${exportedBytes}`);
  } finally {
    await Promise.all(servers.map((s) => stopServer(s.child)));
    await new Promise((resolve) => sink.close(resolve));
    await db.close();
    await pg?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

await main();
