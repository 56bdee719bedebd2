// Migrations (server/db/migrate.ts): numbered, applied once each under an advisory lock, so pods
// starting at the same time are safe; /readyz reports whether they are current, and never runs
// them; they are not cut by the request path's statement_timeout; administrative commands against
// DATABASE_URL refuse a schema that is behind instead of migrating it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, urlFor } from '../../server/db/embedded.ts';
import { loadMigrations, migrate, migrationsCurrent } from '../../server/db/migrate.ts';
import { createDatabase } from '../../server/db/pool.ts';
import { runCli } from '../../server/cli.ts';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startTestService } from '../helpers/service.ts';

const MIGRATIONS = loadMigrations();
const databases: TestDatabase[] = [];
const services: RunningService[] = [];

async function freshDatabase(): Promise<TestDatabase> {
  const db = await createTestDatabase({ migrate: false });
  databases.push(db);
  return db;
}

beforeAll(() => {
  expect(MIGRATIONS.length).toBeGreaterThanOrEqual(2);
});
afterAll(async () => {
  await Promise.all(services.map((s) => s.close()));
  await Promise.all(databases.map((d) => d.drop()));
});

async function recorded(db: TestDatabase): Promise<{ version: number; name: string }[]> {
  const res = await db.query<{ version: number; name: string }>('SELECT version, name FROM schema_migrations ORDER BY version');
  return res.rows;
}

describe('migrations', () => {
  it('a fresh database is not current; two concurrent migrate() calls (two pods) both succeed and record each migration exactly once; a third applies nothing', async () => {
    const db = await freshDatabase();
    expect(await migrationsCurrent(db.pool)).toBe(false);

    // Two pools, as two pods starting at once would have.
    const podA = createDatabase({ url: db.url, max: 2 });
    const podB = createDatabase({ url: db.url, max: 2 });
    try {
      const [a, b] = await Promise.all([migrate(podA.pool), migrate(podB.pool)]);
      // Between them every migration was applied, and none twice.
      expect([...a, ...b].sort((x, y) => x - y)).toEqual(MIGRATIONS.map((m) => m.version));
    } finally {
      await podA.close();
      await podB.close();
    }

    expect(await recorded(db)).toEqual(MIGRATIONS.map((m) => ({ version: m.version, name: m.name })));
    const counts = await db.query<{ version: number; n: number }>('SELECT version, count(*) AS n FROM schema_migrations GROUP BY version');
    expect(counts.rows.every((r) => r.n === 1)).toBe(true);
    expect(await migrationsCurrent(db.pool)).toBe(true);

    expect(await migrate(db.pool)).toEqual([]);
    expect(await recorded(db)).toHaveLength(MIGRATIONS.length);
    // The schema they built is usable: the default plans exist.
    const plans = await db.query<{ name: string }>('SELECT name FROM plans ORDER BY credits');
    expect(plans.rows.map((p) => p.name)).toEqual(['free', 'basic', 'pro', 'premium']);
  });

  it('a migration that fails rolls back entirely and is not recorded', async () => {
    const db = await freshDatabase();
    const broken = [...MIGRATIONS, { version: MIGRATIONS.length + 1, name: 'broken', sql: 'CREATE TABLE half_done (id int); SELECT no_such_function();' }];
    await expect(migrate(db.pool, broken)).rejects.toThrow(/broken failed/);
    // The good ones before it are applied; the broken one left nothing behind.
    expect(await recorded(db)).toHaveLength(MIGRATIONS.length);
    const half = await db.query<{ t: string | null }>(`SELECT to_regclass('half_done')::text AS t`);
    expect(half.rows[0]!.t).toBeNull();
    // The job runner's schema is installed after our files, so a failed file leaves the schema not
    // current: serve waits for a migrate that succeeds.
    expect(await migrationsCurrent(db.pool)).toBe(false);
  });

  it('startService migrates a fresh database before serving: readyz is 200 with both checks true', async () => {
    const db = await freshDatabase();
    const svc = await startTestService(db.url);
    services.push(svc);
    expect(await migrationsCurrent(db.pool)).toBe(true);
    const res = await fetch(`${svc.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready', checks: { database: true, migrations: true } });
  });

  it('readyz of a service whose DATABASE_URL points at a closed port is 503 with checks.migrations false', async () => {
    const svc = await startTestService(urlFor(await freePort(), 'nowhere'));
    services.push(svc);
    const res = await fetch(`${svc.url}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ status: 'not ready', checks: { database: false, migrations: false } });
    expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
  });

  it('a migration longer than the request statement timeout succeeds through migrate(), while a query on the same pool is cut at that timeout', async () => {
    const db = await freshDatabase();
    const pod = createDatabase({ url: db.url, max: 2, statementTimeoutMs: 300 });
    try {
      // The request path's timeout is in force on this pool...
      await expect(pod.query('SELECT pg_sleep(0.8)')).rejects.toThrow(/statement timeout/);
      // ...and a migration taking longer than it (an index build on a big table) still applies.
      const slow = [...MIGRATIONS, { version: MIGRATIONS.length + 1, name: 'slow', sql: 'SELECT pg_sleep(0.8); CREATE TABLE slow_done (id int);' }];
      expect(await migrate(pod.pool, slow)).toEqual(slow.map((m) => m.version));
      expect((await db.query<{ t: string | null }>(`SELECT to_regclass('slow_done')::text AS t`)).rows[0]!.t).toBe('slow_done');
    } finally {
      await pod.close();
    }
  });

  it('/readyz never migrates: with MIGRATE_ON_START=false a fresh database stays unmigrated and not ready, until `cryptomcp migrate` runs', async () => {
    const db = await freshDatabase();
    const svc = await startTestService(db.url, { MIGRATE_ON_START: 'false' });
    services.push(svc);
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${svc.url}/readyz`);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ status: 'not ready', checks: { database: true, migrations: false } });
    }
    expect(await migrationsCurrent(db.pool)).toBe(false);
    const out: string[] = [];
    const code = await runCli(['--json', 'migrate'], { stdout: (t) => out.push(t), stderr: (t) => out.push(t), env: { ...process.env, DATABASE_URL: db.url, LOG_LEVEL: 'silent' } });
    expect(code, out.join('')).toBe(0);
    // The service notices on its own (it re-checks every 2 s) and becomes ready.
    await expect.poll(async () => (await fetch(`${svc.url}/readyz`)).status, { timeout: 10_000, interval: 100 }).toBe(200);
  });

  it('an administrative command against DATABASE_URL refuses a schema that is behind (503 SERVICE_UNAVAILABLE) and migrates nothing', async () => {
    const db = await freshDatabase();
    let stdout = '';
    const code = await runCli(['--json', 'plans', 'list'], { stdout: (t) => (stdout += t), stderr: () => {}, env: { ...process.env, DATABASE_URL: db.url, LOG_LEVEL: 'silent' } });
    expect(code).not.toBe(0);
    expect(stdout).toMatch(/SERVICE_UNAVAILABLE/);
    expect(stdout).toMatch(/cryptomcp migrate/);
    expect(await migrationsCurrent(db.pool)).toBe(false);
    expect((await db.query<{ t: string | null }>(`SELECT to_regclass('schema_migrations')::text AS t`)).rows[0]!.t).toBeNull();
  });
});
