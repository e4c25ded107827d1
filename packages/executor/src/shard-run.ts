/**
 * One run of one shard: claim → run → complete (see `@orrery/core`'s shard claim).
 *
 * - **Claim**: one compare-and-set, from the node as this executor last wrote it when it knows it
 *   (the known-version cache: no read), else from a read. The cache is filled ahead for items just
 *   gained ({@link ShardRunner.prepare}), so even a first claim needs no read. A claim whose
 *   answer was lost to a connection loss is tried again (up to {@link CLAIM_TRIES}) once the
 *   executor may start runs again in the same session, if the misfire rule still lets the fire start.
 * - **Refused**: `failover-pending` (a crashed fire of the item is re-run first: reported, and the
 *   failover taken up); `running` on another executor (a shard that just moved): what the overlap
 *   rule says — wait for that run to end, then claim once more, or skip; `already-ran` / `raced`:
 *   reported.
 * - **Early claims**: a claim made ahead of its fire time starts on the dot; a claim whose run never
 *   starts (the job was disabled, the item moved, a Node run withdrawn) is given back (one
 *   compare-and-set back to idle), and a fire dropped by a disable is reported (`disabled`).
 * - **Ownership**: the run's `ctx.isOwner()` turns false as soon as its claim is no longer its own:
 *   when the executor fences (see job-runtime.ts), and, for a Node run, when the shard node changes
 *   under the run — one `exists` with a watch once the run has gone a second (one request per Node
 *   run that lasts that long, none for a shorter one; the watch fires on the next write of the node,
 *   which is this run's completion unless someone took the claim over). A takeover in a run's first
 *   second is seen at that second. A shell job has no `isOwner()`, so its runs need no watch.
 * - **Complete**: one compare-and-set from the claim's version; a stale run records nothing. When
 *   ZooKeeper is out of reach it tries again once connected, checking first whether the lost write
 *   went through. A run the self-fence stopped whose claim still stands (the session survived) is
 *   marked for a failover re-run from its own claim instead (a job with `failover`).
 *
 * Guarantees: at most two ZooKeeper writes per run that starts (claim, complete), plus the one
 * `exists` of a Node run; an outcome is recorded only from the claim's own version. Not
 * guaranteed: that a run whose executor is cut off stops before another executor's run of the
 * item starts — that is the session fence's job.
 */
import { join } from 'node:path';
import {
  claimShard,
  clipShardMessage,
  completeShard,
  encodeJson,
  ensureNode,
  hasErrorCode,
  isRetryable,
  markFailover,
  paths,
  readShard,
  toError,
  type Claim,
  type JobConfig,
  type Logger,
  type ShardOutcome,
  type ShardState,
} from '@orrery/core';
import { announceFailover } from './failover-notice.js';
import type { Trigger } from './misfire-rule.js';
import type { SkipReason } from './fire-skips.js';
import { decideOverlap } from './overlap-policy.js';
import type { RuntimeContext } from './runtime-context.js';
import type { RunHandle, RunResult, StopReason } from './run-types.js';
import { runShell } from './shell-runner.js';
import { untilConnected } from './until-connected.js';

/** A claim that fails with a retryable error is tried this many times in all. */
export const CLAIM_TRIES = 3;
/**
 * A completion (or a fenced run's failover mark, or the read that checks whether a lost one went
 * through) that fails with a retryable error is tried again once connected, after this long (ms),
 * doubling up to {@link RETRY_MAX_MS} — until it is answered or the runtime closes. Never given up
 * on: a claim left standing in a session that survives holds its item "running" for ever.
 */
export const RETRY_MIN_MS = 100;
export const RETRY_MAX_MS = 2000;
/** A fire waiting for another executor's run of its item waits at least this long (ms). */
export const MIN_WAIT_FOR_IDLE_MS = 1000;
/** …and, for a job without a next fire, this long (ms). */
export const DEFAULT_WAIT_FOR_IDLE_MS = 60_000;
/** A wait for another executor's run reads the node again at least this often (ms). */
export const IDLE_RECHECK_MS = 1000;
/** A shard node made ahead of its first claim ({@link ShardRunner.prepare}): idle, never run. */
const IDLE_SHARD: ShardState = { state: 'idle' };

