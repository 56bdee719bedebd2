// One service with the default settings for the test files that need nothing else, shared by the
// files a worker runs one after another (vitest.config.ts: test files share their worker's
// modules). Each file still works on its own accounts and keys (createAccountWithKey), so nothing
// one file does is seen by another's assertions; what they share is the database and the started
// service, which every such file would otherwise create and tear down again (~1.5 s each here).
//
// A file takes it in beforeAll and gives it back in afterAll; the last one out closes it, unless
// another file of the worker takes it within RELEASE_GRACE_MS (the next file's beforeAll runs
// right after the last file's afterAll): a file that misses the grace gets a fresh service, never a
// closed one.
import { createTestDatabase, type TestDatabase } from './db.ts';
import { startTestService } from './service.ts';
import type { RunningService } from '../../server/runtime.ts';

const RELEASE_GRACE_MS = 1000;

interface Shared {
  db: TestDatabase;
  svc: RunningService;
}

let current: Promise<Shared> | undefined;
let holders = 0;
let closing: NodeJS.Timeout | undefined;

/** The worker's default service and its database; call `release` in afterAll. */
export async function acquireSharedService(): Promise<Shared & { release: () => Promise<void> }> {
  clearTimeout(closing);
  closing = undefined;
  holders += 1;
  current ??= (async () => {
    const db = await createTestDatabase();
    return { db, svc: await startTestService(db.url) };
  })();
  const shared = await current;
  let released = false;
  return {
    ...shared,
    release: async () => {
      if (released) return;
      released = true;
      holders -= 1;
      if (holders > 0) return;
      const ending = current;
      closing = setTimeout(() => {
        if (holders > 0 || current !== ending) return;
        current = undefined;
        void ending?.then(async ({ db, svc }) => {
          await svc.close();
          await db.drop();
        });
      }, RELEASE_GRACE_MS);
    },
  };
}
