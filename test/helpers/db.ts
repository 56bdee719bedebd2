// A database of its own for each test file, on the run's shared PostgreSQL server: migrated ones
// are copies of the template global-setup.ts migrated once (CREATE DATABASE … TEMPLATE).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { createDatabase, type Database } from '../../server/db/pool.ts';

export interface TestDatabase extends Database {
  url: string;
  name: string;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

export async function createTestDatabase(opts: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const adminUrl = inject('pgUrl');
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const migrated = opts.migrate !== false;
  await admin.query(migrated ? `CREATE DATABASE ${name} TEMPLATE ${inject('pgTemplate')}` : `CREATE DATABASE ${name}`);
  await admin.end();
  const url = adminUrl.replace(/\/[^/]*$/, `/${name}`);
  const db = createDatabase({ url, max: 10 });
  return Object.assign(db, {
    url,
    name,
    async drop() {
      await db.close();
      const a = new pg.Client({ connectionString: adminUrl });
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.end();
    },
  });
}
