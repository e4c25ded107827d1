/**
 * The console UI's component tests: jsdom and Testing Library (`test/*.test.tsx`). The root
 * `npm test` runs them as a project of the root vitest config; `npx vitest run` here runs them alone.
 * (The plain `.test.ts` files under src/ — the catalogues — run in the root's Node project.)
 */
import react from '@vitejs/plugin-react';
import { defineProject } from 'vitest/config';

export default defineProject({
  plugins: [react()],
  test: {
    name: 'console-ui',
    root: import.meta.dirname,
    environment: 'jsdom',
    include: ['test/**/*.test.tsx'],
    setupFiles: ['test/setup.ts'],
    // jsdom renders slowly on a loaded 2-core machine (a full `npm test` beside a benchmark timed
    // 12 of these out at vitest's default 5 s); the assertions wait on the DOM, never on the clock.
    testTimeout: 30_000,
  },
});
