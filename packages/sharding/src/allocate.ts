/**
 * The allocator's core: `allocate(previous, cluster) → next`, a pure function (no I/O, no clock).
 *
 * Rules (Saturn's, kept and made precise):
 * - Each shard weighs its job's `loadLevel`; an executor's load is the sum of its shards' weights.
 * - **Sticky**: a shard stays where it is while its executor may still hold it (online, not drained,
 *   has the node handler, preferred when a preferred executor is online). Nothing else moves it,
 *   except rebalancing towards executors that joined (below).
 * - **Placement** of a shard that must move or is new: among the job's candidates, prefer those it
 *   fits on — without raising the heaviest load in the cluster, nor the gap to the least loaded
 *   candidate beyond the largest shard weight; among them, the least load **of this job**, then the
 *   least total load, then the name; where it fits nowhere, the least total load. (The "fits" rule is
 *   what isolates a job with a very high `loadLevel` on its own executor and keeps max − min load
 *   within the largest shard weight.)
 * - **Join**: an executor that was not a member last round (new, or undrained) pulls shards from the
 *   most loaded executors, one at a time, while a shard of weight w can move with w < (their load −
 *   its load) — so only enough shards move to rebalance, and never towards a leaver.
 * - **Leave / drain / lost handler / lost preference**: exactly the shards that can no longer stay move.
 * - `preferList` restricts candidates to preferred executors while one is online; with
 *   `useDispreferList` shards fall back to the others and return when a preferred one comes back.
 * - `localMode`: exactly one shard per candidate executor (items numbered from 0, sticky per executor).
 * - Disabled jobs get no shards. Every shard of an enabled job is either assigned to exactly one
 *   candidate or reported unassigned with the reason.
 */
import type { UnassignedReason } from '@orrery/core/schemas';
import { candidatesFor, type ClusterExecutor, type ClusterJob } from './eligibility.js';

/** One job's placement. */
export interface JobAllocation {
  /** Executor name → its items, ascending; executors with no items are absent. */
  items: Record<string, number[]>;
  /** Items with no executor, ascending, each with the reason. */
  unassigned: Array<{ item: number; reason: UnassignedReason }>;
}

/** The allocator's whole output (and its next input). */
export interface Allocation {
  /** Online, non-drained executors of the round that produced this allocation (sorted). */
  members: string[];
  jobs: Record<string, JobAllocation>;
}

/** What the allocator knows of the world. */
export interface Cluster {
  /** Online executors. */
  executors: readonly ClusterExecutor[];
  jobs: readonly ClusterJob[];
}

/** Options of {@link allocate}. */
export interface AllocateOptions {
  /** A requested reshard: rebalance towards every executor, not only joiners. */
  rebalance?: boolean;
  /** A requested reshard of these jobs only: rebalance their shards towards every executor. */
  rebalanceJobs?: readonly string[];
}

/** An empty allocation (the first round's `previous`). */
export const EMPTY_ALLOCATION: Allocation = Object.freeze({ members: [], jobs: {} }) as Allocation;

interface JobState {
  job: ClusterJob;
  weight: number;
  candidates: Set<string>;
  reason: UnassignedReason | undefined;
  owner: Map<number, string>;
  /** Executor → this job's load on it. */
  load: Map<string, number>;
}

