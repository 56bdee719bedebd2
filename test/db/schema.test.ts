// server/db/schema.sql is the schema the migrations produce, read from PostgreSQL's catalogs: a
// migration that changes the schema without regenerating the file fails here. To regenerate:
//   UPDATE_SCHEMA=1 npx vitest run test/db/schema.test.ts
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { dumpSchema } from '../../server/db/schema.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

const FILE = path.resolve(import.meta.dirname, '../../server/db/schema.sql');

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

it('server/db/schema.sql equals the schema of a freshly migrated database', async () => {
  const actual = await dumpSchema(db.pool);
  if (process.env.UPDATE_SCHEMA === '1') fs.writeFileSync(FILE, actual);
  expect(fs.existsSync(FILE), 'server/db/schema.sql is missing: UPDATE_SCHEMA=1 npx vitest run test/db/schema.test.ts').toBe(true);
  expect(actual, 'the migrations changed the schema: UPDATE_SCHEMA=1 npx vitest run test/db/schema.test.ts, then review the diff').toBe(fs.readFileSync(FILE, 'utf8'));
});

it('the dump is complete: every table of the database is in it, with its columns', async () => {
  const tables = await db.query<{ table_name: string }>(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`);
  const dump = await dumpSchema(db.pool);
  expect(tables.rows.length).toBeGreaterThan(5);
  for (const { table_name } of tables.rows) expect(dump).toContain(`CREATE TABLE ${table_name} (`);
  const columns = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM information_schema.columns WHERE table_schema = 'public' AND table_name IN (SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE')`);
  const tableBlocks = [...dump.matchAll(/^CREATE TABLE [a-z_0-9]+ \(\n([\s\S]*?)\n\);$/gm)].map((m) => m[1]!.split('\n'));
  const dumped = tableBlocks.flat().filter((l) => !l.startsWith('  CONSTRAINT ')).length;
  expect(dumped).toBe(columns.rows[0]!.n);
});
