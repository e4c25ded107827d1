/**
 * The allocator's core: `allocate(previous, cluster) → next`, a pure function (no I/O, no clock).
 *
 * Rules (Saturn's job-average-first placement, kept and made precise):
 * - Each shard weighs its job's `loadLevel`; an executor's load is the sum of its shards' weights.
 * - **Per job first**: a job's T shards spread over its m candidates — each holds ⌊T/m⌋ or ⌈T/m⌉,
 *   so the numbers on any two candidates differ by at most one. This holds in every output.
 * - **Total load second**: which candidates take the T mod m remainder shards is decided, heaviest
 *   job first, by the least total load, ties by a draw fixed by the job's and the executor's names
 *   (so that jobs do not all share the same neighbours); forced placements (filling every candidate
 *   up to ⌊T/m⌋) are made for all jobs before these choices.
 * - **Sticky**: a shard stays where it is while its executor may still hold it (a candidate) and
 *   the spread allows it: a remainder stays with the executors that already hold one more.
 * - **Heavy job**: an enabled, non-localMode job with candidates whose loadLevel exceeds the sum of
 *   the loadLevels of all other enabled jobs (so there is at most one). Executors holding its shards
 *   take another job's remainder only when every candidate of that job without a heavy shard
 *   already holds one (isolation wins over stickiness); rebalancing never moves shards onto them.
 * - **Join**: an executor that was not a member last round (new, or undrained) gets its ⌊T/m⌋ of
 *   each job, then pulls shards from the most loaded executors, one at a time, while a shard of
 *   weight w can move with w < (their load − its load) and the source holds more of that job.
 * - **Leave / drain / lost handler / lost preference**: the shards that can no longer stay move —
 *   the spread never needs more. A leave moves exactly the leaver's shards (except isolation: the
 *   executor taking a heavy shard gives up other jobs' remainders, one per job at most). In rounds
 *   without a departure that placed shards or had a joiner, when max − min total load exceeds the
 *   largest shard weight, one more shard per job at most may move (from a holder of one more to a
 *   holder of one less, across a gap larger than that weight) until the bound holds or no such move
 *   is left — so after a join the bound is not guaranteed (isolation, one move per job).
 * - `preferList` restricts candidates to preferred executors while one is online; with
 *   `useDispreferList` shards fall back to the others and return when a preferred one comes back.
 * - `localMode`: exactly one shard per candidate executor (items numbered from 0, sticky per executor).
 * - Disabled jobs get no shards. Every shard of an enabled job is either assigned to exactly one
 *   candidate or reported unassigned with the reason.
 * - A round in which executors only left works through only the jobs that lost shards (step 0): the
 *   others are kept as they were, which is what the full steps would give (tested both ways).
 * Not guaranteed: total balance after a leave (it is what moving only the leaver's shards allows;
 * the next join or a requested reshard evens it out), nor with constraints (preferList, handlers).
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
  /** Work every job through, even in a round where executors only left (tests compare both ways). */
  everyJob?: boolean;
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
  /** Executor index → the number of this job's shards on it. */
  count: Int32Array;
  /** ⌊shards ÷ candidates⌋: what every candidate holds at least. */
  floor: number;
}

