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
  parseJobConfig,
  paths,
  readJson,
  hasErrorCode,
  inspectNode,
  JOB_NAME_PATTERN,
  NODE_NAME_PATTERN,
  checkExecutorAssignment,
  validationError,
  assertJobName,
  checkAssignment,
  type JobConfig,
  type ValidationIssue,
  type ZkClient,
  type ZkStat,
} from '@orrery/core';
import { assertNamespaceExists } from './namespaces.js';

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
  | { action: 'create'; name: string; config: JobConfig }
  | { action: 'replace'; name: string; config: JobConfig; version: number; problem: string }
  | { action: 'update'; name: string; config: JobConfig; version: number; changes: ReturnType<typeof diffJobConfig> }
  | { action: 'unchanged'; name: string; config: JobConfig };

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
    if ((error as OrreryError).code === 'no-node') return { jobs: [], broken: [] };
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

/**
 * Validates a whole document (`{ jobs: [...] }`) and returns the configs, or throws one `validation`
 * error listing every problem (fields prefixed with `jobs[i].`). `existing` names the jobs already in
 * the namespace, for downstream references.
 */
export function validateJobDocument(document: unknown, existing: readonly string[] = []): JobConfig[] {
  const issues: ValidationIssue[] = [];
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw validationError([{ field: '', rule: 'type', message: "the file must hold an object with a 'jobs' list" }], 'file');
  }
  for (const key of Object.keys(document)) {
    if (key !== 'jobs') issues.push({ field: key, rule: 'unknown-field', message: `${key}: unknown field (the file holds only 'jobs')` });
  }
  const list = (document as { jobs?: unknown }).jobs;
  if (!Array.isArray(list)) {
    issues.push({ field: 'jobs', rule: 'required', message: "jobs: required, a list of job configurations" });
    throw validationError(issues, 'file');
  }
  const configs: JobConfig[] = [];
  list.forEach((input, i) => {
    const r = checkJobConfig(input);
    if (r.ok) configs.push(r.value);
    else for (const issue of r.issues) issues.push({ ...issue, field: issue.field ? `jobs[${i}].${issue.field}` : `jobs[${i}]`, message: `jobs[${i}].${issue.message}` });
  });
  if (issues.length === 0) {
    issues.push(...jobSetIssues(configs));
    const known = new Set([...existing, ...configs.map((c) => c.name)]);
    configs.forEach((c, i) => {
      c.downstream.forEach((d, k) => {
        if (!known.has(d)) issues.push({ field: `jobs[${i}].downstream[${k}]`, rule: 'unknown-job', message: `jobs[${i}].downstream[${k}]: no job named '${d}' in the file or the namespace` });
      });
    });
  }
  if (issues.length > 0) throw validationError(issues, 'file');
  return configs;
}

/** Compares desired configs with the stored ones (no writes). */
export async function planJobs(zk: ZkClient, namespace: string, configs: readonly JobConfig[]): Promise<JobChange[]> {
  const plan: JobChange[] = [];
  for (const config of configs) {
    const stored = await readJobEntry(zk, namespace, config.name);
    if (!stored) plan.push({ action: 'create', name: config.name, config });
    else if (isBrokenJob(stored)) plan.push({ action: 'replace', name: config.name, config, version: stored.stat.version, problem: stored.problem });
    else {
      const changes = diffJobConfig(stored.config, config);
      plan.push(changes.length === 0 ? { action: 'unchanged', name: config.name, config } : { action: 'update', name: config.name, config, version: stored.stat.version, changes });
    }
  }
  return plan;
}

/** Writes a plan: each job with one create or one compare-and-set from the planned version. */
export async function applyPlan(zk: ZkClient, namespace: string, plan: readonly JobChange[]): Promise<ApplyResult> {
  const result: ApplyResult = { written: [], unchanged: [], conflicts: [] };
  await zk.mkdirp(paths.jobs(namespace));
  for (const change of plan) {
    const path = paths.job(namespace, change.name);
    try {
      if (change.action === 'create') await zk.create(path, encodeJson(change.config));
      else if (change.action === 'update' || change.action === 'replace') await zk.set(path, encodeJson(change.config), change.version);
      else {
        result.unchanged.push(change.name);
        continue;
      }
      result.written.push(change.name);
    } catch (error) {
      const code = (error as OrreryError).code;
      if (code === 'node-exists') result.conflicts.push({ name: change.name, message: `job '${change.name}' was created by someone else meanwhile; nothing written for it` });
      else if (code === 'bad-version' || code === 'no-node') result.conflicts.push({ name: change.name, message: `job '${change.name}' was changed or deleted by someone else meanwhile; nothing written for it` });
      else throw error;
    }
  }
  return result;
}

