/**
 * Browser-safe schemas: one source for the console API, the CLI and the UI.
 * (Import from `@orrery/core/schemas` in browser code: it pulls in no Node module.)
 */
export * from './validate.js';
export * from './canonical-json.js';
export * from './job-config.js';
export * from './namespace.js';
export * from './executor.js';
export * from './assignment.js';
export * from './shard.js';
export * from './command.js';
export type { ValidationIssue } from '../errors.js';
export { OrreryError, type ErrorCode } from '../errors.js';
