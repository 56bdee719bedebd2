#!/usr/bin/env node
// The chart's pre-delete hook (`node operator/uninstall.ts`): lets go of the PlanPolicies a Helm
// release created, so that `helm uninstall` does not strand them. Helm deletes kinds it does not
// know (custom resources) last, after the operator's Deployment and RBAC: a finalizer left on
// them then waits for an operator that is gone, and the objects stay Terminating for ever.
// Pre-delete hooks run before anything is deleted, while the operator still runs — and a running
// operator puts a removed finalizer back within milliseconds. So, in order:
//   1. scale the operator's Deployment (OPERATOR_DEPLOYMENT in POD_NAMESPACE) to 0;
//   2. wait until none of its pods is left (not merely Terminating: a pod shutting down may
//      still reconcile);
//   3. remove the finalizer from each of the release's PlanPolicies (PLAN_POLICIES, by name).
// The plans table is left as it is: uninstalling the platform never deletes plan rows that
// accounts may be on (`cryptomcp plans` manages them afterwards). It prints one JSON line.
import { KubeConfig, type V1Deployment, type V1PodList } from '@kubernetes/client-node';
import { API_VERSION, PLAN_FINALIZER, type PlanPolicy } from './api/types.ts';
import { loadUninstallConfig, OperatorConfigError, type UninstallConfig } from './config.ts';
import { KubeClient, statusOf, type ResourceType } from './kube/client.ts';

const PODS: ResourceType = { apiVersion: 'v1', kind: 'Pod', plural: 'pods', namespaced: true };
const POLL_MS = 500;

async function release(client: KubeClient, name: string): Promise<boolean> {
  // A concurrent write (a status patch still in flight) makes the patch a 409: read and retry.
  for (let attempt = 0; attempt < 5; attempt++) {
    const pp = (await client.get(API_VERSION, 'PlanPolicy', undefined, name)) as unknown as PlanPolicy | undefined;
    const finalizers = pp?.metadata.finalizers ?? [];
    if (!pp || !finalizers.includes(PLAN_FINALIZER)) return false;
    try {
      await client.mergePatch({ apiVersion: API_VERSION, kind: 'PlanPolicy', metadata: { name, resourceVersion: pp.metadata.resourceVersion, finalizers: finalizers.filter((f) => f !== PLAN_FINALIZER) } });
      return true;
    } catch (err) {
      if (statusOf(err) !== 409) throw err;
    }
  }
  throw new Error(`PlanPolicy ${name}: the finalizer could not be removed (kept changing)`);
}

/** Scales the operator to 0 and resolves once no pod of it is left; the number of pods waited for. */
async function stopOperator(client: KubeClient, config: UninstallConfig): Promise<number> {
  const { namespace, deployment } = config;
  const dep = await client.get<V1Deployment>('apps/v1', 'Deployment', namespace, deployment);
  if (!dep) return 0;
  const selector = Object.entries(dep.spec?.selector?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`).join(',');
  if (!selector) throw new Error(`Deployment ${namespace}/${deployment} has no matchLabels selector`);
  if (dep.spec?.replicas !== 0) await client.mergePatch({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: deployment, namespace }, spec: { replicas: 0 } } as V1Deployment);
  let most = 0;
  const deadline = Date.now() + config.waitMs;
  for (;;) {
    const { items } = await client.list<V1PodList['items'][number]>(PODS, namespace, selector);
    most = Math.max(most, items.length);
    if (items.length === 0) return most;
    if (Date.now() > deadline) throw new Error(`${items.length} pod(s) of ${namespace}/${deployment} still there after ${config.waitMs} ms: ${items.map((p) => p.metadata?.name).join(', ')}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

async function main(): Promise<void> {
  const config = loadUninstallConfig();
  const kc = new KubeConfig();
  kc.loadFromDefault();
  const client = new KubeClient(kc);
  const waited = await stopOperator(client, config);
  const released: string[] = [];
  for (const name of config.planPolicies) if (await release(client, name)) released.push(name);
  process.stdout.write(`${JSON.stringify({ release: config.release, operator_pods_waited_for: waited, planpolicies: config.planPolicies, finalizers_removed: released })}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof OperatorConfigError ? err.message : ((err as Error).stack ?? String(err))}\n`);
  process.exit(err instanceof OperatorConfigError ? 2 : 1);
});
