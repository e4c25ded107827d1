/**
 * Job administration over ZooKeeper: plan and apply a set of job configs (validate everything first,
 * then one compare-and-set per job), read, enable/disable and delete jobs.
 */
import {
  OrreryError,
  casUpdate,
  checkJobConfig,
  diffJobConfig,
  encodeJson,
  jobSetIssues,
  parseCommand,
  parseJobConfig,
  paths,
  readJson,
  hasErrorCode,
  inspectNode,
  toError,
  jsonEqual,
  JOB_NAME_PATTERN,
  NODE_NAME_PATTERN,
  checkExecutorAssignment,
  validationError,
  assertJobName,
  checkAssignment,
  commandName,
  ensureNode,
  type Command,
  type JobConfig,
  type ValidationIssue,
  type ZkClient,
  type ZkStat,
} from '@orrery/core';
import { assertNamespaceExists } from './namespaces.js';
import { deleteJobHistory, recordJobVersion, UNKNOWN_AUTHOR, type HistoryLogger } from './job-history.js';

/** A job as stored, with the version it was read at. */
export interface StoredJob {
  config: JobConfig;
  stat: ZkStat;
}

/**
 * A job node whose data is not a valid config (written by hand, half-written by a foreign tool,
 * or empty): listed with the reason, never fatal for the rest of the namespace. `apply` can
 * overwrite it (a compare-and-set from `stat.version`) and `delete` can remove it.
 */
export interface BrokenJob {
  name: string;
  /** What is wrong, in a sentence: not valid JSON, empty, or the fields and rules that fail. */
  problem: string;
  stat: ZkStat;
}

/** Every job of a namespace: the valid ones and the broken ones, each sorted by name. */
export interface JobListing {
  jobs: StoredJob[];
  broken: BrokenJob[];
}

/** What `apply` will do to one job. */
export type JobChange =
  | { action: 'create'; name: string; config: JobConfig; input?: Record<string, unknown> }
  | { action: 'replace'; name: string; config: JobConfig; version: number; problem: string; input?: Record<string, unknown> }
  | { action: 'update'; name: string; config: JobConfig; version: number; changes: ReturnType<typeof diffJobConfig>; input?: Record<string, unknown> }
  /** `input` set: nothing changes in the config, but the file's entry did (its last-applied is rewritten). */
  | { action: 'unchanged'; name: string; config: JobConfig; input?: Record<string, unknown> };

/** The result of applying a plan. */
export interface ApplyResult {
  written: string[];
  unchanged: string[];
  /** Jobs someone else created or changed since the plan was made: nothing was written for them. */
  conflicts: Array<{ name: string; message: string }>;
}

/** Reads one job, valid or broken; `undefined` when it does not exist. */
export async function readJobEntry(zk: ZkClient, namespace: string, name: string): Promise<StoredJob | BrokenJob | undefined> {
  const path = paths.job(namespace, name);
  let read;
  try {
    read = await zk.get(path);
  } catch (error) {
    if (hasErrorCode(error, 'no-node')) return undefined;
    throw error;
  }
  const checked = inspectNode(read.data, path, checkJobConfig);
  if (!checked.ok) return { name, problem: checked.problem, stat: read.stat };
  if (checked.value.name !== name) return { name, problem: `its config names another job ('${checked.value.name}')`, stat: read.stat };
  return { config: checked.value, stat: read.stat };
}

/** True for a {@link BrokenJob}. */
export function isBrokenJob(entry: StoredJob | BrokenJob): entry is BrokenJob {
  return 'problem' in entry;
}

/** The error for a command that needs a job's config when the job is broken. */
export function brokenJobError(namespace: string, job: BrokenJob): OrreryError {
  return new OrreryError('bad-data', `job '${job.name}' in namespace '${namespace}' is broken: its config is ${job.problem}. Overwrite it (orrery -n ${namespace} apply -f FILE) or remove it (orrery -n ${namespace} delete ${job.name})`, {
    details: { namespace, job: job.name, problem: job.problem },
  });
}

