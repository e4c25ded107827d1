/**
 * An append-only log file opened on its first write: a run that prints nothing costs no file.
 * `end()` resolves once everything written is on disk (or at once when nothing was).
 */
import { createWriteStream, type WriteStream } from 'node:fs';

export interface LazyFile {
  write(chunk: Buffer): void;
  end(): Promise<void>;
}

export function createLazyFile(path: string): LazyFile {
  let stream: WriteStream | undefined;
  return {
    write(chunk) {
      stream ??= createWriteStream(path, { flags: 'a' });
      stream.write(chunk);
    },
    end() {
      const s = stream;
      if (!s) return Promise.resolve();
      return new Promise((resolve) => s.end(() => resolve()));
    },
  };
}
