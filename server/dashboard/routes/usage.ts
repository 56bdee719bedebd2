// An account's usage: the balance with credits per day, the breakdown of what the gateway logged
// (by day, key, server/tool and error code), and the same days as CSV.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { DashboardConfig } from '../../config.ts';
import type { Database } from '../../db/pool.ts';
import type { UsageReader } from '../../mcp/tool.ts';
import { parseBody } from '../body.ts';
import { sessionOf } from '../session.ts';
import { parseRange, usageBreakdown, usageCsv, usageDaily, usageOutlook } from '../usage.ts';

export function usageRoutes(
  authed: FastifyInstance,
  deps: { db: Database; usage: UsageReader; settings: Pick<DashboardConfig, 'requestLogRetentionDays'> },
): void {
  const { db, settings } = deps;

  // `days` (last N days) or `from` and `to` (YYYY-MM-DD, UTC, both included).
  authed.get('/usage', async (request) => {
    const range = parseRange(request.query);
    const accountId = sessionOf(request).account_id;
    const report = await deps.usage.usage(accountId);
    return { ...report, ...range, daily: await usageDaily(db, accountId, range), outlook: await usageOutlook(db, accountId, report, new Date()) };
  });

  // What the gateway logged in the range: by day, key, server/tool and error code, with
  // succeeded, failed and rate-limited (429) apart; optionally one key's requests only.
  authed.get('/usage/breakdown', async (request) => {
    const range = parseRange(omit(request.query, 'key'));
    const { key } = parseBody(z.object({ key: z.string().uuid().optional() }), pick(request.query, 'key'));
    return usageBreakdown(db, sessionOf(request).account_id, range, { keyId: key, retentionDays: settings.requestLogRetentionDays });
  });

  authed.get('/usage.csv', async (request, reply) => {
    const range = parseRange(request.query);
    const csv = await usageCsv(db, sessionOf(request).account_id, range);
    return reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="cryptomcp-usage-${range.from}-${range.to}.csv"`)
      .send(csv);
  });
}

/** The query without one field, and with only that field (the range and key are parsed apart). */
function omit(query: unknown, field: string): Record<string, unknown> {
  return Object.fromEntries(Object.entries((query ?? {}) as Record<string, unknown>).filter(([k]) => k !== field));
}
function pick(query: unknown, field: string): Record<string, unknown> {
  const value = ((query ?? {}) as Record<string, unknown>)[field];
  return value === undefined ? {} : { [field]: value };
}
