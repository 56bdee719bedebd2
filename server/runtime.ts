// Starts the service for `cryptomcp serve` / `npm start`: database (embedded or DATABASE_URL),
// migrations, the gateway, the metrics port, the job runner (background work: sweeps, payment
// re-checks, alert evaluation and webhook deliveries); and stops it in the reverse order,
// letting in-flight requests finish.
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { planList, type Plan } from './accounts/plans.ts';
import { buildApp } from './app.ts';
import { createComputePool } from './compute/pool.ts';
import { ConfigError, type Config } from './config.ts';
import { migrate, migrationsCurrent } from './db/migrate.ts';
import { openDatabase, type Database } from './db/pool.ts';
import { KeyResolver } from './keys/resolver.ts';
import { buildRegistry, type Registry } from './mcp/registry.ts';
import { createRequestLog } from './dashboard/requestLog.ts';
import { OAuthServer } from './oauth/server.ts';
import { listenUrl, PublicOrigins } from './origin.ts';
import { artifactSweep } from './oauth/store.ts';
import { accessTokenResolver } from './oauth/tokens.ts';
import { FreeMeter } from './metering/free-meter.ts';
import { Meter } from './metering/meter.ts';
import { SqlUsageReader } from './metering/usage.ts';
import { createMetrics, disabledMetrics, serveMetrics } from './metrics.ts';
import { plainTelemetry } from './telemetry/config.ts';
import { createEvmClients, EVM_NETWORKS } from './providers/evm/chains.ts';
import { ChainCache } from './providers/evm/cache.ts';
import { ExplorerApi } from './providers/evm/explorer.ts';
import { SqlForecastLog } from './forecasts/store.ts';
import { createLabelBook } from './providers/labels.ts';
import { SolanaRpc } from './providers/solana/live.ts';
import { createTokenRegistry } from './providers/tokens.ts';
import { readDevnetManifest } from './devnet/manifest.ts';
import { FallbackProvider } from './providers/market/fallback.ts';
import { CoinGeckoProvider } from './providers/market/live.ts';
import { loadSnapshot, SnapshotProvider } from './providers/market/snapshot.ts';
import { lazyProjectsData, SnapshotProjectSource } from './providers/projects/snapshot.ts';
import { lazySocialDataset, SnapshotSocialSource } from './providers/social/snapshot.ts';
import { mentionExtractor } from './providers/social/extractor.ts';
import { FallbackProjectSource } from './providers/projects/fallback.ts';
import { DefiLlamaSource } from './providers/projects/live.ts';
import { GitHubClient } from './providers/github/live.ts';
import { RedditSource } from './providers/social/live.ts';
import { alertEvaluators, allInOneModule, serverModules } from './servers/index.ts';
import { SqlAlertStore } from './alerts/store.ts';
import { AlertListener } from './alerts/listen.ts';
import { alertsEvaluateDue, WEBHOOK_RETRY_SCHEDULE_MS, webhookDeliver } from './alerts/jobs.ts';
import { TaskRunner } from './gateway/tasks.ts';
import { TaskStore } from './tasks/store.ts';
import { accountNoticesScan } from './alerts/notices.ts';
import { startJobRunner, type JobRunner, type JobTask, type Recurring } from './jobs/runner.ts';
import { dashboardHousekeeping } from './dashboard/api.ts';
import { SqlWatchStore } from './watchlists/store.ts';
import { VERSION } from './version.ts';
import { Payments } from './payments/orders.ts';
import { evmVerifier, solanaVerifier, type ChainVerifier } from './payments/verify.ts';
import type { PaymentChainName } from './config.ts';
import { createFacilitator } from './x402/facilitator.ts';

export { VERSION };

export interface RunningService {
  app: FastifyInstance;
  db: Database;
  registry: Registry;
  meter: Meter;
  keys: KeyResolver;
  /** Base URL the gateway listens on (http://host:port). */
  url: string;
  /** Where clients reach the service: PUBLIC_BASE_URL, else `url`. Printed and advertised. */
  publicBaseUrl: string;
  port: number;
  /** null with METRICS_ENABLED=false. */
  metricsPort: number | null;
  close(): Promise<void>;
}

