// Stage 7 (DESIGN.md §3 rows 6-7): one round trip reserves a tools/call's credits, after the
// plan's rate limit, lazy renewal and the balance have been checked in the same statement, and the
// key's own controls (pause, credit cap, rate limit: migration 0016) with them.
import { ApiError } from '../errors.ts';
import type { CreditMeter, MeterDecision } from '../metering/meter.ts';
import type { Classified, Reserved } from './context.ts';
import { keyRateLimited, planRateLimited } from './rate-limit.ts';

export type Reservation =
  | { ok: true; reserved: Reserved & { call: { kind: 'tools/call' } } }
  /** Refused by the rate limit, the balance or the account; the decision still fills the headers. */
  | { ok: false; error: ApiError; decision: MeterDecision };

export async function reserve(meter: CreditMeter, call: Classified & { call: { kind: 'tools/call' } }): Promise<Reservation> {
  const cost = call.call.tool.credits;
  const decision = await meter.reserve({
    accountId: call.grant.account_id,
    requestId: call.requestId,
    cost,
    record: true,
    server: call.call.tool.server,
    tool: call.call.tool.name,
    keyId: call.grant.key_id,
  });
  switch (decision.outcome) {
    case 'rate_limited':
      return { ok: false, error: planRateLimited(decision), decision };
    case 'insufficient_credits':
      return { ok: false, error: new ApiError('INSUFFICIENT_CREDITS', undefined, { required: cost, available: decision.balance }), decision };
    case 'suspended':
      return { ok: false, error: new ApiError('ACCOUNT_SUSPENDED'), decision };
    case 'key_paused':
      return { ok: false, error: new ApiError('KEY_PAUSED', undefined, { key_id: call.grant.key_id }), decision };
    case 'key_cap_reached':
      return { ok: false, error: keyCapReached(decision, cost, new Date()), decision };
    case 'key_rate_limited':
      return { ok: false, error: keyRateLimited(decision), decision };
    case 'account_not_found':
      return { ok: false, error: new ApiError('INVALID_API_KEY'), decision };
    case 'ok':
    case 'replayed':
      return { ok: true, reserved: { ...call, decision, cost } };
    default:
      return { ok: false, error: unknownRefusal(decision.outcome as string, decision), decision };
  }
}

/**
 * An outcome this code does not know: a refusal added to the metering statement after it was
 * written, met by a pod of the previous version during a rolling upgrade (as key_paused and
 * key_cap_reached once were). Only 'ok' and 'replayed' admit a call, so it is refused, as a 429
 * with the decision's retry time when it names a rate, else as a 403 naming the outcome; never
 * run, never a 500.
 */
function unknownRefusal(outcome: string, decision: MeterDecision): ApiError {
  if (outcome.includes('rate')) {
    const retryAfter = Math.max(1, Math.ceil(decision.retryAfterSeconds));
    return new ApiError('RATE_LIMITED', 'Too many requests; retry later.', { retry_after_seconds: retryAfter, reason: outcome }, { 'retry-after': String(retryAfter) });
  }
  return new ApiError('REQUEST_REFUSED', undefined, { reason: outcome });
}

/** The key's cap refuses this call: what it allows, what was spent, and when the period starts again (UTC). */
function keyCapReached(decision: MeterDecision, required: number, now: Date): ApiError {
  const period = decision.key?.period ?? 'month';
  const resets =
    period === 'day'
      ? Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)
      : Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return new ApiError('KEY_CAP_REACHED', undefined, {
    cap: decision.key?.cap ?? null,
    spent: decision.key?.spent ?? null,
    required,
    period,
    resets_at: new Date(resets).toISOString(),
  });
}
