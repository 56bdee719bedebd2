// The database a benchmark runs against: the server DATABASE_URL names, else an embedded
// PostgreSQL in a fresh temporary folder (mode 755, so the server processes it spawns can read
// it), with a pool of its own. close() ends the pool, stops the embedded server and removes the
// folder.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbedded, type EmbeddedDatabase } from '../../server/db/embedded.ts';
import { createDatabase, type Database } from '../../server/db/pool.ts';

export interface BenchDatabase {
  url: string;
  db: Database;
  /** The temporary folder (the embedded server's data is in `pg` under it). */
  root: string;
  /** Undefined when DATABASE_URL names the server. */
  embedded: EmbeddedDatabase | undefined;
  close(): Promise<void>;
}

export async function openBenchDatabase(prefix: string, poolMax = 4): Promise<BenchDatabase> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(root, 0o755);
  const embedded = process.env.DATABASE_URL ? undefined : await startEmbedded(path.join(root, 'pg'));
  const url = process.env.DATABASE_URL ?? embedded!.url;
  const db = createDatabase({ url, max: poolMax });
  return {
    url,
    db,
    root,
    embedded,
    async close() {
      await db.close();
      await embedded?.stop();
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}
