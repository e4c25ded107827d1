/**
 * One job on one executor: the composition of its parts, each in its own module.
 *
 * - job-watches.ts: the job's config (live: cron, parameters, timeout, enable/disable), its `applied`
 *   node and its commands (run-now / stop / downstream / failover / repair).
 * - fire-scheduler.ts: one timer per job (not per shard), planned with the misfire rule
 *   (misfire-rule.ts, fire-plan.ts) on an injected clock; early claims with the claim lead.
 * - overlap-policy.ts: what a fire does when its item may still be running.
 * - shard-run.ts: each run — claim (one write), run, complete (one write).
 * - job-leader.ts: as job leader, applies assignments, releases or marks dead claims, resets bad
 *   shard nodes.
 * - downstream.ts: downstream jobs once every shard of a fire succeeded.
 * - fire-skips.ts: every fire that does not run is counted, emitted and logged with its reason.
 *
 * What stays here: the **effective items** — those `applied` gives this executor that its latest
 * summary still gives it (an item it loses stops at once; an item it gains starts only once the job
 * leader made the move safe) — and each item's runs: the one in progress, and the fires waiting
 * behind it (at most one scheduled fire, under `overlap: queue`, and one requested run: run-now,
 * downstream or failover). Retries wait their backoff here.
 *
 * Guarantees: a disabled (or deleted) job starts nothing more — waiting fires, early fires and
 * retries are dropped and reported (`disabled` / `job-deleted`); a run is told `isOwner() === false`
 * as soon as the executor fences or its claim is taken over; a run starts only while the session
 * fence allows (session-fence.ts).
 */
import { randomBytes } from 'node:crypto';
import {
  createLeaderLatch,
  createSchedule,
  hasErrorCode,
  isRetryable,
  paths,
  readShard,
  toError,
  type CommandNode,
  type JobConfig,
  type LeaderLatch,
  type Schedule,
  type ShardState,
} from '@orrery/core';
import { maybeTriggerDownstream } from './downstream.js';
import { createFireScheduler, systemClock, type Clock } from './fire-scheduler.js';
import { createFireSkips, type SkipReason } from './fire-skips.js';
import { createJobLeader } from './job-leader.js';
import { createJobWatches } from './job-watches.js';
import { startDeadline, type Trigger } from './misfire-rule.js';
import { decideOverlap, queueSlot, type QueueSlot } from './overlap-policy.js';
import type { RuntimeContext } from './runtime-context.js';
import { createShardRunner, stopActiveRun, type ActiveRun, type RunRequest, type ShardRunResult } from './shard-run.js';

export type { RuntimeContext } from './runtime-context.js';

/** A fire waiting for the session fence to open looks again this often (ms). */
export const STARTABLE_POLL_MS = 50;

export interface JobRuntime {
  readonly job: string;
  /** The items the latest summary gives this executor. */
  setSummaryItems(items: readonly number[]): void;
  /** Re-sets every watch (after a new ZooKeeper session). */
  rewatch(): void;
  /**
   * The executors' folder changed (a name registered for the first time, or one removed): a leader
   * re-checks the claims of dead sessions. (Presences themselves live one level down and are not
   * watched here: a lost executor's claims are found through the allocator's new assignment.)
   */
  onPresenceChange(): void;
  /** Items running now. */
  readonly running: number;
  /**
   * Stops every run now (self-fencing): each run is told it is no longer the owner, then SIGTERM,
   * SIGKILL after `graceMs`. Fires waiting behind them are dropped (`not-connected`). Returns the
   * number of runs in progress.
   */
  fence(graceMs: number): number;
  /** Starts no new run from now on (graceful shutdown); runs in progress go on. */
  stopFiring(): void;
  /** Resolves when no run of this job is in progress here. */
  whenIdle(): Promise<void>;
  /**
   * Stops firing, leaves the latch; runs in progress are left to finish unless `stopRuns` (SIGKILL
   * after `graceMs`, default the kill grace). `sessionEnding`: the executor closes its session next,
   * which deletes the latch node with it (see the latch's close).
   */
  close(options?: { stopRuns?: boolean; graceMs?: number; sessionEnding?: boolean }): Promise<void>;
}

/** A fire waiting for an item's run in progress to end. */
type Waiting = Omit<RunRequest, 'startAt'>;

