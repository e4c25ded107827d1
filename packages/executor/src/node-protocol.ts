/** Messages between the executor and its Node job workers. */

/** Executor → worker. */
export type ParentMessage =
  | { type: 'run'; runId: string; module: string; context: Record<string, unknown> }
  | { type: 'abort'; reason: string }
  | { type: 'ownership'; owner: boolean };

/** Worker → executor. */
export type WorkerMessage =
  | { type: 'ready' }
  | { type: 'done'; runId: string; ok: boolean; message: string };

/** Written by a worker to stdout and stderr when a run's output is complete. */
export const END_MARK = '\u0000orrery-run-end\u0000\n';
