/**
 * What the job leader (one of the executors the job's assignment names, elected by the job's leader
 * latch) does for its job. Passes run one at a time; events during a pass ask for one more.
 *
 * - **Apply**: turns a new `assignment` into `applied` once it is safe — every executor it names is
 *   online, and no item that changes owner has a run in progress on a live executor (it looks again
 *   when that run ends). An assignment from an older allocator epoch, or not newer, is ignored.
 * - **Refuse**: an assignment that holds invalid data or names an executor that is not online is
 *   not applied (items keep their owners); it is logged, counted and re-planned (a sharding request)
 *   once per refused assignment.
 * - **Dead claims**: a claim held by a session that no longer exists can never complete. With
 *   `failover` (and not localMode) it is marked for a failover re-run and the owners are told;
 *   else it is released. A failover mark of a disabled job (or one without failover) is cleared.
 *   Without a valid config a pass leaves claims alone (the runtime asks for one when it comes).
 * - **Bad shard nodes**: a shard node that holds something other than a shard state is reset to
 *   idle (compare-and-set from the version that showed it; only while leading).
 * - **Repair requests**: an owner that cannot read a shard node asks the leader (a `repair-<item>`
 *   command) to run a pass.
 * - **Turns**: a pass reads the job's shard nodes at once (dead claims first); a pass that found a
 *   dead claim or a failover mark applies at once, the others wait for a turn
 *   ({@link LEADER_APPLIES_AT_ONCE} over all the jobs the executor leads), so that after a failover
 *   the crashed run's job does not wait for the thousands of others.
 *
 * Guarantees: `applied` only ever moves to a newer epoch (compare-and-set); an item never moves
 * while its run on a live executor goes on. Not guaranteed: that the leader is unique at every
 * instant (two leaders write the same answers, each with a compare-and-set).
 */
import {
  checkApplied,
  checkAssignment,
  checkShardState,
  commandName,
  createSerialTask,
  decodeJson,
  encodeJson,
  errorCode,
  hasErrorCode,
  inspectNode,
  isRetryable,
  markFailover,
  parseCommand,
  paths,
  readJson,
  readShard,
  toError,
  type Emitter,
  type JobConfig,
  type LeaderLatch,
  type Logger,
  type ZkClient,
} from '@orrery/core';
import type { ExecutorEvents } from './executor-events.js';
import type { ExecutorMetrics } from './executor-metrics.js';
import { announceFailover } from './failover-notice.js';

/**
 * How many job leaders of one executor apply an assignment at once. A pass is a chain of requests
 * through the executor's one ZooKeeper session. Unbounded, the passes of a failover (an executor that
 * inherits thousands of jobs) advance together, each request behind all the others, so the job whose
 * run crashed gets its `applied` when nearly every job does. Bounded, each pass first looks for dead
 * claims (two round trips: the listing, then every shard node at once); one that found a crashed run
 * applies at once, the others in turn.
 */
export const LEADER_APPLIES_AT_ONCE = 64;

/** How much of a reset shard node's data its log line quotes, in characters. */
export const RESET_QUOTE_CHARS = 200;

export interface JobLeaderOptions {
  zk: ZkClient;
  namespace: string;
  job: string;
  logger: Logger;
  emitter: Emitter<ExecutorEvents>;
  metrics: ExecutorMetrics;
  latch: LeaderLatch;
  /** The job's current config (undefined: none valid yet, or deleted). */
  config(): JobConfig | undefined;
  /** True when `executor` is online with ZooKeeper session `session`. */
  isAlive(executor: string, session: string): Promise<boolean>;
  eventAlarm?(kind: 'failover', job: string, body: Record<string, unknown>): void;
  /**
   * Runs a pass's apply when its turn comes: the executor's limit over all the jobs it leads
   * ({@link LEADER_APPLIES_AT_ONCE}). A pass that found the claim of a dead session, or a failover
   * mark, applies at once. Default: every pass at once.
   */
  applyTurn?(apply: () => Promise<void>): Promise<void>;
}

/** A shard node as a pass saw it (undefined: no node, or not a shard state). */
type SeenShard = Awaited<ReturnType<typeof readShard>>;

export interface JobLeader {
  /** Runs a leader pass (if leading; one more if one is running). */
  check(): void;
  /** This executor cannot read `item`'s shard node: a pass here if leading, else a repair command for the leader. */
  requestRepair(item: number): Promise<void>;
  /** No pass from now on. */
  close(): void;
  /** Resolves when no pass is running. */
  settled(): Promise<void>;
}

