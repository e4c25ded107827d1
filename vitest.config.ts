import { defineConfig } from 'vitest/config';

/**
 * The export condition under which the @orrery/* packages resolve to their TypeScript sources (their
 * `default` is the lib/ build a packed package ships; see packages/core/README.md).
 */
const SOURCE_CONDITION = '@orrery/source';
/** Vite's default conditions, which a `conditions` list replaces. */
const CLIENT_CONDITIONS = ['module', 'browser', 'development|production'];
const SERVER_CONDITIONS = ['module', 'node', 'development|production'];
/** NODE_OPTIONS for the processes tests start (bins from sources, Node job workers loading the repo's job modules). */
const nodeOptions = [process.env.NODE_OPTIONS, `--conditions=${SOURCE_CONDITION}`].filter(Boolean).join(' ');

export default defineConfig({
  resolve: { conditions: [SOURCE_CONDITION, ...CLIENT_CONDITIONS] },
  ssr: { resolve: { conditions: [SOURCE_CONDITION, ...SERVER_CONDITIONS], externalConditions: [SOURCE_CONDITION] } },
  test: {
    env: { NODE_OPTIONS: nodeOptions },
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
