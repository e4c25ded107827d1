import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    // Native ZooKeeper handles and child processes: one forked process per test file.
    pool: 'forks',
    maxWorkers: 2,
    globalSetup: ['packages/core/src/testing/vitest-global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
    reporters: ['default'],
    projects: [
      // Everything above, as it was: the Node tests of every package.
      { extends: true, test: { name: 'node' } },
      // The console UI's component tests (jsdom; packages/console-ui/test/*.test.tsx).
      'packages/console-ui/vitest.config.ts',
    ],
  },
});
