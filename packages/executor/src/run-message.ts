/**
 * The short message of a failed run, as its shard node in ZooKeeper keeps it: the job's output stays
 * on the executor, only this line (at most `SHARD_MESSAGE_MAX_BYTES`) goes to ZooKeeper. Pure.
 */
import { clipShardMessage } from '@orrery/core';

/** The last line of `text` that has anything but blanks, without its trailing blanks ('' if none). */
export function lastNonEmptyLine(text: string): string {
  const lines = text.split(/\r?\n|\r/);
  for (let i = lines.length - 1; i >= 0; i -= 1) {
    const line = lines[i]!.trimEnd();
    if (line.trim() !== '') return line;
  }
  return '';
}

/**
 * Why a run that failed without a message of its own failed: the last non-empty line of its stderr
 * (`sh: 1: foo: not found`) — the exit code or signal are in the outcome's own fields — else
 * `exit code N` or `killed by SIGNAL`. Clipped to the shard message limit on a character boundary.
 */
export function failureMessage(stderrTail: string, exitCode: number | null, signal: string | null): string {
  const line = lastNonEmptyLine(stderrTail);
  if (line) return clipShardMessage(line);
  return signal ? `killed by ${signal}` : `exit code ${exitCode}`;
}