/** Reads one job; `undefined` when it does not exist; a `bad-data` error naming the fix when it is broken. */
export async function readJob(zk: ZkClient, namespace: string, name: string): Promise<StoredJob | undefined> {
  const entry = await readJobEntry(zk, namespace, name);
  if (entry && isBrokenJob(entry)) throw brokenJobError(namespace, entry);
  return entry;
}

function parseStoredJob(path: string) {
  return (input: unknown) => {
    const r = checkJobConfig(input);
    if (!r.ok) return { ok: false as const, issues: r.issues.map((i) => ({ ...i, message: `${path}: ${i.message}` })) };
    return r;
  };
}

/** Every job of a namespace, sorted by name; a broken job is listed with its problem, never fatal. */
export async function listJobs(zk: ZkClient, namespace: string): Promise<JobListing> {
  await assertNamespaceExists(zk, namespace);
  let names: string[];
  try {
    names = await zk.getChildren(paths.jobs(namespace));
  } catch (error) {
    if (hasErrorCode(error, 'no-node')) return { jobs: [], broken: [] };
    throw error;
  }
  const listing: JobListing = { jobs: [], broken: [] };
  // A child whose name is not a job name was not made by Orrery: it is not a job (paths refuse it).
  const entries = await Promise.all(names.filter((n) => JOB_NAME_PATTERN.test(n)).map((n) => readJobEntry(zk, namespace, n)));
  for (const entry of entries) {
    if (!entry) continue;
    if (isBrokenJob(entry)) listing.broken.push(entry);
    else listing.jobs.push(entry);
  }
  return listing;
}

/** One job of an `apply` file: its entry as written (the fields the file sets) and its validated config. */
export interface JobDocumentEntry {
  /** Position in the file's `jobs` list. */
  index: number;
  /** The entry as the file has it (the fields it sets, before defaults). */
  input: Record<string, unknown>;
  config: JobConfig;
}

/** `jobs[2] (nightly-report)`: how messages name an entry of the file. */
function entryLabel(index: number, input: unknown): string {
  const name = isPlainObject(input) && typeof input.name === 'string' && JOB_NAME_PATTERN.test(input.name) ? ` (${input.name})` : '';
  return `jobs[${index}]${name}`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Validates a whole document (`{ jobs: [...] }`) and returns its entries, or throws one `validation`
 * error listing **every** problem of the file at once: each job's (a wrong type in one field hides
 * none of the others), and the file's own — duplicate names, downstream jobs that exist neither in
 * the file nor in the namespace, downstream cycles — among the entries whose names and downstream
 * lists can be read. Fields are `jobs[i].field`; messages name the job: `jobs[2] (nightly-report).cron: …`.
 * `existing` names the jobs already in the namespace.
 */
