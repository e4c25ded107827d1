/**
 * Versioned read and compare-and-set of JSON nodes.
 *
 * Guarantees:
 * - `readJson` returns the value with the version it was read at; a node that is not JSON, or does
 *   not pass `check`, fails with `bad-data` naming the node (never a half-parsed value).
 * - `casUpdate` applies `mutate` to the current value and writes it only if nobody wrote the node in
 *   between (ZooKeeper's versioned `setData`); on a conflict it re-reads and tries again, up to
 *   `maxAttempts`, then fails with `conflict`. A mutate that returns `undefined` writes nothing.
 * - `createOrCas` creates a missing node, or updates an existing one with `casUpdate`.
 *
 * Not guaranteed: atomicity across several nodes (there is no `multi`): keep state that must
 * change together in one node.
 */
import { OrreryError, validationError, type ValidationIssue, hasErrorCode, errorCode, toError } from '../errors.js';
import { decodeJson, encodeJson } from '../json.js';
import type { Watcher, ZkClient, ZkStat } from '../zk/client.js';

/** A value with the node version it was read at. */
export interface Versioned<T> {
  value: T;
  stat: ZkStat;
}

/** Checks decoded node data (a schema's `checkX`). */
export type Check<T> = (input: unknown) => { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };

/** Decodes node data with `check`, failing with `bad-data` that names `path`. */
export function decodeChecked<T>(data: Buffer | null, path: string, check?: Check<T>): T {
  const raw = decodeJson(data, path);
  if (!check) return raw as T;
  const result = check(raw);
  if (!result.ok) {
    const inner = validationError(result.issues, `data at ${path}`);
    throw new OrreryError('bad-data', inner.message, { details: { path, issues: result.issues } });
  }
  return result.value;
}

/**
 * Reads and decodes a JSON node; `undefined` when it does not exist. With `watcher`, the read sets a
 * data watch (none on a node that does not exist: ZooKeeper sets none then).
 */
export async function readJson<T>(zk: ZkClient, path: string, check?: Check<T>, watcher?: Watcher): Promise<Versioned<T> | undefined> {
  try {
    const { data, stat } = await zk.get(path, watcher);
    return { value: decodeChecked(data, path, check), stat };
  } catch (error) {
    if (hasErrorCode(error, 'no-node')) return undefined;
    throw error;
  }
}

/** Writes `value` only if the node is still at `version`; `bad-version` otherwise. */
export function casWrite(zk: ZkClient, path: string, value: unknown, version: number): Promise<ZkStat> {
  return zk.set(path, encodeJson(value), version);
}

/** Options of {@link casUpdate}. */
export interface CasOptions<T> {
  check?: Check<T>;
  /** How many read-modify-write rounds before giving up with `conflict`. Default 10. */
  maxAttempts?: number;
}

/**
 * Read-modify-write with compare-and-set. Resolves with the written value and stat, or with the
 * unchanged current value when `mutate` returned `undefined`.
 */
export async function casUpdate<T>(
  zk: ZkClient,
  path: string,
  mutate: (current: T, stat: ZkStat) => T | undefined,
  options: CasOptions<T> = {},
): Promise<Versioned<T> & { written: boolean }> {
  const maxAttempts = options.maxAttempts ?? 10;
  for (let attempt = 1; attempt <= maxAttempts; attempt += 1) {
    const current = await readJson(zk, path, options.check);
    if (!current) throw new OrreryError('no-node', `${path} does not exist`, { details: { path } });
    const next = mutate(current.value, current.stat);
    if (next === undefined) return { ...current, written: false };
    try {
      const stat = await casWrite(zk, path, next, current.stat.version);
      return { value: next, stat, written: true };
    } catch (error) {
      if (!hasErrorCode(error, 'bad-version')) throw error;
    }
  }
  throw new OrreryError('conflict', `${path} kept changing under ${maxAttempts} compare-and-set attempts`, { details: { path }, retryable: true });
}

/** Creates the node with `initial` when missing, else updates it with {@link casUpdate}. */
export async function createOrCas<T>(
  zk: ZkClient,
  path: string,
  initial: () => T,
  mutate: (current: T, stat: ZkStat) => T | undefined,
  options: CasOptions<T> = {},
): Promise<Versioned<T> & { written: boolean; created: boolean }> {
  const maxAttempts = options.maxAttempts ?? 10;
  for (let attempt = 1; attempt <= maxAttempts; attempt += 1) {
    const existing = await readJson(zk, path, options.check);
    if (!existing) {
      const value = initial();
      try {
        await zk.create(path, encodeJson(value));
        // Re-read for the stat (create does not return one); a writer may already have changed it.
        const created = await readJson(zk, path, options.check);
        if (created) return { ...created, written: true, created: true };
        continue;
      } catch (error) {
        const code = errorCode(error);
        if (code === 'node-exists') continue;
        throw error;
      }
    }
    try {
      const result = await casUpdate(zk, path, mutate, { ...options, maxAttempts: 1 });
      return { ...result, created: false };
    } catch (error) {
      const code = errorCode(error);
      if (code !== 'conflict' && code !== 'no-node') throw error;
    }
  }
  throw new OrreryError('conflict', `${path} kept changing under ${maxAttempts} attempts`, { details: { path }, retryable: true });
}

/**
 * Makes sure the container node `path` exists (persistent, no data) **without creating its
 * parents**: resolves `true` when it is there, `false` when its parent is missing. Processes that
 * only use a job (executors, the allocator) create the job's children this way, so a job someone
 * deleted stays deleted — they never bring its node back empty.
 */
export async function ensureNode(zk: ZkClient, path: string): Promise<boolean> {
  try {
    await zk.create(path);
    return true;
  } catch (error) {
    const code = errorCode(error);
    if (code === 'node-exists') return true;
    if (code === 'no-node') return false;
    throw error;
  }
}

/** What {@link inspectNode} found: the checked value, or a sentence saying what is wrong. */
export type NodeReading<T> = { ok: true; value: T } | { ok: false; problem: string; issues: ValidationIssue[] };

/**
 * Decodes and checks node data without throwing, for readers that must go on past a bad node
 * (a namespace listing, the allocator's view of a cluster): the problem says whether the data is
 * not JSON at all or which field breaks which rule.
 */
export function inspectNode<T>(data: Buffer | null, path: string, check: Check<T>): NodeReading<T> {
  let raw: unknown;
  try {
    raw = decodeJson(data, path);
  } catch (error) {
    const message = toError(error).message.replace(`${path} does not hold valid JSON: `, '');
    return { ok: false, problem: `not valid JSON (${message})`, issues: [{ field: '', rule: 'json', message: `${path}: not valid JSON (${message})` }] };
  }
  if (raw === null) return { ok: false, problem: 'empty (no data)', issues: [{ field: '', rule: 'required', message: `${path}: the node holds no data` }] };
  const result = check(raw);
  if (result.ok) return result;
  const shown = result.issues.slice(0, 3).map((i) => i.message).join('; ');
  return { ok: false, problem: `invalid: ${shown}${result.issues.length > 3 ? ` (and ${result.issues.length - 3} more)` : ''}`, issues: result.issues };
}
