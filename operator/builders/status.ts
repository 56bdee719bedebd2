// Status of an MCPServer from what the pass observed: a pure function, so "no change, no write"
// is a plain deep-equality check in the reconciler and the status never loops.
import type { V1Deployment } from '@kubernetes/client-node';
import { Conditions, Reasons, type MCPServer, type MCPServerStatus } from '../api/types.ts';
import { mergeConditions, type ConditionInput } from './conditions.ts';
import { selectorLabels } from './mcpserver.ts';

export interface ObservedRollout {
  ready: boolean;
  available: boolean;
  message: string;
  replicas: number;
  readyReplicas: number;
}

/** The rollout state `kubectl rollout status` would report for this Deployment. */
export function rolloutOf(dep: V1Deployment | undefined): ObservedRollout {
  if (!dep) return { ready: false, available: false, message: 'Deployment not created yet', replicas: 0, readyReplicas: 0 };
  const s = dep.status ?? {};
  const want = dep.spec?.replicas ?? 1;
  const replicas = s.replicas ?? 0;
  const updated = s.updatedReplicas ?? 0;
  const available = s.availableReplicas ?? 0;
  const readyReplicas = s.readyReplicas ?? 0;
  const availableCond = s.conditions?.find((c) => c.type === 'Available')?.status === 'True';
  const base = { available: availableCond, replicas, readyReplicas };
  if ((s.observedGeneration ?? 0) < (dep.metadata?.generation ?? 0)) return { ...base, ready: false, message: 'waiting for the Deployment controller to observe the new spec' };
  if (updated < want) return { ...base, ready: false, message: `${updated} of ${want} replicas updated` };
  if (replicas > updated) return { ...base, ready: false, message: `${replicas - updated} old replicas pending termination` };
  if (available < want) return { ...base, ready: false, message: `${available} of ${want} updated replicas available` };
  return { ...base, ready: true, message: `${readyReplicas} of ${want} replicas ready` };
}

export function acceptedStatus(mcp: MCPServer, input: { rollout: ObservedRollout; url: string; configHash: string }, now: Date): MCPServerStatus {
  const { rollout } = input;
  const conditions: ConditionInput[] = [
    { type: Conditions.Accepted, status: 'True', reason: Reasons.Valid, message: 'spec is valid' },
    rollout.available
      ? { type: Conditions.Available, status: 'True', reason: Reasons.MinimumReplicasAvailable, message: 'the Deployment has minimum availability' }
      : { type: Conditions.Available, status: 'False', reason: Reasons.MinimumReplicasUnavailable, message: rollout.message },
    rollout.ready
      ? { type: Conditions.Ready, status: 'True', reason: Reasons.RolledOut, message: rollout.message }
      : { type: Conditions.Ready, status: 'False', reason: Reasons.Progressing, message: rollout.message },
  ];
  // A refusal that no longer holds (the other holder let go) is cleared; one by another
  // installation is that installation's business while it lasts, and is left alone.
  const owned = mcp.status?.conditions?.find((c) => c.type === Conditions.Owned);
  if (owned && owned.status === 'False' && owned.reason !== Reasons.ManagedByAnotherOperator) conditions.push({ type: Conditions.Owned, status: 'True', reason: Reasons.Valid, message: 'every child is managed by this MCPServer' });
  return {
    observedGeneration: mcp.metadata.generation,
    replicas: rollout.replicas,
    readyReplicas: rollout.readyReplicas,
    replicaSummary: `${rollout.readyReplicas}/${rollout.replicas}`,
    selector: Object.entries(selectorLabels(mcp)).map(([k, v]) => `${k}=${v}`).join(','),
    url: input.url,
    configHash: input.configHash,
    conditions: mergeConditions(mcp.status?.conditions, conditions, mcp.metadata.generation, now),
  };
}

/** An invalid spec: Accepted False with the problems; children are left as they were. */
export function rejectedStatus(mcp: MCPServer, problems: string[], now: Date): MCPServerStatus {
  const message = problems.join('; ');
  return {
    ...mcp.status,
    observedGeneration: mcp.metadata.generation,
    conditions: mergeConditions(
      mcp.status?.conditions,
      [
        { type: Conditions.Accepted, status: 'False', reason: Reasons.InvalidSpec, message },
        { type: Conditions.Ready, status: 'False', reason: Reasons.InvalidSpec, message: 'spec is invalid; see Accepted' },
      ],
      mcp.metadata.generation,
      now,
    ),
  };
}

/** A child the API server refused: Ready False with its message; the rest of the status stays. */
export function applyFailedStatus(mcp: MCPServer, message: string, now: Date): MCPServerStatus {
  return {
    ...mcp.status,
    conditions: mergeConditions(
      mcp.status?.conditions,
      [
        { type: Conditions.Accepted, status: 'True', reason: Reasons.Valid, message: 'spec is valid' },
        { type: Conditions.Ready, status: 'False', reason: Reasons.ApplyFailed, message },
      ],
      mcp.metadata.generation,
      now,
    ),
  };
}

/**
 * A child someone else holds: Owned False; Ready False too when the holder is not another
 * installation of the operator (which writes this object's Ready itself).
 */
export function refusedStatus(mcp: MCPServer, reason: string, message: string, notReady: boolean, now: Date): MCPServerStatus {
  const conditions: ConditionInput[] = [{ type: Conditions.Owned, status: 'False', reason, message }];
  if (notReady) conditions.push({ type: Conditions.Ready, status: 'False', reason, message });
  return { ...mcp.status, conditions: mergeConditions(mcp.status?.conditions, conditions, mcp.metadata.generation, now) };
}
