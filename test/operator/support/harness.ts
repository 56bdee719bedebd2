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

import { eventually } from '../../helpers/wait.ts';

export { eventually };

/** Resolves once the stand-in has sent its watches `rounds` more rounds of bookmarks (live watches, time passing). */
export async function bookmarkRounds(api: StandInApiServer, rounds = 3): Promise<void> {
  const target = api.bookmarkRounds + rounds;
  await eventually(() => api.bookmarkRounds >= target, 20_000, `${rounds} rounds of bookmarks`);
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
