/**
 * The allocator's view of a namespace, built from the nodes it reads (pure): which executors may
 * take shards and which jobs have shards to place — {@link buildCluster} — and the allocation last
 * written to ZooKeeper, which a new leader starts from — {@link storedAllocation}.
 *
 * One function for every reader, so that what the allocator does and what the console previews
 * (`POST …/assignment/preview`) start from the same cluster: the allocator feeds it its own tree
 * cache, the console its watch-fed read model.
 *
 * Rules (what the allocator has always done):
 * - An executor takes part only while its presence node exists, is **ephemeral** (a session stands
 *   behind it; a persistent one was written by hand or restored from a backup) and holds valid data.
 * - It is drained (`noTraffic`) when its meta node says so, or when its presence says it is leaving
 *   (a graceful shutdown). Meta data that is invalid counts as not drained (and is reported).
 * - A job takes part only when its config is valid and names the job its node is named after.
 * Every node left out is reported through `onProblem`, never thrown.
 */
import type { Assignment, ExecutorInfo, ExecutorMeta, JobConfig } from '@orrery/core';
import type { Allocation, Cluster } from './allocate.js';
import type { ClusterExecutor, ClusterJob } from './eligibility.js';

/** A node's value as read: parsed, or what is wrong with it. */
export type NodeValue<T> = { ok: true; value: T } | { ok: false; problem: string };

/** What is known of one executor's nodes. */
export interface ExecutorNodes {
  name: string;
  /** The presence (absent: offline), and whether it is an ephemeral node. */
  presence: (NodeValue<ExecutorInfo> & { ephemeral: boolean }) | undefined;
  /** The meta node (absent, or without data: not drained). */
  meta: NodeValue<ExecutorMeta> | undefined;
}

/** What is known of one job's config node. */
export interface JobNode {
  name: string;
  config: NodeValue<JobConfig>;
}

/** A node {@link buildCluster} left out (or read as not drained), and why. */
export type ClusterProblem =
  | { node: 'presence'; executor: string; message: string }
  | { node: 'meta'; executor: string; message: string }
  | { node: 'job'; job: string; message: string };

/** The fields of a job config the allocator uses. */
export function clusterJobOf(config: JobConfig): ClusterJob {
  return {
    name: config.name, enabled: config.enabled, type: config.type, handler: config.handler, shardingTotalCount: config.shardingTotalCount,
    localMode: config.localMode, loadLevel: config.loadLevel, preferList: config.preferList, useDispreferList: config.useDispreferList,
  };
}

/** Builds the allocator's cluster from the namespace's executor and job nodes (see the module header). */
export function buildCluster(executors: Iterable<ExecutorNodes>, jobs: Iterable<JobNode>, onProblem: (problem: ClusterProblem) => void = () => {}): Cluster {
  const online: ClusterExecutor[] = [];
  for (const { name, presence, meta } of executors) {
    if (!presence) continue;
    if (!presence.ephemeral) {
      onProblem({ node: 'presence', executor: name, message: 'ignoring a presence node that is not ephemeral (written by hand?): no executor session holds it' });
      continue;
    }
    if (!presence.ok) {
      onProblem({ node: 'presence', executor: name, message: `ignoring an executor whose presence data is ${presence.problem}` });
      continue;
    }
    if (meta && !meta.ok) onProblem({ node: 'meta', executor: name, message: `executor meta data is ${meta.problem}; treating the executor as not drained` });
    const drained = meta?.ok ? meta.value.noTraffic : false;
    // A leaving executor (graceful shutdown) is drained: it loses its shards and gets none.
    online.push({ name, handlers: presence.value.handlers, tags: presence.value.tags, noTraffic: drained || presence.value.leaving === true });
  }
  const placed: ClusterJob[] = [];
  for (const { name, config } of jobs) {
    if (!config.ok) {
      onProblem({ node: 'job', job: name, message: `ignoring a job whose config is ${config.problem}` });
      continue;
    }
    if (config.value.name !== name) {
      onProblem({ node: 'job', job: name, message: `ignoring a job whose config names another job ('${config.value.name}')` });
      continue;
    }
    placed.push(clusterJobOf(config.value));
  }
  return { executors: online, jobs: placed };
}

/**
 * The allocation last written to ZooKeeper, as a new allocator leader starts from it: the members
 * of the namespace's sharding state, and each job of `cluster` with a readable assignment node
 * (`assignments`: job → its assignment; a job without one, or with an unreadable one, is placed afresh).
 */
export function storedAllocation(members: readonly string[] | undefined, assignments: ReadonlyMap<string, Assignment>, cluster: Cluster): Allocation {
  const out: Allocation = { members: [...(members ?? [])], jobs: {} };
  for (const job of cluster.jobs) {
    const assignment = assignments.get(job.name);
    if (assignment) out.jobs[job.name] = { items: assignment.items, unassigned: assignment.unassigned };
  }
  return out;
}
