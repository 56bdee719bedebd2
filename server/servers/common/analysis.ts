// Running an analytics function on user-chosen data: its RangeErrors (too little history for the
// window, a degenerate series) are the caller's to fix, so they become INVALID_PARAMS, not 500s.
import type { ComputeJob } from '../../compute/types.ts';
import { ApiError } from '../../errors.ts';
import type { ToolContext } from '../../mcp/tool.ts';

/** A call's job in the compute pool: its account's share, and stopped when the call is aborted. */
export function jobOf(ctx: ToolContext): ComputeJob {
  return { account: ctx.account.id, signal: ctx.signal };
}

export function analyse<T>(what: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw invalidParams(what, err);
  }
}

/** The same for work handed to the compute pool (its RangeErrors are rebuilt on this thread). */
export async function analysed<T>(what: string, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    throw invalidParams(what, err);
  }
}

function invalidParams(what: string, err: unknown): unknown {
  if (err instanceof RangeError) return new ApiError('INVALID_PARAMS', `${what}: ${err.message}`, { issues: [{ path: '', message: err.message }] });
  return err;
}
