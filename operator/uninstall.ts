#!/usr/bin/env node
// The chart's pre-delete hook (`node operator/uninstall.ts`, RELEASE_NAME set): lets go of the
// PlanPolicies a Helm release created by removing the operator's finalizer from each, so that
// `helm uninstall` does not strand them. Helm deletes kinds it does not know (custom resources)
// last, after the operator's Deployment and RBAC: a finalizer left on them then waits for an
// operator that is gone, and the objects stay Terminating for ever. Pre-delete hooks run before
// anything is deleted, while the operator still runs. The plans table is left as it is:
// uninstalling the platform never deletes plan rows that accounts may be on (`cryptomcp plans`
// manages them afterwards).
import { KubeConfig } from '@kubernetes/client-node';
import { API_VERSION, PLAN_FINALIZER, type PlanPolicy } from './api/types.ts';
import { loadUninstallConfig, OperatorConfigError } from './config.ts';
import { PLANPOLICIES } from './controller.ts';
import { KubeClient, statusOf } from './kube/client.ts';

async function release(client: KubeClient, name: string): Promise<boolean> {
  // A concurrent write (the operator's own status patch) makes the patch a 409: read and retry.
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

async function main(): Promise<void> {
  const config = loadUninstallConfig();
  const kc = new KubeConfig();
  kc.loadFromDefault();
  const client = new KubeClient(kc);
  const { items } = await client.list(PLANPOLICIES, undefined, `app.kubernetes.io/instance=${config.release},app.kubernetes.io/component=plan`);
  const released: string[] = [];
  const names = items.map((pp) => String(pp.metadata?.name));
  for (const name of names) if (await release(client, name)) released.push(name);
  process.stdout.write(`${JSON.stringify({ release: config.release, planpolicies: names, finalizers_removed: released })}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof OperatorConfigError ? err.message : ((err as Error).stack ?? String(err))}\n`);
  process.exit(err instanceof OperatorConfigError ? 2 : 1);
});
