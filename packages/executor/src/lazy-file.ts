/**
 * A run's log file: append-only, private (0600), opened on its first write (a run that prints
 * nothing costs no file), and capped — past `maxBytes` the output is counted and discarded, and
 * `end()` closes the log with one marker line saying how much was lost.
 *
 * Back-pressure: `write()` returns false while the file's buffer is full; the writer stops feeding
 * it (a child's pipe is paused) until `onDrain`. Past the cap nothing is buffered, so `write()`
 * answers true and the output is read and dropped as fast as it comes.
 *
 * Guarantees: the file never holds more than `maxBytes` of output plus the marker line; the memory
 * held is at most one stream buffer (16 KiB + the chunk that filled it). A write error (disk full,
 * folder removed) never throws: the rest of the output is discarded and `onError` is told once.
 * Not guaranteed: the marker is written by `end()`, so a log whose process died mid-run has none.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { finished } from 'node:stream';

/** Default per-run, per-stream log cap: 64 MiB. */
export const DEFAULT_MAX_LOG_BYTES = 64 * 1024 * 1024;

/** Mode of every log and record file: owner read/write only. */
export const PRIVATE_FILE_MODE = 0o600;

/** `64 MiB`, `1.5 MiB`, `12 KiB`, `100 bytes`: how a cap reads in the marker. */
export function formatLogSize(bytes: number): string {
  const units: Array<[number, string]> = [[1024 ** 3, 'GiB'], [1024 ** 2, 'MiB'], [1024, 'KiB']];
  for (const [size, unit] of units) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(2))} ${unit}`;
  }
  return `${bytes} bytes`;
}

/** The line that ends a truncated log. */
export function logTruncationMarker(maxBytes: number, discarded: number): string {
  return `\n[orrery: log truncated at ${formatLogSize(maxBytes)}; ${discarded} more bytes were discarded]\n`;
}

/** Counts output against a cap: what of each chunk may still be written, and what was dropped. */
export interface LogCap {
  /** The part of `chunk` that fits (maybe all of it, maybe empty); the rest counts as discarded. */
  take(chunk: Buffer): Buffer;
  /** Counts a chunk as discarded whole (the log can no longer be written). */
  drop(chunk: Buffer): void;
  readonly written: number;
  readonly discarded: number;
}

/** A {@link LogCap} of `maxBytes` (at least 1). */
export function createLogCap(maxBytes: number): LogCap {
  let written = 0;
  let discarded = 0;
  return {
    take(chunk) {
      const room = Math.max(0, maxBytes - written);
      const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
      written += part.length;
      discarded += chunk.length - part.length;
      return part;
    },
    drop(chunk) {
      discarded += chunk.length;
    },
    get written() {
      return written;
    },
    get discarded() {
      return discarded;
    },
  };
}

/** Options of {@link createLazyFile}. */
export interface LazyFileOptions {
  /** Bytes of output kept (the marker comes on top). Default {@link DEFAULT_MAX_LOG_BYTES}. */
  maxBytes?: number;
  /** Told once when the file cannot be written; the output is discarded from then on. */
  onError?: (error: Error) => void;
}

/** A capped log file being written. */
export interface LazyFile {
  /** Appends what fits under the cap; false when the file's buffer is full (wait for `onDrain`). */
  write(chunk: Buffer): boolean;
  /** Calls `listener` once the buffer has room again — at once when it has. */
  onDrain(listener: () => void): void;
  /** Bytes discarded so far (past the cap, or after a write error). */
  readonly discarded: number;
  /** Writes the marker if anything was discarded, closes the file; resolves the discarded bytes once it is on disk. */
  end(): Promise<number>;
}

export function createLazyFile(path: string, options: LazyFileOptions = {}): LazyFile {
  const maxBytes = Math.max(1, options.maxBytes ?? DEFAULT_MAX_LOG_BYTES);
  const cap = createLogCap(maxBytes);
  let stream: WriteStream | undefined;
  let failed = false;
  let waiters: Array<() => void> = [];
  const release = (): void => {
    const ready = waiters;
    waiters = [];
    for (const w of ready) w();
  };
  const open = (): WriteStream => {
    const s = createWriteStream(path, { flags: 'a', mode: PRIVATE_FILE_MODE });
    s.on('drain', release);
    s.on('error', (error) => {
      if (failed) return;
      failed = true;
      options.onError?.(error);
      release(); // a paused writer must not wait for a drain that never comes
    });
    return s;
  };
  return {
    write(chunk) {
      if (failed) {
        cap.drop(chunk);
        return true;
      }
      const part = cap.take(chunk);
      if (part.length === 0) return true;
      stream ??= open();
      return stream.write(part);
    },
    onDrain(listener) {
      if (failed || !stream || !stream.writableNeedDrain) listener();
      else waiters.push(listener);
    },
    get discarded() {
      return cap.discarded;
    },
    end() {
      const s = stream;
      if (!s || failed) {
        release();
        return Promise.resolve(cap.discarded);
      }
      return new Promise((resolve) => {
        if (cap.discarded > 0) s.write(logTruncationMarker(maxBytes, cap.discarded));
        s.end();
        // Resolves on 'finish' and on an error alike: the run is never held by its log.
        finished(s, () => {
          release();
          resolve(cap.discarded);
        });
      });
    },
  };
}

/** The `truncated` of a run from the bytes each stream discarded; undefined when none were. */
export function logTruncation(stdout: number, stderr: number): { stdout?: number; stderr?: number } | undefined {
  if (stdout <= 0 && stderr <= 0) return undefined;
  return { ...(stdout > 0 ? { stdout } : {}), ...(stderr > 0 ? { stderr } : {}) };
}
