import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    // Files run in parallel forks; each gets its own database on the shared server.
    pool: 'forks',
    // Two files at once. Vitest's default on this 2-core machine is one (cores - 1), but the
    // suites spend much of their time waiting on PostgreSQL, anvil, Chromium and child processes:
    // two workers took the whole run from 808 s to 571 s here (same tests, 16:23 and 16:42 UTC).
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