const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Computes the next allocation. Deterministic: the same inputs give the same output. */
export function allocate(previous: Allocation, cluster: Cluster, options: AllocateOptions = {}): Allocation {
  // Executors are addressed by index in name order (ties between equal keys go to the smaller name,
  // except step 2b's, drawn from name hashes); typed arrays instead of maps keep the hot loops cheap.
  const executors = [...cluster.executors].sort((a, b) => byName(a.name, b.name));
  const n = executors.length;
  const names = executors.map((e) => e.name);
  const index = new Map(names.map((name, i) => [name, i]));
  const traffic: number[] = [];
  executors.forEach((e, i) => { if (!e.noTraffic) traffic.push(i); });
  const load = new Float64Array(n);
  const held: Array<Set<JobState>> = names.map(() => new Set());
  const jobs = [...cluster.jobs].sort((a, b) => byName(a.name, b.name));
  const states = new Map<string, JobState>();

  const t: Totals = { load, held, placed: 0 };

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

  // 0. A round in which executors only left (a failover, a drain): a job whose shards all stay where
  //    they are, already spread over its candidates, would be kept shard for shard by the steps
  //    below (kept in 1, untouched in 2, no rebalancing in 3 after a leave), so its entry is taken
  //    as it is and only the jobs that lost shards are worked through — at 10,000 jobs that is the
  //    leaver's few hundred (and those whose reshard is requested: job leaders ask for one when an
  //    assignment names the dead executor). Not with a heavy job (isolation reads every job).
  //    allocate.test.ts checks both ways agree.
  const previousMembers = new Set(previous.members);
  const left = previous.members.some((m) => { const e = index.get(m); return e === undefined || executors[e]!.noTraffic; });
  const joined = traffic.some((e) => !previousMembers.has(names[e]!));
  const kept = new Map<string, JobAllocation>();
  let seen: Int32Array | undefined;
  let stamp = 0;
  // A job whose reshard is requested is worked through (its rebalancing moves only its own shards).
  const requested = new Set(options.rebalanceJobs ?? []);
  if (left && !joined && !options.everyJob && !options.rebalance && !hasHeavyJob(jobs, candidatesOf)) {
    let largest = 0;
    for (const job of jobs) if (job.shardingTotalCount > largest) largest = job.shardingTotalCount;
    seen = new Int32Array(largest);
  }

  // Each worked-through job's per-executor load and count: slices of arrays shared by 256 jobs, not
  // two arrays per job (10,000 jobs × 100 executors made 20,000 buffers, and their collection, per
  // round), and only for the jobs worked through (a leave round keeps most as they were).
  const SLICES = 256;
  let jobLoads = new Float64Array(0);
  let jobCounts = new Int32Array(0);
  const slices = (slot: number): { load: Float64Array; count: Int32Array } => {
    const k = slot % SLICES;
    if (k === 0) {
      jobLoads = new Float64Array(n * SLICES);
      jobCounts = new Int32Array(n * SLICES);
    }
    return { load: jobLoads.subarray(k * n, (k + 1) * n), count: jobCounts.subarray(k * n, (k + 1) * n) };
  };

  // 1. Keep every shard that may stay where it is.
  for (const job of jobs) {
    if (!job.enabled) continue;
    const c = candidatesOf(job);
    // Own entries only: a job may be named after an Object.prototype member (`constructor`).
    const before = Object.hasOwn(previous.jobs, job.name) ? previous.jobs[job.name] : undefined;
    if (seen && before && !requested.has(job.name) && keptAsIs(before, job, c.isCandidate, c.candidates.length, index, seen, (stamp += 1))) {
      kept.set(job.name, before);
      for (const executor in before.items) load[index.get(executor)!]! += job.loadLevel * before.items[executor]!.length;
      continue;
    }
    const state: JobState = { job, weight: job.loadLevel, candidates: c.candidates, isCandidate: c.isCandidate, reason: c.reason, owner: new Map(), ...slices(states.size), floor: 0 };
    states.set(job.name, state);
    const placedBefore = before?.items ?? {};
    for (const executor of Object.keys(placedBefore).sort(byName)) {
      const e = index.get(executor);
      if (e === undefined || !state.isCandidate[e]) continue;
      const items = [...(placedBefore[executor] ?? [])].sort((a, b) => a - b);
      for (const item of job.localMode ? items.slice(0, 1) : items) {
        if (!Number.isInteger(item) || item < 0 || state.owner.has(item)) continue;
        if (!job.localMode && item >= job.shardingTotalCount) continue;
        own(t, state, item, e);
      }
    }
  }

  // 2. Spread each job over its candidates (heaviest jobs first, then by name): every candidate gets
  //    ⌊T/m⌋ shards and r = T mod m of them one more. The r slots go first to executors without a
  //    heavy job's shard (isolation), then to those already holding that many (stickiness), then
  //    to the least total load; excess shards are shed and every missing item goes to a candidate
  //    below its target. A job whose shards already meet this is not touched.
  const keptPlaced = t.placed;
  let heavy: JobState | undefined;
  {
    let sum = 0;
    // Every enabled job counts, the jobs kept as they were (step 0) too.
    for (const job of jobs) if (job.enabled) sum += job.loadLevel;
    for (const st of states.values()) {
      if (!st.job.localMode && st.candidates.length > 0 && st.weight > sum - st.weight) heavy = st;
    }
  }
  const unassigned = new Map<string, Array<{ item: number; reason: UnassignedReason }>>();
  const ordered = [...states.values()].sort((a, b) => b.weight - a.weight || byName(a.job.name, b.job.name));
  const scratch: Scratch = { target: new Int32Array(n), chosen: new Uint8Array(n), pickE: new Int32Array(n), pick0: new Uint8Array(n), pick1: new Uint8Array(n), pick2: new Float64Array(n), pick3: new Uint32Array(n), executorHash: Uint32Array.from(names, nameHash) };
  // 2a. First what leaves no choice, for every job: shed above ⌈T/m⌉, fill up to ⌊T/m⌋. The choices
  //     of 2b (who takes a remainder) then see the loads these forced placements make.
  for (const st of ordered) if (!st.job.localMode && st.candidates.length > 0) force(t, st, scratch.target);
  for (const st of ordered) {
    if (st.job.localMode) {
      const withItem = new Set(st.owner.values());
      let next = 0;
      for (const e of st.candidates) {
        if (withItem.has(e)) continue;
        while (st.owner.has(next)) next += 1;
        own(t, st, next, e);
      }
      continue;
    }
    const total = st.job.shardingTotalCount;
    if (st.candidates.length === 0) {
      if (total > 0) unassigned.set(st.job.name, Array.from({ length: total }, (_, item) => ({ item, reason: st.reason ?? 'no-eligible-executor' })));
      continue;
    }
    spread(t, st, heavy, scratch);
  }

  const forced = t.placed > keptPlaced;

  // 3. Rebalance towards joiners (or everyone, on a requested reshard).
  const joiners = options.rebalance ? traffic : traffic.filter((e) => !previousMembers.has(names[e]!));
  if (joiners.length > 0) rebalance(joiners, traffic, t, states, heavy);
  if (requested.size > 0) {
    rebalance(traffic, traffic, t, states, heavy, requested);
  }
  // 3b. Repair total balance where forced placements (a leave, a drain, a config change) left max −
  //     min load above the largest shard weight: moves between any executors that keep every job
  //     spread, only across gaps larger than that weight, so it stops as soon as the bound holds.
  let maxWeight = 0;
  for (const job of jobs) if (job.enabled && job.loadLevel > maxWeight) maxWeight = job.loadLevel;
  let hi = Number.NEGATIVE_INFINITY;
  let lo = Number.POSITIVE_INFINITY;
  for (const e of traffic) {
    if (load[e]! > hi) hi = load[e]!;
    if (load[e]! < lo) lo = load[e]!;
  }
  // Not in a round an executor left: a leave moves exactly the leaver's shards (the spread never
  // needs more); total balance is then the best those moves allow, until the next join or reshard.
  // A join repairs too when it forced no placement (every job has fewer shards than executors):
  // otherwise a leave's imbalance would outlive it.
  if ((forced || joined) && !left && hi - lo > maxWeight) rebalance(traffic, traffic, t, states, heavy, undefined, maxWeight, new Set());

  // 4. The output, in a canonical order (executor indexes ascend with names).
  const out: Allocation = { members: traffic.map((e) => names[e]!), jobs: {} };
  for (const job of jobs) {
    const st = states.get(job.name);
    const asIs = kept.get(job.name);
    if (asIs) {
      out.jobs[job.name] = asIs;
      continue;
    }
    if (!st) {
      out.jobs[job.name] = { items: {}, unassigned: [] };
      continue;
    }
    out.jobs[job.name] = { items: itemsByName(st, names), unassigned: unassigned.get(job.name) ?? [] };
  }
  return out;
}

