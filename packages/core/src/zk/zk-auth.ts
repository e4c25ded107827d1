/**
 * Where a process's ZooKeeper digest credentials come from: `--zk-auth-file FILE` (a file holding
 * `user:password`, best in production: it shows in no process list) over the `ORRERY_ZK_AUTH`
 * environment variable. Checked at start, so a malformed value stops the process with a usage error.
 */
import { readFileSync } from 'node:fs';
import { OrreryError, toError, type ValidationIssue } from '../errors.js';
import { parseZkAuth } from './client.js';

/** Resolves the credentials (undefined: none); a `usage` error naming the flag or variable and the rule. */
export function resolveZkAuth(file: string | undefined, env: Readonly<Record<string, string | undefined>>): string | undefined {
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8').trim();
    } catch (error) {
      throw new OrreryError('usage', `--zk-auth-file: cannot read ${file}: ${toError(error).message}`);
    }
    parseZkAuth(text, '--zk-auth-file');
    return text;
  }
  const value = env.ORRERY_ZK_AUTH;
  if (value === undefined || value === '') return undefined;
  parseZkAuth(value, 'ORRERY_ZK_AUTH');
  return value;
}

/**
 * {@link resolveZkAuth} for a process's config parser, which lists every problem at once: a
 * malformed value becomes an issue (field `--zk-auth-file`, rule `format`) in `issues`.
 */
export function collectZkAuth(file: string | undefined, env: Readonly<Record<string, string | undefined>>, issues: ValidationIssue[]): string | undefined {
  try {
    return resolveZkAuth(file, env);
  } catch (error) {
    issues.push({ field: '--zk-auth-file', rule: 'format', message: toError(error).message });
    return undefined;
  }
}
