// GET /api/audit: the account's dashboard actions (server/dashboard/audit.ts writes them), newest
// first, paged by cursor.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Database } from '../../db/pool.ts';
import type { AuditAction } from '../audit.ts';
import { parseBody } from '../body.ts';
import { sessionOf } from '../session.ts';

interface AuditRow {
  id: string;
  action: AuditAction;
  wallet: string | null;
  chain: string | null;
  request_id: string | null;
  target: string | null;
  details: Record<string, unknown>;
  created_at: Date;
}

const AuditQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z
    .string()
    .regex(/^\d{1,18}$/)
    .optional(),
});

/** GET /api/audit: the account's actions, newest first; `next_cursor` pages on (null at the end). */
export function auditRoutes(authed: FastifyInstance, deps: { db: Database }): void {
  authed.get('/audit', async (request, reply) => {
    const q = parseBody(AuditQuery, request.query);
    const res = await deps.db.query<AuditRow>(
      `SELECT id::text, action, wallet, chain, request_id, target, details, created_at FROM audit_log
        WHERE account_id = $1 AND ($2::bigint IS NULL OR id < $2::bigint)
        ORDER BY audit_log.id DESC LIMIT $3`,
      [sessionOf(request).account_id, q.cursor ?? null, q.limit + 1],
    );
    const rows = res.rows.slice(0, q.limit);
    reply.header('cache-control', 'no-store');
    return {
      entries: rows.map((r) => ({
        id: r.id,
        action: r.action,
        wallet: r.wallet === null ? null : { family: r.chain, address: r.wallet },
        request_id: r.request_id,
        target: r.target,
        details: r.details,
        at: r.created_at.toISOString(),
      })),
      next_cursor: res.rows.length > q.limit ? rows[rows.length - 1]!.id : null,
    };
  });
}
