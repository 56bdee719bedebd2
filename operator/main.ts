#!/usr/bin/env node
// The operator's entry point (`npm run operator`, or `node operator/main.ts` in the image). The
// probe and metrics port opens first, so liveness holds and /readyz can say what is missing
// while the rest comes up; then the controller (with leader election) starts at once, whether or
// not the database answers: MCPServers need no database, and PlanPolicies report
// Synced=False/DatabaseError and retry with backoff until it does. The gateway's migrations (the
// same ones `cryptomcp serve` runs) are applied in the background, retried with the same bounded
// backoff. SIGTERM hands the lease back and exits.
import { KubeConfig } from '@kubernetes/client-node';
import { migrate } from '../server/db/migrate.ts';
import { createDatabase, type Database } from '../server/db/pool.ts';
import { loadOperatorConfig, OperatorConfigError } from './config.ts';
import { Controller } from './controller.ts';
import { KubeClient } from './kube/client.ts';
import { createOperatorMetrics, serveOperatorHttp, type ReadinessCheck } from './metrics.ts';
import { backoffDelay, backoffSettings } from './queue.ts';

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'];
const DATABASE_CHECK_TIMEOUT_MS = 2000;

async function databaseCheck(db: Database): Promise<ReadinessCheck> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${DATABASE_CHECK_TIMEOUT_MS} ms`)), DATABASE_CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([db.query('SELECT 1'), timeout]);
    return { name: 'database', ok: true };
  } catch (err) {
    return { name: 'database', ok: false, detail: `${db.description} unreachable: ${(err as Error).message}` };
  } finally {
    clearTimeout(timer);
  }
}

async function main(): Promise<void> {
  const config = loadOperatorConfig();
  const verbose = config.logLevel !== 'silent' && LEVELS.indexOf(config.logLevel) >= LEVELS.indexOf('info');
  const log = (line: string) => {
    if (verbose) process.stderr.write(`${new Date().toISOString()} ${line}\n`);
  };
  const kc = new KubeConfig();
  kc.loadFromDefault();
  const db = createDatabase({ url: config.databaseUrl, max: 4 });
  const metrics = createOperatorMetrics();
  const controller = new Controller({
    client: new KubeClient(kc),
    db,
    metrics,
    image: config.image,
    namespaces: config.namespaces,
    resyncMs: config.resyncMs,
    watchIdleMs: config.watchIdleMs,
    retry: config.retry,
    leader: config.leaderElection ? { name: config.leaseName, namespace: config.leaseNamespace, identity: config.identity, leaseDurationMs: config.leaseDurationMs } : undefined,
    log,
  });

  let migrations: ReadinessCheck = { name: 'migrations', ok: false, detail: 'not applied yet' };
  const probes = await serveOperatorHttp(metrics, config.metricsPort, config.host, async () => [
    { name: 'informers', ...controller.readiness() },
    await databaseCheck(db),
    migrations,
  ]);
  controller.start();

  let stopping = false;
  let wakeMigrations: (() => void) | undefined;
  const migrating = (async () => {
    const retry = backoffSettings(config.retry);
    for (let failures = 0; !stopping; failures++) {
      try {
        await migrate(db.pool);
        migrations = { name: 'migrations', ok: true };
        if (failures > 0) controller.retryNow('PlanPolicy');
        return;
      } catch (err) {
        const delay = backoffDelay(retry, failures);
        migrations = { name: 'migrations', ok: false, detail: `not applied yet (attempt ${failures + 1}): ${(err as Error).message}` };
        log(`migrations not applied (attempt ${failures + 1}, retry in ${delay} ms): ${(err as Error).message}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delay);
          wakeMigrations = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    }
  })();

  // One line a supervisor or test can wait for.
  process.stdout.write(`${JSON.stringify({ operator: 'started', metrics_port: probes.port, identity: config.identity, leader_election: config.leaderElection })}\n`);

  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: releasing the lease and stopping`);
    wakeMigrations?.();
    void (async () => {
      await controller.stop();
      await migrating;
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