export function createJobRuntime(ctx: RuntimeContext, job: string): JobRuntime {
  const { zk, namespace, executor, emitter } = ctx;
  const clock: Clock = ctx.clock ?? systemClock;
  const logger = ctx.logger.child({ job });
  let config: JobConfig | undefined;
  let schedule: Schedule | undefined;
  let summaryItems = new Set<number>();
  let appliedItems: readonly number[] = [];
  let effective = new Set<number>();
  let closed = false;
  /** Graceful shutdown: no new run starts. */
  let stopped = false;
  const active = new Map<number, ActiveRun>();
  /** Per item, the fires waiting behind its run in progress: one per slot. */
  const waiting = new Map<number, Partial<Record<QueueSlot, Waiting>>>();
  /** Timers of fires to start later: early fires of a busy item (at the fire time), retries (after the backoff). */
  const timers = new Map<unknown, { item: number; fireTime: number }>();
  const startedAt = clock.now();
  const latch: LeaderLatch = createLeaderLatch(zk, paths.jobLeader(namespace, job), { id: executor, createParents: false });
  const offs: Array<() => void> = [];

  const skips = createFireSkips({ job, logger, emitter, metrics: ctx.metrics, now: () => clock.now() });
  const leader = createJobLeader({
    zk, namespace, job, logger, emitter, metrics: ctx.metrics, latch, isAlive: ctx.isAlive,
    config: () => config,
    ...(ctx.eventAlarm ? { eventAlarm: ctx.eventAlarm } : {}),
    ...(ctx.leaderApplies ? { applyTurn: ctx.leaderApplies } : {}),
  });
  const watches = createJobWatches({
    zk, namespace, job, logger, emitter, metrics: ctx.metrics, startedAt,
    isLeader: () => latch.isLeader,
    onConfig,
    onApplied: (applied) => {
      appliedItems = applied.items[executor] ?? [];
      recompute();
    },
    onCommand,
  });
  const scheduler = createFireScheduler({
    clock,
    claimLead: ctx.claimLead,
    onFire: (fireTime, trigger) => {
      for (const item of sortedItems()) void runShard({ item, fireTime, trigger, attempt: 1 });
    },
    onFireEarly: fireEarly,
    onSkip: (fireTime, reason) => skips.skip(undefined, fireTime, reason),
  });
  const shardRunner = createShardRunner({
    ctx, job, logger,
    config: () => config,
    isClosed: () => closed,
    owns: (item) => effective.has(item),
    waitUntilStartable,
    skip: (item, fireTime, reason) => skips.skip(item, fireTime, reason),
    takeFailover: (item) => void takeFailover(item),
    nextFire: (fireTime) => schedule?.next(fireTime),
  });

  const sortedItems = (): number[] => [...effective].sort((a, b) => a - b);

  // ---- state changes ------------------------------------------------------------------------

  /**
   * @param changedAt when the config was last written (the node's mtime): a first look back for
   *   missed fires starts no earlier — a fire from before the job was enabled (or changed) is not
   *   a missed one.
   */
  function onConfig(next: JobConfig | undefined, changedAt: number): void {
    const before = config;
    config = next;
    if (!next?.enabled) {
      withdrawPending(() => true);
      dropWaiting(() => true, next ? 'disabled' : 'job-deleted');
    }
    reportDemand();
    // What the job leader does with a dead session's claim depends on the config (mark it for
    // failover, or release it), and a pass without a config leaves claims alone: a leader that took
    // the lead before it had read the config (a new runtime) looks again now.
    if (next && (!before || before.enabled !== next.enabled || before.failover !== next.failover || before.localMode !== next.localMode)) leader.check();
    if (!next) {
      scheduler.stop();
      return;
    }
    const scheduleChanged = !before || before.cron !== next.cron || before.timeZone !== next.timeZone
      || before.pausePeriodDate !== next.pausePeriodDate || before.pausePeriodTime !== next.pausePeriodTime || before.enabled !== next.enabled;
    if (scheduleChanged) {
      schedule = next.cron ? createSchedule({ cron: next.cron, timeZone: next.timeZone, pausePeriodDate: next.pausePeriodDate, pausePeriodTime: next.pausePeriodTime }) : undefined;
      if (before) logger.info({ cron: next.cron, enabled: next.enabled }, 'job schedule changed');
    }
    scheduler.update({ schedule, misfire: next.misfire, enabled: next.enabled }, scheduleChanged ? { firstStart: !before, changedAt } : undefined);
    if (next.enabled && !before?.enabled) void shardRunner.prepare(sortedItems());
  }

  function recompute(): void {
    const next = new Set(appliedItems.filter((i) => summaryItems.has(i)));
    const gained = [...next].filter((i) => !effective.has(i));
    const changed = gained.length > 0 || [...effective].some((i) => !next.has(i));
    effective = next;
    if (!changed) return;
    withdrawPending((item) => !next.has(item));
    // Fires waiting for an item that moved away are its new owner's now (not reported: not dropped).
    for (const item of [...waiting.keys()]) if (!next.has(item)) waiting.delete(item);
    reportDemand();
    const items = sortedItems();
    logger.info({ items }, 'items changed');
    emitter.emit('items:changed', { job, items });
    // The first claims of gained items need no read (their nodes are read now, off the fire's path).
    // A gained item may hold a crashed run marked for failover: re-run at once. That read shows
    // which: an item found idle holds none, so a failover needs no read of its own.
    if (config?.enabled && gained.length > 0) {
      const failover = config.failover && !config.localMode;
      void shardRunner.prepare(gained).then((notIdle) => {
        if (failover) for (const [item, state] of notIdle) void takeFailover(item, state);
      });
    }
    // A gained item catches up a fire it missed within the misfire threshold (the claim refuses it
    // if its previous owner already ran that fire).
    const recent = gained.length > 0 && config?.enabled ? scheduler.catchUp() : undefined;
    if (recent !== undefined) for (const item of gained) void runShard({ item, fireTime: recent, trigger: 'misfire', attempt: 1 });
  }

  /** Node runs handed to a worker ahead of their fire time that should no longer start: taken back. */
  function withdrawPending(which: (item: number) => boolean): void {
    for (const [item, run] of active) if (run.pending && which(item)) run.handle?.withdraw?.();
  }

  /**
   * Drops the fires waiting here — behind a run, and (unless `timed` is false) for their fire time or
   * a retry's backoff — each reported with `reason` (none: not a skipped fire, a shutdown say).
   */
  function dropWaiting(which: (item: number) => boolean, reason: SkipReason | undefined, timed = true): void {
    for (const [item, slots] of [...waiting]) {
      if (!which(item)) continue;
      waiting.delete(item);
      if (reason) for (const w of Object.values(slots)) if (w) skips.skip(item, w.fireTime, reason);
    }
    if (!timed) return;
    for (const [timer, { item, fireTime }] of [...timers]) {
      if (!which(item)) continue;
      clock.clearTimeout(timer);
      timers.delete(timer);
      if (reason) skips.skip(item, fireTime, reason);
    }
  }

  /** Tells the executor how many Node shards this job runs here, and preloads its module. */
  function reportDemand(): void {
    const module = !closed && config?.type === 'node' && config.enabled && config.handler ? ctx.modules.get(config.handler) : undefined;
    if (module && effective.size > 0) ctx.nodePool.preload(module);
    ctx.nodeDemand?.(job, module ? effective.size : 0);
  }

  /** Starts `request` after `delayMs` (unless dropped meanwhile: a disable, a fence, close). */
  /** Runs `request` after `delayMs`; returns its timer, for {@link takeBack}. */
  function later(request: RunRequest, delayMs: number): unknown {
    const timer = clock.setTimeout(() => {
      timers.delete(timer);
      void runShard(request);
    }, Math.max(0, delayMs));
    (timer as { unref?: () => void }).unref?.();
    timers.set(timer, { item: request.item, fireTime: request.fireTime });
    return timer;
  }

  /** Takes back a fire `later` still holds: true if it had not gone yet (nor been dropped). */
  function takeBack(timer: unknown): boolean {
    if (!timers.has(timer)) return false;
    timers.delete(timer);
    clock.clearTimeout(timer);
    return true;
  }

  // ---- fires ----------------------------------------------------------------------------------

  /**
   * A fire just ahead: idle items are claimed now and start at the fire time; an item still running
   * here is left to the overlap policy at the fire time itself, as if nothing were early — unless its
   * run ends before then, when it is claimed early after all (a run that started late, in a burst,
   * would otherwise make the next fire's run of its item start late too).
   */
  function fireEarly(fireTime: number): void {
    const claimed: number[] = [];
    const deferred: number[] = [];
    for (const item of sortedItems()) {
      const running = active.get(item);
      if (running) {
        deferred.push(item);
        const request: RunRequest = { item, fireTime, trigger: 'cron', attempt: 1 };
        const timer = later(request, fireTime - clock.now());
        void running.finished.then(() => {
          if (closed || stopped || active.has(item) || !effective.has(item) || config?.enabled !== true) return;
          if (clock.now() >= fireTime || !takeBack(timer)) return; // at the dot: the overlap rule has it
          void runShard({ ...request, startAt: fireTime });
        });
      } else {
        claimed.push(item);
        void runShard({ item, fireTime, trigger: 'cron', attempt: 1, startAt: fireTime });
      }
    }
    emitter.emit('fire:early', { job, fireTime, claimed, deferred });
  }

  /** At most one fire waits per item and slot: a later one replaces it, and the replaced one is reported. */
  function enqueue(entry: Waiting): void {
    const slots = waiting.get(entry.item) ?? {};
    const slot = queueSlot(entry.trigger);
    const before = slots[slot];
    if (before && (before.fireTime !== entry.fireTime || before.trigger !== entry.trigger)) {
      if (slot === 'requested') logger.warn({ item: entry.item, replaced: before.fireTime, trigger: before.trigger, by: entry.trigger }, 'a waiting requested run was replaced by a newer one');
      skips.skip(entry.item, before.fireTime, 'overlap');
    }
    slots[slot] = entry;
    waiting.set(entry.item, slots);
  }

  /** The next fire waiting for `item` (requested runs first), taken out of its slot. */
  function dequeue(item: number): Waiting | undefined {
    const slots = waiting.get(item);
    if (!slots) return undefined;
    const next = slots.requested ?? slots.scheduled;
    if (slots.requested) delete slots.requested;
    else delete slots.scheduled;
    if (!slots.requested && !slots.scheduled) waiting.delete(item);
    return next;
  }

  async function runShard(request: RunRequest): Promise<void> {
    const { item, fireTime, trigger } = request;
    const c = config;
    if (closed || stopped || !c || !effective.has(item)) return;
    if (!c.enabled) {
      skips.skip(item, fireTime, 'disabled');
      return;
    }
    if (!ctx.canStart() && !(await waitUntilStartable(c, fireTime, trigger))) {
      skips.skip(item, fireTime, config?.enabled === false ? 'disabled' : 'not-connected');
      return;
    }
    if (closed || stopped || !effective.has(item)) return;
    if (config?.enabled !== true) {
      skips.skip(item, fireTime, 'disabled');
      return;
    }
    const mine = active.get(item);
    if (mine) {
      switch (decideOverlap(c.overlap, trigger, 'running-here')) {
        case 'skip':
          skips.skip(item, fireTime, 'overlap');
          return;
        case 'queue':
        case 'wait':
        case 'run': // (never for a busy item: two runs of one item never start here)
          enqueue({ item, fireTime, trigger, attempt: request.attempt, ...(request.param !== undefined ? { param: request.param } : {}) });
          return;
        case 'replace':
          stopActiveRun(mine, 'replace');
          await mine.finished;
      }
    }
    const run: ActiveRun = { runId: `${clock.now().toString(36)}-${item}-${randomBytes(3).toString('hex')}`, fireTime, handle: undefined, finished: Promise.resolve(), owner: true };
    let release!: () => void;
    run.finished = new Promise<void>((r) => { release = r; });
    active.set(item, run);
    let result: ShardRunResult = { ran: false };
    try {
      result = await shardRunner.run(c, request, run);
    } catch (error) {
      if (isRetryable(error)) {
        // ZooKeeper kept failing (its link lost again and again): this fire did not run here.
        skips.skip(item, fireTime, 'not-connected');
      } else if (hasErrorCode(error, 'bad-data')) {
        // The shard node holds something that is not a shard state (written by hand, say): this
        // fire cannot be claimed. Counted as a fire not run; the job leader resets the node.
        logger.error({ err: toError(error), item, fireTime, node: paths.jobShard(namespace, job, item) }, 'shard node holds invalid data; asking the job leader to reset it');
        skips.skip(item, fireTime, 'bad-shard');
        void leader.requestRepair(item);
      } else {
        logger.error({ err: toError(error), item, fireTime }, 'run failed to execute');
        emitter.emit('error', toError(error));
      }
    } finally {
      active.delete(item);
      release();
      const next = closed ? undefined : dequeue(item);
      if (next) void runShard(next);
    }
    if (result.ran) {
      skips.ran();
      afterRun(c, request, result);
    }
  }

  /** What follows a run: a retry after the backoff, a failure alarm, downstream jobs. */
  function afterRun(c: JobConfig, request: RunRequest, result: Extract<ShardRunResult, { ran: true }>): void {
    const { outcome, recorded } = result;
    if (!recorded || closed) return;
    const failed = outcome.status === 'failed' || outcome.status === 'timed-out';
    if (failed && request.attempt <= c.retry.count) {
      later({ item: request.item, fireTime: request.fireTime, trigger: 'retry', attempt: request.attempt + 1, ...(request.param !== undefined ? { param: request.param } : {}) }, c.retry.backoffSeconds * 1000);
      return;
    }
    if (failed) ctx.alarms.runFailed(c, request.item, outcome);
    if (outcome.status === 'succeeded' && c.downstream.length > 0 && !c.localMode) void maybeTriggerDownstream({ zk, namespace, job, logger, emitter }, c, request.fireTime);
  }

  /**
   * A fire that comes while no run may start (ZooKeeper out of reach for a moment: a server or the
   * quorum leader gone) waits — as long as the misfire rule lets it start (`startDeadline`) — for the
   * executor to be able to start runs again. Resolves whether it may run now.
   */
  async function waitUntilStartable(c: JobConfig, fireTime: number, trigger: Trigger): Promise<boolean> {
    const deadline = startDeadline(trigger, fireTime, clock.now(), c.misfire);
    if (deadline === undefined) return false;
    while (!closed && !stopped && config?.enabled === true && clock.now() < deadline) {
      if (ctx.canStart()) return true;
      await new Promise((resolve) => setTimeout(resolve, STARTABLE_POLL_MS));
    }
    return ctx.canStart() && clock.now() < deadline && config?.enabled === true;
  }

  /**
   * Re-runs this item's crashed fire if the shard holds a failover mark (a new attempt). `read`: the
   * node's state as just read (none: it is read here).
   */
  async function takeFailover(item: number, read?: ShardState): Promise<void> {
    const c = config;
    if (closed || stopped || !c?.enabled || !c.failover || c.localMode || !effective.has(item)) return;
    try {
      const mark = read ?? (await readShard(zk, paths.jobShard(namespace, job, item)))?.state;
      if (mark?.state !== 'failover') return;
      logger.warn({ item, fireTime: mark.fireTime, crashed: mark.executor, runId: mark.runId }, 'taking over a crashed run (failover)');
      await runShard({ item, fireTime: mark.fireTime, trigger: 'failover', attempt: mark.attempt + 1 });
    } catch (error) {
      if (!isRetryable(error)) logger.error({ err: toError(error), item }, 'failover failed');
    }
  }

  // ---- commands -------------------------------------------------------------------------------

  function onCommand(name: string, { name: parts, command }: CommandNode): void {
    if (command.kind === 'repair') {
      leader.check();
      return;
    }
    const c = config;
    if (!c) return;
    const items = (command.items ?? [...effective]).filter((i) => effective.has(i));
    if (command.kind === 'failover') {
      for (const item of items) void takeFailover(item);
      return;
    }
    // A command from before this runtime started (within the slack of job-watches.ts) is read
    // again by an executor that just gained the job: its previous owner may have served it already.
    const replayed = command.requestedAt < startedAt;
    if (command.kind === 'stop') {
      // Every run of this runtime started after a replayed stop was asked for: it is not theirs.
      if (replayed) {
        logger.info({ command: name, items }, 'stop command from before this executor had the job: nothing of it runs here');
        return;
      }
      // A stop also takes back what waits behind the runs it stops (asked for: not a skipped fire).
      let dropped = 0;
      for (const item of items) {
        dropped += Object.keys(waiting.get(item) ?? {}).length;
        waiting.delete(item);
        const running = active.get(item);
        if (running) stopActiveRun(running, 'stop');
      }
      logger.info({ command: name, items, waitingDropped: dropped }, 'stop command');
      return;
    }
    const fireTime = command.fireTime ?? command.requestedAt;
    if (!c.enabled) {
      logger.warn({ command: name }, 'run command for a disabled job ignored');
      for (const item of items) skips.skip(item, fireTime, 'disabled');
      return;
    }
    const trigger: Trigger = parts.form === 'downstream' ? 'downstream' : 'run-now';
    logger.info({ command: name, items, trigger }, 'run command');
    const request = (item: number): RunRequest => ({ item, fireTime, trigger, attempt: 1, ...(command.param !== undefined ? { param: command.param } : {}) });
    if (!replayed) {
      for (const item of items) void runShard(request(item));
      return;
    }
    for (const item of items) void runUnlessServed(name, request(item));
  }

  /**
   * A replayed run command runs an item only if no run of its fire has claimed the item's shard
   * since (the shard's claim or last outcome names that fire time): the previous owner of the item
   * served it, and running it again would run one request twice.
   */
  async function runUnlessServed(command: string, request: RunRequest): Promise<void> {
    try {
      const shard = await readShard(zk, paths.jobShard(namespace, job, request.item));
      const state = shard?.state;
      const served = state !== undefined && ((state.state !== 'idle' && state.fireTime === request.fireTime) || state.last?.fireTime === request.fireTime);
      if (served) {
        logger.info({ command, item: request.item, fireTime: request.fireTime }, 'run command already served by the previous owner of the item');
        return;
      }
    } catch (error) {
      // Unreadable: the claim decides (a bad shard node is reported by the run itself).
      if (!hasErrorCode(error, 'bad-data') && !isRetryable(error)) logger.warn({ err: toError(error), item: request.item }, 'could not check a replayed run command');
    }
    await runShard(request);
  }

  // ---- lifecycle ------------------------------------------------------------------------------

  const stopRuns = async (graceMs: number | undefined): Promise<void> => {
    if (active.size > 0) logger.debug({ step: 'runs', runs: [...active.values()].map((r) => ({ runId: r.runId, started: r.handle !== undefined, pending: r.pending })) }, 'closing');
    for (const run of active.values()) stopActiveRun(run, 'shutdown', graceMs);
    await Promise.all([...active.values()].map((r) => r.finished));
  };

  offs.push(
    latch.on('leader:acquired', () => {
      logger.info('became job leader');
      leader.check();
      watches.watchCommands();
    }),
  );
  void latch.start().catch((error) => emitter.emit('error', toError(error)));
  watches.watchAll();
  emitter.emit('job:started', { job });

  return {
    job,
    setSummaryItems(items) {
      summaryItems = new Set(items);
      recompute();
    },
    rewatch() {
      watches.watchAll();
      leader.check();
    },
    onPresenceChange() {
      leader.check();
    },
    get running() {
      return active.size;
    },
    fence(graceMs) {
      // What waits behind the stopped runs goes; a retry or an early fire still to come looks at the
      // fence again when its time comes (the session may survive a slow link).
      dropWaiting(() => true, 'not-connected', false);
      for (const run of active.values()) {
        // The run's claim may be someone else's any moment now: it is told before it is stopped.
        run.owner = false;
        run.handle?.setOwner(false);
        run.fenced = true;
        stopActiveRun(run, 'fence', graceMs);
      }
      return active.size;
    },
    stopFiring() {
      stopped = true;
      scheduler.stop();
      dropWaiting(() => true, undefined);
      withdrawPending(() => true);
    },
    async whenIdle() {
      while (active.size > 0) await Promise.all([...active.values()].map((r) => r.finished));
    },
    async close(options = {}) {
      if (closed) {
        // Closed before (a job this executor lost): its last runs may still be going.
        if (options.stopRuns) await stopRuns(options.graceMs);
        return;
      }
      closed = true;
      scheduler.stop();
      watches.close();
      leader.close();
      withdrawPending(() => true);
      ctx.nodeDemand?.(job, 0);
      for (const off of offs.splice(0)) off();
      dropWaiting(() => true, undefined);
      skips.flush();
      if (options.stopRuns) await stopRuns(options.graceMs);
      logger.debug({ step: 'latch' }, 'closing');
      await latch.close({ sessionEnding: options.sessionEnding === true });
      logger.debug({ step: 'leader' }, 'closing');
      await leader.settled();
      emitter.emit('job:stopped', { job });
    },
  };
}
