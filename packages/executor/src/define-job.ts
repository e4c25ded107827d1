/**
 * `defineJob`: how TypeScript developers write a Node job. Runs happen in a child process, so a
 * timeout or stop is a hard stop even for code that ignores `ctx.signal`.
 */

/** What a run gets. */
export interface JobContext {
  namespace: string;
  job: string;
  shardItem: number;
  shardTotal: number;
  /** This item's entry of `shardingItemParameters` ('' when none). */
  shardParam: string;
  /** The job's `jobParameter` (or a run-now `--param`). */
  jobParam: string;
  /** The scheduled fire time, epoch ms. */
  fireTime: number;
  runId: string;
  /** The claim's mzxid: increases with every run of this item. */
  fencingToken: number;
  /** 1 for the first attempt; retries and failover re-runs count up. */
  attempt: number;
  /** Why this run happened. */
  trigger: 'cron' | 'misfire' | 'run-now' | 'retry' | 'downstream' | 'failover';
  /** Aborted on timeout or stop; the process is killed after a short grace anyway. */
  signal: AbortSignal;
  /**
   * Writes to the run's log (stdout), formatted like `console.log`, each line starting with the
   * time (ISO 8601, UTC) and the level: `2026-11-23T22:31:06.123Z info message`.
   */
  log(...args: unknown[]): void;
  /**
   * False once this executor no longer holds the run's claim (it fenced itself, e.g. on losing its
   * ZooKeeper session, or the claim was taken over); read it before an effect that must happen once.
   */
  isOwner(): boolean;
}

/** What a run may return: a message shown with the outcome. */
export interface JobResult {
  message?: string;
}

/** A Node job definition. */
export interface JobDefinition {
  /** `[A-Za-z0-9_-]{1,64}`, not `__proto__`: the `handler` of the job configs that run it. */
  name: string;
  description?: string;
  run(ctx: JobContext): Promise<JobResult | void> | JobResult | void;
}

const NAME = /^(?!__proto__$)[A-Za-z0-9_-]{1,64}$/;

/**
 * Declares a Node job (validates its name and shape; throws a TypeError otherwise).
 *
 * Which files of `--jobs DIR` are jobs: a top-level `.ts`, `.mts`, `.js` or `.mjs` file whose
 * default export is `defineJob(...)` is a job, known by its `name` (the `handler` of the job configs
 * that run it); every other module is a helper the jobs may import, and files in subfolders,
 * `*.d.ts`, `*.test.*` and names starting with `_` or `.` are never jobs. A file that cannot be
 * imported, or a name that is bad or taken, is logged by file and reason; the other jobs still load.
 * Edits to the folder take effect at the next run, without a restart.
 *
 * @example
 * ```ts
 * // jobs/cleanup.ts
 * import { defineJob } from '@orrery/executor';
 * import { removeOlderThan } from './_files.js'; // a helper: not a job
 * export default defineJob({ name: 'cleanup', async run(ctx) { ctx.log('removed', await removeOlderThan(ctx.jobParam)); } });
 * ```
 */
export function defineJob<T extends JobDefinition>(definition: T): T {
  if (!definition || typeof definition !== 'object') throw new TypeError('defineJob: expected an object { name, run }');
  if (typeof definition.name !== 'string' || !NAME.test(definition.name)) {
    throw new TypeError(`defineJob: name '${String(definition.name)}' must match ${NAME.source}`);
  }
  if (typeof definition.run !== 'function') throw new TypeError(`defineJob '${definition.name}': run must be a function`);
  return Object.freeze({ ...definition, __orreryJob: true }) as T;
}

/** True for a value made by {@link defineJob}. */
export function isJobDefinition(value: unknown): value is JobDefinition {
  return typeof value === 'object' && value !== null && (value as { __orreryJob?: unknown }).__orreryJob === true;
}