/** Sets `enabled` with a compare-and-set; resolves with whether anything changed. */
export async function setJobEnabled(zk: ZkClient, namespace: string, name: string, enabled: boolean): Promise<boolean> {
  assertJobName(name);
  await assertNamespaceExists(zk, namespace);
  const path = paths.job(namespace, name);
  try {
    const r = await casUpdate(zk, path, (c: JobConfig) => (c.enabled === enabled ? undefined : parseJobConfig({ ...c, enabled })), { check: parseStoredJob(path) });
    return r.written;
  } catch (error) {
    if ((error as OrreryError).code === 'no-node') throw notFound(namespace, name);
    if (hasErrorCode(error, 'bad-data')) {
      const entry = await readJobEntry(zk, namespace, name);
      if (entry && isBrokenJob(entry)) throw brokenJobError(namespace, entry);
    }
    throw error;
  }
}

/**
 * Deletes a job and everything under it. Refuses an enabled job unless `force`; a broken job (no
 * valid config) can always be deleted.
 */
export async function deleteJob(zk: ZkClient, namespace: string, name: string, options: { force?: boolean; settleMs?: number } = {}): Promise<void> {
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
    await setJobEnabled(zk, namespace, name, false);
    await waitUntilUnassigned(zk, namespace, name, options.settleMs ?? 10_000);
  }
  await zk.deleteRecursive(paths.job(namespace, name));
}

/** Polls (every 100 ms, up to `timeoutMs`) until no executor's summary names the job. */
async function waitUntilUnassigned(zk: ZkClient, namespace: string, job: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const executors = await zk.getChildren(paths.executors(namespace)).catch(() => [] as string[]);
    let named = false;
    for (const e of executors.filter((n) => NODE_NAME_PATTERN.test(n))) {
      const summary = await zk.get(paths.executorAssignment(namespace, e)).catch(() => undefined);
      const checked = summary ? inspectNode(summary.data, paths.executorAssignment(namespace, e), checkExecutorAssignment) : undefined;
      if (checked?.ok && checked.value.jobs[job]) named = true;
    }
    if (!named) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
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
  const assignment = await readJson(zk, paths.jobAssignment(namespace, name), checkAssignment);
  const owners = Object.entries(assignment?.value.items ?? {}).filter(([, list]) => !items || list.some((i) => items.includes(i))).map(([e]) => e);
  const online: string[] = [];
  for (const e of owners) if (await zk.exists(paths.executorPresence(namespace, e))) online.push(e);
  if (online.length === 0) {
    const unassigned = assignment?.value.unassigned.map((u) => `${u.item} (${u.reason})`).join(', ');
    throw new OrreryError('conflict', `job '${name}' has no online executor to run it${unassigned ? `: unassigned ${unassigned}` : ''}`, { details: { job: name } });
  }
  await createCommand(zk, namespace, name, { kind: 'run', ...(items ? { items } : {}), ...(options.param !== undefined ? { param: options.param } : {}), requestedAt: Date.now() });
  return { executors: online };
}

/** Asks the owners of a job's shards to stop their runs in progress (outcome `aborted`). */
export async function stopJob(zk: ZkClient, namespace: string, name: string, options: JobCommandOptions = {}): Promise<void> {
  const stored = await readJob(zk, namespace, name);
  if (!stored) throw notFound(namespace, name);
  const items = checkItems(options.items, stored.config);
  await createCommand(zk, namespace, name, { kind: 'stop', ...(items ? { items } : {}), requestedAt: Date.now() });
}

function checkItems(items: number[] | undefined, c: JobConfig): number[] | undefined {
  if (!items) return undefined;
  const bad = items.filter((i) => !Number.isInteger(i) || i < 0 || (!c.localMode && i >= c.shardingTotalCount));
  if (bad.length > 0) {
    throw validationError([{ field: 'items', rule: 'item-range', message: `items: ${bad.join(', ')} not in 0..${c.shardingTotalCount - 1}` }], 'items');
  }
  return items;
}

async function createCommand(zk: ZkClient, namespace: string, name: string, command: Record<string, unknown>): Promise<void> {
  await zk.mkdirp(paths.jobCommands(namespace, name));
  await zk.create(`${paths.jobCommands(namespace, name)}/cmd-`, encodeJson(command), 'persistent-sequential');
}