/**
 * What placing a shard changes besides its job's own state: every executor's total load, the jobs it
 * holds, and the count of placements of the round. (The helpers below, and the per-job steps, are
 * module functions, not closures of each call: a closure is a new function every call, so code
 * optimised for one call's closures was not reused at the next. Module functions are optimised
 * early in the first call and stay so, even when `allocate` itself is deoptimised between calls.)
 */
interface Totals {
  /** Executor index → the total weight of its shards. */
  load: Float64Array;
  /**
   * Executor index → the jobs that have (or had, this round) a shard on it, in the order they first
   * did (rebalancing goes through them in that order); which items a job has there is in its owner map.
   */
  held: Array<Set<JobState>>;
  placed: number;
}

function own(t: Totals, s: JobState, item: number, e: number): void {
  t.placed += 1;
  s.owner.set(item, e);
  s.count[e]! += 1;
  s.load[e]! += s.weight;
  t.load[e]! += s.weight;
  t.held[e]!.add(s);
}

function disown(t: Totals, s: JobState, item: number, e: number): void {
  s.owner.delete(item);
  s.count[e]! -= 1;
  s.load[e]! -= s.weight;
  t.load[e]! -= s.weight;
}

/** Sheds the job's highest items on `e` above `keep`. */
function shed(t: Totals, s: JobState, e: number, keep: number): void {
  const excess = s.count[e]! - keep;
  if (excess <= 0) return;
  const mine: number[] = [];
  for (const [item, holder] of s.owner) if (holder === e) mine.push(item);
  mine.sort((a, b) => b - a);
  for (let i = 0; i < excess; i += 1) disown(t, s, mine[i]!, e);
}