export function validateJobDocument(document: unknown, existing: readonly string[] = []): JobDocumentEntry[] {
  const issues: ValidationIssue[] = [];
  if (!isPlainObject(document)) {
    throw validationError([{ field: '', rule: 'type', message: "the file must hold an object with a 'jobs' list" }], 'file');
  }
  for (const key of Object.keys(document)) {
    if (key !== 'jobs') issues.push({ field: key, rule: 'unknown-field', message: `${key}: unknown field (the file holds only 'jobs')` });
  }
  const list = document.jobs;
  if (!Array.isArray(list)) {
    issues.push({ field: 'jobs', rule: 'required', message: "jobs: required, a list of job configurations" });
    throw validationError(issues, 'file');
  }
  const entries: JobDocumentEntry[] = [];
  // What the file-level rules can read of each entry, valid or not.
  const named: Array<{ index: number; name: string; downstream: string[] }> = [];
  list.forEach((input: unknown, i) => {
    const label = entryLabel(i, input);
    const r = checkJobConfig(input);
    if (r.ok) entries.push({ index: i, input: input as Record<string, unknown>, config: r.value });
    else for (const problem of r.issues) issues.push({ ...problem, field: problem.field ? `jobs[${i}].${problem.field}` : `jobs[${i}]`, message: problem.field ? `${label}.${problem.message}` : `${label}: ${problem.message.replace(/^value: /, '')}` });
    if (isPlainObject(input) && typeof input.name === 'string' && JOB_NAME_PATTERN.test(input.name)) {
      const downstream = Array.isArray(input.downstream) ? input.downstream.filter((d): d is string => typeof d === 'string') : [];
      named.push({ index: i, name: input.name, downstream });
    }
  });
  // The file's own rules, over every entry whose name can be read.
  const first = new Map<string, number>();
  for (const n of named) {
    const seen = first.get(n.name);
    if (seen !== undefined) issues.push({ field: `jobs[${n.index}].name`, rule: 'unique', message: `jobs[${n.index}] (${n.name}).name: '${n.name}' is defined twice (also jobs[${seen}])` });
    else first.set(n.name, n.index);
  }
  const known = new Set([...existing, ...named.map((n) => n.name)]);
  for (const n of named) {
    n.downstream.forEach((d, k) => {
      if (!known.has(d)) issues.push({ field: `jobs[${n.index}].downstream[${k}]`, rule: 'unknown-job', message: `jobs[${n.index}] (${n.name}).downstream[${k}]: no job named '${d}' in the file or the namespace` });
    });
  }
  const cycleIssues = jobSetIssues(named.map((n) => ({ name: n.name, downstream: n.downstream }) as unknown as JobConfig)).filter((i) => i.rule === 'cycle');
  for (const c of cycleIssues) {
    const index = Number(/^jobs\[(\d+)\]/.exec(c.field)?.[1] ?? -1);
    const real = named[index]?.index ?? index;
    issues.push({ ...c, field: `jobs[${real}].downstream`, message: `${entryLabel(real, list[real])}.downstream: ${c.message.replace(/^jobs\[\d+\]\.downstream: /, '')}` });
  }
  if (issues.length > 0) throw validationError(issues, 'file');
  return entries;
}

/** The data of a job's `last-applied` node. */
interface LastApplied {
  input: Record<string, unknown>;
  appliedAt: number;
}

async function readLastApplied(zk: ZkClient, namespace: string, name: string): Promise<LastApplied | undefined> {
  const path = paths.jobLastApplied(namespace, name);
  const node = await zk.get(path).catch((error: unknown) => {
    if (hasErrorCode(error, 'no-node')) return undefined;
    throw error;
  });
  if (!node) return undefined;
  const read = inspectNode(node.data, path, (v: unknown) =>
    isPlainObject(v) && isPlainObject(v.input) ? { ok: true as const, value: v as unknown as LastApplied } : { ok: false as const, issues: [{ field: 'input', rule: 'type', message: 'input: must be an object' }] });
  return read.ok ? read.value : undefined; // unreadable: as if never applied (fields not in the file keep their values)
}

/**
 * The three-way merge of `apply` (kubectl's rule, on the top-level fields): a field the file sets
 * takes the file's value; a field the file set at the last apply and no longer sets returns to its
 * default; any other field keeps its live value (set by `orrery enable`, the console, …). Pure.
 */
export function mergeApplied(input: Readonly<Record<string, unknown>>, live: JobConfig | undefined, lastApplied: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  const fields = new Set<string>([...Object.keys(input), ...(live ? Object.keys(live) : [])]);
  for (const field of fields) {
    if (Object.hasOwn(input, field)) merged[field] = input[field];
    else if (lastApplied && Object.hasOwn(lastApplied, field)) continue; // removed from the file: back to its default
    else if (live && Object.hasOwn(live, field)) merged[field] = (live as Record<string, unknown>)[field];
  }
  return merged;
}

