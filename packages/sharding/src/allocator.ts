/**
 * The allocator's imperative shell around {@link allocate}: leadership, watching, rounds, writes.
 *
 * - Every allocator joins the leader latch at `/sharding/leader`; the leader's latch node czxid is
 *   its **allocatorEpoch**, stamped on everything it writes. Standbys keep their watch-fed cache warm
 *   (hot standby) but never write.
 * - It mirrors, per namespace, only what allocation depends on: namespace nodes, job configs (one
 *   data watch per job; no child watch), executor presence and meta. Reshard requests are watched
 *   under `/sharding/requests`.
 * - Events mark namespaces dirty; rounds are debounced (`debounceMs` of quiet — `lossQuietMs` once an
 *   executor is lost — at most `maxDelayMs` after the first event) and coalesced, one at a time.
 * - A new leader reads the last written assignments and members from ZooKeeper first (sticky): if
 *   nothing changed it writes nothing.
 * - A round writes only the jobs whose assignment changed (new epoch), then the affected executors'
 *   summaries, then the namespace's sharding state — each a compare-and-set from the version last
 *   seen; the writes of one step go out together, and the next step starts once all of them are
 *   answered. A write that finds a newer allocatorEpoch in the node stops the round (this allocator
 *   was deposed); leadership is re-checked before every write.
 * - Shards unassigned for longer than `alarmAfterMs`, and executors lost (a presence gone without a
 *   graceful leave), raise webhook alarms through core's alarm sender: at most once per job (or
 *   executor) and kind per the namespace's silence window, with its timeout and retries.
 */
import { hostname } from 'node:os';
import { PerformanceObserver } from 'node:perf_hooks';
import { isDeepStrictEqual } from 'node:util';
import {
  errorCode,
  isRetryable,
  OrreryError,
  alarmKey,
  alarmPolicy,
  canonicalJson,
  checkAssignment,
  checkApplied,
  hasErrorCode,
  checkExecutorInfo,
  checkExecutorMeta,
  checkJobConfig,
  checkNamespaceInfo,
  checkReshardRequest,
  checkShardingState,
  createAlarmSender,
  createEmitter,
  createLeaderLatch,
  createSerialTask,
  createTreeCache,
  decodeJson,
  encodeJson,
  matchPath,
  paths,
  REQUEST_NODE_PATTERN,
  readJson,
  inspectNode,
  toError,
  type AlarmPost,
  type Assignment,
  type ExecutorAssignment,
  type Logger,
  type Metrics,
  type NamespaceInfo,
  type Subscribable,
  type CachedNode,
  type NodeReading,
  type TreeCache,
  type ValidationIssue,
  type ZkClient,
} from '@orrery/core';
import { allocate, EMPTY_ALLOCATION, type Allocation, type Cluster } from './allocate.js';
import { buildCluster, type ExecutorNodes, type JobNode } from './cluster.js';
import { createAllocatorMetrics, type AllocatorMetrics } from './allocator-metrics.js';

/** Events of an {@link Allocator} (for tests and metrics; logs are separate). */
export interface AllocatorEvents {
  'leader:acquired': { epoch: number };
  'leader:lost': { reason: string };
  'round:done': { namespace: string; jobsWritten: number; executorsWritten: number; moved: number; durationMs: number };
  'alarm:sent': { namespace: string; job: string; items: number };
  /** An executor's presence vanished without a graceful leave (its session ended). */
  'executor:lost': { namespace: string; executor: string };
  error: Error;
}

/** Options of {@link createAllocator}. */
export interface AllocatorOptions {
  zk: ZkClient;
  logger: Logger;
  metrics: Metrics;
  /** Latch participant id. Default `host:pid`. */
  id?: string;
  /** Quiet time before a round, in ms. Default 150. */
  debounceMs?: number;
  /** A round starts at most this long after the first event of a burst, in ms. Default 1000. */
  maxDelayMs?: number;
  /**
   * Quiet time before a round that an executor's loss asked for, in ms (at most `debounceMs`).
   * Default 25: the lost executor's shards run nowhere until that round, and sessions that expire
   * together (one ZooKeeper tick) lose their presences within milliseconds of each other.
   */
  lossQuietMs?: number;
  /** Alarm when a shard of an enabled job is unassigned this long, in ms. Default 30 000. */
  alarmAfterMs?: number;
  /** How alarms are POSTed (tests). Default: core's `fetchAlarmPost`. */
  postAlarm?: AlarmPost;
  now?: () => number;
}

