import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    // Files run in parallel forks; each gets its own database on the shared server.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
