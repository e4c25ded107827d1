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
