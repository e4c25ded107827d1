/**
 * @orrery/executor/job: only what a job module needs — `defineJob` and the job types — without the
 * executor itself (no ZooKeeper client, HTTP server or metrics are loaded).
 */
export * from './define-job.js';