/** Gives missing items, ascending, round-robin to the candidates below their target (while any is missing). */
function fill(t: Totals, s: JobState, target: Int32Array): void {
  const total = s.job.shardingTotalCount;
  let item = 0;
  for (let open = true; open;) {
    open = false;
    for (const e of s.candidates) {
      if (s.count[e]! >= target[e]!) continue;
      while (item < total && s.owner.has(item)) item += 1;
      if (item >= total) return;
      own(t, s, item, e);
      open = true;
    }
  }
}

/** Scratch space of {@link force} and {@link spread}, one set per call of {@link allocate} (n entries each). */
interface Scratch {
  /** Executor index → the shards the job being spread should hold there. */
  target: Int32Array;
  /** 1 for the candidates chosen to take one of the job's remainder shards. */
  chosen: Uint8Array;
  /** The r best candidates so far and their keys, in order (2b's choice). */
  pickE: Int32Array;
  pick0: Uint8Array;
  pick1: Uint8Array;
  pick2: Float64Array;
  pick3: Uint32Array;
  /** Executor index → its name's hash. */
  executorHash: Uint32Array;
}

/** Step 2a for one job with candidates: shed above ⌈T/m⌉, fill up to ⌊T/m⌋. */
function force(t: Totals, st: JobState, target: Int32Array): void {
  const m = st.candidates.length;
  const total = st.job.shardingTotalCount;
  const floor = Math.floor(total / m);
  const ceil = Math.ceil(total / m);
  st.floor = floor;
  if (st.owner.size === total && isSpread(st, floor, total - floor * m, undefined)) return;
  // (Nothing to shed with no shard placed; nothing forced with a floor of 0: fewer shards than candidates.)
  if (st.owner.size > 0) for (const e of st.candidates) shed(t, st, e, ceil);
  if (floor > 0) {
    for (const e of st.candidates) target[e] = floor;
    fill(t, st, target);
  }
}

/**
 * Step 2b for one job with candidates, not localMode: every candidate gets ⌊T/m⌋ shards and the
 * chosen r = T mod m of them one more (see {@link allocate}, step 2).
 */
function spread(t: Totals, st: JobState, heavy: JobState | undefined, p: Scratch): void {
  const total = st.job.shardingTotalCount;
  const m = st.candidates.length;
  const floor = Math.floor(total / m);
  const extra = total - floor * m;
  const isolate = heavy !== undefined && heavy !== st;
  if (st.owner.size === total && isSpread(st, floor, extra, isolate ? heavy : undefined)) return;
  // Choose the r executors that get one more: the r least by (isolation, stickiness, the other
  // jobs' load on it, then a tie-break drawn from the job's and the executor's names) — in one pass
  // over the candidates, keeping the r best so far in order (the keys do not change while choosing).
  // The tie-break spreads the executors a job's shards share: by index, every job of a balanced
  // round picked the same neighbours (10,000 jobs × 3 over 100 executors used 200 pairs of executors
  // of 4,950, each pair sharing 200 jobs, so one executor's death left two neighbours to take over
  // some 200 job leaderships each at once).
  let picked = 0;
  const jobHash = extra > 0 ? nameHash(st.job.name) : 0;
  if (extra > 0) for (const e of st.candidates) {
    const a0 = isolate && heavy!.count[e]! > 0 ? 1 : 0;
    const a1 = st.count[e]! > floor ? 0 : 1;
    const a2 = t.load[e]! - st.load[e]!;
    const a3 = mixHash(jobHash ^ p.executorHash[e]!);
    let i = picked < extra ? picked : extra - 1;
    if (picked === extra && !keyLess(a0, a1, a2, a3, p.pick0[i]!, p.pick1[i]!, p.pick2[i]!, p.pick3[i]!)) continue;
    if (picked < extra) picked += 1;
    // Equal keys in full (a hash collision): the candidate met earlier, the smaller index, ahead.
    while (i > 0 && keyLess(a0, a1, a2, a3, p.pick0[i - 1]!, p.pick1[i - 1]!, p.pick2[i - 1]!, p.pick3[i - 1]!)) {
      p.pickE[i] = p.pickE[i - 1]!;
      p.pick0[i] = p.pick0[i - 1]!;
      p.pick1[i] = p.pick1[i - 1]!;
      p.pick2[i] = p.pick2[i - 1]!;
      p.pick3[i] = p.pick3[i - 1]!;
      i -= 1;
    }
    p.pickE[i] = e;
    p.pick0[i] = a0;
    p.pick1[i] = a1;
    p.pick2[i] = a2;
    p.pick3[i] = a3;
  }
  p.chosen.fill(0);
  for (let i = 0; i < picked; i += 1) p.chosen[p.pickE[i]!] = 1;
  // Nothing to shed from a job with no shard placed yet (every job, in a first round).
  const placedAny = st.owner.size > 0;
  for (const e of st.candidates) {
    p.target[e] = floor + p.chosen[e]!;
    if (placedAny) shed(t, st, e, p.target[e]!);
  }
  fill(t, st, p.target);
}

