/**
 * The allocator's view of a namespace as the console shows and previews it.
 *
 * - {@link namespaceAllocation} reads the cluster (through `@orrery/sharding`'s `buildCluster`, the
 *   very function the allocator uses) and the allocation last written (`storedAllocation`: the
 *   sharding state's members and each job's assignment) from the console's cache. No I/O.
 * - {@link previewAllocation} (pure) applies a hypothetical change to that cluster — drain, undrain
 *   or remove executors, change jobs' shard count, loadLevel, preferList, useDispreferList or
 *   enabled — and runs the allocator's own `allocate()` from the stored allocation, as the allocator
 *   would in its next round; {@link allocationMoves} and {@link allocationLoads} say what moved and
 *   what each executor would carry.
 *
 * What it guarantees: with the allocator settled (its last round written and the cache caught up),
 * the preview is what the allocator writes after the same change — the same inputs to the same
 * deterministic function. Not guaranteed: anything that happens meanwhile (an executor joining or
 * leaving, another edit) changes what the allocator does, and a reshard request is previewed only
 * when asked for (`reshard`).
 */
import type { UnassignedReason } from '@orrery/core';
import {
  allocate,
  buildCluster,
  storedAllocation,
  type Allocation,
  type Cluster,
  type ClusterJob,
  type ExecutorNodes,
  type JobNode,
} from '@orrery/sharding';
import type { Assignment } from '@orrery/core';
import type { ConsoleCache } from './console-cache.js';

/** The namespace as the allocator sees it, and what it last wrote. */
export interface NamespaceAllocation {
  cluster: Cluster;
  /** The allocation last written (the allocator's next `previous`). */
  stored: Allocation;
  /** Jobs left out of the cluster (unreadable configs), and executors with unreadable nodes. */
  problems: Array<{ job?: string; executor?: string; message: string }>;
}

/** Reads the namespace's cluster and stored allocation from the cache (see the module header). */
export function namespaceAllocation(cache: ConsoleCache, namespace: string): NamespaceAllocation {
  const executors: ExecutorNodes[] = cache.executorNames(namespace).map((name) => {
    const e = cache.executor(namespace, name);
    const presence = e?.presence;
    return {
      name,
      presence: presence && { ...(presence.ok ? { ok: true as const, value: presence.value } : { ok: false as const, problem: presence.problem }), ephemeral: presence.stat.ephemeralOwner !== '0' },
      meta: e?.meta && (e.meta.ok ? { ok: true as const, value: e.meta.value } : { ok: false as const, problem: e.meta.problem }),
    };
  });
  const jobs: JobNode[] = [];
  const assignments = new Map<string, Assignment>();
  for (const name of cache.jobNames(namespace)) {
    const job = cache.job(namespace, name);
    if (!job) continue;
    jobs.push({ name, config: job.config.ok ? { ok: true, value: job.config.value } : { ok: false, problem: job.config.problem } });
    if (job.assignment?.ok) assignments.set(name, job.assignment.value);
  }
  const problems: NamespaceAllocation['problems'] = [];
  const cluster = buildCluster(executors, jobs, (p) => problems.push(p.node === 'job' ? { job: p.job, message: p.message } : { executor: p.executor, message: p.message }));
  const sharding = cache.sharding(namespace);
  return { cluster, stored: storedAllocation(sharding?.ok ? sharding.value.members : undefined, assignments, cluster), problems };
}

/** A job's allocator fields a preview may change. */
export interface JobChange {
  name: string;
  shardingTotalCount?: number;
  loadLevel?: number;
  preferList?: string[];
  useDispreferList?: boolean;
  enabled?: boolean;
}

/** A hypothetical change to preview. */
export interface AllocationChange {
  /** Executors to drain (`noTraffic`). */
  drain?: string[];
  /** Executors to undrain. */
  undrain?: string[];
  /** Executors to take away (as if they went offline). */
  remove?: string[];
  jobs?: JobChange[];
  /** Preview a requested reshard (`orrery reshard`): rebalance towards every executor. */
  reshard?: boolean;
}

