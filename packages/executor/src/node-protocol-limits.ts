/**
 * The bounds of the messages between the executor and its Node workers (node-protocol.ts), and how
 * a worker splits a batch, apart from the schemas so that the worker can read them without loading
 * TypeBox (see node-protocol-check.ts).
 */

/** Longest run id accepted in a message (run ids are UUIDs or short test names). */
export const MAX_ID_LENGTH = 256;
/** Longest module or log path accepted in a message (Linux's PATH_MAX). */
export const MAX_PATH_LENGTH = 4096;
/** Longest message text (a run's outcome message) accepted from a worker. */
export const MAX_TEXT_LENGTH = 64 * 1024;
/** Longest log tail accepted from a worker; the worker keeps 4 KB, so this leaves room for UTF-8. */
export const MAX_TAIL_LENGTH = 16 * 1024;
/**
 * The most messages the executor sends a worker as one (a JSON array, in order): the runs handed to
 * a worker in one turn of the executor's event loop go out together — a burst of every-second jobs
 * costs a write per worker, not per run.
 */
export const MAX_PARENT_BATCH = 64;

/**
 * Splits what one side received into its messages: one message, or an array of 1 to `max` messages,
 * each to be checked on its own; `problem` set for an array out of bounds, which is refused whole.
 */
export function splitBatch(input: unknown, max: number): { messages: unknown[]; problem?: string } {
  if (!Array.isArray(input)) return { messages: [input] };
  if (input.length === 0 || input.length > max) return { messages: [], problem: `array of ${input.length} messages: 1 to ${max} allowed` };
  return { messages: input };
}

/** What a worker does with what it received from the executor (the worker checks each message with its standalone check of `ParentMessageSchema`). */
export const splitParentBatch = (input: unknown): { messages: unknown[]; problem?: string } => splitBatch(input, MAX_PARENT_BATCH);
