/**
 * Two reference allocation strategies, written from their published descriptions (not their code),
 * to compare shard movement with Orrery's allocator in the same run.
 */

/** Job → executor → items. */
export type Placement = Map<string, Map<string, number[]>>;

export interface BenchJob {
  name: string;
  total: number;
  weight: number;
}

/**
 * ElasticJob's "average allocation", per job and stateless: instances sorted in reverse
 * lexicographic order; with n instances and T shards, instance k gets items [k·⌊T/n⌋, (k+1)·⌊T/n⌋),
 * and the T mod n leftover items ⌊T/n⌋·n + k go to instances k = 0, 1, ….
 */
export function elasticJobAverage(jobs: readonly BenchJob[], executors: readonly string[]): Placement {
  const sorted = [...executors].sort().reverse();
  const n = sorted.length;
  const out: Placement = new Map();
  for (const job of jobs) {
    const per = Math.floor(job.total / n);
    const map = new Map<string, number[]>();
    sorted.forEach((e, k) => {
      const items: number[] = [];
      for (let i = k * per; i < (k + 1) * per; i += 1) items.push(i);
      if (k < job.total % n) items.push(per * n + k);
      if (items.length > 0) map.set(e, items);
    });
    out.set(job.name, map);
  }
  return out;
}

interface SaturnState {
  placement: Placement;
  jobLoad: Map<string, Map<string, number>>;
  total: Map<string, number>;
}

function saturnState(jobs: readonly BenchJob[], executors: readonly string[], placement: Placement = new Map()): SaturnState {
  const total = new Map(executors.map((e) => [e, 0]));
  const jobLoad = new Map<string, Map<string, number>>();
  const copy: Placement = new Map();
  for (const job of jobs) {
    const jl = new Map<string, number>();
    jobLoad.set(job.name, jl);
    const map = new Map<string, number[]>();
    for (const [e, items] of placement.get(job.name) ?? []) {
      if (!total.has(e)) continue;
      map.set(e, [...items]);
      jl.set(e, items.length * job.weight);
      total.set(e, total.get(e)! + items.length * job.weight);
    }
    copy.set(job.name, map);
  }
  return { placement: copy, jobLoad, total };
}

/** Saturn's put-back: each shard (heaviest first) to the least load of its job, then least total. */
function putBack(state: SaturnState, pool: Array<{ job: BenchJob; item: number }>, executors: readonly string[]): void {
  pool.sort((a, b) => b.job.weight - a.job.weight || (a.job.name < b.job.name ? 1 : a.job.name > b.job.name ? -1 : 0));
  for (const { job, item } of pool) {
    const jl = state.jobLoad.get(job.name)!;
    let best = executors[0]!;
    for (const e of executors) {
      const a = jl.get(e) ?? 0;
      const b = jl.get(best) ?? 0;
      if (a < b || (a === b && state.total.get(e)! < state.total.get(best)!)) best = e;
    }
    const map = state.placement.get(job.name)!;
    map.set(best, [...(map.get(best) ?? []), item]);
    jl.set(best, (jl.get(best) ?? 0) + job.weight);
    state.total.set(best, state.total.get(best)! + job.weight);
  }
}

/** Saturn from scratch: every shard put back. */
export function saturnFull(jobs: readonly BenchJob[], executors: readonly string[]): Placement {
  const state = saturnState(jobs, executors);
  putBack(state, jobs.flatMap((job) => Array.from({ length: job.total }, (_, item) => ({ job, item }))), executors);
  return state.placement;
}

/** Saturn on leave: the leaver's shards are put back one by one. */
export function saturnLeave(jobs: readonly BenchJob[], previous: Placement, executors: readonly string[], leaver: string): Placement {
  const survivors = executors.filter((e) => e !== leaver);
  const pool = jobs.flatMap((job) => (previous.get(job.name)?.get(leaver) ?? []).map((item) => ({ job, item })));
  const state = saturnState(jobs, survivors, previous);
  putBack(state, pool, survivors);
  return state.placement;
}

/**
 * Saturn's job-based balancing on join: per job, avg = ⌊job load ÷ executors⌋; each executor keeps
 * its shards up to avg of accumulated load and the rest is pulled (all of them when avg is 0); the
 * pulled shards are put back the same way.
 */
export function saturnJoin(jobs: readonly BenchJob[], previous: Placement, executors: readonly string[]): Placement {
  const state = saturnState(jobs, executors, previous);
  for (const job of [...jobs].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const avg = Math.floor((job.total * job.weight) / executors.length);
    const map = state.placement.get(job.name)!;
    const jl = state.jobLoad.get(job.name)!;
    const pool: Array<{ job: BenchJob; item: number }> = [];
    for (const [e, items] of map) {
      let acc = 0;
      const keep: number[] = [];
      for (const item of items) {
        if (avg > 0 && acc + job.weight <= avg) {
          keep.push(item);
          acc += job.weight;
        } else pool.push({ job, item });
      }
      const pulled = items.length - keep.length;
      map.set(e, keep);
      jl.set(e, keep.length * job.weight);
      state.total.set(e, state.total.get(e)! - pulled * job.weight);
    }
    putBack(state, pool, executors);
  }
  return state.placement;
}
