/**
 * Reading executors and assignments (what `get executors` and `get assignment` show).
 */
import {
  OrreryError,
  assertJobName,
  createOrCas,
  encodeJson,
  paths,
  readJson,
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
}

/** Every executor known to the namespace (online or not), sorted by name. */
export async function listExecutors(zk: ZkClient, namespace: string): Promise<ExecutorView[]> {
  await assertNamespaceExists(zk, namespace);
  let names: string[];
  try {
    names = await zk.getChildren(paths.executors(namespace));
  } catch (error) {
    if ((error as OrreryError).code === 'no-node') return [];
    throw error;
  }
  return Promise.all(names.map(async (name) => {
    const presence = await readJson(zk, paths.executorPresence(namespace, name), checkExecutorInfo);
    const meta = await readJson(zk, paths.executorMeta(namespace, name), checkExecutorMeta);
    return { name, online: presence !== undefined, info: presence?.value, meta: meta?.value ?? { noTraffic: false } };
  }));
}

/** Each job's assignment (undefined when the allocator has not written one yet). */
export async function listAssignments(zk: ZkClient, namespace: string): Promise<Array<{ job: string; enabled: boolean; assignment: Assignment | undefined }>> {
  const jobs = await listJobs(zk, namespace);
  return Promise.all(jobs.map(async ({ config }) => {
    const read = await readJson(zk, paths.jobAssignment(namespace, config.name), checkAssignment);
    return { job: config.name, enabled: config.enabled, assignment: read?.value };
  }));
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
  await zk.create(`${paths.shardingRequests()}/req-`, encodeJson({ namespace, ...(job ? { job } : {}), requestedAt: Date.now() }), 'persistent-sequential');
}
