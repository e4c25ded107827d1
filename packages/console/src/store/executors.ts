/**
 * Reading executors and assignments (what `get executors` and `get assignment` show).
 */
import {
  OrreryError,
  assertJobName,
  createOrCas,
  encodeJson,
  paths,
  hasErrorCode,
  inspectNode,
  NODE_NAME_PATTERN,
  type ValidationIssue,
  checkExecutorInfo,
  checkExecutorMeta,
  checkAssignment,
  type Assignment,
  type ExecutorInfo,
  type ExecutorMeta,
  type ZkClient,
} from '@orrery/core';
import { assertNamespaceExists } from './namespaces.js';
import { listJobs } from './jobs.js';

/** An executor as the CLI shows it. */
export interface ExecutorView {
  name: string;
  online: boolean;
  info: ExecutorInfo | undefined;
  meta: ExecutorMeta;
  /** What is wrong with its nodes (invalid presence or meta data), if anything. */
  problem?: string;
}

/** Every executor known to the namespace (online or not), sorted by name. */
export async function listExecutors(zk: ZkClient, namespace: string): Promise<ExecutorView[]> {
  await assertNamespaceExists(zk, namespace);
  let names: string[];
  try {
    names = await zk.getChildren(paths.executors(namespace));
  } catch (error) {
    if (hasErrorCode(error, 'no-node')) return [];
    throw error;
  }
  return Promise.all(names.filter((n) => NODE_NAME_PATTERN.test(n)).map(async (name): Promise<ExecutorView> => {
    const problems: string[] = [];
    const read = async <T>(path: string, check: (input: unknown) => { ok: true; value: T } | { ok: false; issues: ValidationIssue[] }, what: string): Promise<{ exists: boolean; value?: T }> => {
      const node = await zk.get(path).catch((error: unknown) => {
        if (hasErrorCode(error, 'no-node')) return undefined;
        throw error;
      });
      if (!node) return { exists: false };
      const checked = inspectNode(node.data, path, check);
      if (!checked.ok) {
        problems.push(`${what} is ${checked.problem}`);
        return { exists: true };
      }
      if (what === 'presence' && node.stat.ephemeralOwner === '0') problems.push('presence is not ephemeral (written by hand?): no executor session holds it');
      return { exists: true, value: checked.value };
    };
    const presence = await read(paths.executorPresence(namespace, name), checkExecutorInfo, 'presence');
    const meta = await read(paths.executorMeta(namespace, name), checkExecutorMeta, 'meta');
    return { name, online: presence.exists, info: presence.value, meta: meta.value ?? { noTraffic: false }, ...(problems.length > 0 ? { problem: problems.join('; ') } : {}) };
  }));
}

/** One job's assignment as listed: undefined when the allocator has not written one yet; `problem` for a broken job or node. */
export interface AssignmentView {
  job: string;
  enabled: boolean;
  assignment: Assignment | undefined;
  problem?: string;
}

/** Each job's assignment; a broken job or assignment node is listed with its problem, never fatal. */
export async function listAssignments(zk: ZkClient, namespace: string): Promise<AssignmentView[]> {
  const { jobs, broken } = await listJobs(zk, namespace);
  const views = await Promise.all(jobs.map(async ({ config }): Promise<AssignmentView> => {
    const path = paths.jobAssignment(namespace, config.name);
    const read = await zk.get(path).catch((error: unknown) => {
      if (hasErrorCode(error, 'no-node')) return undefined;
      throw error;
    });
    if (!read) return { job: config.name, enabled: config.enabled, assignment: undefined };
    const checked = inspectNode(read.data, path, checkAssignment);
    return checked.ok
      ? { job: config.name, enabled: config.enabled, assignment: checked.value }
      : { job: config.name, enabled: config.enabled, assignment: undefined, problem: `its assignment node is ${checked.problem}` };
  }));
  for (const b of broken) views.push({ job: b.name, enabled: false, assignment: undefined, problem: `its config is ${b.problem}` });
  return views.sort((a, b) => (a.job < b.job ? -1 : 1));
}

/** Drains (`noTraffic: true`) or undrains an executor the namespace knows; resolves with whether it changed. */
export async function setNoTraffic(zk: ZkClient, namespace: string, executor: string, noTraffic: boolean): Promise<boolean> {
  await assertNamespaceExists(zk, namespace);
  if (!(await zk.exists(paths.executor(namespace, executor)))) {
    throw new OrreryError('not-found', `executor '${executor}' is not known in namespace '${namespace}' (it registers when it first starts)`, { details: { namespace, executor } });
  }
  const result = await createOrCas(
    zk,
    paths.executorMeta(namespace, executor),
    () => ({ noTraffic }),
    (meta: ExecutorMeta) => (meta.noTraffic === noTraffic ? undefined : { ...meta, noTraffic }),
    { check: checkExecutorMeta },
  );
  return result.written;
}

/** Asks the allocator for a rebalancing round of the namespace (or one job). */
export async function requestReshard(zk: ZkClient, namespace: string, job?: string): Promise<void> {
  await assertNamespaceExists(zk, namespace);
  if (job !== undefined) {
    assertJobName(job);
    if (!(await zk.exists(paths.job(namespace, job)))) throw new OrreryError('not-found', `job '${job}' does not exist in namespace '${namespace}'`);
  }
  await zk.mkdirp(paths.shardingRequests());
  await zk.create(paths.shardingRequest(), encodeJson({ namespace, ...(job ? { job } : {}), requestedAt: Date.now() }), 'persistent-sequential');
}
