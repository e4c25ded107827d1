/**
 * Learns the Node job modules of `--jobs DIR`: every `.ts`, `.mts`, `.js` or `.mjs` file (not
 * `.d.ts` nor tests) whose default export has a `name` and a `run` function (what `defineJob`
 * makes). The names become the `handlers` the executor announces.
 *
 * The modules are imported in a child process (job-discovery.ts), never in the executor: a module's
 * top-level code is job code, and the executor needs no TypeScript loader of its own. Runs import
 * them again in the worker processes.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { OrreryError, stdioWithoutSockets } from '@orrery/core';
import type { Discovery } from './job-discovery.js';
import { jobEnvironment } from './job-env.js';
import { siblingModule } from './sibling-module.js';

/** Handler name → module path. */
export type JobModules = ReadonlyMap<string, string>;

const DISCOVERY = fileURLToPath(siblingModule(import.meta.url, 'job-discovery'));

/**
 * Imports the modules of `dir` in a child process; fails naming every bad file. The child runs job
 * code (the modules' top level), so it gets `env` — the jobs' environment, without Orrery's secrets
 * (job-env.ts; default: this process's without the built-in ones).
 */
export async function loadJobModules(dir: string | undefined, timeoutMs = 60_000, env?: Readonly<Record<string, string | undefined>>): Promise<JobModules> {
  if (!dir) return new Map();
  const child = spawn(process.execPath, ['--import', 'tsx', DISCOVERY, dir], {
    stdio: stdioWithoutSockets(['ignore', 'ignore', 'pipe', 'ipc']),
    env: jobEnvironment(env ?? process.env),
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => { if (stderr.length < 8192) stderr += c.toString('utf8'); });
  let result: Discovery | undefined;
  child.on('message', (m: Discovery) => { result = m; });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => {
    child.once('error', () => resolve(null));
    child.once('close', (c) => resolve(c));
  });
  clearTimeout(timer);
  if (!result) {
    const why = stderr.trim() || (code === null ? `no answer within ${timeoutMs / 1000} s` : `exit code ${code}`);
    throw new OrreryError('validation', `--jobs ${dir}: ${why}`);
  }
  if (result.problems.length > 0) {
    throw new OrreryError('validation', `--jobs ${dir}: ${result.problems.join('; ')}`, { details: { problems: result.problems } });
  }
  return new Map(result.modules);
}
