/**
 * The short message of a failed run, as its shard node in ZooKeeper keeps it: the job's output stays
 * on the executor, only this line (at most `SHARD_MESSAGE_MAX_BYTES`) goes to ZooKeeper. Pure.
 */
import { clipShardMessage } from '@orrery/core';

/** Control characters (C0 and DEL) a job may print: shown as blanks in a message, never passed on. */
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/g;

/**
 * The last line of `text` that has anything but blanks, trimmed at both ends, its control
 * characters (a terminal escape, a NUL) turned into blanks ('' if there is none).
 */
export function lastNonEmptyLine(text: string): string {
  const lines = text.split(/\r?\n|\r/);
  for (let i = lines.length - 1; i >= 0; i -= 1) {
    const line = lines[i]!.replace(CONTROL_CHARACTERS, ' ').trim();
    if (line !== '') return line;
  }
  return '';
}

/**
 * Why a run that failed without a message of its own failed: `exit code N` or `killed by SIGNAL`,
 * then `: ` and the last non-empty line of its stderr when there is one
 * (`exit code 127: sh: 1: nosuch: not found`). Guarantees: one line, at most
 * `SHARD_MESSAGE_MAX_BYTES` UTF-8 bytes (cut on a character boundary, ending in `…`), always
 * starting with the exit code or signal. A message the run gave itself (its result file), a
 * timeout's and a stop's are not made here: they win as they are.
 */
export function failureMessage(stderrTail: string, exitCode: number | null, signal: string | null): string {
  const how = signal ? `killed by ${signal}` : `exit code ${exitCode}`;
  const line = lastNonEmptyLine(stderrTail);
  return clipShardMessage(line ? `${how}: ${line}` : how);
}
