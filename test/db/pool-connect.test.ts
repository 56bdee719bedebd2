// Each new connection of the service's and the operator's pools gets its statement_timeout before
// the pool hands it out, and nothing is queued behind that SET: pg 8 deprecates queueing a query
// on a client that is running one (pg 9 refuses it), which the operator's pool did on every new
// connection (the service's queued its first query behind the SET, one short of the warning).
// Each pool runs in a fresh process under --throw-deprecation, where the deprecation is an error.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ migrate: false });
});
afterAll(async () => {
  await db?.drop();
});

/** Runs `script` (an ES module body with `url` defined) in a fresh Node under --throw-deprecation. */
async function fresh(script: string): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--throw-deprecation', '--input-type=module', '-e', `const url = ${JSON.stringify(db.url)};\n${script}`], { cwd: ROOT });
  return stdout.trim();
}

describe('a new pool connection', () => {
  it("the service's pool: two new connections each have the pool's statement_timeout for their first query", async () => {
    const out = await fresh(`
      const { createDatabase } = await import('./server/db/pool.ts');
      const db = createDatabase({ url, statementTimeoutMs: 1234 });
      const [a, b] = await Promise.all([db.query('SHOW statement_timeout'), db.query('SHOW statement_timeout')]);
      console.log(a.rows[0].statement_timeout, b.rows[0].statement_timeout);
      await db.close();`);
    expect(out).toBe('1234ms 1234ms');
  });

  it("the operator's pool: its first query runs with the timeout set and raises no deprecation", async () => {
    const out = await fresh(`
      const { createOperatorDatabase } = await import('./operator/db/pool.ts');
      const db = createOperatorDatabase(url);
      console.log((await db.query('SHOW statement_timeout')).rows[0].statement_timeout);
      await db.close();`);
    expect(out).toBe('10s');
  });
});
