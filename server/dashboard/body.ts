// A request body (or params) checked against its schema: the data, or 400 INVALID_PARAMS naming
// each field that is wrong. Shared by every /api route module, all of which sit behind
// refuseNulInput (registered once in api.ts), so a NUL never reaches a schema here.
import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { ApiError } from '../errors.ts';
import { refuseNul } from '../lib/text.ts';

export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body ?? {});
  if (!parsed.success) {
    throw new ApiError('INVALID_PARAMS', 'The request fields are invalid.', {
      issues: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
  return parsed.data;
}

/**
 * A preValidation hook for a whole API: a NUL anywhere in the body, query or path parameters is
 * 400 INVALID_PARAMS before any route sees it, whether or not the route parses through parseBody
 * (PostgreSQL text cannot hold a NUL, so it would otherwise fail the query with a 500).
 */
export async function refuseNulInput(request: FastifyRequest): Promise<void> {
  // Named as parseBody names them: by the field's own path, wherever it came in.
  for (const input of [request.params, request.query, request.body]) refuseNul(input);
}
