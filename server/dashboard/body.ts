// A request body (or params) checked against its schema: the data, or 400 INVALID_PARAMS naming
// each field that is wrong. Shared by every /api route module.
import type { z } from 'zod';
import { ApiError } from '../errors.ts';

export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body ?? {});
  if (!parsed.success) {
    throw new ApiError('INVALID_PARAMS', 'The request fields are invalid.', {
      issues: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
  return parsed.data;
}

/** What a credential (an API key, an OAuth connection) is now: revoked wins over expired. */
export function credentialStatus(c: { revoked_at: Date | null; expires_at: Date | null }, now = Date.now()): 'active' | 'revoked' | 'expired' {
  if (c.revoked_at) return 'revoked';
  if (c.expires_at && c.expires_at.getTime() <= now) return 'expired';
  return 'active';
}