/** A running allocator. */
export interface Allocator extends Subscribable<AllocatorEvents> {
  readonly id: string;
  readonly isLeader: boolean;
  readonly metrics: AllocatorMetrics;
  start(): Promise<void>;
  /** Leaves leadership and stops. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

interface NamespaceState {
  previous: Allocation;
  /** Job → the epoch and node version of its assignment node as last read or written. */
  assignments: Map<string, { epoch: number; version: number }>;
  /** Executor → node version of its summary. */
  summaries: Map<string, number>;
  stateVersion: number | undefined;
  round: number;
  unassignedSince: Map<string, number>;
}

class Deposed extends Error {}

const NAMESPACES = '/namespaces';

/** Which nodes the allocator mirrors. */
function include(path: string): boolean {
  const m = matchPath(path);
  if (!m) return false;
  return ['namespaces', 'namespace', 'jobs', 'job', 'executors', 'executor', 'executor-presence', 'executor-meta'].includes(m.kind);
}
function descend(path: string): boolean {
  const kind = matchPath(path)?.kind;
  return kind !== 'job' && kind !== 'executor-presence' && kind !== 'executor-meta';
}

/** Creates an allocator; call `start()`. */
export function createAllocator(options: AllocatorOptions): Allocator {
  const { zk, logger } = options;
  const id = options.id ?? `${hostname()}:${process.pid}`;
  const debounceMs = options.debounceMs ?? 150;
  const maxDelayMs = options.maxDelayMs ?? 1000;
  const lossQuietMs = Math.min(options.lossQuietMs ?? 25, debounceMs);
  const alarmAfterMs = options.alarmAfterMs ?? 30_000;
  const now = options.now ?? Date.now;
  const emitter = createEmitter<AllocatorEvents>((e) => logger.error({ err: e }, 'event listener failed'));
  const metrics = createAllocatorMetrics(options.metrics);
  const alarmSender = createAlarmSender({ logger: logger.child({ component: 'alarms' }), metrics: options.metrics, now, ...(options.postAlarm ? { post: options.postAlarm } : {}) });
  const latch = createLeaderLatch(zk, paths.shardingLeader(), { id });
  const cache: TreeCache = createTreeCache(zk, NAMESPACES, { include, descend });
  /**
   * Milliseconds this process has been paused for garbage collection since the allocator was
   * created, as V8 reports its pauses (each reported a turn of the event loop or so after it
   * ended): a round logs its share (`gcMs`). At 10,000 jobs a round builds and compares objects for
   * every job, and its collections took 7–155 ms of a failover round's 290–990 in two full-size runs.
   */
  let gcPausedMs = 0;
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcPausedMs += entry.duration;
  });
  gcObserver.observe({ entryTypes: ['gc'] });
  /**
   * Each cached node's reading (decoded and checked), kept while the cache holds that node object:
   * the cache replaces the object when the node changes, so a round checks only what changed, not
   * 10,000 job configs every time (checking them was over half of a round's CPU at 3,000 jobs, in a
   * CPU profile).
   */
  const inspected = new WeakMap<CachedNode, NodeReading<unknown>>();
  const states = new Map<string, NamespaceState>();
  const dirty = new Set<string>();
  const reshard = new Map<string, { all: boolean; jobs: Set<string>; nodes: string[] }>();
  let epoch: number | undefined;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let burstStartedAt: number | undefined;
  let alarmTimer: NodeJS.Timeout | undefined;
  const offs: Array<() => void> = [];

  const isLeaderNow = (): boolean => !closed && latch.isLeader && latch.epoch === epoch && epoch !== undefined;
  const assertLeader = (): void => {
    if (!isLeaderNow()) throw new Deposed('no longer the allocator leader');
  };

  // ---- scheduling -------------------------------------------------------------------------

  /** When each dirty namespace was first marked since its last round started (a round logs its wait). */
  const dirtySince = new Map<string, number>();

  function markDirty(namespace: string): void {
    dirty.add(namespace);
    if (isLeaderNow() && !dirtySince.has(namespace)) dirtySince.set(namespace, performance.now());
    schedule();
  }

  /** An executor was lost since the last round was scheduled: the burst's quiet is `lossQuietMs`. */
  let lossPending = false;

  function schedule(): void {
    if (!isLeaderNow()) return;
    const t = now();
    burstStartedAt ??= t;
    const wait = Math.max(0, Math.min(lossPending ? lossQuietMs : debounceMs, burstStartedAt + maxDelayMs - t));
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      burstStartedAt = undefined;
      lossPending = false;
      runRounds();
    }, wait);
  }

  /**
   * Namespaces whose failover round was computed once, ahead of need. In the full-size bench the
   * first executor loss after a start computed its round in 114–525 ms where later ones took 60–120
   * on the same busy machine: a round where executors only left takes its own path (allocate.ts,
   * step 0), which nothing had run, so V8 ran it unoptimised while every shard of the lost executor
   * waited. So once the namespace has two members, when no round is due, the allocator computes
   * what losing one would give — twice, and throws it away (allocate is pure: nothing is written).
   */
  const warmed = new Set<string>();
  /** The warm-up waits this long after the round that asked for it, and again while rounds are due. */
  const WARM_DELAY_MS = 2000;
  /** At most this many waits: then it runs anyway (once; a few tens of milliseconds). */
  const WARM_TRIES = 30;

  function warmFailover(namespace: string, allocation: Allocation, cluster: Cluster, tries = 0): void {
    setTimeout(() => {
      if (!isLeaderNow()) return;
      // Not inside a burst: rounds come first.
      if ((dirty.size > 0 || timer !== undefined || inRounds) && tries < WARM_TRIES) {
        warmFailover(namespace, allocation, cluster, tries + 1);
        return;
      }
      const lost = allocation.members[0];
      const without: Cluster = { executors: cluster.executors.filter((e) => e.name !== lost), jobs: cluster.jobs };
      const t0 = performance.now();
      allocate(allocation, without);
      const firstMs = performance.now() - t0;
      allocate(allocation, without);
      logger.info({ namespace, firstMs: Math.round(firstMs), secondMs: Math.round(performance.now() - t0 - firstMs) }, 'computed a failover round ahead of need (nothing written)');
    }, WARM_DELAY_MS).unref();
  }

  // One pass of rounds at a time; events during a pass ask for one more.
  let inRounds = false;
  const rounds = createSerialTask(async () => {
    const namespaces = [...dirty];
    dirty.clear();
    for (const namespace of namespaces) {
      if (!isLeaderNow()) return;
      inRounds = true;
      try {
        await round(namespace);
      } catch (error) {
        if (error instanceof Deposed) return;
        const e = toError(error);
        metrics.errors.inc();
        logger.error({ err: e, namespace }, 'allocation round failed; will retry');
        emitter.emit('error', e);
        // Start again from what ZooKeeper holds, a little later.
        states.delete(namespace);
        setTimeout(() => markDirty(namespace), 1000).unref();
      } finally {
        inRounds = false;
      }
    }
  }, () => isLeaderNow());
  const runRounds = (): void => rounds.trigger();

  // ---- reading the world --------------------------------------------------------------------

  /** Bad nodes already reported, by path → the mzxid reported (one log line per bad write, not per round). */
  const reported = new Map<string, number>();
  function reportBadNode(node: { path: string; stat: { mzxid: number } }, message: string, fields: Record<string, unknown>): void {
    if (reported.get(node.path) === node.stat.mzxid) return;
    reported.set(node.path, node.stat.mzxid);
    metrics.badNodes.inc();
    logger.warn({ ...fields, node: node.path }, message);
  }

  function clusterOf(namespace: string): Cluster {
    // The same builder as the console's allocation preview (cluster.ts), fed from this cache.
    const read = <T>(path: string, check: (input: unknown) => { ok: true; value: T } | { ok: false; issues: ValidationIssue[] }) => {
      const node = cache.get(path);
      if (!node) return undefined;
      let value = inspected.get(node) as NodeReading<T> | undefined;
      if (!value) {
        value = inspectNode(node.data, node.path, check);
        inspected.set(node, value);
      }
      return { node, value };
    };
    const executors = cache.children(paths.executors(namespace)).map((name): ExecutorNodes => {
      const presence = read(paths.executorPresence(namespace, name), checkExecutorInfo);
      const meta = read(paths.executorMeta(namespace, name), checkExecutorMeta);
      return {
        name,
        presence: presence && { ...presence.value, ephemeral: presence.node.stat.ephemeralOwner !== '0' },
        meta: meta && meta.node.data !== null ? meta.value : undefined,
      };
    });
    const jobs = cache.children(paths.jobs(namespace)).flatMap((name): JobNode[] => {
      const config = read(paths.job(namespace, name), checkJobConfig);
      return config ? [{ name, config: config.value }] : [];
    });
    return buildCluster(executors, jobs, (problem) => {
      const path = problem.node === 'job' ? paths.job(namespace, problem.job)
        : problem.node === 'meta' ? paths.executorMeta(namespace, problem.executor) : paths.executorPresence(namespace, problem.executor);
      const node = cache.get(path);
      if (node) reportBadNode(node, problem.message, problem.node === 'job' ? { namespace, job: problem.job } : { namespace, executor: problem.executor });
    });
  }

  function safeDecode(data: Buffer | null, path: string): unknown {
    try {
      return decodeJson(data, path);
    } catch {
      return undefined;
    }
  }

  /** Reads the last written assignments and members of a namespace (sticky start). */
  async function loadState(namespace: string, cluster: Cluster): Promise<NamespaceState> {
    const state: NamespaceState = {
      previous: { members: [], jobs: {} },
      assignments: new Map(),
      summaries: new Map(),
      stateVersion: undefined,
      round: 0,
      unassignedSince: new Map(),
    };
    const sharding = await readJson(zk, paths.namespaceSharding(namespace), checkShardingState).catch((error) => {
      if (!hasErrorCode(error, 'bad-data')) throw error;
      logger.warn({ namespace, err: toError(error) }, 'the namespace sharding node is unreadable; starting from the job assignments alone');
      return undefined;
    });
    if (sharding) {
      state.previous.members = [...sharding.value.members];
      state.stateVersion = sharding.stat.version;
      state.round = sharding.value.round;
    }
    await loadAssignments(namespace, state, cluster.jobs.map((j) => j.name));
    return state;
  }

  /**
   * Reads the assignment nodes of `jobs` into `state`, replacing what it held for them: all at once
   * (the ZooKeeper client bounds how many are in flight; one after another, the 10,000 of a full
   * namespace took 4.9 s on a busy machine, and a failover waited for them), then entered in the
   * order given.
   */
  async function loadAssignments(namespace: string, state: NamespaceState, jobs: readonly string[]): Promise<void> {
    const reads = jobs.map(async (job) => {
      const path = paths.jobAssignment(namespace, job);
      const node = await zk.get(path).catch((error: unknown) => {
        if (hasErrorCode(error, 'no-node')) return undefined;
        throw error;
      });
      if (!node) return { job, node };
      const checked = inspectNode(node.data, path, checkAssignment);
      if (checked.ok) return { job, node, checked };
      // Placed afresh, overwriting the node; its epoch goes on from the applied one, so that the
      // job leader takes the new assignment as newer than what it runs.
      const applied = await readJson(zk, paths.jobApplied(namespace, job), checkApplied).catch((error: unknown) => {
        if (hasErrorCode(error, 'bad-data')) return undefined; // unreadable: the epoch starts from 0
        throw error; // connection trouble: the round fails and is retried (an epoch from 0 could go backwards)
      });
      return { job, node, checked, appliedEpoch: applied?.value.epoch ?? 0 };
    });
    await allAnswered(reads);
    for (const read of reads) {
      const { job, node, checked, appliedEpoch } = await read;
      // A job re-read while some of its shards stay unassigned keeps the time they became so (its
      // alarm's clock), not its node's last write.
      const unassignedSince = state.unassignedSince.get(job);
      delete state.previous.jobs[job];
      state.assignments.delete(job);
      state.unassignedSince.delete(job);
      if (!node || !checked) continue;
      if (!checked.ok) {
        logger.warn({ namespace, job, node: paths.jobAssignment(namespace, job), problem: checked.problem }, `a job assignment node is ${checked.problem}; placing the job afresh`);
        metrics.badNodes.inc();
        state.assignments.set(job, { epoch: appliedEpoch ?? 0, version: node.stat.version });
        continue;
      }
      state.assignments.set(job, { epoch: checked.value.epoch, version: node.stat.version });
      state.previous.jobs[job] = { items: checked.value.items, unassigned: checked.value.unassigned };
      if (checked.value.unassigned.length > 0) state.unassignedSince.set(job, unassignedSince ?? (checked.value.writtenAt || now()));
    }
  }

  /** The namespace's pending reshard request (made empty when there is none). */
  function reshardEntry(namespace: string): { all: boolean; jobs: Set<string>; nodes: string[] } {
    let r = reshard.get(namespace);
    if (!r) reshard.set(namespace, (r = { all: false, jobs: new Set(), nodes: [] }));
    return r;
  }

  /** Puts a request taken by a round that then failed back, so that the retry carries it out. */
  function restoreReshard(namespace: string, requested: { rebalance: boolean; rebalanceJobs: string[] }): void {
    const r = reshardEntry(namespace);
    r.all ||= requested.rebalance;
    for (const job of requested.rebalanceJobs) r.jobs.add(job);
  }

  function takeReshard(namespace: string): { rebalance: boolean; rebalanceJobs: string[] } | undefined {
    const r = reshard.get(namespace);
    if (!r) return undefined;
    reshard.delete(namespace);
    for (const node of r.nodes) void zk.delete(paths.shardingRequest(node)).catch(() => undefined);
    return { rebalance: r.all, rebalanceJobs: [...r.jobs] };
  }

  // ---- a round --------------------------------------------------------------------------------

  /** Waits for every promise to settle, then rejects with the first rejection, if any. */
  async function allAnswered(promises: ReadonlyArray<Promise<unknown>>): Promise<void> {
    const failed = (await Promise.allSettled(promises)).find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  async function round(namespace: string): Promise<void> {
    const started = performance.now();
    // Where the round's time goes, logged with it: from the first event that asked for it to its
    // start (the debounce, and any round before it), then each step.
    const firstAsked = dirtySince.get(namespace) ?? started;
    dirtySince.delete(namespace);
    const steps: Record<string, number> = { waitMs: Math.round(started - firstAsked) };
    const gcAtStart = gcPausedMs;
    let stepStarted = started;
    const step = (name: string): void => {
      const t = performance.now();
      steps[name] = Math.round(t - stepStarted);
      stepStarted = t;
    };
    if (!cache.get(paths.namespace(namespace))) {
      states.delete(namespace);
      return;
    }
    const cluster = clusterOf(namespace);
    step('clusterMs');
    const requested = takeReshard(namespace);
    try {
      // A reshard request starts from what ZooKeeper holds, not from this allocator's memory: an
      // assignment changed by hand (or refused by a job leader) is re-planned from what it says —
      // every job's for a namespace-wide request, the named jobs' for the others. (Job leaders refuse
      // an assignment naming an executor that just died, so every failover brings some: re-reading
      // the whole namespace for each cost seconds at 10,000 jobs.)
      let state = requested?.rebalance ? undefined : states.get(namespace);
      if (!state) {
        state = await loadState(namespace, cluster);
        states.set(namespace, state);
        step('loadMs');
      } else if (requested && requested.rebalanceJobs.length > 0) {
        const inCluster = new Set(cluster.jobs.map((j) => j.name));
        await loadAssignments(namespace, state, requested.rebalanceJobs.filter((j) => inCluster.has(j)));
        step('loadMs');
      }
      const next = allocate(state.previous, cluster, requested ?? {});
      step('computeMs');
      if (!warmed.has(namespace) && next.members.length >= 2) {
        warmed.add(namespace);
        warmFailover(namespace, next, cluster);
      }
      metrics.rounds.inc({ namespace });

      // Compared as values (key order aside), not as canonical JSON: at 10,000 jobs the comparison took
      // 60 ms of a quiet core serialized, 24 ms as values — and on a busy machine a tenth to a quarter
      // of a failover's round.
      const changed = new Set<string>();
      for (const name of new Set([...Object.keys(state.previous.jobs), ...Object.keys(next.jobs)])) {
        if (!isDeepStrictEqual(state.previous.jobs[name] ?? null, next.jobs[name] ?? null)) changed.add(name);
      }
      const affected = new Set<string>();
      let moved = 0;
      for (const name of changed) {
        const before = state.previous.jobs[name]?.items ?? {};
        const after = next.jobs[name]?.items ?? {};
        for (const e of Object.keys(before)) affected.add(e);
        for (const e of Object.keys(after)) affected.add(e);
        const ownerBefore = new Map<number, string>();
        for (const [e, items] of Object.entries(before)) for (const i of items) ownerBefore.set(i, e);
        for (const [e, items] of Object.entries(after)) for (const i of items) if (ownerBefore.has(i) && ownerBefore.get(i) !== e) moved += 1;
      }
      const membersChanged = canonicalJson(state.previous.members) !== canonicalJson(next.members);
      step('diffMs');
      if (changed.size === 0 && !membersChanged) {
        updateUnassigned(namespace, state, next);
        return;
      }

      const allocatorEpoch = epoch!;
      const writtenAt = now();
      let jobsWritten = 0;
      let executorsWritten = 0;
      const inCluster = new Set(cluster.jobs.map((j) => j.name));
      // Each changed job's next epoch, known before it is written (a summary may go first).
      const nextEpochs = new Map([...changed].map((name) => [name, (state.assignments.get(name)?.epoch ?? 0) + 1]));
      const epochOf = (name: string): number => nextEpochs.get(name) ?? state.assignments.get(name)?.epoch ?? 0;
      // 1. The jobs whose assignment changed — together: each is its own compare-and-set, and the
      //    ZooKeeper client bounds how many are outstanding (one after another, an executor's death
      //    at 10,000 jobs cost seconds of round trips before its shards moved). A failed write fails
      //    the round as before, once every write of the step is answered (none is left in flight to
      //    land after the next round's); those that succeeded are remembered and the retry goes on from them.
      const writeJobs = async (): Promise<void> => {
        await allAnswered([...changed].map(async (name) => {
          const job = next.jobs[name];
          if (!job || !inCluster.has(name)) {
            state.assignments.delete(name);
            return; // a deleted job: its node went with it
          }
          const last = state.assignments.get(name);
          const value: Assignment = { epoch: epochOf(name), allocatorEpoch, items: job.items, unassigned: job.unassigned, writtenAt };
          const version = await writeNode(paths.jobAssignment(namespace, name), value, last?.version, allocatorEpoch);
          if (version === undefined) {
            state.assignments.delete(name); // deleted meanwhile: the next round drops it
            return;
          }
          state.assignments.set(name, { epoch: value.epoch, version });
          jobsWritten += 1;
        }));
        step('jobsMs');
      };
      // 2. The summaries of the executors those changes touch.
      const writeSummaries = async (): Promise<void> => {
        const summaries = new Map<string, ExecutorAssignment>([...affected].map((e) => [e, { allocatorEpoch, jobs: {}, writtenAt }]));
        for (const [name, job] of Object.entries(next.jobs)) {
          for (const [executor, items] of Object.entries(job.items)) {
            const summary = summaries.get(executor);
            if (summary && items.length > 0) summary.jobs[name] = { epoch: epochOf(name), items };
          }
        }
        await allAnswered([...summaries].map(async ([executor, summary]) => {
          const version = await writeNode(paths.executorAssignment(namespace, executor), summary, state.summaries.get(executor), allocatorEpoch);
          if (version === undefined) {
            state.summaries.delete(executor); // the executor's node was removed
            return;
          }
          state.summaries.set(executor, version);
          executorsWritten += 1;
        }));
        step('summariesMs');
      };
      // The order of the two steps (each starts once the other is answered):
      // - Usually the assignments first: written together with them (summaries first), the first
      //   round of a full allocation of 10,000 jobs × 3 on 100 executors took 33 s (7 s in this
      //   order) — every executor started its 300 jobs' runtimes at once and their requests queued
      //   the allocator's own writes behind them.
      // - In a round where executors only left (a failover, a drain), the summaries first: the
      //   survivors keep what they held and each gains a few of the leaver's shards, whose jobs it
      //   may not run yet — a job whose every holder died has no runtime, so no leader to apply its
      //   new assignment, until a survivor reads its summary. Written first, those runtimes start
      //   while the assignments are written (they apply nothing older than what is applied), instead
      //   of after both steps: at 10,000 jobs × 3 on 100 executors the summaries took 100–450 ms of
      //   such a round.
      const previousMembers = new Set(state.previous.members);
      const onlyLeft = next.members.length < state.previous.members.length && next.members.every((m) => previousMembers.has(m));
      if (onlyLeft) {
        await writeSummaries();
        await writeJobs();
      } else {
        await writeJobs();
        await writeSummaries();
      }
      // 3. The namespace's members and round.
      assertLeader();
      const shardingValue = { allocatorEpoch, members: next.members, round: state.round + 1, writtenAt };
      state.stateVersion = await writeNode(paths.namespaceSharding(namespace), shardingValue, state.stateVersion, allocatorEpoch);
      state.round += 1;
      state.previous = next;
      updateUnassigned(namespace, state, next);

      const durationMs = performance.now() - started;
      metrics.jobsWritten.inc({ namespace }, jobsWritten);
      metrics.executorsWritten.inc({ namespace }, executorsWritten);
      metrics.moved.inc({ namespace }, moved);
      metrics.roundSeconds.observe({ namespace }, durationMs / 1000);
      step('stateMs');
      logger.info({ namespace, jobsWritten, executorsWritten, moved, members: next.members.length, durationMs: Math.round(durationMs), steps, gcMs: Math.round(gcPausedMs - gcAtStart) }, 'allocation written');
      emitter.emit('round:done', { namespace, jobsWritten, executorsWritten, moved, durationMs });
    } catch (error) {
      // The request's nodes are gone: a round that fails keeps it in memory for the retry.
      if (requested) restoreReshard(namespace, requested);
      throw error;
    }
  }

  /**
   * Writes `value` to `path` with a compare-and-set from `version` (creating it when missing).
   * A node holding a newer allocatorEpoch means this allocator was deposed. Resolves `undefined`,
   * writing nothing, when the node's parent is gone (a job, executor or namespace deleted
   * meanwhile): the allocator never brings a deleted node back.
   */
  async function writeNode(path: string, value: { allocatorEpoch: number }, version: number | undefined, allocatorEpoch: number): Promise<number | undefined> {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      assertLeader();
      try {
        if (version === undefined) {
          try {
            await zk.create(path, encodeJson(value));
            return 0;
          } catch (error) {
            const code = errorCode(error);
            if (code === 'no-node') {
              logger.info({ path }, 'not written: its parent node is gone (deleted meanwhile)');
              return undefined;
            }
            if (code !== 'node-exists') throw error;
          }
        } else {
          return (await zk.set(path, encodeJson(value), version)).version;
        }
      } catch (error) {
        if (hasErrorCode(error, 'no-node')) {
          version = undefined; // deleted: create it again, if its parent is still there
          continue;
        }
        if (!hasErrorCode(error, 'bad-version')) throw error;
      }
      // Someone else wrote it: whose epoch is it?
      const current = await zk.get(path).catch((error: unknown) => {
        if (hasErrorCode(error, 'no-node')) return undefined;
        throw error;
      });
      if (!current) {
        version = undefined;
        continue;
      }
      const theirs = Number((safeDecode(current.data, path) as { allocatorEpoch?: unknown } | undefined)?.allocatorEpoch ?? 0);
      if (theirs > allocatorEpoch) {
        logger.warn({ path, theirs, ours: allocatorEpoch }, 'a newer allocator wrote here; standing down');
        throw new Deposed(`a newer allocator (epoch ${theirs}) wrote ${path}`);
      }
      version = current.stat.version;
    }
    throw new OrreryError('conflict', `${path} kept changing under the allocator's writes`);
  }

  // ---- alarms ---------------------------------------------------------------------------------

  function updateUnassigned(namespace: string, state: NamespaceState, next: Allocation): void {
    let total = 0;
    for (const [name, job] of Object.entries(next.jobs)) {
      total += job.unassigned.length;
      if (job.unassigned.length === 0) state.unassignedSince.delete(name);
      else if (!state.unassignedSince.has(name)) state.unassignedSince.set(name, now());
    }
    for (const name of state.unassignedSince.keys()) if (!next.jobs[name]) state.unassignedSince.delete(name);
    metrics.unassigned.set({ namespace }, total);
  }

  /** The namespace's webhook and alarm policy, from the cache; undefined without a webhook. */
  function alarmSettings(namespace: string): { webhook: string; policy: ReturnType<typeof alarmPolicy> } | undefined {
    const nsNode = cache.get(paths.namespace(namespace));
    const info = nsNode ? checkNamespaceInfo(safeDecode(nsNode.data, nsNode.path)) : undefined;
    const settings: NamespaceInfo | undefined = info?.ok ? info.value : undefined;
    const webhook = settings?.alarm.webhook;
    return webhook ? { webhook, policy: alarmPolicy(settings.alarm) } : undefined;
  }

  function checkAlarms(): void {
    if (!isLeaderNow()) return;
    const t = now();
    for (const [namespace, state] of states) {
      const settings = alarmSettings(namespace);
      if (!settings) continue;
      for (const [job, since] of state.unassignedSince) {
        if (t - since < alarmAfterMs) continue;
        const unassigned = state.previous.jobs[job]?.unassigned ?? [];
        const body = {
          kind: 'shards-unassigned',
          namespace,
          job,
          items: unassigned,
          unassignedSince: new Date(since).toISOString(),
          unassignedForSeconds: Math.round((t - since) / 1000),
          allocator: id,
          at: new Date(t).toISOString(),
        };
        // Asked every second; the sender lets one through per job and silence window.
        alarmSender.send(alarmKey(namespace, 'shards-unassigned', job), settings.webhook, body, {
          ...settings.policy,
          onDelivered: () => {
            metrics.alarms.inc({ namespace });
            logger.warn({ namespace, job, items: unassigned.length }, 'unassigned-shards alarm sent');
            emitter.emit('alarm:sent', { namespace, job, items: unassigned.length });
          },
        });
      }
    }
  }

  // ---- reshard requests -------------------------------------------------------------------------

  async function readRequests(): Promise<void> {
    if (closed) return;
    let children: string[];
    try {
      await zk.mkdirp(paths.shardingRequests());
      children = await zk.getChildren(paths.shardingRequests(), () => void readRequests());
    } catch (error) {
      if (!isRetryable(error)) logger.error({ err: toError(error) }, 'cannot read reshard requests');
      return;
    }
    if (!isLeaderNow()) return;
    for (const node of children) {
      // A child no request could be named (made by hand): not Orrery's to read or delete.
      if (!REQUEST_NODE_PATTERN.test(node)) continue;
      let read;
      try {
        read = await readJson(zk, paths.shardingRequest(node), checkReshardRequest);
      } catch (error) {
        // A request that cannot be read now is read again on the next pass; one that is not a
        // request at all is removed (logged): it would be skipped for ever.
        if (!hasErrorCode(error, 'bad-data')) return;
        logger.warn({ node, err: toError(error) }, 'removing a reshard request that is not valid');
        read = undefined;
      }
      if (!read) {
        await zk.delete(paths.shardingRequest(node)).catch(() => undefined); // gone already is fine
        continue;
      }
      const { namespace, job } = read.value;
      const r = reshardEntry(namespace);
      if (r.nodes.includes(node)) continue;
      r.nodes.push(node);
      if (job) r.jobs.add(job);
      else r.all = true;
      logger.info({ namespace, job }, 'reshard requested');
      // The round re-reads what ZooKeeper holds for it, not from memory (someone may have edited it).
      markDirty(namespace);
    }
  }

  // ---- leadership -----------------------------------------------------------------------------

  function onLeadership(e: number): void {
    epoch = e;
    states.clear();
    dirtySince.clear();
    metrics.leader.set(1);
    logger.info({ allocatorEpoch: e, id }, 'became the allocator leader');
    emitter.emit('leader:acquired', { epoch: e });
    // Every namespace gets a round: from the last written state, so nothing moves if nothing changed.
    for (const namespace of cache.children(NAMESPACES)) dirty.add(namespace);
    void readRequests();
    schedule();
    alarmTimer ??= setInterval(checkAlarms, 1000);
    alarmTimer.unref?.();
  }

  function onLostLeadership(reason: string): void {
    if (epoch === undefined) return;
    epoch = undefined;
    metrics.leader.set(0);
    if (timer) clearTimeout(timer);
    timer = undefined;
    burstStartedAt = undefined;
    lossPending = false;
    logger.warn({ reason }, 'no longer the allocator leader');
    emitter.emit('leader:lost', { reason });
  }

  const allocator: Allocator = {
    id,
    get isLeader() {
      return isLeaderNow();
    },
    metrics,
    on: emitter.on,
    async start() {
      offs.push(
        cache.on('node:added', (n) => onCacheEvent(n.path)),
        cache.on('node:updated', (n) => onCacheEvent(n.path)),
        cache.on('node:removed', (n) => onCacheEvent(n.path)),
        latch.on('leader:acquired', ({ epoch: e }) => onLeadership(e)),
        latch.on('leader:lost', ({ reason }) => onLostLeadership(reason)),
        zk.on('state', ({ state }) => metrics.zkState.set(state === 'CONNECTED' || state === 'RECONNECTED' ? 1 : 0)),
        zk.on('session', () => void readRequests()),
      );
      metrics.zkState.set(1);
      await zk.mkdirp(NAMESPACES);
      // Warm the cache before competing for leadership, so a new leader sees the world at once.
      await cache.start();
      await latch.start();
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const off of offs.splice(0)) off();
      if (timer) clearTimeout(timer);
      if (alarmTimer) clearInterval(alarmTimer);
      await rounds.settled();
      await alarmSender.close();
      await latch.close();
      await cache.close();
      emitter.clear();
      gcObserver.disconnect();
    },
    [Symbol.asyncDispose]() {
      return allocator.close();
    },
  };

  /** Presences seen, and whether each said it was leaving: a presence that vanishes otherwise is lost. */
  const leavingByPresence = new Map<string, boolean>();

  function onPresence(namespace: string, executor: string, path: string): void {
    const node = cache.get(path);
    if (node) {
      // Only a session's (ephemeral) presence can be lost; a hand-made persistent one going away is not news.
      if (node.stat.ephemeralOwner === '0') {
        leavingByPresence.delete(path);
        return;
      }
      const info = checkExecutorInfo(safeDecode(node.data, node.path));
      leavingByPresence.set(path, info.ok && info.value.leaving === true);
      return;
    }
    const leaving = leavingByPresence.get(path);
    leavingByPresence.delete(path);
    if (leaving !== false || !isLeaderNow()) return;
    lossPending = true; // the round this event asks for (onCacheEvent marks the namespace next) comes sooner
    logger.warn({ namespace, executor }, 'executor lost (its session ended without a graceful leave)');
    emitter.emit('executor:lost', { namespace, executor });
    const settings = alarmSettings(namespace);
    if (!settings) return;
    alarmSender.send(alarmKey(namespace, 'executor-lost', executor), settings.webhook, { kind: 'executor-lost', namespace, executor, allocator: id, at: new Date(now()).toISOString() }, {
      ...settings.policy,
      onDelivered: () => metrics.alarms.inc({ namespace }),
    });
  }

  function onCacheEvent(path: string): void {
    const m = matchPath(path);
    if (!m) return;
    if (m.kind === 'namespaces') return;
    if (m.kind === 'executor-presence') onPresence(m.namespace, m.executor, path);
    if (m.kind === 'namespace' && !cache.get(path)) {
      states.delete(m.namespace);
      return;
    }
    markDirty(m.namespace);
  }

  return allocator;
}
