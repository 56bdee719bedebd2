#!/usr/bin/env node
// The operator's entry point (`npm run operator`, or `node operator/main.ts` in the image):
// configuration, the Kubernetes connection (KUBECONFIG or in-cluster), the gateway's database
// with its migrations applied (the same ones `cryptomcp serve` runs), the metrics/probe port,
// and the controller with leader election. SIGTERM hands the lease back and exits.
import { KubeConfig } from '@kubernetes/client-node';
import { migrate } from '../server/db/migrate.ts';
import { createDatabase } from '../server/db/pool.ts';
import { loadOperatorConfig, OperatorConfigError } from './config.ts';
import { Controller } from './controller.ts';
import { KubeClient } from './kube/client.ts';
import { createOperatorMetrics, serveOperatorHttp } from './metrics.ts';

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'];

async function main(): Promise<void> {
  const config = loadOperatorConfig();
  const verbose = config.logLevel !== 'silent' && LEVELS.indexOf(config.logLevel) >= LEVELS.indexOf('info');
  const log = (line: string) => {
    if (verbose) process.stderr.write(`${new Date().toISOString()} ${line}\n`);
  };
  const kc = new KubeConfig();
  kc.loadFromDefault();
  const db = createDatabase({ url: config.databaseUrl, max: 4 });
  // The plans table must exist before the first PlanPolicy sync; retry while the database is
  // still coming up rather than crash-looping.
  for (let attempt = 1; ; attempt++) {
    try {
      await migrate(db.pool);
      break;
    } catch (err) {
      log(`migrations not applied yet (attempt ${attempt}): ${(err as Error).message}`);
      await new Promise((r) => setTimeout(r, Math.min(30_000, 500 * 2 ** attempt)));
    }
  }
  const metrics = createOperatorMetrics();
  const controller = new Controller({
    client: new KubeClient(kc),
    db,
    metrics,
    image: config.image,
    namespaces: config.namespaces,
    resyncMs: config.resyncMs,
    watchIdleMs: config.watchIdleMs,
    leader: config.leaderElection ? { name: config.leaseName, namespace: config.leaseNamespace, identity: config.identity, leaseDurationMs: config.leaseDurationMs } : undefined,
    log,
  });
  const probes = await serveOperatorHttp(metrics, config.metricsPort, config.host, () => controller.ready());
  controller.start();
  // One line a supervisor or test can wait for.
  process.stdout.write(`${JSON.stringify({ operator: 'started', metrics_port: probes.port, identity: config.identity, leader_election: config.leaderElection })}\n`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: releasing the lease and stopping`);
    void (async () => {
      await controller.stop();
      await probes.close();
      await db.close();
      process.exit(0);
    })();
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof OperatorConfigError ? err.message : ((err as Error).stack ?? String(err))}\n`);
  process.exit(err instanceof OperatorConfigError ? 2 : 1);
});
