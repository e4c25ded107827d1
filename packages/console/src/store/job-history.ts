/**
 * Job config history: every version of a job's config that Orrery's writers wrote, with its author
 * and time, kept under `/console/history/<ns>/<job>/<version zero-padded>` (`paths.jobHistoryVersion`).
 * Answers "who changed the cron?" and feeds the console's diff and rollback.
 *
 * What it guarantees:
 * - Every writer of a job config in this package (`applyPlan`, `setJobEnabled`, `createJob`,
 *   `updateJob`, `copyJob` in jobs.ts — the CLI's and the console's one code path) records the
 *   version it wrote, **after** its compare-and-set (or create) succeeded, named by the job node's
 *   `stat.version`: two writers never record the same version.
 * - Recording never undoes or fails the write it follows: a failure is logged and the write stands
 *   (the history then has a gap at that version).
 * - At most {@link JOB_HISTORY_LIMIT} versions per job are kept: the oldest are pruned after each record.
 * - A job's history is one job's lifetime: recording version 0 (a job created) clears what an
 *   earlier job of the same name left, and `deleteJob` deletes the history with the job.
 *
 * Not guaranteed: a version written by a tool outside this package (a hand-made `set`) is not
 * recorded; a record is not atomic with its write (there is no `multi`), so a crash between the
 * two leaves that version out. Not mirrored by the console's cache: read on demand (at most
 * {@link JOB_HISTORY_LIMIT} reads per listing), only when someone asks.
 */
import {
  checkJobConfig,
  encodeJson,
  hasErrorCode,
  inspectNode,
  isPlainObject,
  OrreryError,
  parseHistoryVersionName,
  paths,
  toError,
  type JobConfig,
  type ValidationIssue,
  type ZkClient,
} from '@orrery/core';

/** How many versions of one job's config are kept (the newest; older ones are pruned). */
export const JOB_HISTORY_LIMIT = 50;

/** The longest author kept, in characters (longer ones are cut). */
export const HISTORY_AUTHOR_MAX_LENGTH = 256;

/** The author recorded when a writer names none. */
export const UNKNOWN_AUTHOR = 'unknown';

/** One kept version of a job's config. */
export interface JobVersion {
  /** The job node's `stat.version` this config was written at. */
  version: number;
  /** Who wrote it: a console user's name, or `cli:<user>@<host>` for the CLI. */
  author: string;
  /** When, in epoch ms. */
  at: number;
  config: JobConfig;
}

/** A version as listed: its author and time, or what is wrong with its node. */
export type JobVersionSummary = { version: number; author: string; at: number } | { version: number; problem: string };

/** Where a failure to record goes: anything with pino's `warn(object, message)`. */
export interface HistoryLogger {
  warn(object: Record<string, unknown>, message: string): void;
}

/** Logs through Node's process warnings when the writer gave no logger (the CLI's stderr). */
const processWarnings: HistoryLogger = {
  warn: (object, message) => process.emitWarning(`${message}: ${object.err === undefined ? '' : toError(object.err).message}`),
};

/** Checks a history node's data. */
export function checkJobVersion(input: unknown): { ok: true; value: JobVersion } | { ok: false; issues: ValidationIssue[] } {
  if (!isPlainObject(input)) return { ok: false, issues: [{ field: '', rule: 'type', message: 'a history entry must be an object' }] };
  const issues: ValidationIssue[] = [];
  if (!Number.isInteger(input.version) || (input.version as number) < 0) issues.push({ field: 'version', rule: 'integer', message: 'version: must be an integer ≥ 0' });
  if (typeof input.author !== 'string' || input.author === '') issues.push({ field: 'author', rule: 'type', message: 'author: must be a non-empty string' });
  if (!Number.isInteger(input.at) || (input.at as number) < 0) issues.push({ field: 'at', rule: 'integer', message: 'at: must be epoch ms' });
  const config = checkJobConfig(input.config);
  if (!config.ok) issues.push(...config.issues.map((i) => ({ ...i, field: i.field ? `config.${i.field}` : 'config', message: `config.${i.message}` })));
  if (issues.length > 0 || !config.ok) return { ok: false, issues };
  return { ok: true, value: { version: input.version as number, author: input.author as string, at: input.at as number, config: config.value } };
}

/** Options of {@link recordJobVersion}. */
export interface RecordOptions {
  /** Where a failure to record is logged (default: a process warning). */
  logger?: HistoryLogger;
  /** How many versions to keep (default {@link JOB_HISTORY_LIMIT}). */
  limit?: number;
}

