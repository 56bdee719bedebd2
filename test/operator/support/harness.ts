// Runs the operator in-process against a stand-in API server and a real PostgreSQL database.
import { KubeConfig } from '@kubernetes/client-node';
import type { Database } from '../../../server/db/pool.ts';
import { Controller, type ControllerOptions } from '../../../operator/controller.ts';
import { KubeClient } from '../../../operator/kube/client.ts';
import { createOperatorMetrics, type OperatorMetrics } from '../../../operator/metrics.ts';
import type { StandInApiServer } from './apiserver.ts';

export const IMAGE = 'registry.example.com/cryptomcp:test';

/** With a token: the operator's requests as that ServiceAccount (StandInApiServer.tokenFor), RBAC enforced. */
export function kubeConfigFor(api: StandInApiServer, token?: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'standin', server: api.url, skipTLSVerify: true }],
    users: [{ name: 'operator', ...(token ? { token } : {}) }],
    contexts: [{ name: 'standin', cluster: 'standin', user: 'operator' }],
    currentContext: 'standin',
  });
  return kc;
}

export interface RunningOperator {
  controller: Controller;
  metrics: OperatorMetrics;
  logs: string[];
  stop(): Promise<void>;
}

export function startOperator(api: StandInApiServer, db: Database, overrides: Partial<ControllerOptions> = {}, token?: string): RunningOperator {
  const metrics = createOperatorMetrics();
  const logs: string[] = [];
  const controller = new Controller({
    client: new KubeClient(kubeConfigFor(api, token)),
    db,
    metrics,
    image: IMAGE,
    namespaces: [],
    resyncMs: 60_000,
    secretPollMs: 250,
    watchIdleMs: 60_000,
    retry: { baseDelayMs: 50 },
    inUseRetryMs: 200,
    log: (line) => logs.push(line),
    ...overrides,
  });
  controller.start();
  return { controller, metrics, logs, stop: () => controller.stop() };
}

/** Polls until fn returns a truthy value (or throws its last error after timeoutMs). */
export async function eventually<T>(fn: () => T | Promise<T>, timeoutMs = 20_000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
      last = undefined;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Resolves once the stand-in has taken no writes for quietMs (the operator has settled). */
export async function settled(api: StandInApiServer, quietMs = 600, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const writes = () => api.writes.filter((w) => !w.includes(' Lease/'));
  let count = writes().length;
  let since = Date.now();
  for (;;) {
    await new Promise((r) => setTimeout(r, 50));
    if (writes().length !== count) {
      count = writes().length;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) return;
    if (Date.now() > deadline) throw new Error(`still writing after ${timeoutMs} ms: ${writes().slice(-10).join(', ')}`);
  }
}