/**
 * Compares the file's jobs with the stored ones (no writes): each job's config is the three-way
 * merge of the file's entry, the stored config and the entry last applied ({@link mergeApplied}),
 * validated again. Throws one `validation` error naming every job whose merge is invalid.
 */
export async function planJobs(zk: ZkClient, namespace: string, entries: readonly JobDocumentEntry[]): Promise<JobChange[]> {
  const plan: JobChange[] = [];
  const issues: ValidationIssue[] = [];
  for (const entry of entries) {
    const name = entry.config.name;
    const stored = await readJobEntry(zk, namespace, name);
    if (!stored) {
      plan.push({ action: 'create', name, config: entry.config, input: entry.input });
      continue;
    }
    if (isBrokenJob(stored)) {
      plan.push({ action: 'replace', name, config: entry.config, version: stored.stat.version, problem: stored.problem, input: entry.input });
      continue;
    }
    const last = await readLastApplied(zk, namespace, name);
    const merged = checkJobConfig(mergeApplied(entry.input, stored.config, last?.input));
    if (!merged.ok) {
      const label = entryLabel(entry.index, entry.input);
      for (const problem of merged.issues) issues.push({ ...problem, field: `jobs[${entry.index}].${problem.field}`, message: `${label}.${problem.message} (after merging with the stored config)` });
      continue;
    }
    const config = merged.value;
    const changes = diffJobConfig(stored.config, config);
    const unchangedInput = last !== undefined && jsonEqual(last.input, entry.input);
    if (changes.length === 0) plan.push(unchangedInput ? { action: 'unchanged', name, config } : { action: 'unchanged', name, config, input: entry.input });
    else plan.push({ action: 'update', name, config, version: stored.stat.version, changes, input: entry.input });
  }
  if (issues.length > 0) throw validationError(issues, 'file');
  return plan;
}

/**
 * Who writes a job config, for its history (job-history.ts): every writer of a job config takes
 * these and records the version it wrote once its write succeeded.
 */
export interface JobWriteOptions {
  /** The console user, or `cli:<user>@<host>` for the CLI (default {@link UNKNOWN_AUTHOR}). */
  author?: string;
  /** Where a failure to record the history is logged (default: a process warning). */
  logger?: HistoryLogger;
  /** The clock for the history's times, epoch ms (default `Date.now`). */
  now?: () => number;
}

/** Records a version just written (never throws; see job-history.ts). */
function recordWritten(zk: ZkClient, namespace: string, name: string, version: number, config: JobConfig, options: JobWriteOptions): Promise<boolean> {
  return recordJobVersion(zk, namespace, name, { version, author: options.author ?? UNKNOWN_AUTHOR, at: (options.now ?? Date.now)(), config }, options.logger ? { logger: options.logger } : {});
}

/**
 * Writes a plan: each job with one create or one compare-and-set from the planned version (the
 * version written recorded in the job's history, by `options.author`), then its `last-applied`
 * entry (the fields the file set) for the next merge.
 */
export async function applyPlan(zk: ZkClient, namespace: string, plan: readonly JobChange[], options: JobWriteOptions = {}): Promise<ApplyResult> {
  const result: ApplyResult = { written: [], unchanged: [], conflicts: [] };
  await zk.mkdirp(paths.jobs(namespace));
  for (const change of plan) {
    const path = paths.job(namespace, change.name);
    try {
      let version: number | undefined;
      if (change.action === 'create') {
        await zk.create(path, encodeJson(change.config));
        version = 0;
      } else if (change.action === 'update' || change.action === 'replace') version = (await zk.set(path, encodeJson(change.config), change.version)).version;
      else result.unchanged.push(change.name);
      if (change.action !== 'unchanged') result.written.push(change.name);
      if (version !== undefined) await recordWritten(zk, namespace, change.name, version, change.config, options);
    } catch (error) {
      if (hasErrorCode(error, 'node-exists')) result.conflicts.push({ name: change.name, message: `job '${change.name}' was created by someone else meanwhile; nothing written for it` });
      else if (hasErrorCode(error, 'bad-version', 'no-node')) result.conflicts.push({ name: change.name, message: `job '${change.name}' was changed or deleted by someone else meanwhile; nothing written for it` });
      else throw error;
      continue;
    }
    if (change.input) await writeLastApplied(zk, namespace, change.name, change.input);
  }
  return result;
}

