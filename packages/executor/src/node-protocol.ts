/** Messages between the executor and its Node job workers. */

/** Executor → worker. */
export type ParentMessage =
  | { type: 'run'; runId: string; module: string; context: Record<string, unknown>; stdoutPath: string; stderrPath: string }
  | { type: 'abort'; reason: string }
  | { type: 'ownership'; owner: boolean };

/** Worker → executor: the run ended (its log files are complete). */
export type WorkerMessage =
  | { type: 'ready' }
  | { type: 'done'; runId: string; ok: boolean; message: string; stdoutTail: string; stderrTail: string };