const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Computes the next allocation. Deterministic: the same inputs give the same output. */
export function allocate(previous: Allocation, cluster: Cluster, options: AllocateOptions = {}): Allocation {
  const executors = [...cluster.executors].sort((a, b) => byName(a.name, b.name));
  const traffic = executors.filter((e) => !e.noTraffic).map((e) => e.name);
  const load = new Map<string, number>(executors.map((e) => [e.name, 0]));
  // Executor → the (job, item) shards it holds, for rebalancing.
  const held = new Map<string, Map<string, Set<number>>>(executors.map((e) => [e.name, new Map()]));
  const jobs = [...cluster.jobs].sort((a, b) => byName(a.name, b.name));
  const states = new Map<string, JobState>();

  const own = (s: JobState, item: number, executor: string): void => {
    s.owner.set(item, executor);
    s.load.set(executor, (s.load.get(executor) ?? 0) + s.weight);
    load.set(executor, load.get(executor)! + s.weight);
    const mine = held.get(executor)!;
    let set = mine.get(s.job.name);
    if (!set) mine.set(s.job.name, (set = new Set()));
    set.add(item);
  };
  const disown = (s: JobState, item: number, executor: string): void => {
    s.owner.delete(item);
    s.load.set(executor, s.load.get(executor)! - s.weight);
    load.set(executor, load.get(executor)! - s.weight);
    held.get(executor)!.get(s.job.name)!.delete(item);
  };

  // 1. Keep every shard that may stay where it is.
  for (const job of jobs) {
    if (!job.enabled) continue;
    const c = candidatesFor(job, executors);
    const state: JobState = {
      job,
      weight: job.loadLevel,
      candidates: new Set(c.executors.map((e) => e.name)),
      reason: 'reason' in c ? c.reason : undefined,
      owner: new Map(),
      load: new Map(),
    };
    states.set(job.name, state);
    const before = previous.jobs[job.name]?.items ?? {};
    for (const executor of Object.keys(before).sort(byName)) {
      if (!state.candidates.has(executor)) continue;
      const items = [...(before[executor] ?? [])].sort((a, b) => a - b);
      for (const item of job.localMode ? items.slice(0, 1) : items) {
        if (!Number.isInteger(item) || item < 0 || state.owner.has(item)) continue;
        if (!job.localMode && item >= job.shardingTotalCount) continue;
        own(state, item, executor);
      }
    }
  }

  // 2. Place what has no owner: heaviest jobs first (isolation), then by name and item.
  let maxLoad = Math.max(0, ...traffic.map((e) => load.get(e)!));
  const maxWeight = Math.max(1, ...[...states.values()].map((s) => s.weight));
  const unassigned = new Map<string, Array<{ item: number; reason: UnassignedReason }>>();
  const ordered = [...states.values()].sort((a, b) => b.weight - a.weight || byName(a.job.name, b.job.name));
  for (const s of ordered) {
    const missing: number[] = [];
    if (s.job.localMode) {
      const withItem = new Set(s.owner.values());
      let next = 0;
      for (const executor of [...s.candidates].sort(byName)) {
        if (withItem.has(executor)) continue;
        while (s.owner.has(next)) next += 1;
        own(s, next, executor);
        maxLoad = Math.max(maxLoad, load.get(executor)!);
      }
      continue;
    }
    for (let item = 0; item < s.job.shardingTotalCount; item += 1) if (!s.owner.has(item)) missing.push(item);
    if (s.candidates.size === 0) {
      if (missing.length > 0) unassigned.set(s.job.name, missing.map((item) => ({ item, reason: s.reason ?? 'no-eligible-executor' })));
      continue;
    }
    const candidates = [...s.candidates];
    for (const item of missing) {
      let minLoad = Number.POSITIVE_INFINITY;
      for (const e of candidates) minLoad = Math.min(minLoad, load.get(e)!);
      // It fits where it raises neither the heaviest load nor the gap to the lightest beyond one
      // shard weight; there, least load of this job first. Where it fits nowhere: least total load.
      const ceiling = Math.min(maxLoad, minLoad + maxWeight);
      let best: string | undefined;
      let bestKey: [number, number, number] | undefined;
      for (const e of candidates) {
        const total = load.get(e)!;
        const jobLoad = s.load.get(e) ?? 0;
        const key: [number, number, number] = total + s.weight <= ceiling ? [0, jobLoad, total] : [1, total, jobLoad];
        if (!bestKey || key[0] < bestKey[0] || (key[0] === bestKey[0] && (key[1] < bestKey[1] || (key[1] === bestKey[1] && (key[2] < bestKey[2] || (key[2] === bestKey[2] && e < best!)))))) {
          best = e;
          bestKey = key;
        }
      }
      own(s, item, best!);
      maxLoad = Math.max(maxLoad, load.get(best!)!);
    }
  }

  // 3. Rebalance towards joiners (or everyone, on a requested reshard).
  const members = new Set(previous.members);
  const joiners = options.rebalance ? traffic : traffic.filter((e) => !members.has(e));
  if (joiners.length > 0) rebalance(joiners, traffic, load, held, states, own, disown);
  if (options.rebalanceJobs && options.rebalanceJobs.length > 0) {
    rebalance(traffic, traffic, load, held, states, own, disown, new Set(options.rebalanceJobs));
  }

  // 4. The output, in a canonical order.
  const out: Allocation = { members: [...traffic], jobs: {} };
  for (const job of jobs) {
    const s = states.get(job.name);
    if (!s) {
      out.jobs[job.name] = { items: {}, unassigned: [] };
      continue;
    }
    const items: Record<string, number[]> = {};
    for (const [item, executor] of s.owner) (items[executor] ??= []).push(item);
    const sorted: Record<string, number[]> = {};
    for (const executor of Object.keys(items).sort(byName)) sorted[executor] = items[executor]!.sort((a, b) => a - b);
    out.jobs[job.name] = { items: sorted, unassigned: unassigned.get(job.name) ?? [] };
  }
  return out;
}

function rebalance(
  joiners: readonly string[],
  traffic: readonly string[],
  load: Map<string, number>,
  held: Map<string, Map<string, Set<number>>>,
  states: Map<string, JobState>,
  own: (s: JobState, item: number, executor: string) => void,
  disown: (s: JobState, item: number, executor: string) => void,
  onlyJobs?: ReadonlySet<string>,
): void {
  // Each move strictly lowers the sum of squared loads, so this ends.
  for (;;) {
    let moved = false;
    const targets = [...joiners].sort((a, b) => load.get(a)! - load.get(b)! || byName(a, b));
    for (const to of targets) {
      const toLoad = load.get(to)!;
      const sources = traffic.filter((e) => e !== to && load.get(e)! - toLoad > 1).sort((a, b) => load.get(b)! - load.get(a)! || byName(a, b));
      for (const from of sources) {
        const gap = load.get(from)! - toLoad;
        let best: { s: JobState; item: number; key: [number, number, number] } | undefined;
        for (const [jobName, items] of held.get(from)!) {
          if (items.size === 0 || (onlyJobs && !onlyJobs.has(jobName))) continue;
          const s = states.get(jobName)!;
          if (s.job.localMode || s.weight >= gap || !s.candidates.has(to)) continue;
          // Prefer a job the target has least of, the source most of, then the heaviest shard.
          const key: [number, number, number] = [s.load.get(to) ?? 0, -(s.load.get(from) ?? 0), -s.weight];
          if (!best || key[0] < best.key[0] || (key[0] === best.key[0] && (key[1] < best.key[1] || (key[1] === best.key[1] && key[2] < best.key[2])))) {
            best = { s, item: Math.max(...items), key };
          }
        }
        if (best) {
          disown(best.s, best.item, from);
          own(best.s, best.item, to);
          moved = true;
          break;
        }
      }
      if (moved) break;
    }
    if (!moved) return;
  }
}
