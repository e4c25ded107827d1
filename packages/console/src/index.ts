/** @orrery/console: the admin CLI's library (and later the console API). */
export * from './store/namespaces.js';
export * from './store/jobs.js';
export * from './store/executors.js';
export { main as runCli, USAGE } from './cli/main.js';
export * from './store/acl.js';
