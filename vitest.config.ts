import { defineConfig } from 'vitest/config';

/**
 * Folders whose files share their worker's module graph (isolate: false): a worker loads the
 * service's modules (Fastify, the MCP SDKs, viem, the data snapshots) once and runs file after
 * file on them, instead of a fresh process importing everything again for each file. Every file
 * here starts its own service on its own database and leaves no global state behind (no vi.mock,
 * fake timers, stubbed globals, environment writes or OpenTelemetry providers: those files stay
 * isolated). test/gateway took 305 s instead of 524 s this way (same tests, same load, 11:40 and
 * 11:50 UTC, `npx vitest run test/gateway`, with and without --no-isolate).
 */
const SHARED_WORKER_FOLDERS = ['gateway', 'servers', 'dashboard', 'analytics', 'providers', 'mcp', 'metering', 'payments'];
const shared = SHARED_WORKER_FOLDERS.map((folder) => `test/${folder}/**/*.test.ts`);

export default defineConfig({
  test: {
    globalSetup: ['test/helpers/global-setup.ts'],
    // Files run in parallel forks; each gets its own database on the shared server.
    pool: 'forks',
    // Two files at once. Vitest's default on this 2-core machine is one (cores - 1), but the
    // suites spend much of their time waiting on PostgreSQL, anvil, Chromium and child processes:
    // two workers took the whole run from 808 s to 571 s here (same tests, 16:23 and 16:42 UTC).
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'isolated', include: ['test/**/*.test.ts'], exclude: shared } },
      { extends: true, test: { name: 'shared-workers', include: shared, isolate: false } },
    ],
  },
});
