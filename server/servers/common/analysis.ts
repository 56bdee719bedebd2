// Running an analytics function on user-chosen data: its RangeErrors (too little history for the
// window, a degenerate series) are the caller's to fix, so they become INVALID_PARAMS, not 500s.
import { ApiError } from '../../errors.ts';

export function analyse<T>(what: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof RangeError) {
      throw new ApiError('INVALID_PARAMS', `${what}: ${err.message}`, { issues: [{ path: '', message: err.message }] });
    }
    throw err;
  }
}
