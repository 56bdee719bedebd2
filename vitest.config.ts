import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './test/helpers/sequencer.ts';

/**
 * Files that run in a process of their own (vitest's isolate: true): the ones that leave global
 * state behind by design — an OpenTelemetry provider or context manager registered for the
 * process (observability's tracing files), and the CLI's in-process commands (signal handlers on
 * `process`). Files that only start the CLI or the service as child processes (start, npx,
 * devnet-paste) share workers like the rest.
 *
 * Every other file shares its worker's module graph (isolate: false): a worker loads the service's
 * modules (Fastify, the MCP SDKs, viem, the data snapshots) once and runs file after file on them,
 * instead of a fresh process importing everything again for each file. Each such file starts its own
 * service on its own database and leaves no global state behind (no vi.mock, fake timers, stubbed
 * globals, environment writes or OpenTelemetry providers). A fresh process per file cost ~5 s of
 * import before its first test: with 82 files isolated, one of the two workers was idle or importing
 * for about half of the 721 s run (test/helpers timeline in the [house] note).
 */
const ISOLATED = ['test/observability/{otlp,tracing,ids,export-thread}.test.ts', 'test/cli/cli.test.ts'];

export default defineConfig({
  test: {
    globalSetup: ['test/helpers/global-setup.ts'],
    // Files run in parallel forks; each gets its own database on the shared server.
    pool: 'forks',
    // Three files at once on this 2-core machine (vitest's default would be one, cores - 1): the
    // suites spend much of their time waiting on PostgreSQL, anvil, Chromium, child processes and
    // real timeouts (client-node's 30 s watch recycling). Two workers took the run from 808 s to
    // 571 s (16:23 and 16:42 UTC, 2026-11-25); with files sharing their worker's modules, two
    // workers used 78% of both cores (17.6 CPU-minutes in an 11.3-minute `npm test`).
    maxWorkers: 3,
    // A larger young generation for the workers (V8's semi-space, 64 MB): the in-process services
    // allocate quickly and the default size made V8 scavenge often. test/mcp and test/servers
    // (644 tests) took 115 s of CPU with it against 122-125 s without (two runs each, side by side,
    // /usr/bin/time, 22:40 UTC 2026-11-26). Only the test workers: the processes the tests start
    // run on Node's defaults, as in production.
    execArgv: ['--max-semi-space-size=64'],
    // The longest files first, and the image test after every other file has started.
    sequence: { sequencer: LongestFirstSequencer },
    testTimeout: 30_000,
    // expect.poll waits for a condition; its default bound, 1 s, is shorter than a browser round
    // trip (nonce, wallet, sign-in request) takes on this 2-core machine under the whole suite (a
    // refused sign-in's message took longer once and failed the run). It returns as soon as the
    // condition holds, so a larger bound costs nothing when all is well.
    expect: { poll: { timeout: 10_000 } },
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'isolated', include: ISOLATED } },
      { extends: true, test: { name: 'shared-workers', include: ['test/**/*.test.ts'], exclude: ISOLATED, isolate: false } },
    ],
  },
});
