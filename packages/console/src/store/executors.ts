/**
 * Reading executors and assignments (what `get executors` and `get assignment` show).
 */
import {
  OrreryError,
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
