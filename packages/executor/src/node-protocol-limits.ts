/**
 * The bounds of the messages between the executor and its Node workers (node-protocol.ts), apart
 * from the schemas so that the worker can read them without loading TypeBox (see
 * node-protocol-check.ts).
 */

/** Longest run id accepted in a message (run ids are UUIDs or short test names). */
export const MAX_ID_LENGTH = 256;
/** Longest module or log path accepted in a message (Linux's PATH_MAX). */
export const MAX_PATH_LENGTH = 4096;
/** Longest message text (a run's outcome message) accepted from a worker. */
export const MAX_TEXT_LENGTH = 64 * 1024;
/** Longest log tail accepted from a worker; the worker keeps 4 KB, so this leaves room for UTF-8. */
export const MAX_TAIL_LENGTH = 16 * 1024;
