/**
 * How a Node job's `ctx.log` entry is written to its run's log: every line of the formatted message
 * (`util.format`, like `console.log`) starts with the time, ISO 8601 in UTC with milliseconds, and
 * the level — `2026-11-23T22:31:06.123Z info disk at 91%`. Pure: the time is given.
 */
import { format } from 'node:util';

/** The level `ctx.log` writes (it has only one). */
export const CTX_LOG_LEVEL = 'info';

/** The log text of one `ctx.log(...args)` call made at `at`, ending with a newline. */
export function formatLogLine(at: Date, args: readonly unknown[]): string {
  const prefix = `${at.toISOString()} ${CTX_LOG_LEVEL} `;
  return format(...args).split('\n').map((line) => prefix + line).join('\n') + '\n';
}