/**
 * Records one version a writer has just written (call it after the compare-and-set succeeded).
 * Never throws: resolves `false` when the record failed (logged) and `true` when it was kept.
 */
export async function recordJobVersion(zk: ZkClient, namespace: string, name: string, entry: JobVersion, options: RecordOptions = {}): Promise<boolean> {
  const logger = options.logger ?? processWarnings;
  const limit = options.limit ?? JOB_HISTORY_LIMIT;
  try {
    const dir = paths.jobHistory(namespace, name);
    // Version 0 is a new job: whatever an earlier job of this name left is not its history.
    if (entry.version === 0) await zk.deleteRecursive(dir);
    await zk.mkdirp(dir);
    const author = entry.author.slice(0, HISTORY_AUTHOR_MAX_LENGTH) || UNKNOWN_AUTHOR;
    const data = encodeJson({ version: entry.version, author, at: entry.at, config: entry.config });
    const path = paths.jobHistoryVersion(namespace, name, entry.version);
    try {
      await zk.create(path, data);
    } catch (error) {
      // Left by a job of the same name deleted by hand: this version is the new one's.
      if (!hasErrorCode(error, 'node-exists')) throw error;
      await zk.set(path, data);
    }
    await pruneJobHistory(zk, namespace, name, limit);
    return true;
  } catch (error) {
    logger.warn({ err: toError(error), namespace, job: name, version: entry.version }, 'job config history: version not recorded (the write itself stands)');
    return false;
  }
}

/** The kept versions' numbers, ascending; nodes with other names are ignored. */
async function versionNumbers(zk: ZkClient, namespace: string, name: string): Promise<number[]> {
  let children: string[];
  try {
    children = await zk.getChildren(paths.jobHistory(namespace, name));
  } catch (error) {
    if (hasErrorCode(error, 'no-node')) return [];
    throw error;
  }
  return children.map(parseHistoryVersionName).filter((v): v is number => v !== undefined).sort((a, b) => a - b);
}

/** Deletes all but the newest `limit` versions. */
export async function pruneJobHistory(zk: ZkClient, namespace: string, name: string, limit = JOB_HISTORY_LIMIT): Promise<void> {
  const versions = await versionNumbers(zk, namespace, name);
  for (const version of versions.slice(0, Math.max(0, versions.length - limit))) {
    await zk.delete(paths.jobHistoryVersion(namespace, name, version)).catch((error: unknown) => {
      if (!hasErrorCode(error, 'no-node')) throw error; // another writer pruned it first
    });
  }
}

/** A job's kept versions, newest first, with author and time (each node read once). */
export async function listJobHistory(zk: ZkClient, namespace: string, name: string): Promise<JobVersionSummary[]> {
  const versions = (await versionNumbers(zk, namespace, name)).reverse();
  const read = await Promise.all(versions.map(async (version): Promise<JobVersionSummary | undefined> => {
    const path = paths.jobHistoryVersion(namespace, name, version);
    const node = await zk.get(path).catch((error: unknown) => {
      if (hasErrorCode(error, 'no-node')) return undefined; // pruned meanwhile
      throw error;
    });
    if (!node) return undefined;
    const checked = inspectNode(node.data, path, checkJobVersion);
    return checked.ok ? { version, author: checked.value.author, at: checked.value.at } : { version, problem: checked.problem };
  }));
  return read.filter((v): v is JobVersionSummary => v !== undefined);
}

/** One kept version; `undefined` when it is not kept; `bad-data` when its node is unreadable. */
export async function readJobVersion(zk: ZkClient, namespace: string, name: string, version: number): Promise<JobVersion | undefined> {
  const path = paths.jobHistoryVersion(namespace, name, version);
  let node;
  try {
    node = await zk.get(path);
  } catch (error) {
    if (hasErrorCode(error, 'no-node')) return undefined;
    throw error;
  }
  const checked = inspectNode(node.data, path, checkJobVersion);
  if (!checked.ok) throw new OrreryError('bad-data', `version ${version} of job '${name}' in the history is ${checked.problem}`, { details: { namespace, job: name, version } });
  return checked.value;
}

/** Deletes a job's whole history (with the job). */
export async function deleteJobHistory(zk: ZkClient, namespace: string, name: string): Promise<void> {
  await zk.deleteRecursive(paths.jobHistory(namespace, name));
}
