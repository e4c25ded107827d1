/**
 * Allocator benchmark: 1,000 jobs × 10 shards × 100 executors. Orrery's allocate() against
 * ElasticJob's average allocation and Saturn's job-based balancing, all in the same run.
 */
import { allocate, EMPTY_ALLOCATION, type Allocation, type Cluster } from '@orrery/sharding';
import { elasticJobAverage, saturnFull, saturnJoin, saturnLeave, type BenchJob, type Placement } from './reference-strategies.js';

const JOBS = 1000;
const SHARDS = 10;
const EXECUTORS = 100;

const name = (i: number): string => `exec-${String(i).padStart(3, '0')}`;

function toPlacement(a: Allocation): Placement {
  const out: Placement = new Map();
  for (const [job, { items }] of Object.entries(a.jobs)) out.set(job, new Map(Object.entries(items)));
  return out;
}

function moved(before: Placement, after: Placement): number {
  let n = 0;
  for (const [job, map] of after) {
    const owner = new Map<number, string>();
    for (const [e, items] of before.get(job) ?? []) for (const i of items) owner.set(i, e);
    for (const [e, items] of map) for (const i of items) if (owner.has(i) && owner.get(i) !== e) n += 1;
  }
  return n;
}

function loads(p: Placement, executors: readonly string[]): { max: number; min: number } {
  const l = new Map(executors.map((e) => [e, 0]));
  for (const map of p.values()) for (const [e, items] of map) l.set(e, (l.get(e) ?? 0) + items.length);
  const values = [...l.values()];
  return { max: Math.max(...values), min: Math.min(...values) };
}

/**
 * Per-job spread: the largest (max − min) number of shards of any job over its candidates (here
 * every executor: the bench has no preferList).
 */
function spread(p: Placement, executors: readonly string[]): number {
  let worst = 0;
  for (const map of p.values()) {
    let max = 0;
    let min = Number.POSITIVE_INFINITY;
    for (const e of executors) {
      const c = map.get(e)?.length ?? 0;
      if (c > max) max = c;
      if (c < min) min = c;
    }
    worst = Math.max(worst, max - min);
  }
  return worst;
}

