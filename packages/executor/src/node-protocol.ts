/** Messages between the executor and its Node job workers. */

/** Executor → worker. A worker runs its runs one at a time, in the order they arrive. */
export type ParentMessage =
  | { type: 'run'; runId: string; module: string; context: Record<string, unknown>; stdoutPath: string; stderrPath: string }
  /** Take back a run that has not started: the worker answers `cancelled` if it had not. */
  | { type: 'cancel'; runId: string }
  /** Abort the running run's `ctx.signal` (a kill follows after the grace). */
  | { type: 'abort'; runId: string; reason: string }
  | { type: 'ownership'; runId: string; owner: boolean };

/** Worker → executor. */
export type WorkerMessage =
  | { type: 'ready' }
  | { type: 'started'; runId: string; at: number }
  /** The run was taken back before it started; it will never start here. */
  | { type: 'cancelled'; runId: string }
  /** The run ended (its log files are complete). */
  | { type: 'done'; runId: string; ok: boolean; message: string; stdoutTail: string; stderrTail: string };