export function createJobLeader(options: JobLeaderOptions): JobLeader {
  const { zk, namespace, job, logger, emitter, metrics, latch } = options;
  let closed = false;

  const leaderPass = createSerialTask(async () => {
    try {
      const { seen, urgent } = await releaseDeadClaims();
      if (urgent || !options.applyTurn) {
        await applyAssignment(seen);
        return;
      }
      // Its turn may come seconds later: leadership may have gone, and the shard nodes are read again.
      await options.applyTurn(async () => {
        if (!closed && latch.isLeader) await applyAssignment(new Map());
      });
    } catch (error) {
      if (!isRetryable(error)) logger.error({ err: toError(error) }, 'job leader check failed');
    }
  }, () => latch.isLeader && !closed);
  const check = (): void => {
    if (!closed && latch.isLeader) leaderPass.trigger();
  };

  /**
   * Makes the latest assignment safe to run and publishes it as `applied`. `seen`: the shard nodes
   * this pass has just read (releaseDeadClaims), so a moving item's node is not read twice.
   */
  async function applyAssignment(seen: ReadonlyMap<number, SeenShard>): Promise<void> {
    const read = await zk.get(paths.jobAssignment(namespace, job), () => check()).catch((error) => {
      if (hasErrorCode(error, 'no-node')) return undefined;
      throw error;
    });
    if (!read) return;
    let checked: ReturnType<typeof checkAssignment>;
    try {
      checked = checkAssignment(decodeJson(read.data, paths.jobAssignment(namespace, job)));
    } catch (error) {
      checked = { ok: false, issues: [{ field: '', rule: 'json', message: toError(error).message }] };
    }
    if (!checked.ok) {
      await refuseAssignment(`${read.stat.mzxid}`, 'the assignment node holds invalid data', { issues: checked.issues.slice(0, 3) });
      return;
    }
    const assignment = checked.value;
    const current = await readJson(zk, paths.jobApplied(namespace, job), checkApplied);
    const now = current?.value;
    if (now && (assignment.allocatorEpoch < now.allocatorEpoch || (assignment.allocatorEpoch === now.allocatorEpoch && assignment.epoch <= now.epoch))) return;
    // Every executor it names must be online: an item given to an executor that does not exist
    // (a hand-written or stale assignment) would silently never run.
    const offline: string[] = [];
    for (const e of Object.keys(assignment.items)) {
      // The watch looks again when it comes (back) online — an executor restarting inside the
      // allocator's quiet time may leave the assignment as it was, and nothing else would.
      if (!(await zk.exists(paths.executorPresence(namespace, e), () => check()))) offline.push(e);
    }
    if (offline.length > 0) {
      await refuseAssignment(`${assignment.allocatorEpoch}/${assignment.epoch}`, 'the assignment names executors that are not online', { executors: offline, epoch: assignment.epoch });
      return;
    }
    // Items that change owner must have no run in progress on a live executor first.
    const before = new Map<number, string>();
    for (const [e, items] of Object.entries(now?.items ?? {})) for (const i of items) before.set(i, e);
    const after = new Map<number, string>();
    for (const [e, items] of Object.entries(assignment.items)) for (const i of items) after.set(i, e);
    for (const [item, owner] of before) {
      if (after.get(item) === owner) continue;
      const path = paths.jobShard(namespace, job, item);
      // An unreadable node holds no live run (releaseDeadClaims resets it). A run claimed since the
      // pass read the node is no overlap either: the new owner's claim finds it running.
      const shard = seen.has(item) ? seen.get(item) : await readShard(zk, path).catch((error: unknown) => {
        if (hasErrorCode(error, 'bad-data')) return undefined;
        throw error;
      });
      if (shard?.state.state === 'running' && (await options.isAlive(shard.state.executor, shard.state.session))) {
        // Look again when that run ends — or now, if it ended between the read and the watch — and
        // when its executor goes: a dead executor's run never ends by itself, and nothing else would
        // wake this pass (the assignment already left that executor out), so the item would wait
        // for ever. The pass then marks the run for failover (releaseDeadClaims) and applies.
        const stat = await zk.exists(path, () => check());
        const presence = await zk.exists(paths.executorPresence(namespace, shard.state.executor), () => check());
        if (stat?.version !== shard.version || presence?.ephemeralOwner !== shard.state.session) check();
        logger.info({ item, holder: shard.state.executor, epoch: assignment.epoch }, 'waiting for a moving shard to finish its run');
        return;
      }
    }
    const value = { epoch: assignment.epoch, allocatorEpoch: assignment.allocatorEpoch, items: assignment.items };
    try {
      if (current) await zk.set(paths.jobApplied(namespace, job), encodeJson(value), current.stat.version);
      else await zk.create(paths.jobApplied(namespace, job), encodeJson(value));
      logger.info({ epoch: assignment.epoch }, 'assignment applied');
      emitter.emit('applied:written', { job, epoch: assignment.epoch });
    } catch (error) {
      const code = errorCode(error);
      if (code === 'bad-version' || code === 'node-exists') check();
      else throw error;
    }
  }

  /** The latest refused assignment: each is logged, counted and re-planned once. */
  const refused = new Set<string>();

  /**
   * Leaves `applied` as it is (items keep their current owners) and asks the allocator for a new
   * plan of this job: logged, counted and requested once per refused assignment.
   */
  async function refuseAssignment(key: string, reason: string, details: Record<string, unknown>): Promise<void> {
    // Logged, counted and re-planned once per refused assignment (the check itself runs every pass).
    if (refused.has(key)) return;
    logger.error({ ...details, reason }, 'assignment refused; asking the allocator to re-plan the job');
    await zk.mkdirp(paths.shardingRequests());
    await zk.create(paths.shardingRequest(), encodeJson({ namespace, job, requestedAt: Date.now() }), 'persistent-sequential');
    // Remembered once the request is filed (a failed one is filed again on the next pass), and only
    // the latest: the set never grows.
    refused.clear();
    refused.add(key);
    metrics.refused.inc({ reason: reason.startsWith('the assignment names') ? 'offline-executor' : 'invalid' });
  }

  /**
   * Marks or releases the claims of dead sessions (see the module header). Resolves with each shard
   * node as the pass leaves it (`seen`: the state read, or undefined once marked, released or reset
   * — no live run either way), and whether a failover waits on this pass (`urgent`: a claim of a
   * dead session, or a failover mark). The nodes are read all at once: one round trip, not one per item.
   */
  async function releaseDeadClaims(): Promise<{ seen: Map<number, SeenShard>; urgent: boolean }> {
    const seen = new Map<number, SeenShard>();
    let urgent = false;
    const c = options.config();
    if (!c) return { seen, urgent };
    const failover = c.enabled && c.failover && !c.localMode;
    const names = await zk.getChildren(paths.jobShards(namespace, job)).catch(() => [] as string[]);
    const reads = await Promise.allSettled(names.map((name) => readShard(zk, `${paths.jobShards(namespace, job)}/${name}`)));
    for (const [i, name] of names.entries()) {
      const path = `${paths.jobShards(namespace, job)}/${name}`;
      const item = Number(name);
      const read = reads[i]!;
      if (read.status === 'rejected') {
        // Not a shard state: reset (no live run). Not readable now: the next pass reads it.
        if (hasErrorCode(read.reason, 'bad-data')) {
          await resetShard(path, toError(read.reason));
          seen.set(item, undefined);
        }
        continue;
      }
      const shard = read.value;
      seen.set(item, shard);
      if (!shard || shard.state.state === 'idle') continue;
      const { state } = shard;
      if (state.state === 'running' && (await options.isAlive(state.executor, state.session))) continue;
      // From here on the node holds no live run, whatever the write below does.
      seen.set(item, undefined);
      urgent = true;
      if (state.state === 'failover' && failover) continue;
      if (state.state === 'running' && failover) {
        if (!(await markFailover(zk, path, { state, version: shard.version }))) continue;
        logger.warn({ item, executor: state.executor, fireTime: state.fireTime, runId: state.runId }, 'marked the run of a dead session for failover');
        await announceFailover(options, item, state);
        continue;
      }
      const released = { state: 'idle' as const, ...(state.last ? { last: state.last } : {}) };
      try {
        await zk.set(path, encodeJson(released), shard.version);
        logger.warn({ item: name, executor: state.executor, fireTime: state.fireTime }, state.state === 'failover' ? 'cleared a failover mark (the job is disabled or has no failover)' : 'released the claim of a dead session');
      } catch (error) {
        if (!hasErrorCode(error, 'bad-version')) throw error;
      }
    }
    return { seen, urgent };
  }

  /**
   * Resets a shard node that holds something other than a shard state (written by hand, half
   * written by a foreign tool) to idle, with a compare-and-set from the version that was read: its
   * item can run again. Whatever it held is in the log line.
   */
  async function resetShard(path: string, problem: Error): Promise<void> {
    const read = await zk.get(path).catch((error: unknown) => {
      if (hasErrorCode(error, 'no-node')) return undefined; // gone: nothing to reset
      throw error; // not readable now: the next leader pass tries again
    });
    if (!read) return;
    // Only what is still not a shard state is reset, from the version that showed it: a node someone
    // repaired (or a claim made since) is never touched. And only while this executor leads.
    if (inspectNode(read.data, path, checkShardState).ok || !latch.isLeader) return;
    try {
      await zk.set(path, encodeJson({ state: 'idle' }), read.stat.version);
      metrics.shardsReset.inc();
      logger.warn({ node: path, problem: problem.message, held: read.data?.toString('utf8').slice(0, RESET_QUOTE_CHARS) ?? null }, 'reset a shard node that held invalid data');
    } catch (error) {
      if (!hasErrorCode(error, 'bad-version', 'no-node')) throw error;
    }
  }

  return {
    check,
    async requestRepair(item) {
      if (latch.isLeader) {
        check();
        return;
      }
      try {
        const command = parseCommand({ kind: 'repair', items: [item], requestedAt: Date.now() });
        await zk.create(paths.jobCommand(namespace, job, commandName.repair(item)), encodeJson(command));
      } catch (error) {
        if (!hasErrorCode(error, 'node-exists', 'no-node')) logger.warn({ err: toError(error), item }, 'could not ask the job leader to reset a shard node');
      }
    },
    close() {
      closed = true;
    },
    settled: () => leaderPass.settled(),
  };
}