async function writeLastApplied(zk: ZkClient, namespace: string, name: string, input: Record<string, unknown>): Promise<void> {
  const path = paths.jobLastApplied(namespace, name);
  const data = encodeJson({ input, appliedAt: Date.now() });
  try {
    await zk.set(path, data);
  } catch (error) {
    if (!hasErrorCode(error, 'no-node')) throw error;
    // Created under the job only (never its parents): a job deleted meanwhile stays deleted.
    await zk.create(path, data).catch((e: unknown) => {
      if (!hasErrorCode(e, 'node-exists', 'no-node')) throw e;
    });
  }
}

/** Sets `enabled` with a compare-and-set (the version written recorded in the job's history); resolves with whether anything changed. */
export async function setJobEnabled(zk: ZkClient, namespace: string, name: string, enabled: boolean, options: JobWriteOptions = {}): Promise<boolean> {
  assertJobName(name);
  await assertNamespaceExists(zk, namespace);
  const path = paths.job(namespace, name);
  try {
    const r = await casUpdate(zk, path, (c: JobConfig) => (c.enabled === enabled ? undefined : parseJobConfig({ ...c, enabled })), { check: parseStoredJob(path) });
    if (r.written) await recordWritten(zk, namespace, name, r.stat.version, r.value, options);
    return r.written;
  } catch (error) {
    if (hasErrorCode(error, 'no-node')) throw notFound(namespace, name);
    if (hasErrorCode(error, 'bad-data')) {
      const entry = await readJobEntry(zk, namespace, name);
      if (entry && isBrokenJob(entry)) throw brokenJobError(namespace, entry);
    }
    throw error;
  }
}

/** A job config just written: the config, the version it was written at, and the one it replaced. */
export interface WrittenJob {
  config: JobConfig;
  /** The job node's version after the write (the next compare-and-set's version). */
  version: number;
  /** The config replaced (absent for a create, or when the stored one was broken). */
  before?: JobConfig;
  /** False when the config sent equals the stored one: nothing was written. */
  changed: boolean;
}

/** How far {@link downstreamIssues} follows downstream links before it stops looking for a cycle. */
const DOWNSTREAM_WALK_LIMIT = 1000;

/**
 * The namespace-level rules of one config (what `apply` checks over a file): every downstream job
 * exists, and the downstream links do not lead back to the job. Reads the jobs it follows.
 */
export async function downstreamIssues(zk: ZkClient, namespace: string, config: JobConfig): Promise<ValidationIssue[]> {
  const issues: ValidationIssue[] = [];
  // Job → its downstream list; null: no such job (a broken job leads nowhere).
  const known = new Map<string, readonly string[] | null>([[config.name, config.downstream]]);
  const downstreamOf = async (name: string): Promise<readonly string[] | null> => {
    if (!known.has(name)) {
      const entry = await readJobEntry(zk, namespace, name);
      known.set(name, entry === undefined ? null : isBrokenJob(entry) ? [] : entry.config.downstream);
    }
    return known.get(name)!;
  };
  for (const [k, d] of config.downstream.entries()) {
    if ((await downstreamOf(d)) === null) issues.push({ field: `downstream[${k}]`, rule: 'unknown-job', message: `downstream[${k}]: no job named '${d}' in namespace '${namespace}'` });
  }
  // Breadth first from the job: reaching it again is a cycle.
  const parent = new Map<string, string>();
  const queue = [config.name];
  while (queue.length > 0 && parent.size < DOWNSTREAM_WALK_LIMIT) {
    const current = queue.shift()!;
    for (const next of (await downstreamOf(current)) ?? []) {
      if (next === config.name) {
        const cycle = [config.name];
        for (let at = current; at !== config.name; at = parent.get(at)!) cycle.unshift(at);
        cycle.unshift(config.name);
        issues.push({ field: 'downstream', rule: 'cycle', message: `downstream: the downstream jobs form a cycle: ${cycle.join(' → ')}` });
        return issues;
      }
      if (parent.has(next)) continue;
      parent.set(next, current);
      queue.push(next);
    }
  }
  return issues;
}

