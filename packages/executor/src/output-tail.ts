/** Keeps the last `limit` bytes written to it (the tails of a run's stdout and stderr). */
export interface OutputTail {
  push(chunk: Buffer): void;
  text(): string;
}

export function createOutputTail(limit = 4096): OutputTail {
  let chunks: Buffer[] = [];
  let size = 0;
  return {
    push(chunk) {
      chunks.push(chunk);
      size += chunk.length;
      while (size - chunks[0]!.length >= limit) {
        size -= chunks[0]!.length;
        chunks.shift();
      }
    },
    text() {
      const all = Buffer.concat(chunks);
      const tail = all.length > limit ? all.subarray(all.length - limit) : all;
      chunks = [tail];
      size = tail.length;
      // A cut may split a UTF-8 character: drop the partial lead bytes.
      return tail.toString('utf8').replace(/^\uFFFD+/, '');
    },
  };
}
