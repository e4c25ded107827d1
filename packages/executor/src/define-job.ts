/**
 * `defineJob`: how TypeScript developers write a Node job. The executor loads modules from
 * `--jobs DIR` whose default export is a `defineJob(...)`; the job config's `handler` names it.
 * Runs happen in a child process, so a timeout or stop is a hard stop even for code that ignores
 * `ctx.signal`.
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
  /** Writes a line to the run's log (stdout). */
  log(...args: unknown[]): void;
  /** False once this executor no longer holds the run's claim (e.g. it lost its ZooKeeper session). */
  isOwner(): boolean;
}

/** What a run may return: a message shown with the outcome. */
export interface JobResult {
  message?: string;
}

/** A Node job definition. */
export interface JobDefinition {
  /** `[A-Za-z0-9_-]{1,64}`: the `handler` of the job configs that run it. */
  name: string;
  description?: string;
  run(ctx: JobContext): Promise<JobResult | void> | JobResult | void;
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Declares a Node job (validates its name and shape). */
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
