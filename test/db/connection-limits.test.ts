// DESIGN.md §3 row 8 at the connection limit: when PostgreSQL (or a pooler) has no connection
// slot left for the service ("too many connections", SQLSTATE 53300) or refuses the connection
// for any other reason (a password it rejects), the client gets 503 SERVICE_UNAVAILABLE, never
// 500 INTERNAL_ERROR: the runbook then says "the database is out of connections", not "roll back".
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseUnavailableError, toApiError } from '../../server/errors.ts';
import { createDatabase } from '../../server/db/pool.ts';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createAccountWithKey, createUnlimitedPlan, post, startTestService, toolCall } from '../helpers/service.ts';

let db: TestDatabase;
let role: string;
let roleUrl: string;
const services: RunningService[] = [];
const hogs: pg.Client[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  role = `lim_${randomBytes(4).toString('hex')}`;
  // A role with two connection slots: what max_connections is to the whole server, in small.
  await db.query(`CREATE ROLE ${role} LOGIN PASSWORD 'pw' CONNECTION LIMIT 2`);
  await db.query(`GRANT ALL ON ALL TABLES IN SCHEMA public TO ${role}`);
  await db.query(`GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO ${role}`);
  await db.query(`GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO ${role}`);
  const u = new URL(db.url);
  u.username = role;
  u.password = 'pw';
  roleUrl = u.toString();
});

afterAll(async () => {
  await Promise.all(services.map((s) => s.close().catch(() => {})));
  await Promise.all(hogs.map((h) => h.end().catch(() => {})));
  await db.query(`DROP OWNED BY ${role}`).catch(() => {});
  await db.drop();
  const admin = new pg.Client({ connectionString: db.url.replace(/\/[^/]*$/, '/postgres') });
  await admin.connect();
  await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
  await admin.end();
});

describe('out of connection slots', () => {
  it('a query when every slot is taken rejects with DatabaseUnavailableError, which answers 503 SERVICE_UNAVAILABLE; so does a refused password', async () => {
    for (let i = 0; i < 2; i++) {
      const hog = new pg.Client({ connectionString: roleUrl });
      await hog.connect();
      hogs.push(hog);
    }
    const pool = createDatabase({ url: roleUrl, max: 2 });
    try {
      const err = await pool.query('SELECT 1').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(DatabaseUnavailableError);
      expect(((err as Error).cause as { code?: string }).code).toBe('53300');
      expect(toApiError(err)).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
    } finally {
      await pool.close();
      await Promise.all(hogs.splice(0).map((h) => h.end()));
    }
    const u = new URL(roleUrl);
    u.password = 'wrong';
    const refused = createDatabase({ url: u.toString(), max: 1 });
    try {
      const err = await refused.query('SELECT 1').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(toApiError(err)).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
    } finally {
      await refused.close();
    }
  });

  it('tools/call on a service whose pool wants more connections than the database has slots: every refusal is 503 SERVICE_UNAVAILABLE, none 500', async () => {
    await createUnlimitedPlan(db, 'slots', 1_000_000);
    const { key } = await createAccountWithKey(db, { plan: 'slots' });
    const svc = await startTestService(roleUrl, { DATABASE_POOL_MAX: '10', KEY_CACHE_TTL_MS: '0' });
    services.push(svc);
    // The service holds what it needs now; someone else takes the remaining slot.
    const hog = new pg.Client({ connectionString: roleUrl });
    await hog.connect();
    hogs.push(hog);
    // And the service's idle connection is busy (as under load): every call needs a connection
    // more than the database has slots for. Without this the calls could all be served one after
    // another on that one connection (the meter batches reservations), and on a loaded machine
    // they were: 24 times 200, no refusal to look at.
    const busy = await svc.db.pool.connect();
    const results = await Promise.all(
      Array.from({ length: 24 }, (_, i) => post(`${svc.url}/mcp/market-intelligence`, toolCall('bench_sleep', { ms: 50 }, i), { 'x-api-key': key })),
    ).finally(() => busy.release());
    const statuses = results.map((r) => `${r.status} ${(r.body as { error?: { code?: string } }).error?.code ?? ''}`.trim());
    expect(statuses.filter((s) => s.startsWith('503')).length, statuses.join(', ')).toBeGreaterThan(0);
    expect(statuses.filter((s) => s !== '200' && s !== '503 SERVICE_UNAVAILABLE'), statuses.join(', ')).toEqual([]);
  });
});
