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

/**
 * A status computed from a cache older than the object (its own last write not seen yet): the
 * API server refused it on resourceVersion. Not a failure: the worker looks again shortly, once
 * the watch has delivered the newer version, without counting an error or backing off.
 */
export class StaleRead extends Error {}

/** Status patches carry the resourceVersion they were computed from; a 409 means a stale read. */
export async function patchStatusOnce(write: () => Promise<void>): Promise<void> {
  try {
    await write();
  } catch (err) {
    if (statusOf(err) === 409) throw new StaleRead((err as Error).message, { cause: err });
    throw err;
  }
}
