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
  /** Candidate executor indexes, ascending (= by name). */
  candidates: readonly number[];
  /** 1 where the executor index is a candidate. */
  isCandidate: Uint8Array;
  reason: UnassignedReason | undefined;
  /** Item → executor index. */
  owner: Map<number, number>;
  /** Executor index → this job's load on it. */
  load: Float64Array;
}

const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Computes the next allocation. Deterministic: the same inputs give the same output. */
export function allocate(previous: Allocation, cluster: Cluster, options: AllocateOptions = {}): Allocation {
  // Executors are addressed by index in name order (ties between equal keys go to the smaller name);
  // typed arrays instead of maps keep the hot loops cheap.
  const executors = [...cluster.executors].sort((a, b) => byName(a.name, b.name));
  const n = executors.length;
  const names = executors.map((e) => e.name);
  const index = new Map(names.map((name, i) => [name, i]));
  const traffic: number[] = [];
  executors.forEach((e, i) => { if (!e.noTraffic) traffic.push(i); });
  const load = new Float64Array(n);
  // Executor index → the (job, item) shards it holds, for rebalancing.
  const held: Array<Map<string, Set<number>>> = names.map(() => new Map());
  const jobs = [...cluster.jobs].sort((a, b) => byName(a.name, b.name));
  const states = new Map<string, JobState>();

  const own = (s: JobState, item: number, e: number): void => {
    s.owner.set(item, e);
    s.load[e]! += s.weight;
    load[e]! += s.weight;
    const mine = held[e]!;
    let set = mine.get(s.job.name);
    if (!set) mine.set(s.job.name, (set = new Set()));
    set.add(item);
  };
  const disown = (s: JobState, item: number, e: number): void => {
    s.owner.delete(item);
    s.load[e]! -= s.weight;
    load[e]! -= s.weight;
    held[e]!.get(s.job.name)!.delete(item);
  };

  // Jobs with the same constraints share their candidates (most jobs have none).
  const candidateCache = new Map<string, { candidates: number[]; isCandidate: Uint8Array; reason: UnassignedReason | undefined }>();
  const candidatesOf = (job: ClusterJob) => {
    const key = `${job.type === 'node' ? `node:${job.handler ?? ''}` : 'shell'}|${job.preferList.join(',')}|${job.useDispreferList}`;
    let hit = candidateCache.get(key);
    if (!hit) {
      const c = candidatesFor(job, executors);
      const candidates = c.executors.map((e) => index.get(e.name)!).sort((a, b) => a - b);
      const isCandidate = new Uint8Array(n);
      for (const i of candidates) isCandidate[i] = 1;
      candidateCache.set(key, (hit = { candidates, isCandidate, reason: 'reason' in c ? c.reason : undefined }));
    }
    return hit;
  };

  // 1. Keep every shard that may stay where it is.
  for (const job of jobs) {
    if (!job.enabled) continue;
    const c = candidatesOf(job);
    const state: JobState = { job, weight: job.loadLevel, candidates: c.candidates, isCandidate: c.isCandidate, reason: c.reason, owner: new Map(), load: new Float64Array(n) };
    states.set(job.name, state);
    const before = previous.jobs[job.name]?.items ?? {};
    for (const executor of Object.keys(before).sort(byName)) {
      const e = index.get(executor);
      if (e === undefined || !state.isCandidate[e]) continue;
      const items = [...(before[executor] ?? [])].sort((a, b) => a - b);
      for (const item of job.localMode ? items.slice(0, 1) : items) {
        if (!Number.isInteger(item) || item < 0 || state.owner.has(item)) continue;
        if (!job.localMode && item >= job.shardingTotalCount) continue;
        own(state, item, e);
      }
    }
  }

  // 2. Place what has no owner: heaviest jobs first (isolation), then by name and item.
  let maxLoad = 0;
  for (const e of traffic) maxLoad = Math.max(maxLoad, load[e]!);
  let maxWeight = 1;
  for (const st of states.values()) maxWeight = Math.max(maxWeight, st.weight);
  const unassigned = new Map<string, Array<{ item: number; reason: UnassignedReason }>>();
  const ordered = [...states.values()].sort((a, b) => b.weight - a.weight || byName(a.job.name, b.job.name));
  for (const st of ordered) {
    if (st.job.localMode) {
      const withItem = new Set(st.owner.values());
      let next = 0;
      for (const e of st.candidates) {
        if (withItem.has(e)) continue;
        while (st.owner.has(next)) next += 1;
        own(st, next, e);
        maxLoad = Math.max(maxLoad, load[e]!);
      }
      continue;
    }
    const missing: number[] = [];
    for (let item = 0; item < st.job.shardingTotalCount; item += 1) if (!st.owner.has(item)) missing.push(item);
    if (missing.length === 0) continue;
    if (st.candidates.length === 0) {
      unassigned.set(st.job.name, missing.map((item) => ({ item, reason: st.reason ?? 'no-eligible-executor' })));
      continue;
    }
    for (const item of missing) {
      let minLoad = Number.POSITIVE_INFINITY;
      for (const e of st.candidates) if (load[e]! < minLoad) minLoad = load[e]!;
      // It fits where it raises neither the heaviest load nor the gap to the lightest beyond one
      // shard weight; there, least load of this job first. Where it fits nowhere: least total load.
      // The smallest key (fits?, first, second, index) wins; scalars, not tuples: this loop is hot.
      const ceiling = Math.min(maxLoad, minLoad + maxWeight);
      let best = -1;
      let k0 = 2;
      let k1 = 0;
      let k2 = 0;
      for (const e of st.candidates) {
        const total = load[e]!;
        const jobLoad = st.load[e]!;
        const fits = total + st.weight <= ceiling;
        const a0 = fits ? 0 : 1;
        const a1 = fits ? jobLoad : total;
        const a2 = fits ? total : jobLoad;
        if (a0 < k0 || (a0 === k0 && (a1 < k1 || (a1 === k1 && a2 < k2)))) {
          best = e;
          k0 = a0;
          k1 = a1;
          k2 = a2;
        }
      }
      own(st, item, best);
      maxLoad = Math.max(maxLoad, load[best]!);
    }
  }

  // 3. Rebalance towards joiners (or everyone, on a requested reshard).
  const members = new Set(previous.members);
  const joiners = options.rebalance ? traffic : traffic.filter((e) => !members.has(names[e]!));
  if (joiners.length > 0) rebalance(joiners, traffic, load, held, states, own, disown);
  if (options.rebalanceJobs && options.rebalanceJobs.length > 0) {
    rebalance(traffic, traffic, load, held, states, own, disown, new Set(options.rebalanceJobs));
  }

  // 4. The output, in a canonical order (executor indexes ascend with names).
  const out: Allocation = { members: traffic.map((e) => names[e]!), jobs: {} };
  for (const job of jobs) {
    const st = states.get(job.name);
    if (!st) {
      out.jobs[job.name] = { items: {}, unassigned: [] };
      continue;
    }
    const byExecutor = new Map<number, number[]>();
    for (const [item, e] of st.owner) {
      const list = byExecutor.get(e);
      if (list) list.push(item);
      else byExecutor.set(e, [item]);
    }
    const items: Record<string, number[]> = {};
    for (const e of [...byExecutor.keys()].sort((a, b) => a - b)) items[names[e]!] = byExecutor.get(e)!.sort((a, b) => a - b);
    out.jobs[job.name] = { items, unassigned: unassigned.get(job.name) ?? [] };
  }
  return out;
}