/**
 * Creates one job (the console's create): the config validated by `checkJobConfig` (every problem
 * at once) and its downstream jobs by {@link downstreamIssues}, then one create; `already-exists`
 * when the job is there. Version 0 is recorded in the job's history.
 */
export async function createJob(zk: ZkClient, namespace: string, input: unknown, options: JobWriteOptions = {}): Promise<WrittenJob> {
  const checked = checkJobConfig(input);
  if (!checked.ok) throw validationError(checked.issues, 'job');
  const config = checked.value;
  await assertNamespaceExists(zk, namespace);
  const issues = await downstreamIssues(zk, namespace, config);
  if (issues.length > 0) throw validationError(issues, `job '${config.name}'`);
  await zk.mkdirp(paths.jobs(namespace));
  try {
    await zk.create(paths.job(namespace, config.name), encodeJson(config));
  } catch (error) {
    if (hasErrorCode(error, 'node-exists')) throw new OrreryError('already-exists', `job '${config.name}' already exists in namespace '${namespace}'`, { details: { namespace, job: config.name } });
    throw error;
  }
  await recordWritten(zk, namespace, config.name, 0, config, options);
  return { config, version: 0, changed: true };
}

/** The `conflict` of a compare-and-set from a stale version, with the current version and config. */
async function staleVersionError(zk: ZkClient, namespace: string, name: string, version: number): Promise<OrreryError> {
  const current = await readJobEntry(zk, namespace, name);
  if (!current) return notFound(namespace, name);
  return new OrreryError('conflict', `job '${name}' was changed by someone else since version ${version} (it is at version ${current.stat.version}); reload and try again`, {
    details: { namespace, job: name, version: current.stat.version, config: isBrokenJob(current) ? null : current.config, ...(isBrokenJob(current) ? { problem: current.problem } : {}) },
  });
}

/**
 * Replaces a job's config with a compare-and-set from `version` (the version it was read at): the
 * config validated as in {@link createJob} (its name, when given, must be the job's); `conflict`
 * with the current version and config (`details: {version, config}`) when someone wrote it since,
 * `not-found` when it is gone. A broken job can be replaced. A config equal to the stored one
 * writes nothing; a written one is recorded in the job's history.
 */
export async function updateJob(zk: ZkClient, namespace: string, name: string, input: unknown, version: number, options: JobWriteOptions = {}): Promise<WrittenJob> {
  assertJobName(name);
  const withName = isPlainObject(input) && input.name === undefined ? { ...input, name } : input;
  const checked = checkJobConfig(withName);
  const issues = checked.ok ? [] : [...checked.issues];
  if (isPlainObject(withName) && typeof withName.name === 'string' && withName.name !== name) {
    issues.push({ field: 'name', rule: 'match', message: `name: must be the job's own name '${name}' (to rename, copy the job and delete the old one)` });
  }
  if (issues.length > 0 || !checked.ok) throw validationError(issues, `job '${name}'`);
  const config = checked.value;
  await assertNamespaceExists(zk, namespace);
  const current = await readJobEntry(zk, namespace, name);
  if (!current) throw notFound(namespace, name);
  const downstream = await downstreamIssues(zk, namespace, config);
  if (downstream.length > 0) throw validationError(downstream, `job '${name}'`);
  if (current.stat.version !== version) throw await staleVersionError(zk, namespace, name, version);
  const before = isBrokenJob(current) ? undefined : current.config;
  if (before && jsonEqual(before, config)) return { config, version, before, changed: false };
  let written: ZkStat;
  try {
    written = await zk.set(paths.job(namespace, name), encodeJson(config), version);
  } catch (error) {
    if (hasErrorCode(error, 'bad-version')) throw await staleVersionError(zk, namespace, name, version);
    if (hasErrorCode(error, 'no-node')) throw notFound(namespace, name);
    throw error;
  }
  await recordWritten(zk, namespace, name, written.version, config, options);
  return { config, version: written.version, ...(before ? { before } : {}), changed: true };
}

