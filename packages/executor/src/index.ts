/** @orrery/executor: `defineJob` for job modules, and the executor (embeddable). */
export * from './define-job.js';
