import type { Condition } from '../api/types.ts';

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
