// The request log: GET /api/requests (newest first, filtered by key, server, tool, status, request
// id and a range of UTC days, paged by `before`), GET /api/requests.csv (the same filters, every
// matching row, streamed), and GET /api/requests/:request_id (one request in full, by the id its
// answer quoted).
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { DashboardConfig } from '../../config.ts';
import type { Database } from '../../db/pool.ts';
import { ApiError } from '../../errors.ts';
import { addDays, isoDaySchema } from '../../lib/dates.ts';
import { parseBody } from '../body.ts';
import { requestLogCsv, requestLogPage, type RequestLogFilter } from '../requestLog.ts';
import { sessionOf } from '../session.ts';

const FilterQuery = z.object({
  key: z.string().uuid().optional(),
  server: z.string().max(64).optional(),
  tool: z.string().max(128).optional(),
  request_id: z.string().trim().min(1).max(128).optional(),
  status: z.union([z.enum(['ok', 'error', 'rate_limited']), z.string().regex(/^[1-5]\d{2}$/)]).optional(),
  /** UTC days, both included. */
  from: isoDaySchema.optional(),
  to: isoDaySchema.optional(),
});
const PageQuery = FilterQuery.extend({
  before: z.coerce.number().int().positive().optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

function filterOf(q: z.infer<typeof FilterQuery>): Omit<RequestLogFilter, 'limit'> {
  if (q.from !== undefined && q.to !== undefined && q.to < q.from) {
    throw new ApiError('INVALID_PARAMS', 'The last day is before the first day.', { issues: [{ path: 'to', message: 'to is before from' }] });
  }
  return {
    key_id: q.key,
    server: q.server,
    tool: q.tool,
    request_id: q.request_id,
    status: q.status === undefined ? undefined : /^\d{3}$/.test(q.status) ? Number(q.status) : (q.status as 'ok' | 'error' | 'rate_limited'),
    since: q.from === undefined ? undefined : new Date(`${q.from}T00:00:00Z`),
    until: q.to === undefined ? undefined : new Date(`${addDays(q.to, 1)}T00:00:00Z`),
  };
}

export function requestRoutes(authed: FastifyInstance, deps: { db: Database; settings: Pick<DashboardConfig, 'requestLogRetentionDays'> }): void {
  const retention = deps.settings.requestLogRetentionDays;

  authed.get('/requests', async (request) => {
    const q = parseBody(PageQuery, request.query);
    return requestLogPage(deps.db, sessionOf(request).account_id, { ...filterOf(q), before: q.before, limit: q.limit }, retention);
  });

  authed.get('/requests.csv', async (request, reply) => {
    const filter = filterOf(parseBody(FilterQuery, request.query));
    return reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', 'attachment; filename="cryptomcp-requests.csv"')
      .header('cache-control', 'no-store')
      .send(Readable.from(requestLogCsv(deps.db, sessionOf(request).account_id, filter, retention)));
  });

  authed.get('/requests/:request_id', async (request) => {
    const { request_id } = parseBody(z.object({ request_id: z.string().min(1).max(128) }), request.params);
    const { rows } = await requestLogPage(deps.db, sessionOf(request).account_id, { request_id, limit: 1 }, retention);
    const row = rows[0];
    if (!row) throw new ApiError('NOT_FOUND', `No request ${request_id} in your log of the last ${retention} days.`, { request_id });
    return { request: row };
  });
}
