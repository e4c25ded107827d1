/**
 * Learns the Node job modules of `--jobs DIR`. The rule (docs/executor.md, "Node jobs"): a job is a
 * top-level `.ts`, `.mts`, `.js` or `.mjs` file whose default export is a job made by `defineJob`,
 * known by its `name`; every other module is a helper and is ignored, and files in subfolders,
 * `*.d.ts`, `*.test.*` and names starting with `_` or `.` are never jobs. A file that cannot be
 * imported, or a job whose name is bad or already taken, is reported by name and reason; the other
 * jobs still load. The names become the `handlers` the executor announces.
 *
 * The modules are imported in a child process (job-discovery.ts), never in the executor: a module's
 * top-level code is job code, and the executor needs no TypeScript loader of its own. Runs import
 * them again in the worker processes. The child's answer is checked against a schema.
 *
 * The child runs with the workers' export condition ({@link JOB_WORKER_CONDITION}), so it compiles
 * the very files the workers will import, and tsx's cache then holds them: a worker importing a
 * module tsx has not compiled before compiles it itself (CPU while the pool starts) and keeps an
 * esbuild service process beside it for its life. Where tsx's cache cannot be written, a worker
 * still compiles for itself.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { OrreryError, silentLogger, stdioWithoutSockets, type Logger } from '@orrery/core';
import type { Discovery, JobFileProblem } from './job-discovery.js';
import { jobEnvironment } from './job-env.js';
import { JOB_WORKER_CONDITION } from './node-pool.js';
import { siblingModule } from './sibling-module.js';

/** Handler name → module path. */
export type JobModules = ReadonlyMap<string, string>;

/** How long discovery may take before it is given up, by default (ms). */
export const DEFAULT_DISCOVERY_TIMEOUT_MS = 60_000;
/** Bytes of the discovery child's stderr kept for the error message. */
const STDERR_KEPT = 8192;

const DISCOVERY = fileURLToPath(siblingModule(import.meta.url, 'job-discovery'));

const DiscoverySchema = Type.Object({
  modules: Type.Array(Type.Tuple([Type.String({ minLength: 1, maxLength: 64 }), Type.String({ minLength: 1, maxLength: 4096 })])),
  helpers: Type.Array(Type.String({ maxLength: 4096 })),
  problems: Type.Array(Type.Object({ file: Type.String({ maxLength: 4096 }), reason: Type.String({ maxLength: 64 * 1024 }) })),
});
const checkDiscovery = TypeCompiler.Compile(DiscoverySchema);

/** What {@link discoverJobModules} found. */
export interface JobFolder {
  /** Handler name → module path. */
  modules: Map<string, string>;
  /** Modules of the folder that are not jobs (file names). */
  helpers: string[];
  /** Files that were meant to be jobs and are not, with the reason. */
  problems: JobFileProblem[];
}

export type { JobFileProblem };

/** Options of {@link discoverJobModules}. */
export interface DiscoverOptions {
  /** Default {@link DEFAULT_DISCOVERY_TIMEOUT_MS}. */
  timeoutMs?: number;
  /**
   * The child runs job code (the modules' top level), so it gets this environment without Orrery's
   * secrets (job-env.ts). Default: this process's without the built-in ones.
   */
  env?: Readonly<Record<string, string | undefined>>;
  /** Aborting kills the child; the promise then rejects. */
  signal?: AbortSignal;
}

/**
 * Imports the candidate modules of `dir` in a child process and sorts them into jobs, helpers and
 * problems. Rejects (an `OrreryError` 'validation') only when the folder cannot be read at all or
 * the child gives no answer in time.
 */
export async function discoverJobModules(dir: string, options: DiscoverOptions = {}): Promise<JobFolder> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_DISCOVERY_TIMEOUT_MS;
  const child = spawn(process.execPath, [`--conditions=${JOB_WORKER_CONDITION}`, '--import', 'tsx', DISCOVERY, dir], {
    stdio: stdioWithoutSockets(['ignore', 'ignore', 'pipe', 'ipc']),
    env: jobEnvironment(options.env ?? process.env),
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => { if (stderr.length < STDERR_KEPT) stderr += c.toString('utf8'); });
  child.stderr!.on('error', () => undefined);
  let result: Discovery | undefined;
  let malformed = false;
  child.on('message', (m: unknown) => {
    if (checkDiscovery.Check(m)) result = m as Discovery;
    else malformed = true;
  });
  const stop = (): void => { child.kill('SIGKILL'); };
  const timer = setTimeout(stop, timeoutMs);
  options.signal?.addEventListener('abort', stop, { once: true });
  const code = await new Promise<number | null>((resolve) => {
    child.once('error', () => resolve(null));
    child.once('close', (c) => resolve(c));
  });
  clearTimeout(timer);
  options.signal?.removeEventListener('abort', stop);
  if (options.signal?.aborted) throw new OrreryError('validation', `--jobs ${dir}: discovery stopped`);
  if (!result) {
    const why = malformed ? 'discovery answered something that is not a discovery' : stderr.trim() || (code === null ? `no answer within ${timeoutMs / 1000} s` : `exit code ${code}`);
    throw new OrreryError('validation', `--jobs ${dir}: ${why}`);
  }
  return { modules: new Map(result.modules), helpers: result.helpers, problems: result.problems };
}

/** One line per problem: `file: reason`. */
export function describeProblems(problems: readonly JobFileProblem[]): string {
  return problems.map((p) => `${p.file}: ${p.reason}`).join('; ');
}

/** Logs what discovery found that is not a job: problems as warnings, helpers at debug. */
export function logJobFolder(logger: Logger, dir: string, folder: JobFolder): void {
  for (const p of folder.problems) logger.warn({ dir, file: p.file, reason: p.reason }, 'a file of the jobs folder is not a job');
  for (const file of folder.helpers) logger.debug({ dir, file }, 'a module of the jobs folder is a helper, not a job');
}

/**
 * The jobs of `dir` (none without a `dir`); problems with single files are logged on `logger` and
 * do not stop the others. Rejects when the folder cannot be read or discovery does not answer in
 * `timeoutMs`.
 */
export async function loadJobModules(
  dir: string | undefined,
  timeoutMs = DEFAULT_DISCOVERY_TIMEOUT_MS,
  env?: Readonly<Record<string, string | undefined>>,
  logger: Logger = silentLogger(),
): Promise<Map<string, string>> {
  if (!dir) return new Map();
  const folder = await discoverJobModules(dir, { timeoutMs, ...(env ? { env } : {}) });
  logJobFolder(logger, dir, folder);
  return folder.modules;
}
