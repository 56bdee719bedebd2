// Why a reconcile pass failed, as a small fixed set: the label of
// cryptomcp_operator_reconcile_errors_total and the reason of the Warning Event.
import { statusOf } from '../kube/client.ts';

export type ErrorReason = 'ApplyFailed' | 'DatabaseError' | 'Conflict' | 'ApiError' | 'Unknown';

export class ReconcileError extends Error {
  readonly reason: ErrorReason;

  constructor(reason: ErrorReason, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
  }
}

/** The reason of any error a pass throws: its own, or from the API server's status code. */
export function errorReason(err: unknown): ErrorReason {
  if (err instanceof ReconcileError) return err.reason;
  const code = statusOf(err);
  if (code === 409) return 'Conflict';
  return code > 0 ? 'ApiError' : 'Unknown';
}
