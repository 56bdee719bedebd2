// GET /api/requests: the request log, newest first, filtered by key, server, tool and status,
// paged by `before`.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { DashboardConfig } from '../../config.ts';
import type { Database } from '../../db/pool.ts';
import { parseBody } from '../body.ts';
import { requestLogPage } from '../requestLog.ts';
import { sessionOf } from '../session.ts';

const RequestsQuery = z.object({
  key: z.string().uuid().optional(),
  server: z.string().max(64).optional(),
  tool: z.string().max(128).optional(),
  status: z.union([z.enum(['ok', 'error', 'rate_limited']), z.string().regex(/^[1-5]\d{2}$/)]).optional(),
  before: z.coerce.number().int().positive().optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

export function requestRoutes(authed: FastifyInstance, deps: { db: Database; settings: Pick<DashboardConfig, 'requestLogRetentionDays'> }): void {
  authed.get('/requests', async (request) => {
    const q = parseBody(RequestsQuery, request.query);
    const status = q.status === undefined ? undefined : /^\d{3}$/.test(q.status) ? Number(q.status) : (q.status as 'ok' | 'error' | 'rate_limited');
    return requestLogPage(
      deps.db,
      sessionOf(request).account_id,
      { key_id: q.key, server: q.server, tool: q.tool, status, before: q.before, limit: q.limit },
      deps.settings.requestLogRetentionDays,
    );
  });
}