/** A job's items by executor name, in canonical order (executor indexes ascend with names; items ascending). */
function itemsByName(st: JobState, names: readonly string[]): Record<string, number[]> {
  const byExecutor = new Map<number, number[]>();
  for (const [item, e] of st.owner) {
    const list = byExecutor.get(e);
    if (list) list.push(item);
    else byExecutor.set(e, [item]);
  }
  const items: Record<string, number[]> = {};
  for (const e of [...byExecutor.keys()].sort((a, b) => a - b)) items[names[e]!] = byExecutor.get(e)!.sort((a, b) => a - b);
  return items;
}

/** A name's 32-bit FNV-1a hash (jobs' and executors' names, for {@link spread}'s tie-break). */
function nameHash(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i += 1) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A 32-bit integer's bits mixed (the finaliser of MurmurHash3): nearby inputs give unrelated outputs. */
function mixHash(x: number): number {
  let h = x >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Lexicographic (a0, a1, a2, a3) < (b0, b1, b2, b3). */
function keyLess(a0: number, a1: number, a2: number, a3: number, b0: number, b1: number, b2: number, b3: number): boolean {
  return a0 < b0 || (a0 === b0 && (a1 < b1 || (a1 === b1 && (a2 < b2 || (a2 === b2 && a3 < b3)))));
}

function rebalance(
  joiners: readonly number[],
  traffic: readonly number[],
  t: Totals,
  states: Map<string, JobState>,
  heavy: JobState | undefined,
  onlyJobs?: ReadonlySet<string>,
  minGap = 1,
  oncePerJob?: Set<string>,
): number {
  // Each move strictly lowers the sum of squared loads, so this ends.
  const { load, held } = t;
  let moves = 0;
  for (;;) {
    let moved = false;
    const targets = [...joiners].sort((a, b) => load[a]! - load[b]! || a - b);
    for (const to of targets) {
      const toLoad = load[to]!;
      const sources = traffic.filter((e) => e !== to && load[e]! - toLoad > minGap).sort((a, b) => load[b]! - load[a]! || a - b);
      for (const from of sources) {
        const gap = load[from]! - toLoad;
        let best: JobState | undefined;
        let k0 = 0;
        let k1 = 0;
        let k2 = 0;
        for (const st of held[from]!) {
          if (st.count[from] === 0 || (onlyJobs && !onlyJobs.has(st.job.name)) || oncePerJob?.has(st.job.name)) continue;
          if (st.job.localMode || st.weight >= gap || !st.isCandidate[to]) continue;
          // Only from a holder of one more than the target: the job stays spread. Isolation: never
          // onto a heavy job's executor; the heavy job's own shards only onto an executor that
          // holds no more than the floor of any other job.
          if (st.count[from]! <= st.count[to]!) continue;
          if (heavy && (st === heavy ? !canTakeHeavy(states, heavy, from, to) : heavy.count[to]! > 0)) continue;
          // Prefer a job the target has least of, the source most of, then the heaviest shard.
          const a0 = st.load[to]!;
          const a1 = -st.load[from]!;
          const a2 = -st.weight;
          if (!best || a0 < k0 || (a0 === k0 && (a1 < k1 || (a1 === k1 && a2 < k2)))) {
            best = st;
            k0 = a0;
            k1 = a1;
            k2 = a2;
          }
        }
        if (best) {
          // Its highest item on the source moves.
          let item = -1;
          for (const [i, holder] of best.owner) if (holder === from && i > item) item = i;
          disown(t, best, item, from);
          own(t, best, item, to);
          oncePerJob?.add(best.job.name);
          moved = true;
          moves += 1;
          break;
        }
      }
      if (moved) break;
    }
    if (!moved) return moves;
  }
}

/** True when an enabled job would be the round's heavy job (see the module header): isolation then concerns every job. */
function hasHeavyJob(jobs: readonly ClusterJob[], candidatesOf: (job: ClusterJob) => { candidates: readonly number[] }): boolean {
  let sum = 0;
  for (const job of jobs) if (job.enabled) sum += job.loadLevel;
  for (const job of jobs) {
    if (job.enabled && !job.localMode && job.loadLevel > sum - job.loadLevel && candidatesOf(job).candidates.length > 0) return true;
  }
  return false;
}

/**
 * True when a job's previous entry is what {@link allocate}'s steps would output for it unchanged:
 * in canonical form (executors in name order, each with its items ascending, no item twice, none
 * out of range, nothing unassigned), every holder a candidate, and the shards spread over the `m`
 * candidates (each holds ⌊T/m⌋ or one more; a candidate with none only when ⌊T/m⌋ is 0).
 * `seen` is scratch space of at least T entries; `stamp` differs from every earlier call's.
 */
function keptAsIs(before: JobAllocation, job: ClusterJob, isCandidate: Uint8Array, m: number, index: ReadonlyMap<string, number>, seen: Int32Array, stamp: number): boolean {
  if (job.localMode || m === 0 || before.unassigned.length > 0) return false;
  const total = job.shardingTotalCount;
  const floor = Math.floor(total / m);
  const most = floor + (total > floor * m ? 1 : 0);
  let holders = 0;
  let count = 0;
  let last: string | undefined;
  for (const executor in before.items) {
    const e = index.get(executor);
    if (e === undefined || !isCandidate[e] || (last !== undefined && !(last < executor))) return false;
    last = executor;
    const items = before.items[executor]!;
    if (items.length === 0 || items.length < floor || items.length > most) return false;
    let previousItem = -1;
    for (const item of items) {
      if (!Number.isInteger(item) || item <= previousItem || item >= total || seen[item] === stamp) return false;
      seen[item] = stamp;
      previousItem = item;
    }
    holders += 1;
    count += items.length;
  }
  return count === total && (floor === 0 || holders === m);
}

/**
 * True when the job's shards already sit spread over its candidates (each holds `floor` or
 * `floor + 1`) and, with a heavy job, no executor holding a heavy shard has one more while another
 * candidate without one has the floor.
 */
function isSpread(st: JobState, floor: number, extra: number, heavy: JobState | undefined): boolean {
  let heavyHasExtra = false;
  let lightAtFloor = false;
  for (const e of st.candidates) {
    const c = st.count[e]!;
    if (c < floor || c > floor + (extra > 0 ? 1 : 0)) return false;
    if (heavy && heavy.count[e]! > 0) {
      if (c > floor) heavyHasExtra = true;
    } else if (c === floor) lightAtFloor = true;
  }
  return !(heavyHasExtra && lightAtFloor);
}

/**
 * True when a heavy shard may move from `from` to `to` and isolation still holds: `to` holds no more
 * than the floor of any other job, and if `from` holds no heavy shard after, no job that `from` holds
 * at its floor has one more on another heavy executor.
 */
function canTakeHeavy(states: Map<string, JobState>, heavy: JobState, from: number, to: number): boolean {
  const freed = heavy.count[from] === 1;
  for (const st of states.values()) {
    if (st === heavy || st.job.localMode) continue;
    if (st.count[to]! > st.floor) return false;
    if (freed && st.isCandidate[from] && st.count[from] === st.floor) {
      for (const e of st.candidates) if (e !== from && heavy.count[e]! > 0 && st.count[e]! > st.floor) return false;
    }
  }
  return true;
}
