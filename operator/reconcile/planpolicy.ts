// One pass for one PlanPolicy: validate, make sure the finalizer guards the row, upsert the row
// into the gateway's plans table (operator/db/plans.ts: the operator's own SQL against the schema
// `cryptomcp migrate` creates), and write status once if it changed. Deleting a
// PlanPolicy removes the row only once no account is on the plan; until then the object stays,
// with Ready=False / PlanInUse saying why, and the pass looks again a little later.
import { isDeepStrictEqual } from 'node:util';
import { API_VERSION, Conditions, PLAN_FINALIZER, Reasons, type PlanPolicy, type PlanPolicyStatus } from '../api/types.ts';
import { findCondition, mergeConditions, transitionEvents, type ConditionInput } from '../builders/conditions.ts';
import { claimedByOther, OPERATOR_ANNOTATION } from '../builders/ownership.ts';
import { planFromPolicy } from '../builders/validate.ts';
import { planAccountCount, planDeleteUnused, planGet, planUpsert, type PlanRow } from '../db/plans.ts';
import type { OperatorDatabase } from '../db/pool.ts';
import type { KubeClient } from '../kube/client.ts';
import type { EventSink } from '../kube/events.ts';
import { patchStatusOnce, ReconcileError } from './errors.ts';
import type { ReconcileOutcome } from './mcpserver.ts';

export interface PlanPolicyContext {
  client: KubeClient;
  events: EventSink;
  db: OperatorDatabase;
  /** Every PlanPolicy the informer knows, to find two policies naming one plan. */
  all: () => PlanPolicy[];
  /** This installation: a PlanPolicy another one claimed (its annotation) is left to it. */
  instance: string;
  /** How soon to look again at a deletion blocked by accounts on the plan. */
  inUseRetryMs?: number;
  now?: () => Date;
}

/** The policy that owns a plan name when several claim it: the oldest, then by name. */
function owner(policies: PlanPolicy[], plan: string): PlanPolicy | undefined {
  return policies
    .filter((p) => p.spec?.plan === plan && !p.metadata.deletionTimestamp)
    .sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') || a.metadata.name.localeCompare(b.metadata.name))[0];
}