/**
 * Copies a job under a new name, disabled (everything else as the source has it); `conflict` when
 * the source is broken, `already-exists` when the target is there. Recorded as the copy's version 0.
 */
export async function copyJob(zk: ZkClient, namespace: string, source: string, target: string, options: JobWriteOptions = {}): Promise<WrittenJob> {
  assertJobName(source);
  await assertNamespaceExists(zk, namespace);
  const entry = await readJobEntry(zk, namespace, source);
  if (!entry) throw notFound(namespace, source);
  if (isBrokenJob(entry)) {
    throw new OrreryError('conflict', `job '${source}' is broken (its config is ${entry.problem}); there is nothing to copy`, { details: { namespace, job: source, problem: entry.problem } });
  }
  return createJob(zk, namespace, { ...entry.config, name: target, enabled: false }, options);
}

/**
 * Deletes a job and everything under it. Refuses an enabled job unless `force`; a broken job (no
 * valid config) can always be deleted.
 */
export async function deleteJob(zk: ZkClient, namespace: string, name: string, options: { force?: boolean; settleMs?: number } & JobWriteOptions = {}): Promise<void> {
  assertJobName(name);
  await assertNamespaceExists(zk, namespace);
  const stored = await readJobEntry(zk, namespace, name);
  if (!stored) throw notFound(namespace, name);
  if (!isBrokenJob(stored) && stored.config.enabled) {
    if (!options.force) {
      throw new OrreryError('conflict', `job '${name}' is enabled; disable it first (orrery -n ${namespace} disable ${name}) or use --force`, { details: { job: name } });
    }
    // Executors that run the job keep its children (shards, commands, leader latch) alive while
    // they have it: disable it, and give the allocator a moment to take it from their summaries,
    // so that the delete below is not a race against them.
    await setJobEnabled(zk, namespace, name, false, options);
    await waitUntilUnassigned(zk, namespace, name, options.settleMs ?? 10_000);
  }
  await zk.deleteRecursive(paths.job(namespace, name));
  // The history is the deleted job's: it goes with it (a failure leaves it for the next create to clear).
  await deleteJobHistory(zk, namespace, name).catch((error: unknown) => {
    options.logger?.warn({ err: toError(error), namespace, job: name }, 'job config history: not deleted with its job');
  });
}

/** Polls (every 100 ms, up to `timeoutMs`) until no executor's summary names the job. */
/** How often `delete --force` looks at the executors' summaries while it waits for them to drop a job. */
const UNASSIGNED_POLL_MS = 100;

async function waitUntilUnassigned(zk: ZkClient, namespace: string, job: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const executors = await zk.getChildren(paths.executors(namespace)).catch((error: unknown) => {
      if (hasErrorCode(error, 'no-node')) return [] as string[];
      throw error;
    });
    let named = false;
    for (const e of executors.filter((n) => NODE_NAME_PATTERN.test(n))) {
      const summary = await zk.get(paths.executorAssignment(namespace, e)).catch((error: unknown) => {
        if (hasErrorCode(error, 'no-node')) return undefined;
        throw error;
      });
      const checked = summary ? inspectNode(summary.data, paths.executorAssignment(namespace, e), checkExecutorAssignment) : undefined;
      if (checked?.ok && checked.value.jobs[job]) named = true;
    }
    if (!named) return;
    await new Promise((resolve) => setTimeout(resolve, UNASSIGNED_POLL_MS));
  }
}

