#!/usr/bin/env node
// The operator's entry point (`npm run operator`, or `node operator/main.ts` in the image). The
// probe and metrics port opens first, so liveness holds and /readyz can say what is missing
// while the rest comes up; then the controller (with leader election) starts at once, whether or
// not the database answers: MCPServers need no database, and PlanPolicies report
// Synced=False/DatabaseError and retry with backoff until it does. So readiness is the
// informers' alone: a database outage leaves the operator Ready (it still reconciles
// MCPServers); /readyz lists the database as a note, and the PlanPolicies' Synced condition and
// cryptomcp_operator_reconcile_errors_total{reason="DatabaseError"} carry the outage. The schema
// is not the operator's to create: `cryptomcp migrate` (the chart's migrate Job) applies it, and
// /readyz notes when the plans table is missing. When the database comes back, every PlanPolicy
// is retried at once rather than after its backoff. SIGTERM hands the lease back and exits.
import { KubeConfig } from '@kubernetes/client-node';
import { loadOperatorConfig, OperatorConfigError } from './config.ts';
import { Controller } from './controller.ts';
import { schemaState } from './db/plans.ts';
import { createOperatorDatabase, type OperatorDatabase } from './db/pool.ts';
import { KubeClient } from './kube/client.ts';
import { createOperatorMetrics, serveOperatorHttp, type ReadinessCheck } from './metrics.ts';

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'];
const DATABASE_CHECK_TIMEOUT_MS = 2000;
/** How often the database is looked at while it is down (or its schema missing). */
const DATABASE_WATCH_MS = 2000;

/**
 * The database answers and has the plans table; the detail says which part is missing, and
 * `version` is the newest migration applied.
 */
async function databaseCheck(db: OperatorDatabase): Promise<ReadinessCheck & { version?: number | null }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${DATABASE_CHECK_TIMEOUT_MS} ms`)), DATABASE_CHECK_TIMEOUT_MS);
  });
  try {
    const schema = await Promise.race([schemaState(db), timeout]);
    return schema.plans
      ? { name: 'database', ok: true, version: schema.version }
      : { name: 'database', ok: false, version: schema.version, detail: `${db.description} has no plans table yet (run cryptomcp migrate)` };
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
  const db = createOperatorDatabase(config.databaseUrl);
  const metrics = createOperatorMetrics();
  const controller = new Controller({
    client: new KubeClient(kc),
    db,
    metrics,
    image: config.image,
    namespaces: config.namespaces === 'all' ? [] : config.namespaces,
    instance: config.instance,
    eventNamespace: config.leaseNamespace,
    resyncMs: config.resyncMs,
    watchIdleMs: config.watchIdleMs,
    retry: config.retry,
    leader: config.leaderElection ? { name: config.leaseName, namespace: config.leaseNamespace, identity: config.identity, leaseDurationMs: config.leaseDurationMs } : undefined,
    log,
  });

  // The database is reported, never failed on: see the note at the top.
  const probes = await serveOperatorHttp(metrics, config.metricsPort, config.host, async () => {
    const database = await databaseCheck(db);
    return [{ name: 'informers', ...controller.readiness() }, { name: 'database', ok: true, detail: database.ok ? undefined : `not required for readiness; PlanPolicies wait: ${database.detail}` }];
  });
  controller.start();

  // Look at the database every few seconds; the moment it becomes usable, and each time its
  // schema moves on (a migration applied: the plans table comes with the first of them, what a
  // PlanPolicy's write needs may come with a later one, or with an upgrade), retry every
  // PlanPolicy now instead of after its (up to a minute long) backoff.
  let databaseUsable = false;
  let schemaVersion: number | null | undefined;
  const watchDatabase = setInterval(() => {
    void databaseCheck(db).then((check) => {
      if (check.ok && (!databaseUsable || check.version !== schemaVersion)) {
        log(databaseUsable ? `schema at migration ${check.version}: retrying PlanPolicies` : 'database usable: retrying PlanPolicies');
        controller.retryNow('PlanPolicy');
      }
      databaseUsable = check.ok;
      if (check.ok) schemaVersion = check.version;
    });
  }, DATABASE_WATCH_MS);
  watchDatabase.unref();

  // One line a supervisor or test can wait for.
  process.stdout.write(`${JSON.stringify({ operator: 'started', metrics_port: probes.port, identity: config.identity, instance: config.instance, namespaces: config.namespaces, leader_election: config.leaderElection })}\n`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: releasing the lease and stopping`);
    clearInterval(watchDatabase);
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