export async function reconcilePlanPolicy(ctx: PlanPolicyContext, pp: PlanPolicy | undefined): Promise<ReconcileOutcome> {
  if (!pp) return { result: 'success' };
  const now = ctx.now?.() ?? new Date();
  const finalizers = pp.metadata.finalizers ?? [];
  const parsed = planFromPolicy(pp.spec);

  // Claimed by another installation (each writes its own database): never touched here, not
  // even its finalizer; Owned=False and an Event say so.
  const other = claimedByOther(pp, ctx.instance);
  if (other) {
    if (pp.metadata.deletionTimestamp) return { result: 'success' };
    const message = `PlanPolicy ${pp.metadata.name} is managed by operator ${other}; operator ${ctx.instance} leaves it alone`;
    ctx.events.record(pp, 'Warning', Reasons.ManagedByAnotherOperator, message);
    await writeStatus(ctx, pp, { ...pp.status, conditions: mergeConditions(pp.status?.conditions, [{ type: Conditions.Owned, status: 'False', reason: Reasons.ManagedByAnotherOperator, message }], pp.metadata.generation, now) });
    return { result: 'success' };
  }

  if (pp.metadata.deletionTimestamp) {
    if (!finalizers.includes(PLAN_FINALIZER)) return { result: 'success' };
    if (parsed.ok) {
      // Another live policy owns the same plan: the row is theirs; just let this one go.
      const other = owner(ctx.all(), parsed.plan.name);
      if (!other || other.metadata.name === pp.metadata.name) {
        const { deleted, accounts } = await planDeleteUnused(ctx.db, parsed.plan.name).catch((err: unknown) => {
          const message = `plans row "${parsed.plan.name}" not deleted: ${(err as Error).message}`;
          ctx.events.record(pp, 'Warning', Reasons.DatabaseError, message);
          throw new ReconcileError('DatabaseError', message, { cause: err });
        });
        if (!deleted) {
          ctx.events.record(pp, 'Warning', Reasons.PlanInUse, `deletion waits: ${accounts} account(s) are on plan "${parsed.plan.name}"`);
          await writeStatus(ctx, pp, {
            ...pp.status,
            accounts,
            conditions: mergeConditions(
              pp.status?.conditions,
              [{ type: Conditions.Ready, status: 'False', reason: Reasons.PlanInUse, message: `deletion waits: ${accounts} account(s) are on plan "${parsed.plan.name}"; move them to another plan first (cryptomcp accounts set-plan <id> <plan>)` }],
              pp.metadata.generation,
              now,
            ),
          });
          return { result: 'requeue', afterMs: ctx.inUseRetryMs ?? 30_000 };
        }
      }
    }
    await ctx.client.mergePatch({
      apiVersion: API_VERSION,
      kind: 'PlanPolicy',
      metadata: { name: pp.metadata.name, resourceVersion: pp.metadata.resourceVersion, finalizers: finalizers.filter((f) => f !== PLAN_FINALIZER) },
    });
    return { result: 'success' };
  }

  if (!parsed.ok) {
    ctx.events.record(pp, 'Warning', Reasons.InvalidSpec, parsed.problems.join('; '));
    await writeStatus(ctx, pp, rejected(pp, Reasons.InvalidSpec, parsed.problems.join('; '), now));
    return { result: 'success' };
  }
  const plan = parsed.plan;
  const claimant = owner(ctx.all(), plan.name);
  if (claimant && claimant.metadata.name !== pp.metadata.name) {
    ctx.events.record(pp, 'Warning', Reasons.PlanConflict, `plan "${plan.name}" is already defined by PlanPolicy ${claimant.metadata.name}`);
    await writeStatus(ctx, pp, rejected(pp, Reasons.PlanConflict, `plan "${plan.name}" is already defined by PlanPolicy ${claimant.metadata.name}`, now));
    return { result: 'success' };
  }

  let current = pp;
  if (!finalizers.includes(PLAN_FINALIZER) || pp.metadata.annotations?.[OPERATOR_ANNOTATION] !== ctx.instance) {
    // The claim and the finalizer in one write, with the resourceVersion it read: of two
    // installations claiming at once, one gets a 409 and, retrying, finds the other's claim.
    current = (await ctx.client.mergePatch({
      apiVersion: API_VERSION,
      kind: 'PlanPolicy',
      metadata: {
        name: pp.metadata.name,
        resourceVersion: pp.metadata.resourceVersion,
        annotations: { [OPERATOR_ANNOTATION]: ctx.instance },
        finalizers: finalizers.includes(PLAN_FINALIZER) ? finalizers : [...finalizers, PLAN_FINALIZER],
      },
    })) as unknown as PlanPolicy;
  }

  let accounts: number;
  let changed: boolean;
  try {
    const before = await planGet(ctx.db, plan.name);
    changed = !before || !samePlan(before, plan);
    if (changed) await planUpsert(ctx.db, plan);
    accounts = await planAccountCount(ctx.db, plan.name);
  } catch (err) {
    const message = `plans table not written: ${(err as Error).message}`;
    ctx.events.record(current, 'Warning', Reasons.DatabaseError, message);
    await writeStatus(ctx, current, {
      ...current.status,
      conditions: mergeConditions(
        current.status?.conditions,
        [
          { type: Conditions.Accepted, status: 'True', reason: Reasons.Valid, message: 'spec is valid' },
          { type: Conditions.Synced, status: 'False', reason: Reasons.DatabaseError, message },
          { type: Conditions.Ready, status: 'False', reason: Reasons.DatabaseError, message: 'the plan is not in the database yet' },
        ],
        current.metadata.generation,
        now,
      ),
    }).catch(() => {});
    throw new ReconcileError('DatabaseError', message, { cause: err });
  }

  const wasSynced = current.status?.conditions?.find((c) => c.type === Conditions.Synced)?.status === 'True' && current.status.observedGeneration === current.metadata.generation;
  const conditions: ConditionInput[] = [
    { type: Conditions.Accepted, status: 'True', reason: Reasons.Valid, message: 'spec is valid' },
    { type: Conditions.Synced, status: 'True', reason: Reasons.Upserted, message: `plans row "${plan.name}" matches the spec` },
    { type: Conditions.Ready, status: 'True', reason: Reasons.Upserted, message: `plan "${plan.name}" is enforced` },
  ];
  await writeStatus(ctx, current, {
    observedGeneration: current.metadata.generation,
    // syncedAt moves only when the row was written (or first synced for this generation), so an
    // idle resync does not rewrite status and wake every watcher.
    syncedAt: changed || !wasSynced || !current.status?.syncedAt ? now.toISOString().replace(/\.\d{3}Z$/, 'Z') : current.status.syncedAt,
    accounts,
    conditions: mergeConditions(current.status?.conditions, conditions, current.metadata.generation, now),
  });
  // Synced was True already, so no transition says it: the edit that rewrote the row does.
  if (changed && findCondition(current.status?.conditions, Conditions.Synced)?.status === 'True') {
    ctx.events.record(current, 'Normal', Reasons.Upserted, `plans row "${plan.name}" rewritten for generation ${current.metadata.generation}`);
  }
  return { result: 'success' };
}

function samePlan(a: PlanRow, b: PlanRow): boolean {
  return isDeepStrictEqual({ ...a, servers: [...a.servers] }, { ...b, servers: [...b.servers] });
}

function rejected(pp: PlanPolicy, reason: string, message: string, now: Date): PlanPolicyStatus {
  return {
    ...pp.status,
    observedGeneration: pp.metadata.generation,
    conditions: mergeConditions(
      pp.status?.conditions,
      [
        { type: Conditions.Accepted, status: 'False', reason, message },
        { type: Conditions.Synced, status: 'False', reason, message: 'not written to the plans table' },
        { type: Conditions.Ready, status: 'False', reason, message: 'spec is not accepted; see Accepted' },
      ],
      pp.metadata.generation,
      now,
    ),
  };
}

async function writeStatus(ctx: PlanPolicyContext, pp: PlanPolicy, status: PlanPolicyStatus): Promise<void> {
  if (isDeepStrictEqual(JSON.parse(JSON.stringify(status)), JSON.parse(JSON.stringify(pp.status ?? {})))) return;
  await patchStatusOnce(() => ctx.client.patchStatus(API_VERSION, 'planpolicies', undefined, pp.metadata.name, status, pp.metadata.resourceVersion));
  for (const e of transitionEvents(pp.status?.conditions, status.conditions)) ctx.events.record(pp, 'Normal', e.reason, e.message);
}
