// The service behind PgBouncer in transaction mode (Debian's 1.18, which has no
// max_prepared_statements), as docs/kubernetes.md tells an SRE to run it: PgBouncer accepts the
// pool's connections (statement_timeout is a SET, not a startup parameter PgBouncer refuses), and
// a metered workload of many concurrent tools/call multiplexed over a few server connections has
// no failure (no named prepared statement to collide: "prepared statement ... already exists"),
// every call charged exactly once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOperatorDatabase } from '../../operator/db/pool.ts';
import { loadMigrations, migrate, migrationsCurrent } from '../../server/db/migrate.ts';
import { createDatabase } from '../../server/db/pool.ts';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.ts';
import { balanceOf, createAccountWithKey, createUnlimitedPlan, post, startTestService, toolCall } from '../helpers/service.ts';

let db: TestDatabase;
let bouncer: PgBouncer;
const services: RunningService[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  // Two server connections for two services of 10 client connections each: every statement of
  // the workload runs on whichever server connection is free, as in production behind a pooler.
  bouncer = await startPgBouncer(db.url, { mode: 'transaction', poolSize: 2 });
}, 60_000);

afterAll(async () => {
  await Promise.all(services.map((s) => s.close().catch(() => {})));
  await bouncer?.stop();
  await db?.drop();
});

describe('behind PgBouncer in transaction mode', () => {
  it('the pool connects (no startup parameter PgBouncer refuses) and a transaction carries the statement timeout (SET LOCAL)', async () => {
    const pool = createDatabase({ url: bouncer.url, max: 2, statementTimeoutMs: 1234 });
    try {
      expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      const inside = await pool.transaction(async (c) => (await c.query<{ statement_timeout: string }>('SHOW statement_timeout')).rows[0]!.statement_timeout);
      expect(inside).toBe('1234ms');
    } finally {
      await pool.close();
    }
  });

  it("the operator's pool connects through it too", async () => {
    const operator = createOperatorDatabase(bouncer.url);
    try {
      expect((await operator.query<{ n: number }>('SELECT count(*) AS n FROM plans')).rows[0]!.n).toBeGreaterThan(0);
    } finally {
      await operator.close();
    }
  });

  it('`migrate` through it applies every migration of a fresh database, twice at once (the advisory lock is a transaction lock)', async () => {
    const fresh = await createTestDatabase({ migrate: false });
    const via = await startPgBouncer(fresh.url, { mode: 'transaction', poolSize: 2 });
    const podA = createDatabase({ url: via.url, max: 2 });
    const podB = createDatabase({ url: via.url, max: 2 });
    try {
      const [a, b] = await Promise.all([migrate(podA.pool), migrate(podB.pool)]);
      expect([...a, ...b].sort((x, y) => x - y)).toEqual(loadMigrations().map((m) => m.version));
      expect(await migrationsCurrent(fresh.pool)).toBe(true);
    } finally {
      await podA.close();
      await podB.close();
      await via.stop();
      await fresh.drop();
    }
  });

  it('two services, 48 concurrent clients, 960 metered tools/call: 0 failures, each call charged once', { timeout: 120_000 }, async () => {
    await createUnlimitedPlan(db, 'bouncer', 1_000_000);
    // Two pods' pools (10 connections each) over PgBouncer's 2 server connections.
    for (let i = 0; i < 2; i++) services.push(await startTestService(bouncer.url, { DATABASE_POOL_MAX: '10', KEY_CACHE_TTL_MS: '0' }));
    const accounts = await Promise.all(Array.from({ length: 8 }, () => createAccountWithKey(db, { plan: 'bouncer' })));
    const before = await Promise.all(accounts.map((a) => balanceOf(db, a.account.id)));

    const CLIENTS = 48;
    const PER_CLIENT = 20;
    const failures: string[] = [];
    let ok = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        const svc = services[c % services.length]!;
        const { key } = accounts[c % accounts.length]!;
        for (let i = 0; i < PER_CLIENT; i++) {
          const res = await post(`${svc.url}/mcp/market-intelligence`, toolCall('bench_echo', { message: `c${c}-${i}` }, i), { 'x-api-key': key });
          const body = res.body as { result?: { isError?: boolean } };
          if (res.status === 200 && body.result && !body.result.isError) ok++;
          else failures.push(`${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
        }
      }),
    );
    expect(failures.slice(0, 5), `${failures.length} failures; pgbouncer log:\n${bouncer.log().slice(-2000)}`).toEqual([]);
    expect(ok).toBe(CLIENTS * PER_CLIENT);

    // Every answered call settles (batched): each account is charged exactly its calls.
    await Promise.all(services.map((s) => s.meter.flushSettled()));
    const after = await Promise.all(accounts.map((a) => balanceOf(db, a.account.id)));
    const charged = before.map((b, i) => b - after[i]!);
    expect(charged.reduce((a, b) => a + b, 0)).toBe(CLIENTS * PER_CLIENT);
    expect(charged).toEqual(accounts.map(() => (CLIENTS / accounts.length) * PER_CLIENT));
  });
});
