// One level-based pass for one MCPServer: read it and the secrets it references, build the
// desired children with the pure builders, apply each with server-side apply, delete the
// children it no longer wants, and write status once — only if it changed, so a pass that finds
// nothing to do writes nothing and triggers nothing. A child the API server refuses sets
// Ready=False / ApplyFailed with the API server's own message, records a Warning Event and
// fails the pass (retried with backoff); status transitions record Normal Events. A child that
// another installation of the operator (or anyone but this MCPServer) holds is never written:
// the pass records a Warning Event and a False condition instead (builders/ownership.ts).
import { isDeepStrictEqual } from 'node:util';
import type { KubernetesObject, V1Deployment } from '@kubernetes/client-node';
import { API_VERSION, Reasons, type MCPServer, type MCPServerStatus } from '../api/types.ts';
import { CHILD_KINDS, REPLICAS_FROM_SPEC_ANNOTATION, desiredChildren, hpaOwnsReplicas, referencedSecretKeys } from '../builders/mcpserver.ts';
import { transitionEvents } from '../builders/conditions.ts';
import { foreignHolder, OPERATOR_ANNOTATION, type Foreign } from '../builders/ownership.ts';
import { acceptedStatus, applyFailedStatus, refusedStatus, rejectedStatus, rolloutOf } from '../builders/status.ts';
import { validateMcpServer } from '../builders/validate.ts';
import { statusOf, type KubeClient } from '../kube/client.ts';
import type { EventSink } from '../kube/events.ts';
import { patchStatusOnce, ReconcileError } from './errors.ts';

/** The field manager that holds replicas for the HPA during a handoff (see handReplicasToHpa). */
export const HANDOFF_FIELD_MANAGER = 'cryptomcp-operator-hpa-handoff';

export interface ReconcileOutcome {
  result: 'success' | 'requeue';
  /** For requeue: when to look again. */
  afterMs?: number;
}

export interface McpServerContext {
  client: KubeClient;
  events: EventSink;
  image: string;
  /** This installation (`<namespace>/<Deployment>`), stamped on every child it writes. */
  instance: string;
  now?: () => Date;
}

/** How soon to look again at a child someone else holds (its removal wakes no watch of ours). */
const REFUSED_RETRY_MS = 60_000;

export async function reconcileMcpServer(ctx: McpServerContext, mcp: MCPServer | undefined): Promise<ReconcileOutcome> {
  // Gone: the API server's garbage collector removes the children through their owner references.
  if (!mcp || mcp.metadata.deletionTimestamp) return { result: 'success' };
  const now = ctx.now?.() ?? new Date();

  const problems = validateMcpServer(mcp.spec, mcp.metadata.name);
  if (problems.length > 0) {
    // Stop here: no retry storm on a spec only its author can fix; the next edit brings it back.
    ctx.events.record(mcp, 'Warning', Reasons.InvalidSpec, problems.join('; '));
    await writeStatus(ctx, mcp, rejectedStatus(mcp, problems, now));
    return { result: 'success' };
  }

  const secretValues: Record<string, string | undefined> = {};
  const secrets = new Map<string, Record<string, string> | undefined>();
  for (const ref of referencedSecretKeys(mcp.spec)) {
    const [name, key] = ref.split('/') as [string, string];
    if (!secrets.has(name)) {
      const s = await ctx.client.get<KubernetesObject & { data?: Record<string, string> }>('v1', 'Secret', mcp.metadata.namespace, name);
      secrets.set(name, s?.data);
    }
    const b64 = secrets.get(name)?.[key];
    secretValues[ref] = b64 === undefined ? undefined : Buffer.from(b64, 'base64').toString('utf8');
  }

  const desired = desiredChildren(mcp, { image: ctx.image, secretValues });
  // Every kind it may own, as it is now: whose it is decides whether this pass writes anything.
  const existing = new Map<string, KubernetesObject | undefined>();
  for (const { apiVersion, kind } of CHILD_KINDS) existing.set(kind, await ctx.client.get(apiVersion, kind, mcp.metadata.namespace, mcp.metadata.name));
  const refused = desired.children
    .map((c) => ({ kind: c.kind!, foreign: foreignHolder(existing.get(c.kind!), mcp.metadata.uid, ctx.instance) }))
    .filter((r): r is { kind: string; foreign: Foreign } => r.foreign !== undefined);
  if (refused.length > 0) return refuse(ctx, mcp, refused, now);

  await handReplicasToHpa(ctx, mcp);
  let deployment: V1Deployment | undefined;
  for (const child of desired.children) {
    child.metadata = { ...child.metadata, annotations: { ...child.metadata?.annotations, [OPERATOR_ANNOTATION]: ctx.instance } };
    let applied: KubernetesObject;
    try {
      applied = await ctx.client.apply(child);
    } catch (err) {
      const message = `${child.kind} ${child.metadata?.name}: ${(err as Error).message}`;
      // A 409 is optimistic concurrency, not a refusal: retry quietly.
      if (statusOf(err) === 409) throw new ReconcileError('Conflict', message, { cause: err });
      ctx.events.record(mcp, 'Warning', Reasons.ApplyFailed, message);
      await writeStatus(ctx, mcp, applyFailedStatus(mcp, message, now)).catch(() => {});
      throw new ReconcileError('ApplyFailed', message, { cause: err });
    }
    if (child.kind === 'Deployment') deployment = applied as V1Deployment;
  }

  // Prune: a kind it may own but does not want now (an HPA after replicas was set, an Ingress
  // after it was switched off). Names are deterministic, so a GET per kind finds it; only an
  // object this MCPServer controls is deleted.
  const wanted = new Set(desired.children.map((c) => c.kind));
  for (const { apiVersion, kind } of CHILD_KINDS) {
    if (wanted.has(kind)) continue;
    const child = existing.get(kind);
    if (child?.metadata?.ownerReferences?.some((r) => r.uid === mcp.metadata.uid && r.controller) && !foreignHolder(child, mcp.metadata.uid, ctx.instance)) {
      await ctx.client.delete(apiVersion, kind, mcp.metadata.namespace, mcp.metadata.name);
    }
  }

  const status = acceptedStatus(mcp, { rollout: rolloutOf(deployment), url: desired.url, configHash: desired.configHash }, now);
  await writeStatus(ctx, mcp, status);
  return { result: 'success' };
}

