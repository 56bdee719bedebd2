// Stage 7 (DESIGN.md §3 rows 6-7): one round trip reserves a tools/call's credits, after the
// plan's rate limit, lazy renewal and the balance have been checked in the same statement.
import { ApiError } from '../errors.ts';
import type { CreditMeter, MeterDecision } from '../metering/meter.ts';
import type { Classified, Reserved } from './context.ts';
import { planRateLimited } from './rate-limit.ts';

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
    case 'account_not_found':
      return { ok: false, error: new ApiError('INVALID_API_KEY'), decision };
    case 'ok':
    case 'replayed':
      return { ok: true, reserved: { ...call, decision, cost } };
  }
}
