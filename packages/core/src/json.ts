/**
 * Decoding and encoding of ZooKeeper node data, with an error that names the node.
 */
import { OrreryError } from './errors.js';

export { canonicalJson, jsonEqual } from './schemas/canonical-json.js';

/** Parses node data as JSON; `bad-data` naming the path when it is not JSON. Empty data is `null`. */
export function decodeJson(data: Buffer | string | null, path: string): unknown {
  if (data === null || data.length === 0) return null;
  const text = typeof data === 'string' ? data : data.toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new OrreryError('bad-data', `${path} does not hold valid JSON: ${(error as Error).message}`, {
      details: { path },
      cause: error,
    });
  }
}

/** Serialises a value for a node. */
export function encodeJson(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value), 'utf8');
}
