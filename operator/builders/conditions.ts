import { Conditions, Reasons, type Condition } from '../api/types.ts';

export type ConditionInput = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;

/**
 * The next conditions list: each given condition replaces the one of its type, keeping its
 * lastTransitionTime when the status did not change (so an unchanged pass writes an identical
 * status and never loops), stamped with the generation this pass observed.
 */
export function mergeConditions(previous: Condition[] | undefined, next: ConditionInput[], generation: number | undefined, now: Date): Condition[] {
  const byType = new Map((previous ?? []).map((c) => [c.type, c]));
  for (const c of next) {
    const old = byType.get(c.type);
    byType.set(c.type, {
      type: c.type,
      status: c.status,
      reason: c.reason,
      message: c.message,
      ...(generation === undefined ? {} : { observedGeneration: generation }),
      lastTransitionTime: old && old.status === c.status ? old.lastTransitionTime : now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    });
  }
  return [...byType.values()].sort((a, b) => a.type.localeCompare(b.type));
}

export function findCondition(conditions: Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/**
 * Reasons that mean something is wrong. The path that meets one records a Warning Event on every
 * occurrence (aggregated into one Event's count), so transitionEvents leaves them out.
 */
export const FAILURE_REASONS: ReadonlySet<string> = new Set([Reasons.InvalidSpec, Reasons.ApplyFailed, Reasons.DatabaseError, Reasons.PlanConflict, Reasons.PlanInUse, Reasons.ManagedByAnotherOperator, Reasons.ChildNotControlled]);

const EVENT_ORDER = [Conditions.Accepted, Conditions.Synced, Conditions.Available, Conditions.Ready] as string[];

/**
 * The Normal Events a status change stands for: one per new reason among the conditions whose
 * status or reason changed (so Synced and Ready turning True together give one "Upserted").
 */
export function transitionEvents(previous: Condition[] | undefined, next: Condition[] | undefined): { reason: string; message: string }[] {
  const before = new Map((previous ?? []).map((c) => [c.type, c]));
  const changed = (next ?? [])
    .filter((c) => before.get(c.type)?.status !== c.status || before.get(c.type)?.reason !== c.reason)
    .filter((c) => !FAILURE_REASONS.has(c.reason))
    .sort((a, b) => EVENT_ORDER.indexOf(a.type) - EVENT_ORDER.indexOf(b.type));
  const out = new Map<string, string>();
  for (const c of changed) if (!out.has(c.reason)) out.set(c.reason, `${c.type}=${c.status}: ${c.message}`);
  return [...out].map(([reason, message]) => ({ reason, message }));
}