/** A run of an item in progress here (or claimed and about to start). */
export interface ActiveRun {
  runId: string;
  fireTime: number;
  handle: RunHandle | undefined;
  finished: Promise<void>;
  /** Handed to a Node worker ahead of its fire time and not started yet: can be withdrawn. */
  pending?: boolean;
  /** Stopped by the self-fence (ZooKeeper did not answer in time). */
  fenced?: boolean;
  /** False once the run's claim is no longer its own (told to the handle as soon as it has one). */
  owner: boolean;
  /** Its own completion (or failover mark) is being written: a change of the node is its own. */
  settling?: boolean;
  /** A stop asked for before the run had a handle (still claiming): carried out as soon as it has one. */
  stopRequest?: { reason: StopReason; graceMs?: number };
}

/** Stops `active`'s run now, or as soon as it has a handle (a stop during its claim is not lost). */
export function stopActiveRun(active: ActiveRun, reason: StopReason, graceMs?: number): void {
  if (active.handle) active.handle.stop(reason, graceMs);
  else active.stopRequest = { reason, ...(graceMs !== undefined ? { graceMs } : {}) };
}

/**
 * How long a Node run goes before its runtime watches its claim in ZooKeeper (`ctx.isOwner()`):
 * most runs of an every-second job end sooner, and an `exists` and its watch's event for each would
 * be a third of its ZooKeeper traffic.
 */
export const OWNERSHIP_WATCH_AFTER_MS = 1000;

/** One run asked for. */
export interface RunRequest {
  item: number;
  fireTime: number;
  trigger: Trigger;
  attempt: number;
  param?: string;
  /** Claimed ahead of the fire time: start at this instant. */
  startAt?: number;
}

/** How a run ended (`ran: false`: it never started; anything to report was reported). */
export type ShardRunResult = { ran: false } | { ran: true; outcome: ShardOutcome; recorded: boolean };

export interface ShardRunnerOptions {
  ctx: RuntimeContext;
  job: string;
  logger: Logger;
  /** The job's config now. */
  config(): JobConfig | undefined;
  /** True while the runtime is closed. */
  isClosed(): boolean;
  /** True while this executor runs `item` of the job. */
  owns(item: number): boolean;
  /** Waits (as the misfire rule allows) until runs may start; resolves whether one may now. */
  waitUntilStartable(config: JobConfig, fireTime: number, trigger: Trigger): Promise<boolean>;
  skip(item: number, fireTime: number, reason: SkipReason): void;
  /** Takes up the failover mark of `item`, if any. */
  takeFailover(item: number): void;
  /** The job's next fire time after `fireTime`, if any. */
  nextFire(fireTime: number): number | undefined;
}

export interface ShardRunner {
  /** Claims, runs and completes one shard run; `run` is its entry in the runtime's active runs. */
  run(config: JobConfig, request: RunRequest, run: ActiveRun): Promise<ShardRunResult>;
  /**
   * Reads the shard nodes of `items` ahead of their first claim — creating an item's node, idle,
   * when it has none — so that the first claim is one compare-and-set like every later one, and the
   * reads and creates are off the fire's path (an executor starting with many jobs). Best effort:
   * an item whose read fails, or whose node is not idle, is read by its first claim as before.
   * Resolves with the items it did not read and find idle, each with the state it read (undefined:
   * not read — among them the items the known-version cache holds).
   */
  prepare(items: readonly number[]): Promise<Map<number, ShardState | undefined>>;
}