/** Runs `fn` 3 times to warm the JIT (the allocator is a long-running process), then times `runs` runs. */
function timed<T>(fn: () => T, runs: number): { value: T; p50: number; max: number } {
  const times: number[] = [];
  let value!: T;
  for (let i = 0; i < 3; i += 1) fn();
  for (let i = 0; i < runs; i += 1) {
    const t0 = performance.now();
    value = fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { value, p50: times[Math.floor(times.length / 2)]!, max: times.at(-1)! };
}

export interface AllocatorBenchRow {
  strategy: string;
  fullMs: string;
  joinMs: string;
  leaveMs: string;
  movedOnJoin: string;
  movedOnLeave: string;
  loadAfterJoin: string;
  loadAfterLeave: string;
  /** Per-job spread after the full allocation / the join / the leave. */
  spread: string;
}

export function runAllocatorBench(runs = 15): AllocatorBenchRow[] {
  const executors = Array.from({ length: EXECUTORS }, (_, i) => name(i));
  const joined = [...executors, name(EXECUTORS)];
  const leaver = name(95);
  const left = executors.filter((e) => e !== leaver);
  const benchJobs: BenchJob[] = Array.from({ length: JOBS }, (_, i) => ({ name: `job-${String(i).padStart(4, '0')}`, total: SHARDS, weight: 1 }));
  const clusterOf = (names: readonly string[]): Cluster => ({
    executors: names.map((n) => ({ name: n, handlers: [], tags: [], noTraffic: false })),
    jobs: benchJobs.map((j) => ({ name: j.name, enabled: true, type: 'shell', shardingTotalCount: j.total, localMode: false, loadLevel: j.weight, preferList: [], useDispreferList: true })),
  });
  const totalShards = JOBS * SHARDS;
  const idealJoin = Math.ceil(totalShards / joined.length);
  const fmt = (t: { p50: number; max: number }): string => `${t.p50.toFixed(1)} (max ${t.max.toFixed(1)})`;
  const rows: AllocatorBenchRow[] = [];

  // Orrery.
  {
    const [c0, cJoin, cLeave] = [clusterOf(executors), clusterOf(joined), clusterOf(left)];
    const full = timed(() => allocate(EMPTY_ALLOCATION, c0), runs);
    const join = timed(() => allocate(full.value, cJoin), runs);
    const leave = timed(() => allocate(full.value, cLeave), runs);
    const before = toPlacement(full.value);
    const leaverShards = [...before.values()].reduce((n, m) => n + (m.get(leaver)?.length ?? 0), 0);
    const j = loads(toPlacement(join.value), joined);
    const l = loads(toPlacement(leave.value), left);
    const [FULL, JOIN, LEAVE] = [before, toPlacement(join.value), toPlacement(leave.value)];
    rows.push({
      strategy: 'Orrery allocate()',
      fullMs: fmt(full), joinMs: fmt(join), leaveMs: fmt(leave),
      movedOnJoin: `${moved(before, toPlacement(join.value))} (ideal ${idealJoin})`,
      movedOnLeave: `${moved(before, toPlacement(leave.value))} (ideal ${leaverShards})`,
      loadAfterJoin: `${j.max}/${j.min}`, loadAfterLeave: `${l.max}/${l.min}`,
      spread: `${spread(FULL, executors)}/${spread(JOIN, joined)}/${spread(LEAVE, left)}`,
    });
  }
  // ElasticJob average allocation (stateless: every round recomputes from the instance list).
  {
    const full = timed(() => elasticJobAverage(benchJobs, executors), runs);
    const join = timed(() => elasticJobAverage(benchJobs, joined), runs);
    const leave = timed(() => elasticJobAverage(benchJobs, left), runs);
    const leaverShards = [...full.value.values()].reduce((n, m) => n + (m.get(leaver)?.length ?? 0), 0);
    const j = loads(join.value, joined);
    const l = loads(leave.value, left);
    const [FULL, JOIN, LEAVE] = [full.value, join.value, leave.value];
    rows.push({
      strategy: 'ElasticJob average allocation',
      fullMs: fmt(full), joinMs: fmt(join), leaveMs: fmt(leave),
      movedOnJoin: `${moved(full.value, join.value)} (ideal ${idealJoin})`,
      movedOnLeave: `${moved(full.value, leave.value)} (ideal ${leaverShards})`,
      loadAfterJoin: `${j.max}/${j.min}`, loadAfterLeave: `${l.max}/${l.min}`,
      spread: `${spread(FULL, executors)}/${spread(JOIN, joined)}/${spread(LEAVE, left)}`,
    });
  }
  // Saturn job-based balancing.
  {
    const full = timed(() => saturnFull(benchJobs, executors), runs);
    const join = timed(() => saturnJoin(benchJobs, full.value, joined), runs);
    const leave = timed(() => saturnLeave(benchJobs, full.value, executors, leaver), runs);
    const leaverShards = [...full.value.values()].reduce((n, m) => n + (m.get(leaver)?.length ?? 0), 0);
    const j = loads(join.value, joined);
    const l = loads(leave.value, left);
    const [FULL, JOIN, LEAVE] = [full.value, join.value, leave.value];
    rows.push({
      strategy: 'Saturn job-based balancing',
      fullMs: fmt(full), joinMs: fmt(join), leaveMs: fmt(leave),
      movedOnJoin: `${moved(full.value, join.value)} (ideal ${idealJoin})`,
      movedOnLeave: `${moved(full.value, leave.value)} (ideal ${leaverShards})`,
      loadAfterJoin: `${j.max}/${j.min}`, loadAfterLeave: `${l.max}/${l.min}`,
      spread: `${spread(FULL, executors)}/${spread(JOIN, joined)}/${spread(LEAVE, left)}`,
    });
  }
  return rows;
}

export interface MixedBenchRow {
  strategy: string;
  /** Per-job spread after the full allocation / the join / the leave. */
  spread: string;
  /** Max − min executor load after the full allocation / the join / the leave. */
  loadGap: string;
  movedOnJoin: string;
  movedOnLeave: string;
}

/**
 * A mixed workload where the per-job spread is not free: 20 executors, 200 jobs with 1–60 shards
 * and loadLevel 1–3 (a fixed pseudo-random sequence), one join and one leave.
 */
export function runMixedAllocatorBench(): MixedBenchRow[] {
  let seed = 42;
  const rand = (k: number): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % k;
  };
  const executors = Array.from({ length: 20 }, (_, i) => name(i));
  const joined = [...executors, name(20)];
  const leaver = name(7);
  const left = executors.filter((e) => e !== leaver);
  const benchJobs: BenchJob[] = Array.from({ length: 200 }, (_, i) => ({ name: `job-${String(i).padStart(4, '0')}`, total: 1 + rand(60), weight: 1 + rand(3) }));
  const weight = new Map(benchJobs.map((j) => [j.name, j.weight]));
  const clusterOf = (names: readonly string[]): Cluster => ({
    executors: names.map((n) => ({ name: n, handlers: [], tags: [], noTraffic: false })),
    jobs: benchJobs.map((j) => ({ name: j.name, enabled: true, type: 'shell', shardingTotalCount: j.total, localMode: false, loadLevel: j.weight, preferList: [], useDispreferList: true })),
  });
  const gap = (p: Placement, names: readonly string[]): number => {
    const l = new Map(names.map((e) => [e, 0]));
    for (const [job, map] of p) for (const [e, items] of map) l.set(e, (l.get(e) ?? 0) + items.length * weight.get(job)!);
    return Math.max(...l.values()) - Math.min(...l.values());
  };
  const row = (strategy: string, full: Placement, join: Placement, leave: Placement): MixedBenchRow => ({
    strategy,
    spread: `${spread(full, executors)}/${spread(join, joined)}/${spread(leave, left)}`,
    loadGap: `${gap(full, executors)}/${gap(join, joined)}/${gap(leave, left)}`,
    movedOnJoin: String(moved(full, join)),
    movedOnLeave: `${moved(full, leave)} (leaver held ${[...full.values()].reduce((n, m) => n + (m.get(leaver)?.length ?? 0), 0)})`,
  });
  const full = allocate(EMPTY_ALLOCATION, clusterOf(executors));
  const rows = [row('Orrery allocate()', toPlacement(full), toPlacement(allocate(full, clusterOf(joined))), toPlacement(allocate(full, clusterOf(left))))];
  rows.push(row('ElasticJob average allocation', elasticJobAverage(benchJobs, executors), elasticJobAverage(benchJobs, joined), elasticJobAverage(benchJobs, left)));
  const saturn = saturnFull(benchJobs, executors);
  rows.push(row('Saturn job-based balancing', saturn, saturnJoin(benchJobs, saturn, joined), saturnLeave(benchJobs, saturn, executors, leaver)));
  return rows;
}