/** One shard that changes hands. */
export interface Move {
  job: string;
  item: number;
  /** Its executor before (null: it had none). */
  from: string | null;
  /** Its executor after (null: none — see `why`). */
  to: string | null;
  /** Why it has no executor after: the allocator's reason, or that the item or job is gone. */
  why?: UnassignedReason | 'item-removed' | 'job-disabled';
}

/** An executor's load (sum of its shards' loadLevel) and shard count. */
export interface Load {
  executor: string;
  load: number;
  shards: number;
}

/** The cluster with the change applied (pure). */
export function applyChange(cluster: Cluster, change: AllocationChange): Cluster {
  const drain = new Set(change.drain ?? []);
  const undrain = new Set(change.undrain ?? []);
  const remove = new Set(change.remove ?? []);
  const jobChanges = new Map((change.jobs ?? []).map((j) => [j.name, j]));
  return {
    executors: cluster.executors
      .filter((e) => !remove.has(e.name))
      .map((e) => (drain.has(e.name) ? { ...e, noTraffic: true } : undrain.has(e.name) ? { ...e, noTraffic: false } : e)),
    jobs: cluster.jobs.map((j): ClusterJob => {
      const c = jobChanges.get(j.name);
      if (!c) return j;
      const { name: _name, ...fields } = c;
      return { ...j, ...Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) };
    }),
  };
}

/** What the allocator would do from `stored` after `change` (pure; see the module header). */
export function previewAllocation(stored: Allocation, cluster: Cluster, change: AllocationChange): { cluster: Cluster; next: Allocation } {
  const changed = applyChange(cluster, change);
  return { cluster: changed, next: allocate(stored, changed, change.reshard ? { rebalance: true } : {}) };
}

/** The shards whose executor differs between two allocations, by job then item (pure). */
export function allocationMoves(before: Allocation, after: Allocation, cluster: Cluster): Move[] {
  const moves: Move[] = [];
  const jobs = new Map(cluster.jobs.map((j) => [j.name, j]));
  const names = [...new Set([...Object.keys(before.jobs), ...Object.keys(after.jobs)])].sort();
  for (const job of names) {
    const from = owners(before.jobs[job]?.items);
    const to = owners(after.jobs[job]?.items);
    const reasons = new Map((after.jobs[job]?.unassigned ?? []).map((u) => [u.item, u.reason]));
    const config = jobs.get(job);
    const items = [...new Set([...from.keys(), ...to.keys()])].sort((a, b) => a - b);
    for (const item of items) {
      const a = from.get(item) ?? null;
      const b = to.get(item) ?? null;
      if (a === b) continue;
      const move: Move = { job, item, from: a, to: b };
      if (b === null) {
        const reason = reasons.get(item);
        move.why = reason ?? (config && !config.enabled ? 'job-disabled' : 'item-removed');
      }
      moves.push(move);
    }
  }
  return moves;
}

function owners(items: Record<string, number[]> | undefined): Map<number, string> {
  const out = new Map<number, string>();
  for (const [executor, list] of Object.entries(items ?? {})) for (const item of list) out.set(item, executor);
  return out;
}

/**
 * Each executor's load under `allocation`, weighing shards by the loadLevel of `jobs` (pure): the
 * members (with 0 when they hold nothing) and every executor holding a shard, by name.
 */
export function allocationLoads(allocation: Allocation, jobs: readonly ClusterJob[]): Load[] {
  const weight = new Map(jobs.map((j) => [j.name, j.loadLevel]));
  const out = new Map<string, Load>(allocation.members.map((e) => [e, { executor: e, load: 0, shards: 0 }]));
  for (const [job, { items }] of Object.entries(allocation.jobs)) {
    const w = weight.get(job);
    if (w === undefined) continue;
    for (const [executor, list] of Object.entries(items)) {
      let entry = out.get(executor);
      if (!entry) out.set(executor, (entry = { executor, load: 0, shards: 0 }));
      entry.load += list.length * w;
      entry.shards += list.length;
    }
  }
  return [...out.values()].sort((a, b) => (a.executor < b.executor ? -1 : a.executor > b.executor ? 1 : 0));
}