function notFound(namespace: string, name: string): OrreryError {
  return new OrreryError('not-found', `job '${name}' does not exist in namespace '${namespace}'`, { details: { namespace, job: name } });
}

/** Options of run-now and stop. */
export interface JobCommandOptions {
  /** Only these items (default: all). */
  items?: number[];
  /** Run-now only: overrides the job parameter for these runs. */
  param?: string;
  /** Who asks (a user or token name), kept in the command for the audit. */
  requestedBy?: string;
}

/**
 * Asks the owners of a job's shards to run them now (one command node; owners act within a second).
 * Fails with a clear error when the job is disabled or no online executor owns the items.
 */
export async function runJobNow(zk: ZkClient, namespace: string, name: string, options: JobCommandOptions = {}): Promise<{ executors: string[] }> {
  const stored = await readJob(zk, namespace, name);
  if (!stored) throw notFound(namespace, name);
  const c = stored.config;
  if (!c.enabled) throw new OrreryError('conflict', `job '${name}' is disabled; enable it first (orrery -n ${namespace} enable ${name})`);
  const items = checkItems(options.items, c);
  const command = parseCommand({ kind: 'run', ...(items ? { items } : {}), ...(options.param !== undefined ? { param: options.param } : {}), ...requester(options), requestedAt: Date.now() });
  const assignment = await readJson(zk, paths.jobAssignment(namespace, name), checkAssignment);
  const owners = Object.entries(assignment?.value.items ?? {}).filter(([, list]) => !items || list.some((i) => items.includes(i))).map(([e]) => e);
  const online: string[] = [];
  for (const e of owners) if (await zk.exists(paths.executorPresence(namespace, e))) online.push(e);
  if (online.length === 0) {
    const unassigned = assignment?.value.unassigned.map((u) => `${u.item} (${u.reason})`).join(', ');
    throw new OrreryError('conflict', `job '${name}' has no online executor to run it${unassigned ? `: unassigned ${unassigned}` : ''}`, { details: { job: name } });
  }
  await createCommand(zk, namespace, name, command);
  return { executors: online };
}

/** Asks the owners of a job's shards to stop their runs in progress (outcome `aborted`). */
export async function stopJob(zk: ZkClient, namespace: string, name: string, options: JobCommandOptions = {}): Promise<void> {
  const stored = await readJob(zk, namespace, name);
  if (!stored) throw notFound(namespace, name);
  const items = checkItems(options.items, stored.config);
  await createCommand(zk, namespace, name, parseCommand({ kind: 'stop', ...(items ? { items } : {}), ...requester(options), requestedAt: Date.now() }));
}

function checkItems(items: number[] | undefined, c: JobConfig): number[] | undefined {
  if (!items) return undefined;
  const bad = items.filter((i) => !Number.isInteger(i) || i < 0 || (!c.localMode && i >= c.shardingTotalCount));
  if (bad.length > 0) {
    throw validationError([{ field: 'items', rule: 'item-range', message: `items: ${bad.join(', ')} not in 0..${c.shardingTotalCount - 1}` }], 'items');
  }
  return items;
}

const requester = (options: JobCommandOptions): { requestedBy?: string } => (options.requestedBy !== undefined ? { requestedBy: options.requestedBy } : {});

/** Writes a command (checked by `parseCommand`: the one schema every writer uses) as a new persistent-sequential `cmd-<seq>` node of the job. */
async function createCommand(zk: ZkClient, namespace: string, name: string, command: Command): Promise<void> {
  // Not mkdirp: a job deleted since it was read must not come back as an empty node.
  if (!(await ensureNode(zk, paths.jobCommands(namespace, name)))) throw notFound(namespace, name);
  await zk.create(paths.jobCommand(namespace, name, commandName.sequential()), encodeJson(command), 'persistent-sequential');
}