export function createShardRunner(options: ShardRunnerOptions): ShardRunner {
  const { ctx, job, logger } = options;
  const { zk, namespace, executor, metrics, emitter } = ctx;
  // Each item's shard node as this executor last wrote it: the next claim then needs no read.
  const known = new Map<number, { version: number; state: ShardState }>();
  let shardsReady = false;
  // Items whose node `prepare` is reading or making: a claim waits for it (a claim that read "no
  // node" would otherwise lose the create to it and take the fire as raced).
  const preparing = new Map<number, Promise<void>>();
  const now = (): number => ctx.clock?.now() ?? Date.now();
  /** True while the job still wants `item` run here (not closed, enabled, owned). */
  const wanted = (item: number): boolean => !options.isClosed() && options.config()?.enabled === true && options.owns(item);

  async function run(c: JobConfig, request: RunRequest, active: ActiveRun): Promise<ShardRunResult> {
    const { item, fireTime, trigger, attempt } = request;
    // Only a Node run handed to its worker ahead of time starts at `startAt`; every other run starts now.
    const startsNow: RunRequest = { item, fireTime, trigger, attempt, ...(request.param !== undefined ? { param: request.param } : {}) };
    if (!shardsReady && !(await makeShardsFolder())) {
      // The job's node is gone (deleted): nothing to claim, and nothing to bring back.
      options.skip(item, fireTime, 'job-deleted');
      return { ran: false };
    }
    const path = paths.jobShard(namespace, job, item);
    await preparing.get(item);
    const startedAt = now();
    const knownState = known.get(item);
    known.delete(item);
    const claimRequest = {
      executor, session: zk.sessionId ?? '', runId: active.runId, fireTime, attempt, startedAt,
      rerun: attempt > 1 || trigger === 'run-now' || trigger === 'downstream',
      failover: trigger === 'failover',
    };
    let claim;
    for (let tries = 1; claim === undefined; tries += 1) {
      try {
        claim = await claimShard(zk, path, tries === 1 && knownState ? { ...claimRequest, known: knownState } : claimRequest);
      } catch (error) {
        // ZooKeeper unreachable for a moment (a server or the quorum leader gone): once connected
        // again in the same session, claim once more if the misfire rule still allows this fire
        // (a claim whose answer was lost is recognised as ours).
        if (!isRetryable(error) || tries === CLAIM_TRIES) throw error;
        const session = zk.sessionId;
        const startable = await options.waitUntilStartable(c, fireTime, trigger === 'failover' ? 'cron' : trigger);
        if (!startable || zk.sessionId !== session) {
          options.skip(item, fireTime, 'not-connected');
          return { ran: false };
        }
      }
    }
    if (trigger === 'cron') ctx.claimLead.observe(fireTime, now() - startedAt);
    if (claim.claimed && request.startAt !== undefined && now() < request.startAt) {
      // Claimed ahead of the fire time: start on the dot, unless the item or the job went meanwhile.
      if (!wanted(item)) return giveBack(item, fireTime, claim.claim);
      // A Node run goes to its worker now, which starts it on the dot; a shell run's process starts
      // now, held at its gate until the dot (shell-runner.ts). Either is withdrawn — taken back
      // unstarted, the claim given back — if the item or the job goes meanwhile.
      if (c.type === 'shell' || (c.type === 'node' && c.handler && ctx.modules.has(c.handler))) return runClaimed(c, request, active, claim.claim, startedAt);
      await new Promise((resolve) => setTimeout(resolve, request.startAt! - now()));
      if (!wanted(item)) return giveBack(item, fireTime, claim.claim);
    }
    if (!claim.claimed && claim.reason === 'failover-pending') {
      // A crashed fire of this item waits for its re-run: that comes first.
      options.skip(item, fireTime, 'failover-pending');
      if (trigger !== 'failover') queueMicrotask(() => options.takeFailover(item));
      return { ran: false };
    }
    if (!claim.claimed) {
      const reason = claim.reason;
      if (reason === 'running' && claim.holder.executor !== executor && decideOverlap(c.overlap, trigger, 'running-elsewhere') === 'wait') {
        // Held by another executor (a shard that just moved): wait for it, then try once more.
        await waitForIdle(path, Math.max(MIN_WAIT_FOR_IDLE_MS, (options.nextFire(fireTime) ?? fireTime + DEFAULT_WAIT_FOR_IDLE_MS) - now()));
        if (!options.isClosed() && options.owns(item)) {
          if (options.config()?.enabled !== true) {
            options.skip(item, fireTime, 'disabled');
            return { ran: false };
          }
          const again = await claimShard(zk, path, { executor, session: zk.sessionId ?? '', runId: active.runId, fireTime, attempt, startedAt: now(), rerun: true });
          if (again.claimed) return runClaimed(c, startsNow, active, again.claim);
        }
      }
      options.skip(item, fireTime, reason === 'running' ? 'overlap' : reason);
      return { ran: false };
    }
    return runClaimed(c, startsNow, active, claim.claim);
  }

  function prepare(items: readonly number[]): Promise<Map<number, ShardState | undefined>> {
    const notIdle = new Map<number, ShardState | undefined>();
    if (options.isClosed()) return Promise.resolve(notIdle);
    // Each item's node (its entry is in `preparing` from now); the parent only if one is missing.
    return Promise.all(items.map((item) => {
      // Not read here: an item whose node this executor wrote last (the cache may be stale: it may
      // have moved away and back since), and one an earlier call is reading.
      if (known.has(item) || preparing.has(item)) {
        notIdle.set(item, undefined);
        return undefined;
      }
      const read = readAhead(item).then((state) => {
        if (state?.state !== 'idle') notIdle.set(item, state);
      }).finally(() => preparing.delete(item));
      preparing.set(item, read);
      return read;
    })).then(() => notIdle);
  }

  /** Makes (or finds) the job's shards folder, never the job's node; false when the job is gone. */
  async function makeShardsFolder(): Promise<boolean> {
    const exists = await ensureNode(zk, paths.jobShards(namespace, job));
    if (exists) shardsReady = true;
    return exists;
  }

  /**
   * Creates the idle shard node at `path`, making the job's shards folder only when the create finds
   * it missing; false when the job is gone (a deleted job stays deleted). Three executors holding a
   * job each made the folder first: three creates, two of them refused.
   */
  async function createIdle(path: string): Promise<boolean> {
    try {
      await zk.create(path, encodeJson(IDLE_SHARD));
      return true;
    } catch (error) {
      if (!hasErrorCode(error, 'no-node')) throw error;
    }
    if (!(await makeShardsFolder())) return false;
    await zk.create(path, encodeJson(IDLE_SHARD));
    return true;
  }

  /** Reads (or makes, idle) `item`'s shard node into the known-version cache; never throws. Resolves with the state read. */
  async function readAhead(item: number): Promise<ShardState | undefined> {
    const path = paths.jobShard(namespace, job, item);
    try {
      let shard = await readShard(zk, path);
      if (!shard) {
        try {
          if (!(await createIdle(path))) return undefined;
          shard = { state: IDLE_SHARD, version: 0, mzxid: 0 };
        } catch (error) {
          if (!hasErrorCode(error, 'node-exists')) throw error;
          shard = await readShard(zk, path);
        }
      }
      // The shards folder exists (the node is in it): the first claim need not make it.
      if (shard) shardsReady = true;
      if (shard?.state.state === 'idle' && !known.has(item) && !options.isClosed()) known.set(item, { version: shard.version, state: shard.state });
      return shard?.state;
    } catch (error) {
      // A garbage node (the job leader resets it), or ZooKeeper out of reach: the first claim reads it.
      logger.debug({ err: toError(error), item }, 'could not read a shard node ahead of its first claim');
      return undefined;
    }
  }

  /** Gives back an early claim whose run will not start; a fire a disable dropped is reported. */
  async function giveBack(item: number, fireTime: number, claim: Claim): Promise<ShardRunResult> {
    await releaseClaim(item, claim);
    if (!options.isClosed() && options.owns(item) && options.config()?.enabled !== true) options.skip(item, fireTime, 'disabled');
    return { ran: false };
  }

  /** Gives back a claim whose run never started (one compare-and-set back to idle). */
  async function releaseClaim(item: number, claim: Claim): Promise<void> {
    const idle: ShardState = { state: 'idle', ...(claim.state.last ? { last: claim.state.last } : {}) };
    try {
      const stat = await zk.set(claim.path, encodeJson(idle), claim.version);
      known.set(item, { version: stat.version, state: idle });
    } catch (error) {
      if (!hasErrorCode(error, 'bad-version') && !hasErrorCode(error, 'no-node')) throw error;
    }
  }

  async function waitForIdle(path: string, timeoutMs: number): Promise<void> {
    const deadline = now() + timeoutMs;
    while (!options.isClosed() && now() < deadline) {
      const changed = new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(IDLE_RECHECK_MS, deadline - now()));
        void zk.exists(path, () => { clearTimeout(t); resolve(); }).catch(() => resolve());
      });
      // Unreadable data holds no run (the leader resets it); a lost connection says nothing: wait on.
      const shard = await readShard(zk, path).catch((error: unknown) => {
        if (hasErrorCode(error, 'bad-data')) return undefined;
        if (isRetryable(error)) return 'unknown' as const;
        throw error;
      });
      if (shard !== 'unknown' && (!shard || shard.state.state !== 'running')) return;
      await changed;
    }
  }

  /**
   * Tells the run when its claim is no longer its own: one `exists` with a watch on the shard node,
   * sent once the run has gone {@link OWNERSHIP_WATCH_AFTER_MS} (a run that ends sooner sends none).
   * A version other than the claim's, or any change before the run settles, means someone else
   * wrote the node — the claim is gone. (The fence, not this watch, guards a claim against a lost
   * session; this catches a node written by hand, within the delay for a run's first second.)
   * Returns what cancels the watch's timer, called when the run ends.
   */
  function watchOwnership(active: ActiveRun, claim: Claim, item: number, startAt: number | undefined): () => void {
    const lost = (): void => {
      if (active.settling || !active.owner) return;
      active.owner = false;
      active.handle?.setOwner(false);
      logger.warn({ item, runId: active.runId, node: claim.path }, 'the claim of a run in progress was taken over: the run is told it is no longer the owner');
    };
    const watch = (): void => {
      if (active.settling || !active.owner) return;
      void zk.exists(claim.path, () => lost()).then((stat) => {
        if (stat?.version !== claim.version) lost();
      }).catch(() => undefined); // a lost connection: the fence tells the run if it must
    };
    const timer = setTimeout(watch, Math.max(0, (startAt ?? 0) - now()) + OWNERSHIP_WATCH_AFTER_MS).unref();
    // Cancelled when the run ends: an every-second job's timers would otherwise all fire at the next
    // fire time, on the executor's event loop, as the burst's runs start.
    return () => clearTimeout(timer);
  }

  /** @param claimedFrom when the claim of a run started ahead of its fire time was begun. */
  async function runClaimed(c: JobConfig, request: RunRequest, active: ActiveRun, claim: Claim, claimedFrom?: number): Promise<ShardRunResult> {
    const { item, fireTime, trigger, attempt, startAt } = request;
    const startedAt = now();
    const logs = ctx.history.logPaths(job, active.runId);
    const shardParam = c.shardingItemParameters[String(item)] ?? '';
    const jobParam = request.param ?? c.jobParameter;
    const timeoutMs = c.timeoutSeconds * 1000;
    const env: Record<string, string> = {
      ORRERY_NAMESPACE: namespace,
      ORRERY_JOB: job,
      ORRERY_SHARD_ITEM: String(item),
      ORRERY_SHARD_TOTAL: String(c.shardingTotalCount),
      ORRERY_SHARD_PARAM: shardParam,
      ORRERY_JOB_PARAM: jobParam,
      ORRERY_FIRE_TIME: String(fireTime),
      ORRERY_EXECUTOR: executor,
      ORRERY_RUN_ID: active.runId,
      ORRERY_FENCING_TOKEN: String(claim.fencingToken),
      ORRERY_ATTEMPT: String(attempt),
      ORRERY_TRIGGER: trigger,
    };
    const onStart = (at: number): void => {
      active.pending = false;
      const lateMs = Math.max(0, at - fireTime);
      metrics.lateness.observe({ trigger }, lateMs / 1000);
      emitter.emit('run:started', { job, item, fireTime, runId: active.runId, attempt, lateMs, trigger, fencingToken: claim.fencingToken });
    };
    // A run handed over ahead of its fire time says so when its worker starts it.
    if (startAt === undefined) onStart(startedAt);
    const adopt = (handle: RunHandle): void => {
      active.handle = handle;
      // Disowned (fenced, taken over) or stopped before the handle existed: tell it at once.
      if (!active.owner) handle.setOwner(false);
      if (active.stopRequest) handle.stop(active.stopRequest.reason, active.stopRequest.graceMs);
    };
    let result: RunResult;
    if (c.type === 'shell') {
      // Pending until its gate opens (onStart), when started ahead of its fire time.
      active.pending = startAt !== undefined;
      const handle = runShell({
        command: c.command ?? 'false',
        env,
        ...(ctx.jobEnv ? { baseEnv: ctx.jobEnv } : {}),
        resultFile: join(ctx.tmpDir, `${active.runId}.result.json`),
        stdoutPath: logs.stdout,
        stderrPath: logs.stderr,
        timeoutMs,
        killGraceMs: ctx.killGraceMs,
        maxLogBytes: ctx.history.maxLogBytes,
        onLogError: (error) => logger.warn({ err: error, item, runId: active.runId }, 'could not write a run log: its output is discarded'),
        onSpawn: (pgid) => ctx.trackProcessGroup?.(pgid, job, active.runId, active.finished),
        ...(startAt !== undefined ? { startAt, onStart } : {}),
      });
      // No ownership watch: a shell job has no `isOwner()` to tell (its claim is guarded by the fence).
      adopt(handle);
      // A burst's processes start one after another: the lead covers the claim and the start (the
      // slowest of a fire counts), so that the last gate of a burst is still ready before the dot.
      if (claimedFrom !== undefined && trigger === 'cron') ctx.claimLead.observe(fireTime, now() - claimedFrom);
      result = await handle.done;
    } else {
      const module = c.handler ? ctx.modules.get(c.handler) : undefined;
      if (!module) {
        result = { status: 'failed', exitCode: null, signal: null, message: `this executor has no handler '${c.handler}'`, stdoutTail: '', stderrTail: '', startedAt, endedAt: now() };
      } else {
        const handle = ctx.nodePool.run({
          runId: active.runId, module, stdoutPath: logs.stdout, stderrPath: logs.stderr, timeoutMs, killGraceMs: ctx.killGraceMs, maxLogBytes: ctx.history.maxLogBytes,
          context: { namespace, job, shardItem: item, shardTotal: c.shardingTotalCount, shardParam, jobParam, fireTime, runId: active.runId, fencingToken: claim.fencingToken, attempt, trigger },
          ...(startAt !== undefined ? { startAt, onStart } : {}),
        });
        adopt(handle);
        active.pending = startAt !== undefined;
        const unwatch = watchOwnership(active, claim, item, startAt);
        result = await handle.done;
        unwatch();
      }
    }
    active.settling = true;
    if (result.withdrawn) {
      // Taken back before it started: it never ran, so the claim is given back and nothing recorded.
      return giveBack(item, fireTime, claim);
    }
    const outcome: ShardOutcome = {
      status: result.status,
      exitCode: result.exitCode,
      startedAt: result.startedAt,
      endedAt: result.endedAt,
      durationMs: Math.max(0, result.endedAt - result.startedAt),
      executor,
      runId: active.runId,
      fireTime,
      attempt,
      fencingToken: claim.fencingToken,
      // The shard node keeps a short message, never the output (it stays in the run record).
      message: clipShardMessage(ctx.redact ? ctx.redact(result.message) : result.message),
    };
    // A run the self-fence stopped whose claim still stands once ZooKeeper answers (the session
    // survived: the link was slow, not gone) did not fail, it was interrupted: with failover, its
    // fire is re-run as if it had crashed — a failover mark from its own claim.
    const handedOver = active.fenced === true && outcome.status === 'aborted' && c.failover && !c.localMode && !options.isClosed() && options.config()?.enabled === true && (await markFencedRun(item, claim));
    const recorded = !handedOver && (await complete(item, claim, outcome));
    if (!recorded && !handedOver) logger.warn({ item, runId: active.runId, fireTime }, 'the claim was taken over or its session is gone: outcome not recorded');
    await ctx.history.save({ ...outcome, job, item, trigger, recorded, stdoutTail: result.stdoutTail, stderrTail: result.stderrTail, ...(result.truncated ? { truncated: result.truncated } : {}) }).catch((error) => logger.error({ err: toError(error), runId: active.runId }, 'could not save the run record'));
    metrics.runs.inc({ outcome: outcome.status });
    metrics.duration.observe({ outcome: outcome.status }, outcome.durationMs / 1000);
    // Every run is in the history; the log gets a line per run only at debug, or when it did not succeed.
    const level = outcome.status === 'succeeded' ? 'debug' : 'warn';
    logger[level]({ item, fireTime, runId: active.runId, status: outcome.status, durationMs: outcome.durationMs, recorded, attempt, message: outcome.message }, 'run finished');
    emitter.emit('run:finished', { job, item, fireTime, runId: active.runId, status: outcome.status, recorded, attempt });
    return { ran: true, outcome, recorded };
  }

  /**
   * The pauses before the retries of one write: each waits until connected (or closed), then
   * {@link RETRY_MIN_MS} more, doubling up to {@link RETRY_MAX_MS}.
   */
  function retryPauses(): () => Promise<void> {
    let waitMs = RETRY_MIN_MS;
    return async () => {
      await untilConnected(zk, options.isClosed);
      // The client may take itself for connected while its link is already gone (every server of
      // the ensemble killed at once): without the pause, the retries would spin.
      if (!options.isClosed()) await new Promise((resolve) => setTimeout(resolve, waitMs));
      waitMs = Math.min(RETRY_MAX_MS, waitMs * 2);
    };
  }

  /**
   * Records a run's outcome: one compare-and-set from the claim's version, which fails if anyone
   * wrote the shard since (the job leader's failover mark of a claim whose session died, say): a
   * stale run records nothing. When ZooKeeper is out of reach, it tries again once connected (in
   * any session: the compare-and-set is the guard), checking first whether the lost write went
   * through — so a run that finished just as ZooKeeper went away is recorded rather than re-run,
   * unless the failover mark came first. It gives up only when the runtime closes: a claim left
   * standing in a session that survives (the whole ensemble restarted within it) would hold the
   * item "running" for ever — every later fire skipped as an overlap.
   */
  async function complete(item: number, claim: Claim, outcome: ShardOutcome): Promise<boolean> {
    const backOff = retryPauses();
    for (;;) {
      try {
        const completion = await completeShard(zk, claim, outcome);
        if (completion.recorded) known.set(item, { version: completion.version, state: completion.state });
        return completion.recorded;
      } catch (error) {
        if (!isRetryable(error)) {
          logger.warn({ err: toError(error), item, runId: outcome.runId }, 'could not record the outcome');
          return false;
        }
      }
      // The write's answer was lost: it may have gone through. Read the node back once it can be.
      let current;
      for (;;) {
        await backOff();
        if (options.isClosed()) return false;
        try {
          current = await readShard(zk, claim.path);
          break;
        } catch (error) {
          if (!isRetryable(error)) return false; // bad data: the job leader resets the node
        }
      }
      // Our write went through before the link dropped.
      if (current?.state.state === 'idle' && current.state.last?.runId === outcome.runId) return true;
      // Someone else wrote the node: the claim is gone.
      if (current?.state.state !== 'running' || current.state.runId !== claim.state.runId || current.version !== claim.version) return false;
      // The claim still stands: write again.
    }
  }

  /**
   * Marks a run stopped by the self-fence for a failover re-run, from its own claim (one
   * compare-and-set, tried again once connected, until answered or closed). False when the claim
   * no longer stands (the job leader marked it first: the session did expire) — then nothing is
   * recorded either way.
   */
  async function markFencedRun(item: number, claim: Claim): Promise<boolean> {
    const backOff = retryPauses();
    while (!options.isClosed()) {
      try {
        if (!(await markFailover(zk, claim.path, { state: claim.state, version: claim.version }))) return false;
        known.delete(item);
        logger.warn({ item, fireTime: claim.state.fireTime, runId: claim.state.runId }, 'a run stopped by the self-fence is marked for a failover re-run (its session survived)');
        await announceFailover({ zk, namespace, job, emitter, ...(ctx.eventAlarm ? { eventAlarm: ctx.eventAlarm } : {}) }, item, claim.state)
          .catch((error) => logger.warn({ err: toError(error), item }, 'could not announce a failover mark (the item\'s next fire takes it up)'));
        return true;
      } catch (error) {
        if (!isRetryable(error)) {
          logger.warn({ err: toError(error), item, runId: claim.state.runId }, 'could not mark a fenced run for failover');
          return false;
        }
        await backOff();
      }
    }
    return false;
  }

  return { run, prepare };
}
