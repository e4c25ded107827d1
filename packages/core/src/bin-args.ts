/**
 * What every Orrery bin does with its command line before it starts (the `orrery` CLI has its own
 * commands, and follows the same rule): `--version` prints the version; `--help` prints the whole
 * usage on stdout; a usage problem prints one line per problem — every problem at once, each
 * naming its flag or variable and the rule — and where the help is, not the whole help (which would
 * bury the line that matters), with exit code 2.
 */
import { toError } from './errors.js';
import type { ValidationIssue } from './errors.js';
import { ORRERY_VERSION } from './version.js';

/** Where a bin writes. */
export interface BinOutput {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/**
 * Parses a bin's arguments with `parse` (which throws a `usage` error: message `help` for `--help`,
 * else the problems, in `details.issues` when there are several). Returns the config, or the exit
 * code the bin should end with at once.
 */
export function parseBinArgs<T>(name: string, argv: readonly string[], usage: string, parse: () => T, out: BinOutput = process): { config: T } | { exit: number } {
  if (argv.includes('--version') || argv.includes('-V')) {
    out.stdout.write(`${name} ${ORRERY_VERSION}\n`);
    return { exit: 0 };
  }
  try {
    return { config: parse() };
  } catch (error) {
    const e = toError(error);
    if (e.message === 'help') {
      out.stdout.write(usage);
      return { exit: 0 };
    }
    const issues = (e as { details?: { issues?: ValidationIssue[] } }).details?.issues;
    const lines = issues && issues.length > 0 ? issues.map((i) => i.message) : [e.message];
    for (const line of lines) out.stderr.write(`${name}: ${line}\n`);
    out.stderr.write(`(${name} --help lists every flag, its environment variable and its default)\n`);
    return { exit: 2 };
  }
}
