// The one place the operator reads process.env (the Kubernetes connection itself comes from
// KUBECONFIG or the in-cluster service account, through @kubernetes/client-node).
import os from 'node:os';
import { z } from 'zod';

const int = (fallback: number, min: number) => z.coerce.number().int().min(min).default(fallback);
const bool = (fallback: boolean) =>
  z
    .enum(['1', '0', 'true', 'false', 'yes', 'no', ''])
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === '1' || v === 'true' || v === 'yes');

const EnvSchema = z.object({
  OPERATOR_IMAGE: z.string().min(1, 'the server image MCPServers run, e.g. ghcr.io/cryptomcp/cryptomcp:0.1.0'),
  DATABASE_URL: z.string().url('the PostgreSQL URL PlanPolicies are written to'),
  WATCH_NAMESPACES: z.string().default(''),
  LEADER_ELECTION: bool(true),
  LEASE_NAME: z.string().default('cryptomcp-operator'),
  LEASE_DURATION_SECONDS: int(15, 2),
  POD_NAMESPACE: z.string().default('default'),
  POD_NAME: z.string().default(os.hostname()),
  RESYNC_SECONDS: int(300, 1),
  WATCH_IDLE_SECONDS: int(300, 1),
  METRICS_PORT: int(9465, 0),
  RETRY_BASE_MILLISECONDS: int(500, 1),
  RETRY_MAX_SECONDS: int(60, 1),
  HOST: z.string().default('0.0.0.0'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export interface OperatorConfig {
  image: string;
  databaseUrl: string;
  /** Namespaces whose MCPServers are managed; empty means every namespace. */
  namespaces: string[];
  leaderElection: boolean;
  leaseName: string;
  leaseNamespace: string;
  leaseDurationMs: number;
  identity: string;
  resyncMs: number;
  /** A watch that delivers nothing (not even a bookmark) for this long is restarted. */
  watchIdleMs: number;
  metricsPort: number;
  host: string;
  /** Backoff after a failed reconcile: first delay, doubling (jittered) up to the maximum. */
  retry: { baseDelayMs: number; maxDelayMs: number };
  logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
}

export class OperatorConfigError extends Error {}

export function loadOperatorConfig(env: NodeJS.ProcessEnv = process.env): OperatorConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new OperatorConfigError(`invalid operator configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  return {
    image: e.OPERATOR_IMAGE,
    databaseUrl: e.DATABASE_URL,
    namespaces: e.WATCH_NAMESPACES.split(',').map((s) => s.trim()).filter(Boolean),
    leaderElection: e.LEADER_ELECTION,
    leaseName: e.LEASE_NAME,
    leaseNamespace: e.POD_NAMESPACE,
    leaseDurationMs: e.LEASE_DURATION_SECONDS * 1000,
    identity: e.POD_NAME,
    resyncMs: e.RESYNC_SECONDS * 1000,
    watchIdleMs: e.WATCH_IDLE_SECONDS * 1000,
    metricsPort: e.METRICS_PORT,
    host: e.HOST,
    retry: { baseDelayMs: e.RETRY_BASE_MILLISECONDS, maxDelayMs: Math.max(e.RETRY_BASE_MILLISECONDS, e.RETRY_MAX_SECONDS * 1000) },
    logLevel: e.LOG_LEVEL,
  };
}

const ReleaseEnvSchema = z.object({
  RELEASE_NAME: z.string().min(1, 'the Helm release whose PlanPolicies to release (app.kubernetes.io/instance)'),
});

/** operator/uninstall.ts: which release's PlanPolicies to let go of. */
export function loadUninstallConfig(env: NodeJS.ProcessEnv = process.env): { release: string } {
  const parsed = ReleaseEnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new OperatorConfigError(`invalid uninstall configuration:\n${lines.join('\n')}`);
  }
  return { release: parsed.data.RELEASE_NAME };
}