function rebalance(
  joiners: readonly number[],
  traffic: readonly number[],
  load: Float64Array,
  held: Array<Map<string, Set<number>>>,
  states: Map<string, JobState>,
  own: (s: JobState, item: number, e: number) => void,
  disown: (s: JobState, item: number, e: number) => void,
  onlyJobs?: ReadonlySet<string>,
): void {
  // Each move strictly lowers the sum of squared loads, so this ends.
  for (;;) {
    let moved = false;
    const targets = [...joiners].sort((a, b) => load[a]! - load[b]! || a - b);
    for (const to of targets) {
      const toLoad = load[to]!;
      const sources = traffic.filter((e) => e !== to && load[e]! - toLoad > 1).sort((a, b) => load[b]! - load[a]! || a - b);
      for (const from of sources) {
        const gap = load[from]! - toLoad;
        let best: JobState | undefined;
        let bestItems: Set<number> | undefined;
        let k0 = 0;
        let k1 = 0;
        let k2 = 0;
        for (const [jobName, items] of held[from]!) {
          if (items.size === 0 || (onlyJobs && !onlyJobs.has(jobName))) continue;
          const st = states.get(jobName)!;
          if (st.job.localMode || st.weight >= gap || !st.isCandidate[to]) continue;
          // Prefer a job the target has least of, the source most of, then the heaviest shard.
          const a0 = st.load[to]!;
          const a1 = -st.load[from]!;
          const a2 = -st.weight;
          if (!best || a0 < k0 || (a0 === k0 && (a1 < k1 || (a1 === k1 && a2 < k2)))) {
            best = st;
            bestItems = items;
            k0 = a0;
            k1 = a1;
            k2 = a2;
          }
        }
        if (best && bestItems) {
          let item = -1;
          for (const i of bestItems) if (i > item) item = i;
          disown(best, item, from);
          own(best, item, to);
          moved = true;
          break;
        }
      }
      if (moved) break;
    }
    if (!moved) return;
  }
}
