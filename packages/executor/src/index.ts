/** @orrery/executor: `defineJob` for job modules, and the executor (embeddable). */
export * from './define-job.js';
export { createExecutor, type Executor, type ExecutorOptions } from './executor.js';
export { BUILT_IN_SECRET_ENV, jobEnvironment, parseSecretEnv } from './job-env.js';
export type { ExecutorEvents } from './executor-events.js';
export type { RunRecord } from './history.js';
