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
  OPERATOR_INSTANCE: z.string().default(''),
  LEADER_ELECTION: bool(true),
  LEASE_NAME: z.string().default(''),
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
  /**
   * Namespaces whose MCPServers are managed: WATCH_NAMESPACES, or the operator's own namespace
   * when it is empty; "*" means every namespace (and needs the chart's cluster-wide RBAC).
   */
  namespaces: string[] | 'all';
  /**
   * Which installation this is (`<namespace>/<Deployment>`): written on every child it manages,
   * so a second installation watching the same namespace refuses instead of fighting over them.
   */
  instance: string;
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
  const listed = e.WATCH_NAMESPACES.split(',').map((s) => s.trim()).filter(Boolean);
  const deployment = deploymentOf(e.POD_NAME);
  return {
    image: e.OPERATOR_IMAGE,
    databaseUrl: e.DATABASE_URL,
    namespaces: listed.includes('*') ? 'all' : listed.length ? listed : [e.POD_NAMESPACE],
    instance: e.OPERATOR_INSTANCE || `${e.POD_NAMESPACE}/${deployment}`,
    leaderElection: e.LEADER_ELECTION,
    // One lease per installation: two releases in one namespace must not share a leader.
    leaseName: e.LEASE_NAME || deployment,
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

/**
 * The Deployment a pod belongs to, from its name (`<deployment>-<template hash>-<suffix>`, as the
 * ReplicaSet controller names pods); for a name of another shape (a local run) the default name.
 */
export function deploymentOf(podName: string): string {
  const m = /^(.+)-[a-z0-9]{6,10}-[a-z0-9]{5}$/.exec(podName);
  return m ? m[1]! : 'cryptomcp-operator';
}

const ReleaseEnvSchema = z.object({
  RELEASE_NAME: z.string().min(1, 'the Helm release being uninstalled'),
  OPERATOR_DEPLOYMENT: z.string().min(1, "the operator's Deployment, scaled to 0 before the finalizers go"),
  POD_NAMESPACE: z.string().min(1, "the release namespace (the operator Deployment's)"),
  PLAN_POLICIES: z.string().default(''),
  WAIT_SECONDS: int(240, 1),
});

export interface UninstallConfig {
  release: string;
  deployment: string;
  namespace: string;
  /** The release's PlanPolicies, by name (the chart knows them when it renders the hook). */
  planPolicies: string[];
  /** How long to wait for the operator's pods to go. */
  waitMs: number;
}

/** operator/uninstall.ts: which operator to stop and which PlanPolicies to let go of. */
export function loadUninstallConfig(env: NodeJS.ProcessEnv = process.env): UninstallConfig {
  const parsed = ReleaseEnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new OperatorConfigError(`invalid uninstall configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  return { release: e.RELEASE_NAME, deployment: e.OPERATOR_DEPLOYMENT, namespace: e.POD_NAMESPACE, planPolicies: e.PLAN_POLICIES.split(',').map((s) => s.trim()).filter(Boolean), waitMs: e.WAIT_SECONDS * 1000 };
}