export interface StartOptions {
  /** Fastify logger option; the CLI passes pino settings (tests may pass a destination stream). */
  logger?: FastifyServerOptions['logger'];
  /** Clock for metering (tests); undefined uses the database clock. */
  now?: () => Date;
  /**
   * Clock (ms) of the key and access-token caches and of key expiry (tests: time the test
   * advances, so TTL and expiry are checked without waiting for them); undefined is Date.now.
   */
  keyClock?: () => number;
  log?: (line: string) => void;
}

export async function startService(config: Config, opts: StartOptions = {}): Promise<RunningService> {
  const log = opts.log ?? (() => {});
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, max: config.databasePoolMax, statementTimeoutMs: config.databaseStatementTimeoutMs });
  try {
    return await startOn(db, config, opts, log);
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
}

async function startOn(db: Database, config: Config, opts: StartOptions, log: (line: string) => void): Promise<RunningService> {
  // Migrations run before serving when the database answers (MIGRATE_ON_START; otherwise the
  // service only waits for `cryptomcp migrate` to have run); if it does not, the service still
  // starts (readyz says not ready) and keeps trying, so an outage at boot needs no restart. Never
  // from /readyz: a probe has a timeout of seconds, a migration may take minutes.
  let migrated = false;
  // The job runner starts once the schema (its own included) is in place; set below.
  let startJobs = () => {};
  const tryMigrate = async () => {
    try {
      if (config.migrateOnStart) await migrate(db.pool);
      migrated = await migrationsCurrent(db.pool);
      if (!migrated && !config.migrateOnStart) log('migrations pending: waiting for `cryptomcp migrate`');
      if (migrated) startJobs();
    } catch (err) {
      log(`migrations not applied yet: ${(err as Error).message}`);
    }
  };
  await tryMigrate();
  const migrateTimer = setInterval(() => {
    if (!migrated) void tryMigrate();
  }, 2000);
  migrateTimer.unref();
  // Set on SIGTERM (close()): /readyz answers 503 and every answer closes its connection, while
  // load balancers still send new ones for DRAIN_DELAY_MS.
  let draining = false;

  const snapshot = new SnapshotProvider(loadSnapshot(config.snapshotFile));
  const market =
    config.marketData === 'live'
      ? new FallbackProvider(
          new CoinGeckoProvider({
            registry: snapshot.registry,
            baseUrl: config.coingecko.baseUrl,
            apiKey: config.coingecko.apiKey,
            timeoutMs: config.coingecko.timeoutMs,
            deadlineMs: config.upstreamDeadlineMs,
          }),
          snapshot,
        )
      : snapshot;
  const devnet = config.devnetManifest ? readDevnetManifest(config.devnetManifest) : undefined;
  const socialData = lazySocialDataset();
  const projectsData = lazyProjectsData();
  const metrics = config.metricsEnabled ? createMetrics({ plain: plainTelemetry().has('tallies') }) : disabledMetrics();
  const compute = createComputePool({ ...config.compute, onJob: (task, outcome, waited, ran) => metrics.computeJob(task, outcome, waited, ran) });
  metrics.watchCompute(() => compute.stats());
  const alerts = new SqlAlertStore(db, {
    allowPrivateWebhooks: config.alerts.webhookAllowPrivate,
    onPulled: (lags) => lags.forEach((lag) => metrics.alertDelivered('pull', lag)),
  });
  // One LISTEN connection on 'alerts' for every subscriptions/listen stream this process serves.
  const alertFeed = new AlertListener(db, { onDelivered: (lag) => metrics.alertDelivered('listen', lag), log });
  const deps = {
    market,
    alerts,
    snapshot,
    forecasts: new SqlForecastLog(db),
    watches: new SqlWatchStore(db),
    evm: createEvmClients(config.evm),
    labels: createLabelBook({ devnetManifest: config.devnetManifest }),
    tokens: createTokenRegistry({
      assets: snapshot.registry.entries(),
      // The devnet's tokens live on whichever networks are pointed at its node.
      devnet: devnet && {
        tokens: devnet.tokens,
        networks: EVM_NETWORKS.filter((n) => config.evm.rpcUrls[n] === devnet.rpc_url),
      },
    }),
    solana: new SolanaRpc({ url: config.solanaRpcUrl, timeoutMs: config.evm.timeoutMs, retries: config.evm.retries, deadlineMs: config.evm.deadlineMs }),
    chainCache: new ChainCache({ finalityDepth: config.evmFinalityDepth }),
    explorer: config.explorer.apiKey ? new ExplorerApi({ ...config.explorer, apiKey: config.explorer.apiKey, timeoutMs: config.evm.timeoutMs, deadlineMs: config.upstreamDeadlineMs }) : undefined,
    // Social and DeFi data load on first use, so a process not serving those tools never holds them.
    social:
      config.social.mode === 'live'
        ? new RedditSource({ ...config.social.reddit, deadlineMs: config.upstreamDeadlineMs, registry: snapshot.registry, extractor: mentionExtractor(snapshot.data.assets) })
        : new SnapshotSocialSource(socialData),
    socialData,
    projects:
      config.projects.mode === 'live'
        ? new FallbackProjectSource(new DefiLlamaSource({ ...config.projects.defillama, deadlineMs: config.upstreamDeadlineMs }), new SnapshotProjectSource(projectsData))
        : new SnapshotProjectSource(projectsData),
    projectsData,
    github: config.github ? new GitHubClient({ ...config.github, deadlineMs: config.upstreamDeadlineMs }) : undefined,
    compute,
  };
  const modules = serverModules({ servers: config.servers, deps, benchTools: config.benchTools });
  const registry = buildRegistry(modules, config.toolCostOverrides);
  metrics.watchPool(db.pool, config.databasePoolMax);
  const keys = new KeyResolver(db, {
    ttlMs: config.keyCacheTtlMs,
    now: opts.keyClock,
    onLookup: (hit) => (hit ? metrics.keyCacheHit.inc() : metrics.keyCacheMiss.inc()),
  });
  // OAuth access tokens, cached like keys (same TTL), so a revoked connection ends within the same bound.
  const tokens = accessTokenResolver(db, [...registry.keys()], {
    ttlMs: config.keyCacheTtlMs,
    now: opts.keyClock,
    onLookup: (hit) => (hit ? metrics.keyCacheHit.inc() : metrics.keyCacheMiss.inc()),
  });
  const origins = new PublicOrigins({ publicBaseUrl: config.publicBaseUrl, dashboardOrigin: config.dashboard.origin });
  const oauth = new OAuthServer({
    db,
    settings: config.oauth,
    servers: [...registry.keys()],
    origins,
    databaseUrl: config.databaseUrl,
    onTokensRevoked: () => tokens.clear(),
    onServerError: (err) => log(`oauth server error: ${(err as Error).message}`),
  });
  const meter = new Meter(db, {
    onBatch: (calls, seconds) => {
      metrics.meterBatchCalls.observe(calls);
      metrics.meterBatchDuration.observe(seconds);
    },
    now: opts.now,
    settleIntervalMs: config.settleIntervalMs,
    maxInflight: config.meterMaxInflight,
    maxBatch: config.meterMaxBatch,
    // Twice the tool timeout plus a settle batch: an answered call is always settled by then.
    staleAfterMs: 2 * config.toolTimeoutMs + config.settleIntervalMs + 1000,
    onError: (what, err) => log(`${what} deferred: ${(err as Error).message}`),
    onFailure: (operation) => metrics.meterErrors.inc({ operation }),
    onRenewals: (count) => metrics.renewals.inc(count),
  });

  // Long tools as MCP tasks: run here, state in PostgreSQL, swept by the tasks_sweep job.
  const taskStore = new TaskStore(db);
  const tasks = new TaskRunner({ store: taskStore, usage: new SqlUsageReader(db), metrics, settings: config.tasks, log });

  // Each authenticated /mcp request, for the dashboard's request log (written in batches).
  const requestLog = createRequestLog(db, { onError: (err) => log(`request log write failed: ${(err as Error).message}`) });

  let planCache: { plans: Plan[]; at: number } | undefined;
  const plans = async () => {
    if (planCache && Date.now() - planCache.at < 5000) return planCache.plans;
    try {
      planCache = { plans: await planList(db), at: Date.now() };
    } catch (err) {
      if (!planCache) throw err;
    }
    return planCache.plans;
  };

  // On-chain payments: one verifier per configured chain, over the same RPC clients the tools use.
  const verifiers = new Map<PaymentChainName, ChainVerifier>();
  for (const chain of config.payments.chains) {
    verifiers.set(chain.chain, chain.chain === 'solana' ? solanaVerifier(chain, deps.solana) : evmVerifier(chain, deps.evm.client(chain.chain)));
  }
  const payments = new Payments(db, config.payments, verifiers, {
    onCredited: (order) => {
      metrics.revenue.inc({ source: order.kind, chain: order.chain }, order.price_cents * 10_000);
      keys.clear();
    },
    onVerifyError: (chain) => metrics.paymentVerifyErrors.inc({ chain }),
    solanaBlockhash: () => deps.solana.latestBlockhash(),
  });
  const x402 = config.x402;

  const app = await buildApp({
    registry,
    catalogPayments: {
      packs: config.payments.packs,
      chains: config.payments.chains.map((c) => ({ chain: c.chain, chain_id: c.chainId, token: c.token, decimals: c.decimals })),
      x402: x402 ? { network: x402.network, asset: x402.asset, usd_micros_per_credit: Number(x402.usdMicrosPerCredit), path: '/x402/mcp/{server}' } : null,
    },
    ...(x402 ? { x402: { config: x402, facilitator: createFacilitator(x402, config.evm.timeoutMs), db } } : {}),
    keys,
    meter: config.benchUnmetered ? new FreeMeter() : meter,
    tasks,
    alertFeed,
    modernViaSdk: config.benchModernSdk,
    connectLimit: config.connectLimit,
    requestLog,
    tokens,
    oauth,
    origins,
    usage: new SqlUsageReader(db),
    metrics,
    toolTimeoutMs: config.toolTimeoutMs,
    writeTimeoutMs: config.writeTimeoutMs,
    allInOne: allInOneModule(modules, deps),
    connections: { maxPipelined: config.maxPipelinedRequests, perAddress: config.maxConnectionsPerAddress },
    version: VERSION,
    plans,
    ready: async (): Promise<{ ready: boolean; checks: Record<string, boolean> }> => {
      const database = await db.query('SELECT 1').then(
        () => true,
        () => false,
      );
      if (draining) return { ready: false, checks: { database, migrations: migrated, serving: false } };
      return { ready: database && migrated, checks: { database, migrations: migrated } };
    },
    logger: opts.logger ?? false,
    trustProxyHops: config.trustProxyHops,
    dashboard: {
      db,
      settings: config.dashboard,
      evm: { rpcUrls: config.evm.rpcUrls, timeoutMs: config.evm.timeoutMs },
      payments,
      allowPrivateWebhooks: config.alerts.webhookAllowPrivate,
    },
  });

  // While draining, each answer ends its connection: a client (or a proxy's keep-alive pool)
  // reconnects, and so reaches a pod that is not going away.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (draining) reply.header('connection', 'close');
    done(null, payload);
  });

  const portOf = () => {
    const address = app.server.address();
    return typeof address === 'object' && address ? address.port : config.port;
  };
  // On the socket's 'listening' event, so the origin is settled before any connection is read.
  app.server.once('listening', () => origins.listening(listenUrl(config.host, portOf())));
  let metricsServer: Awaited<ReturnType<typeof serveMetrics>> | undefined;
  try {
    await listening('PORT', config.port, config.host, () => app.listen({ port: config.port, host: config.host }));
    metricsServer = config.metricsEnabled ? await listening('METRICS_PORT', config.metricsPort, config.host, () => serveMetrics(metrics, config.metricsPort, config.host)) : undefined;
  } catch (err) {
    clearInterval(migrateTimer);
    await app.close();
    throw err;
  }
  const port = portOf();
  meter.start();
  const touchTimer = setInterval(() => {
    keys.flushLastUsed().catch((err: unknown) => log(`last_used_at deferred: ${(err as Error).message}`));
    tokens.flushLastUsed().catch((err: unknown) => log(`connection last_used_at deferred: ${(err as Error).message}`));
  }, 1000);
  touchTimer.unref();

  // Background work that touches the whole database runs as jobs (server/jobs): each due run on
  // one replica, retried, counted. What drains this process's own memory (settlements,
  // last_used_at, the request log) stays a timer above.
  const hooks = {
    onEvaluated: (kind: string, outcome: 'ok' | 'error', rules: number) => metrics.alertRulesEvaluated.inc({ kind, outcome }, rules),
    onFired: (kind: string) => metrics.alertsFired.inc({ kind }),
    onDelivered: (channel: string, lag: number) => metrics.alertDelivered(channel, lag),
    onAttempt: (outcome: string) => metrics.webhookAttempts.inc({ outcome }),
    log,
  };
  const evaluators = alertEvaluators(config.servers, deps);
  const jobTasks: Record<string, JobTask> = {
    metering_sweep: () => meter.sweep(),
    tasks_sweep: async () => {
      const swept = await taskStore.sweep(config.tasks.orphanAfterMs);
      if (swept.orphaned > 0) metrics.tasks.inc({ server: '', tool: '', state: 'orphaned' }, swept.orphaned);
    },
    oauth_sweep: () => artifactSweep(db).then(() => {}),
    dashboard_housekeeping: () => dashboardHousekeeping(db, config.dashboard.requestLogRetentionDays),
    // One task per chain and per kind of rule: replicas may be configured differently (chains,
    // servers), and graphile-worker gives a job only to a replica that registered its task.
    ...Object.fromEntries(config.payments.chains.map((c) => [`payments_recheck_${c.chain}`, () => payments.sweep([c.chain]).then(() => {})])),
    ...Object.fromEntries(
      Object.entries(evaluators).map(([kind, evaluate]) => [
        `alerts_evaluate_${kind}`,
        (_payload: unknown, helpers: { abortSignal: AbortSignal }) =>
          alertsEvaluateDue(db, { evaluators: { [kind]: evaluate }, intervalMs: config.alerts.evaluateIntervalMs, batch: 500, hooks }, helpers.abortSignal).then(() => {}),
      ]),
    ),
    webhook_deliver: (payload) =>
      webhookDeliver(db, payload as { delivery: number; round?: number }, {
        policy: { allowPrivate: config.alerts.webhookAllowPrivate, timeoutMs: config.alerts.webhookTimeoutMs },
        retryScheduleMs: config.alerts.webhookRetryScheduleMs ?? WEBHOOK_RETRY_SCHEDULE_MS,
        hooks,
      }),
    account_notices: () => accountNoticesScan(db).then(() => {}),
  };
  const recurring: Recurring[] = [
    { task: 'metering_sweep', everyMs: config.sweepIntervalMs },
    { task: 'tasks_sweep', everyMs: config.tasks.sweepIntervalMs },
    { task: 'oauth_sweep', everyMs: 10 * 60_000 },
    { task: 'dashboard_housekeeping', everyMs: 10 * 60_000 },
    ...config.payments.chains.map((c) => ({ task: `payments_recheck_${c.chain}`, everyMs: config.payments.verifyIntervalMs })),
    ...Object.keys(evaluators).map((kind) => ({ task: `alerts_evaluate_${kind}`, everyMs: config.alerts.evaluateIntervalMs })),
    // Usage thresholds and plan lapses, on the alert rules' period (server/alerts/notices.ts).
    { task: 'account_notices', everyMs: config.alerts.evaluateIntervalMs },
  ];
  let jobs: Promise<JobRunner | undefined> | undefined;
  let closed = false;
  startJobs = () => {
    if (jobs || closed || config.jobs.concurrency === 0) return;
    jobs = startJobRunner({
      pool: db.pool,
      tasks: jobTasks,
      recurring,
      concurrency: config.jobs.concurrency,
      // Due runs are found by polling: never less often than the shortest recurring period.
      pollIntervalMs: Math.min(config.jobs.pollIntervalMs, ...recurring.map((r) => r.everyMs)),
      onJob: (task, outcome, seconds) => metrics.jobRun(task, outcome, seconds),
      log,
    }).catch((err: unknown) => {
      log(`job runner not started: ${(err as Error).message}`);
      jobs = undefined;
      return undefined;
    });
  };
  if (migrated) startJobs();

  let closing: Promise<void> | undefined;
  return {
    app,
    db,
    registry,
    meter,
    keys,
    url: listenUrl(config.host, port),
    publicBaseUrl: origins.base,
    port,
    metricsPort: metricsServer?.port ?? null,
    close() {
      closing ??= (async () => {
        // Keep serving while the endpoints controller and every proxy drop this pod (SIGTERM
        // comes as that starts); only then stop accepting.
        draining = true;
        if (config.drainDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, config.drainDelayMs));
        clearInterval(migrateTimer);
        clearInterval(touchTimer);
        closed = true;
        // Stop accepting and let in-flight requests finish. A keep-alive socket goes idle only
        // once its answer is out, after Fastify's one sweep of idle sockets, so keep sweeping;
        // whatever outlives the timeout is cut.
        const idleSweep = setInterval(() => app.server.closeIdleConnections(), 50);
        const drained = await withTimeout(app.close(), config.shutdownTimeoutMs);
        clearInterval(idleSweep);
        if (!drained) app.server.closeAllConnections();
        // Tasks still running here are failed and refunded (their clients see it at the next poll).
        await tasks.close();
        await compute.close();
        await alertFeed.close();
        await (await jobs)?.stop().catch((err: unknown) => log(`job runner stop failed: ${(err as Error).message}`));
        await metricsServer?.close();
        metrics.close();
        await meter.stop().catch((err: unknown) => log(`final settle failed: ${(err as Error).message}`));
        await keys.flushLastUsed().catch(() => {});
        await tokens.flushLastUsed().catch(() => {});
        await requestLog.close().catch(() => {});
        await db.close();
      })();
      return closing;
    },
  };
}

/**
 * Runs `listen`; a port that is taken (or not ours to open) stops the start with a message naming
 * the variable and the port, not an internal error.
 */
async function listening<T>(variable: 'PORT' | 'METRICS_PORT', port: number, host: string, listen: () => Promise<T>): Promise<T> {
  try {
    return await listen();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const hint =
      variable === 'PORT'
        ? 'set PORT to a free port (PORT=0 picks any free port)'
        : 'set METRICS_PORT to a free port (0 picks any free port), or METRICS_ENABLED=false';
    if (code === 'EADDRINUSE') throw new ConfigError(`${variable} ${port} is already in use on ${host}: ${hint}`);
    if (code === 'EACCES') throw new ConfigError(`${variable} ${port} cannot be opened on ${host} (permission denied): ${hint}`);
    throw err;
  }
}

/** True if the promise settled within ms. */
async function withTimeout(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const settled = await Promise.race([
    promise.then(() => true),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
  ]);
  clearTimeout(timer);
  return settled;
}
