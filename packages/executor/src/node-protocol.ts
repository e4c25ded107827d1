/** Messages between the executor and its Node job workers. */

/**
 * Executor → worker. A worker runs its runs one at a time, in order of `startAt` (a run without one
 * is due at once), then of arrival; a run is never started before its `startAt`.
 */
export type ParentMessage =
  /** `maxLogBytes`: each log's cap (default 64 MiB). */
  | { type: 'run'; runId: string; module: string; context: Record<string, unknown>; stdoutPath: string; stderrPath: string; startAt?: number; maxLogBytes?: number }
  /** Import a job module ahead of its first run. */
  | { type: 'preload'; module: string }
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
  /** The run ended (its log files are complete); `truncated`: bytes discarded past the cap, per stream. */
  | { type: 'done'; runId: string; ok: boolean; message: string; stdoutTail: string; stderrTail: string; truncated?: { stdout?: number; stderr?: number } };