/**
 * Someone else holds a child. Another installation managing this very MCPServer writes its
 * Ready; this one says only Owned=False (a condition type the manager never writes, so the two
 * never flip each other's status). Anything else holding it: Ready=False as well.
 */
async function refuse(ctx: McpServerContext, mcp: MCPServer, refused: { kind: string; foreign: Foreign }[], now: Date): Promise<ReconcileOutcome> {
  const message = `${refused.map((r) => `${r.kind} ${mcp.metadata.name} is held by ${r.foreign.holder}`).join('; ')}; operator ${ctx.instance} leaves it alone`;
  const byOperator = refused.every((r) => r.foreign.operator !== undefined);
  const reason = byOperator ? Reasons.ManagedByAnotherOperator : Reasons.ChildNotControlled;
  ctx.events.record(mcp, 'Warning', reason, message);
  await writeStatus(ctx, mcp, refusedStatus(mcp, reason, message, !byOperator, now));
  return { result: 'requeue', afterMs: REFUSED_RETRY_MS };
}

/**
 * From a fixed count to autoscaling without a dip. Server-side apply removes a field its manager
 * stops sending, and the Deployment's default would then put replicas at 1 until the HPA raises
 * it. So, as the Kubernetes documentation's "transferring ownership" recipe does, a second field
 * manager applies the current count (at least the HPA's minimum) first: the field stays, shared,
 * when the operator's own apply drops it, and the HPA takes it from there.
 */
async function handReplicasToHpa(ctx: McpServerContext, mcp: MCPServer): Promise<void> {
  if (!hpaOwnsReplicas(mcp.spec)) return;
  const { name, namespace } = mcp.metadata;
  const current = await ctx.client.get<V1Deployment>('apps/v1', 'Deployment', namespace, name);
  const replicas = current?.spec?.replicas;
  if (current?.metadata?.annotations?.[REPLICAS_FROM_SPEC_ANNOTATION] !== 'true' || replicas === undefined) return;
  const floor = mcp.spec.autoscaling?.minReplicas ?? 2;
  await ctx.client.apply({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace }, spec: { replicas: Math.max(replicas, floor) } } as V1Deployment, HANDOFF_FIELD_MANAGER);
}

async function writeStatus(ctx: McpServerContext, mcp: MCPServer, status: MCPServerStatus): Promise<void> {
  if (isDeepStrictEqual(normalise(status), normalise(mcp.status ?? {}))) return;
  await patchStatusOnce(() => ctx.client.patchStatus(API_VERSION, 'mcpservers', mcp.metadata.namespace, mcp.metadata.name, status, mcp.metadata.resourceVersion));
  for (const e of transitionEvents(mcp.status?.conditions, status.conditions)) ctx.events.record(mcp, 'Normal', e.reason, e.message);
}

/** Drops undefined members so a status read back from JSON compares equal to a built one. */
function normalise(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}
