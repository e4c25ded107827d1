/** @orrery/it: the integration-test harness. */
export * from './processes.js';
export * from './simulated-executor.js';
export * from './netns.js';
