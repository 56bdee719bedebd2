// Numbered, roll-forward SQL migrations (server/db/migrations/NNNN_name.sql), each applied in its
// own transaction under an advisory lock and recorded in schema_migrations. Several pods starting
// at once is safe: they queue on the lock and skip what another already applied. Only
// `cryptomcp migrate` (the chart's hook Job) and a local `serve` run them, never /readyz; each
// transaction lifts the pool's request statement_timeout (SET LOCAL), so neither waiting for the
// lock nor a long migration (an index on a big table) is cut at 10 s.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Logger, runMigrations } from 'graphile-worker';
import type pg from 'pg';

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
/** pg_advisory_xact_lock key: "cmcp" in ASCII. */
const LOCK_KEY = 0x636d6370;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const migrations = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .map((file) => {
      const match = /^(\d{4})_([a-z0-9_]+)\.sql$/.exec(file);
      if (!match?.[1] || !match[2]) throw new Error(`migration file name must be NNNN_name.sql: ${file}`);
      return { version: Number(match[1]), name: match[2], sql: fs.readFileSync(path.join(dir, file), 'utf8') };
    })
    .sort((a, b) => a.version - b.version);
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`migrations must be numbered 1..n without gaps; found ${m.version} at ${i + 1}`);
  });
  return migrations;
}

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`;

/**
 * Applies every pending migration, then graphile-worker's own (the job queue's schema,
 * graphile_worker); returns the versions of ours applied by this call. graphile-worker's
 * migrations open their own transactions, so they cannot run inside ours under our lock; they
 * need no lock of ours either: each of its migrations first inserts its number into
 * graphile_worker.migrations in the same transaction, so a second pod migrating at once waits
 * on that row and then, seeing it taken, counts the migration as done.
 */
export async function migrate(pool: pg.Pool, migrations = loadMigrations()): Promise<number[]> {
  const applied: number[] = [];
  const client = await pool.connect();
  try {
    for (const m of migrations) {
      // One round trip; SET LOCAL holds behind PgBouncer's transaction mode too.
      await client.query('BEGIN; SET LOCAL statement_timeout = 0');
      try {
        await client.query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY]);
        await client.query(CREATE_TABLE);
        const done = await client.query('SELECT 1 FROM schema_migrations WHERE version = $1', [m.version]);
        if (done.rowCount === 0) {
          await client.query(m.sql);
          await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
          applied.push(m.version);
        }
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw new Error(`migration ${String(m.version).padStart(4, '0')}_${m.name} failed: ${(err as Error).message}`, { cause: err });
      }
    }
  } finally {
    client.release();
  }
  await runMigrations({ pgPool: pool, logger: QUIET });
  return applied;
}

const QUIET = new Logger(() => () => {});

/** True when every known migration is recorded as applied (what /readyz checks). */
export async function migrationsCurrent(pool: pg.Pool, migrations = loadMigrations()): Promise<boolean> {
  const exists = await pool.query<{ ok: boolean }>(
    `SELECT to_regclass('schema_migrations') IS NOT NULL AND to_regclass('graphile_worker.migrations') IS NOT NULL AS ok`,
  );
  if (!exists.rows[0]?.ok) return false;
  const res = await pool.query<{ max: number | null }>('SELECT max(version) AS max FROM schema_migrations');
  return (res.rows[0]?.max ?? 0) >= migrations.length;
}
