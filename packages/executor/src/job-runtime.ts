/**
 * One job on one executor: everything the executor does for a job its summary names.
 *
 * - Watches the job's config (live: cron, parameters, timeout, enable/disable), its `applied` node,
 *   and its commands (run-now / stop); joins the job's leader latch.
 * - Runs exactly the **effective items**: those `applied` gives it that its latest summary still
 *   gives it — so an item it loses stops at once, and an item it gains starts only once the job
 *   leader has made the move safe.
 * - One timer per job (not per shard), planned by `planFire` with the misfire policy.
 * - Each run: claim (one write), run, complete (one write) — see `@orrery/core`'s shard claim.
 * - As job leader: turns a new `assignment` into `applied` once no item that moves has a run in
 *   progress on a live executor; marks the claim of a dead session for a **failover** re-run (a job
 *   with `failover`) or releases it; prunes old commands.
 * - Failover: the owner of a marked item re-runs that fire at once (a new attempt, a new run id, a
 *   larger fencing token) — told by the leader's `failover-…` command, or on gaining the item.
 * - A run starts only while the executor's session fence allows (session-fence.ts); a run whose
 *   claim belongs to a session that is gone records nothing (the leader takes over its claim).
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import {
  errorCode,
  COMMAND_NODE_PATTERN,
  OrreryError,
  checkApplied,
  checkAssignment,
  checkCommandNode,
  claimShard,
  clipShardMessage,
  commandName,
  completeShard,
  createLeaderLatch,
  markFailover,
  createSerialTask,
  createSchedule,
  decodeJson,
  encodeJson,
  ensureNode,
  hasErrorCode,
  inspectNode,
  checkShardState,
  isRetryable,
  parseCommand,
  parseCommandName,
  parseJobConfig,
  paths,
  readJson,
  readShard,
  toError,
  type Applied,
  type Claim,
  type CommandNode,
  type Emitter,
  type JobConfig,
  type LeaderLatch,
  type Logger,
  type Schedule,
  type ShardOutcome,
  type ShardState,
  type ZkClient,
} from '@orrery/core';
import type { ExecutorEvents } from './executor-events.js';
import type { ExecutorMetrics } from './executor-metrics.js';
import type { ClaimLead } from './claim-lead.js';
import { ON_TIME_TOLERANCE_MS, planFire } from './fire-plan.js';
import type { History, RunRecord } from './history.js';
import type { JobModules } from './job-modules.js';
import type { NodePool } from './node-pool.js';
import type { RunAlarms } from './run-alarms.js';
import type { RunHandle, RunResult } from './run-types.js';
import { runShell } from './shell-runner.js';

/** What a job runtime gets from its executor. */
export interface RuntimeContext {
  zk: ZkClient;
  namespace: string;
  executor: string;
  logger: Logger;
  emitter: Emitter<ExecutorEvents>;
  metrics: ExecutorMetrics;
  history: History;
  nodePool: NodePool;
  modules: JobModules;
  killGraceMs: number;
  tmpDir: string;
  alarms: RunAlarms;
  /** True when `executor` is online with ZooKeeper session `session`. */
  isAlive(executor: string, session: string): Promise<boolean>;
  /** Records a shell run's process group while it runs (fence guard, orphan records). */
  trackProcessGroup?(pgid: number, job: string, runId: string, done: Promise<unknown>): void;
  /** False while new runs must not start (no live session, or the fence is near). */
  canStart(): boolean;
  /** Sends a webhook alarm for an event of this job (failover). */
  eventAlarm?(kind: 'failover', job: string, body: Record<string, unknown>): void;
  /** How early to claim a cron fire's shards so that runs start on time (see claim-lead.ts). */
  claimLead: ClaimLead;
  /** Takes the executor's secret values out of a run's message before it goes to ZooKeeper (job-env.ts). */
  redact?(text: string): string;
  /** This job now has `items` Node shards to run here (0: none), so the pool can start workers ahead. */
  nodeDemand?(job: string, items: number): void;
  /** The environment shell jobs start from: the executor's without Orrery's secrets (job-env.ts). */
  jobEnv?: Readonly<Record<string, string>>;
}

interface ActiveRun {
  runId: string;
  fireTime: number;
  handle: RunHandle | undefined;
  finished: Promise<void>;
  /** Handed to a Node worker ahead of its fire time and not started yet: can be withdrawn. */
  pending?: boolean;
  /** Stopped by the self-fence (ZooKeeper did not answer in time). */
  fenced?: boolean;
}

type Trigger = RunRecord['trigger'];

/** The job leader deletes command nodes older than this (ms). */
/** How much of a reset shard node's data its log line quotes, in characters. */
const RESET_QUOTE_CHARS = 200;

const COMMAND_MAX_AGE_MS = 60_000;
/** Commands requested this long (ms) before the runtime started are history, not requests. */
const COMMAND_HISTORY_SLACK_MS = 5000;
/** A command pass that could not read a command (connection loss) runs again this long (ms) after, once connected. */
const COMMAND_RETRY_MS = 500;
/** Why a command node was skipped (the `reason` label of `orrery_executor_commands_skipped_total`). */
type CommandSkipReason = 'name' | 'json' | 'invalid' | 'unreadable';

export interface JobRuntime {
  readonly job: string;
  /** The items the latest summary gives this executor. */
  setSummaryItems(items: readonly number[]): void;
  /** Re-sets every watch (after a new ZooKeeper session). */
  rewatch(): void;
  /** A presence changed somewhere: a leader re-checks claims of dead sessions. */
  onPresenceChange(): void;
  /** Items running now. */
  readonly running: number;
  /** Stops every run now (self-fencing): SIGTERM, SIGKILL after `graceMs`. Resolves the number stopped. */
  fence(graceMs: number): number;
  /** Starts no new run from now on (graceful shutdown); runs in progress go on. */
  stopFiring(): void;
  /** Resolves when no run of this job is in progress here. */
  whenIdle(): Promise<void>;
  /** Stops firing, leaves the latch; runs in progress are left to finish unless `stopRuns` (SIGKILL after `graceMs`, default the kill grace). */
  close(options?: { stopRuns?: boolean; graceMs?: number }): Promise<void>;
}

export function createJobRuntime(ctx: RuntimeContext, job: string): JobRuntime {
  const { zk, namespace, executor, emitter, metrics } = ctx;
  const logger = ctx.logger.child({ job });
  let config: JobConfig | undefined;
  let schedule: Schedule | undefined;
  let summaryItems = new Set<number>();
  let applied: Applied | undefined;
  let effective = new Set<number>();
  let handledUntil = 0;
  /** Fires at or before this are never caught up as missed (see `onConfig`). */
  let lookBackFrom = 0;
  /** The next fire time as planned at the last tick (the common case needs no re-planning). */
  let planned: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  /** Graceful shutdown: no new run starts. */
  let stopped = false;
  const active = new Map<number, ActiveRun>();
  const queued = new Map<number, { fireTime: number; trigger: Trigger; attempt: number; param?: string }>();
  const seenCommands = new Set<string>();
  // Each item's shard node as this executor last wrote it: the next claim then needs no read.
  const known = new Map<number, { version: number; state: ShardState }>();
  const startedAt = Date.now();
  const latch: LeaderLatch = createLeaderLatch(zk, paths.jobLeader(namespace, job), { id: executor, createParents: false });
  const offs: Array<() => void> = [];
  let shardsReady = false;

  // ---- watches ------------------------------------------------------------------------------

  const watchConfig = async (): Promise<void> => {
    if (closed) return;
    try {
      const { data, stat } = await zk.get(paths.job(namespace, job), () => void watchConfig());
      const next = parseJobConfig(decodeJson(data, paths.job(namespace, job)));
      onConfig(next, stat.mtime);
    } catch (error) {
      const code = errorCode(error);
      if (code === 'no-node') onConfig(undefined);
      else if (code === 'validation' || code === 'bad-data') logger.error({ err: toError(error) }, 'job config is invalid; keeping the last valid one');
      else if (!isRetryable(error)) emitter.emit('error', toError(error));
    }
  };

  const watchApplied = async (): Promise<void> => {
    if (closed) return;
    try {
      const stat = await zk.exists(paths.jobApplied(namespace, job), () => void watchApplied());
      if (!stat) return;
      const read = await readJson(zk, paths.jobApplied(namespace, job), checkApplied);
      if (!read) return;
      const value = read.value;
      if (applied && value.allocatorEpoch < applied.allocatorEpoch) return; // a deposed allocator's epoch
      applied = value;
      recompute();
    } catch (error) {
      if (!isRetryable(error)) {
        logger.error({ err: toError(error) }, 'cannot read the applied assignment');
        emitter.emit('error', toError(error));
      }
    }
  };

  // Command passes run one at a time: two passes never read (and act on) the same node at once.
  const commandPass = createSerialTask(() => readCommands(), () => !closed);
  let commandRetry: NodeJS.Timeout | undefined;
  const watchCommands = (): void => {
    if (!closed) commandPass.trigger();
  };

  /**
   * One pass over the job's commands: lists them (setting the watch again) and reads, in name order,
   * each one not read before. A command is marked seen only once it was read: a read that fails with
   * a retryable error (connection loss) leaves it and the rest unseen, and another pass runs once
   * connected — a broken link never loses a command. A node that cannot be parsed (not JSON, not a
   * command, a name of no known form) is logged once, counted and skipped.
   */
  async function readCommands(): Promise<void> {
    if (closed) return;
    let retry = false;
    try {
      // Never `mkdirp`: a job someone deleted must stay deleted (see ensureNode).
      if (!(await ensureNode(zk, paths.jobCommands(namespace, job)))) return;
      const names = (await zk.getChildren(paths.jobCommands(namespace, job), () => watchCommands())).sort();
      // A name no longer listed was deleted (pruned): forget it, so the set stays small.
      const listed = new Set(names);
      for (const name of seenCommands) if (!listed.has(name)) seenCommands.delete(name);
      const unseen = names.filter((name) => !seenCommands.has(name));
      if (unseen.length > 0) emitter.emit('commands:listed', { job, names: unseen });
      for (const name of unseen) {
        if (closed) return;
        const read = await readCommand(name);
        if (read === 'retry') {
          retry = true;
          break;
        }
        seenCommands.add(name);
        if (read) onCommand(name, read);
      }
      if (latch.isLeader) pruneCommands(names);
    } catch (error) {
      if (isRetryable(error)) retry = true;
      else emitter.emit('error', toError(error));
    }
    if (retry) retryCommandsLater();
  }

  /**
   * Reads one command node: the parsed node; `undefined` when there is nothing to do (deleted
   * meanwhile, from before this runtime started, or skipped as unparsable); `'retry'` when the read
   * failed with an error a later read may not have.
   */
  async function readCommand(name: string): Promise<CommandNode | undefined | 'retry'> {
    // Only a name of a known form is read: any other is no request of ours.
    if (!parseCommandName(name)) return skipCommand(name, 'name', 'the name is of no known form (cmd-<seq>, downstream-<job>-<fireTime>, failover-<item>-<fireTime>, repair-<item>)');
    const path = paths.jobCommand(namespace, job, name);
    let data: Buffer | null;
    try {
      ({ data } = await zk.get(path));
    } catch (error) {
      if (hasErrorCode(error, 'no-node')) return undefined;
      if (isRetryable(error)) {
        logger.warn({ err: toError(error), node: path }, 'could not read a command; it is read again once connected');
        return 'retry';
      }
      return skipCommand(name, 'unreadable', toError(error).message);
    }
    const checked = inspectNode(data, path, (input) => checkCommandNode(name, input));
    if (!checked.ok) return skipCommand(name, checked.issues[0]?.rule === 'json' ? 'json' : 'invalid', checked.problem);
    // Commands from before this runtime started, by more than a moment, are history.
    if (checked.value.command.requestedAt < startedAt - COMMAND_HISTORY_SLACK_MS) return undefined;
    return checked.value;
  }

  /** Logs (once: the node is then seen), counts and reports a command node that cannot be parsed. */
  function skipCommand(name: string, reason: CommandSkipReason, problem: string): undefined {
    const node = COMMAND_NODE_PATTERN.test(name) ? paths.jobCommand(namespace, job, name) : paths.jobCommands(namespace, job);
    logger.warn({ node, name, reason, problem }, 'command skipped: it cannot be parsed');
    metrics.commandsSkipped.inc({ reason });
    emitter.emit('command:skipped', { job, name, reason, problem });
    return undefined;
  }

  /** One more command pass once connected (at most one waits at a time). */
  function retryCommandsLater(): void {
    if (closed || commandRetry) return;
    commandRetry = setTimeout(() => {
      void untilConnected().then(() => {
        commandRetry = undefined;
        watchCommands();
      });
    }, COMMAND_RETRY_MS);
    commandRetry.unref();
  }

  // ---- state changes ------------------------------------------------------------------------

  /**
   * @param changedAt when the config was last written (the node's mtime): a first look back for
   *   missed fires starts no earlier — a fire from before the job was enabled (or changed) is not
   *   a missed one.
   */
  function onConfig(next: JobConfig | undefined, changedAt = 0): void {
    const before = config;
    config = next;
    if (!next?.enabled) withdrawPending(() => true);
    reportDemand();
    if (!next) {
      stopTimer();
      return;
    }
    const scheduleChanged = !before || before.cron !== next.cron || before.timeZone !== next.timeZone
      || before.pausePeriodDate !== next.pausePeriodDate || before.pausePeriodTime !== next.pausePeriodTime || before.enabled !== next.enabled;
    if (scheduleChanged) {
      schedule = next.cron ? createSchedule({ cron: next.cron, timeZone: next.timeZone, pausePeriodDate: next.pausePeriodDate, pausePeriodTime: next.pausePeriodTime }) : undefined;
      planned = undefined;
      // From now on; a first start looks back over the misfire threshold (a restart or a new shard).
      const now = Date.now();
      lookBackFrom = before ? now : Math.min(now, Math.max(changedAt, now - (next.misfire.policy === 'fire-once' ? next.misfire.thresholdSeconds * 1000 : 0)));
      handledUntil = lookBackFrom;
      if (before) logger.info({ cron: next.cron, enabled: next.enabled }, 'job schedule changed');
    }
    tick();
  }

  function recompute(): void {
    const mine = new Set(applied?.items[executor] ?? []);
    const next = new Set([...mine].filter((i) => summaryItems.has(i)));
    const gained = [...next].filter((i) => !effective.has(i));
    const changed = gained.length > 0 || [...effective].some((i) => !next.has(i));
    effective = next;
    if (!changed) return;
    withdrawPending((item) => !next.has(item));
    reportDemand();
    const items = [...next].sort((a, b) => a - b);
    logger.info({ items }, 'items changed');
    emitter.emit('items:changed', { job, items });
    // A gained item may hold a crashed run marked for failover: re-run it at once.
    if (config?.enabled && config.failover && !config.localMode) for (const item of gained) void takeFailover(item);
    // A gained item catches up a fire it missed within the misfire threshold (the claim refuses it
    // if its previous owner already ran that fire).
    if (config?.enabled && schedule && config.misfire.policy === 'fire-once' && gained.length > 0) {
      const now = Date.now();
      const recent = schedule.between(now - config.misfire.thresholdSeconds * 1000, now, 1000).at(-1);
      if (recent !== undefined && recent > lookBackFrom && recent <= handledUntil) for (const item of gained) void runShard(item, recent, 'misfire', 1);
    }
  }

  /** Node runs handed to a worker ahead of their fire time that should no longer start: taken back. */
  function withdrawPending(which: (item: number) => boolean): void {
    for (const [item, run] of active) if (run.pending && which(item)) run.handle?.withdraw?.();
  }

  /** Tells the executor how many Node shards this job runs here, and preloads its module. */
  function reportDemand(): void {
    const module = !closed && config?.type === 'node' && config.enabled && config.handler ? ctx.modules.get(config.handler) : undefined;
    if (module && effective.size > 0) ctx.nodePool.preload(module);
    ctx.nodeDemand?.(job, module ? effective.size : 0);
  }

  // ---- the timer ------------------------------------------------------------------------------

  function stopTimer(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
  }

  /** Wakes up `lead` ms before the planned fire (claims go out early; runs start on time). */
  function arm(): void {
    if (planned === undefined) return;
    const period = Math.max(0, planned - handledUntil);
    const lead = Math.min(ctx.claimLead.leadMs(), Math.floor(period * 0.4));
    timer = setTimeout(tick, Math.min(Math.max(0, planned - lead - Date.now()), 3_600_000));
  }

  function tick(): void {
    stopTimer();
    if (closed || !config || !config.enabled || !schedule) return;
    const now = Date.now();
    // Fast path: the planned fire is at hand (just ahead, or on time): fire first, plan after.
    if (planned !== undefined && planned > handledUntil && now - planned <= ON_TIME_TOLERANCE_MS && planned - now <= ctx.claimLead.maxLeadMs + 50) {
      const fireTime = planned;
      handledUntil = fireTime;
      if (fireTime > now) fireEarly(fireTime);
      else fire(fireTime, 'cron');
      planned = schedule.next(handledUntil);
      arm();
      return;
    }
    const plan = planFire(schedule, handledUntil, now, config.misfire);
    handledUntil = plan.handledUntil;
    for (const t of plan.skipped) {
      metrics.fires.inc({ outcome: 'misfire' });
      emitter.emit('fire:skipped', { job, item: undefined, fireTime: t, reason: 'misfire' });
    }
    if (plan.fire !== undefined) fire(plan.fire, now - plan.fire > ON_TIME_TOLERANCE_MS ? 'misfire' : 'cron');
    planned = plan.next;
    // Long waits are re-planned at least hourly (a timer cannot wait more than ~24 days).
    arm();
  }

  function fire(fireTime: number, trigger: Trigger): void {
    for (const item of [...effective].sort((a, b) => a - b)) void runShard(item, fireTime, trigger, 1);
  }

  /**
   * A fire just ahead: idle items are claimed now and start at the fire time; an item still running
   * here is left to the overlap policy at the fire time itself, as if nothing were early.
   */
  function fireEarly(fireTime: number): void {
    for (const item of [...effective].sort((a, b) => a - b)) {
      if (active.has(item)) {
        setTimeout(() => void runShard(item, fireTime, 'cron', 1), Math.max(0, fireTime - Date.now())).unref();
      } else void runShard(item, fireTime, 'cron', 1, undefined, fireTime);
    }
  }

  // ---- one run --------------------------------------------------------------------------------

  /** At most one fire waits per item: a later one replaces it, and the replaced one is reported. */
  function enqueue(item: number, entry: { fireTime: number; trigger: Trigger; attempt: number; param?: string }): void {
    const before = queued.get(item);
    if (before && before.fireTime !== entry.fireTime) {
      metrics.fires.inc({ outcome: 'overlap-skipped' });
      emitter.emit('fire:skipped', { job, item, fireTime: before.fireTime, reason: 'overlap' });
    }
    queued.set(item, entry);
  }

  async function runShard(item: number, fireTime: number, trigger: Trigger, attempt: number, param?: string, startAt?: number): Promise<void> {
    const c = config;
    if (closed || stopped || !c || !effective.has(item)) return;
    if (!ctx.canStart() && !(await waitUntilStartable(c, fireTime, trigger))) {
      metrics.fires.inc({ outcome: 'not-connected' });
      emitter.emit('fire:skipped', { job, item, fireTime, reason: 'not-connected' });
      return;
    }
    if (closed || stopped || !effective.has(item)) return;
    const mine = active.get(item);
    if (mine) {
      if (trigger === 'failover') {
        // A failover re-run waits for what still runs here (a fenced run being killed, say — the
        // very run it replaces, perhaps); its claim succeeds only from the failover mark.
        enqueue(item, { fireTime, trigger, attempt });
        return;
      }
      if (c.overlap === 'skip') {
        metrics.fires.inc({ outcome: 'overlap-skipped' });
        emitter.emit('fire:skipped', { job, item, fireTime, reason: 'overlap' });
        return;
      }
      if (c.overlap === 'queue') {
        enqueue(item, { fireTime, trigger, attempt, ...(param !== undefined ? { param } : {}) });
        return;
      }
      mine.handle?.stop('replace');
      await mine.finished;
    }
    const run: ActiveRun = { runId: `${Date.now().toString(36)}-${item}-${randomBytes(3).toString('hex')}`, fireTime, handle: undefined, finished: Promise.resolve() };
    let release!: () => void;
    run.finished = new Promise<void>((r) => { release = r; });
    active.set(item, run);
    try {
      await execute(c, item, fireTime, trigger, attempt, param, run, startAt);
    } catch (error) {
      if (isRetryable(error)) {
        // ZooKeeper kept failing (its link lost again and again): this fire did not run here.
        metrics.fires.inc({ outcome: 'not-connected' });
        emitter.emit('fire:skipped', { job, item, fireTime, reason: 'not-connected' });
      } else if (hasErrorCode(error, 'bad-data')) {
        // The shard node holds something that is not a shard state (written by hand, say): this
        // fire cannot be claimed. Counted as a fire not run; the job leader resets the node.
        logger.error({ err: toError(error), item, fireTime, node: paths.jobShard(namespace, job, item) }, 'shard node holds invalid data; asking the job leader to reset it');
        metrics.fires.inc({ outcome: 'bad-shard' });
        emitter.emit('fire:skipped', { job, item, fireTime, reason: 'bad-shard' });
        void requestRepair(item);
      } else {
        logger.error({ err: toError(error), item, fireTime }, 'run failed to execute');
        emitter.emit('error', toError(error));
      }
    } finally {
      active.delete(item);
      release();
      const next = queued.get(item);
      if (next && !closed) {
        queued.delete(item);
        void runShard(item, next.fireTime, next.trigger, next.attempt, next.param);
      }
    }
  }

  async function execute(c: JobConfig, item: number, fireTime: number, trigger: Trigger, attempt: number, param: string | undefined, run: ActiveRun, startAt?: number): Promise<void> {
    if (!shardsReady) {
      if (!(await ensureNode(zk, paths.jobShards(namespace, job)))) {
        // The job's node is gone (deleted): nothing to claim, and nothing to bring back.
        metrics.fires.inc({ outcome: 'job-deleted' });
        emitter.emit('fire:skipped', { job, item, fireTime, reason: 'job-deleted' });
        return;
      }
      shardsReady = true;
    }
    const path = paths.jobShard(namespace, job, item);
    const startedAt = Date.now();
    const knownState = known.get(item);
    known.delete(item);
    const request = {
      executor, session: zk.sessionId ?? '', runId: run.runId, fireTime, attempt, startedAt,
      rerun: attempt > 1 || trigger === 'run-now' || trigger === 'downstream',
      failover: trigger === 'failover',
    };
    let claim;
    for (let tries = 1; claim === undefined; tries += 1) {
      try {
        claim = await claimShard(zk, path, tries === 1 && knownState ? { ...request, known: knownState } : request);
      } catch (error) {
        // ZooKeeper unreachable for a moment (a server or the quorum leader gone): once connected
        // again in the same session, claim once more if the misfire policy still allows this fire
        // (a claim whose answer was lost is recognised as ours).
        if (!isRetryable(error) || tries === 3) throw error;
        const session = zk.sessionId;
        const startable = await waitUntilStartable(c, fireTime, trigger === 'failover' ? 'cron' : trigger);
        if (!startable || zk.sessionId !== session) {
          metrics.fires.inc({ outcome: 'not-connected' });
          emitter.emit('fire:skipped', { job, item, fireTime, reason: 'not-connected' });
          return;
        }
      }
    }
    if (trigger === 'cron') ctx.claimLead.observe(fireTime, Date.now() - startedAt);
    if (claim.claimed && startAt !== undefined && Date.now() < startAt) {
      // Claimed ahead of the fire time: start on the dot, unless the item or the job went meanwhile.
      if (closed || !config?.enabled || !effective.has(item)) {
        await releaseClaim(item, claim.claim);
        return;
      }
      // A Node run goes to its worker now, which starts it on the dot (withdrawn if the item or the
      // job goes meanwhile); a shell run is spawned here at the fire time.
      if (c.type === 'node' && c.handler && ctx.modules.has(c.handler)) return runClaimed(c, item, fireTime, trigger, attempt, param, run, claim.claim, startAt);
      await new Promise((resolve) => setTimeout(resolve, startAt - Date.now()));
      if (closed || !config?.enabled || !effective.has(item)) {
        await releaseClaim(item, claim.claim);
        return;
      }
    }
    if (!claim.claimed && claim.reason === 'failover-pending') {
      // A crashed fire of this item waits for its re-run: that comes first.
      metrics.fires.inc({ outcome: 'failover-pending' });
      emitter.emit('fire:skipped', { job, item, fireTime, reason: 'failover-pending' });
      if (trigger !== 'failover') queueMicrotask(() => void takeFailover(item));
      return;
    }
    if (!claim.claimed) {
      const reason = claim.reason;
      if (reason === 'running' && c.overlap !== 'skip' && claim.holder.executor !== executor) {
        // Held by another executor (a shard that just moved): wait for it, then try once more.
        await waitForIdle(path, Math.max(1000, (schedule?.next(fireTime) ?? fireTime + 60_000) - Date.now()));
        if (!closed && effective.has(item)) {
          const again = await claimShard(zk, path, { executor, session: zk.sessionId ?? '', runId: run.runId, fireTime, attempt, startedAt: Date.now(), rerun: true });
          if (again.claimed) return runClaimed(c, item, fireTime, trigger, attempt, param, run, again.claim);
        }
      }
      metrics.fires.inc({ outcome: reason === 'running' ? 'overlap-skipped' : reason });
      emitter.emit('fire:skipped', { job, item, fireTime, reason: reason === 'running' ? 'overlap' : reason });
      return;
    }
    return runClaimed(c, item, fireTime, trigger, attempt, param, run, claim.claim);
  }

  /**
   * A cron fire that comes while no run may start (ZooKeeper out of reach for a moment: a server or
   * the quorum leader gone) waits — as long as `misfire: fire-once` lets it run late — for the
   * executor to be able to start runs again. Resolves whether it may run now.
   */
  async function waitUntilStartable(c: JobConfig, fireTime: number, trigger: Trigger): Promise<boolean> {
    if (trigger === 'retry') return false;
    // As late as the misfire policy lets a fire run (a fire under 1 s late is on time for either);
    // a failover re-run is late by nature, and waits up to a minute (its mark stays meanwhile, and
    // the item's next fire tries again); so does a command's run (run-now, downstream): a run someone
    // asked for is not dropped because the link was down when its command was read.
    const deadline = trigger === 'failover' || trigger === 'run-now' || trigger === 'downstream'
      ? Date.now() + 60_000
      : fireTime + (c.misfire.policy === 'fire-once' ? Math.max(c.misfire.thresholdSeconds * 1000, ON_TIME_TOLERANCE_MS) : ON_TIME_TOLERANCE_MS);
    while (!closed && !stopped && Date.now() < deadline) {
      if (ctx.canStart()) return true;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return ctx.canStart() && Date.now() < deadline;
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
    const deadline = Date.now() + timeoutMs;
    while (!closed && Date.now() < deadline) {
      const changed = new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(1000, deadline - Date.now()));
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

  async function runClaimed(c: JobConfig, item: number, fireTime: number, trigger: Trigger, attempt: number, param: string | undefined, run: ActiveRun, claim: Claim, startAt?: number): Promise<void> {
    const startedAt = Date.now();
    const logs = ctx.history.logPaths(job, run.runId);
    const shardParam = c.shardingItemParameters[String(item)] ?? '';
    const jobParam = param ?? c.jobParameter;
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
      ORRERY_RUN_ID: run.runId,
      ORRERY_FENCING_TOKEN: String(claim.fencingToken),
      ORRERY_ATTEMPT: String(attempt),
      ORRERY_TRIGGER: trigger,
    };
    const onStart = (at: number): void => {
      run.pending = false;
      const lateMs = Math.max(0, at - fireTime);
      metrics.lateness.observe({ trigger }, lateMs / 1000);
      emitter.emit('run:started', { job, item, fireTime, runId: run.runId, attempt, lateMs, trigger, fencingToken: claim.fencingToken });
    };
    // A run handed over ahead of its fire time says so when its worker starts it.
    if (startAt === undefined) onStart(startedAt);
    let result: RunResult;
    if (c.type === 'shell') {
      const handle = runShell({
        command: c.command ?? 'false',
        env,
        ...(ctx.jobEnv ? { baseEnv: ctx.jobEnv } : {}),
        resultFile: join(ctx.tmpDir, `${run.runId}.result.json`),
        stdoutPath: logs.stdout,
        stderrPath: logs.stderr,
        timeoutMs,
        killGraceMs: ctx.killGraceMs,
        maxLogBytes: ctx.history.maxLogBytes,
        onLogError: (error) => logger.warn({ err: error, item, runId: run.runId }, 'could not write a run log: its output is discarded'),
        onSpawn: (pgid) => ctx.trackProcessGroup?.(pgid, job, run.runId, run.finished),
      });
      run.handle = handle;
      result = await handle.done;
    } else {
      const module = c.handler ? ctx.modules.get(c.handler) : undefined;
      if (!module) {
        result = { status: 'failed', exitCode: null, signal: null, message: `this executor has no handler '${c.handler}'`, stdoutTail: '', stderrTail: '', startedAt, endedAt: Date.now() };
      } else {
        const handle = ctx.nodePool.run({
          runId: run.runId, module, stdoutPath: logs.stdout, stderrPath: logs.stderr, timeoutMs, killGraceMs: ctx.killGraceMs, maxLogBytes: ctx.history.maxLogBytes,
          context: { namespace, job, shardItem: item, shardTotal: c.shardingTotalCount, shardParam, jobParam, fireTime, runId: run.runId, fencingToken: claim.fencingToken, attempt, trigger },
          ...(startAt !== undefined ? { startAt, onStart } : {}),
        });
        run.handle = handle;
        run.pending = startAt !== undefined;
        result = await handle.done;
      }
    }
    if (result.withdrawn) {
      // Taken back before it started: it never ran, so the claim is given back and nothing recorded.
      await releaseClaim(item, claim);
      return;
    }
    const outcome: ShardOutcome = {
      status: result.status,
      exitCode: result.exitCode,
      startedAt: result.startedAt,
      endedAt: result.endedAt,
      durationMs: Math.max(0, result.endedAt - result.startedAt),
      executor,
      runId: run.runId,
      fireTime,
      attempt,
      fencingToken: claim.fencingToken,
      // The shard node keeps a short message, never the output (it stays in the run record).
      message: clipShardMessage(ctx.redact ? ctx.redact(result.message) : result.message),
    };
    // A run the self-fence stopped whose claim still stands once ZooKeeper answers (the session
    // survived: the link was slow, not gone) did not fail, it was interrupted: with failover, its
    // fire is re-run as if it had crashed — a failover mark from its own claim.
    const handedOver = run.fenced === true && outcome.status === 'aborted' && c.failover && !c.localMode && !closed && config?.enabled === true && (await markFencedRun(item, claim));
    const recorded = !handedOver && (await complete(item, claim, outcome));
    if (!recorded && !handedOver) logger.warn({ item, runId: run.runId, fireTime }, 'the claim was taken over or its session is gone: outcome not recorded');
    await ctx.history.save({ ...outcome, job, item, trigger, recorded, stdoutTail: result.stdoutTail, stderrTail: result.stderrTail, ...(result.truncated ? { truncated: result.truncated } : {}) }).catch((error) => logger.error({ err: toError(error), runId: run.runId }, 'could not save the run record'));
    metrics.runs.inc({ outcome: outcome.status });
    metrics.duration.observe({ outcome: outcome.status }, outcome.durationMs / 1000);
    // Every run is in the history; the log gets a line per run only at debug, or when it did not succeed.
    const level = outcome.status === 'succeeded' ? 'debug' : 'warn';
    logger[level]({ item, fireTime, runId: run.runId, status: outcome.status, durationMs: outcome.durationMs, recorded, attempt, message: outcome.message }, 'run finished');
    emitter.emit('run:finished', { job, item, fireTime, runId: run.runId, status: outcome.status, recorded, attempt });

    if (!recorded || closed) return;
    if ((outcome.status === 'failed' || outcome.status === 'timed-out') && attempt <= c.retry.count) {
      setTimeout(() => void runShard(item, fireTime, 'retry', attempt + 1, param), c.retry.backoffSeconds * 1000).unref();
      return;
    }
    if (outcome.status === 'failed' || outcome.status === 'timed-out') ctx.alarms.runFailed(c, item, outcome);
    if (outcome.status === 'succeeded' && c.downstream.length > 0 && !c.localMode) void maybeTriggerDownstream(c, fireTime);
  }

  /** Resolves once the client is connected again (or this runtime or the client is closed). */
  async function untilConnected(): Promise<void> {
    while (!closed && zk.phase !== 'connected' && zk.phase !== 'closed') await zk.whenConnected(60_000).catch(() => undefined);
  }

  /**
   * Records a run's outcome: one compare-and-set from the claim's version, which fails if anyone
   * wrote the shard since (the job leader's failover mark of a claim whose session died, say): a
   * stale run records nothing. When ZooKeeper is out of reach, it tries again once connected (in
   * any session: the compare-and-set is the guard), checking first whether the lost write went
   * through — so a run that finished just as ZooKeeper went away is recorded rather than re-run,
   * unless the failover mark came first.
   */
  async function complete(item: number, claim: Claim, outcome: ShardOutcome): Promise<boolean> {
    for (let attempt = 0; attempt < 5; attempt += 1) {
      try {
        const completion = await completeShard(zk, claim, outcome);
        if (completion.recorded) known.set(item, { version: completion.version, state: completion.state });
        return completion.recorded;
      } catch (error) {
        if (!isRetryable(error)) {
          logger.warn({ err: toError(error), item, runId: outcome.runId }, 'could not record the outcome');
          return false;
        }
        try {
          await untilConnected();
          const now = await readShard(zk, claim.path);
          // Our write went through before the link dropped.
          if (now?.state.state === 'idle' && now.state.last?.runId === outcome.runId) return true;
          if (now?.state.state !== 'running' || now.state.runId !== claim.state.runId || now.version !== claim.version) return false;
        } catch {
          return false;
        }
      }
    }
    return false;
  }

  /**
   * Marks a run stopped by the self-fence for a failover re-run, from its own claim (one
   * compare-and-set, tried again once connected). False when the claim no longer stands (the job
   * leader marked it first: the session did expire) — then nothing is recorded either way.
   */
  async function markFencedRun(item: number, claim: Claim): Promise<boolean> {
    for (let attempt = 0; attempt < 5 && !closed; attempt += 1) {
      try {
        if (!(await markFailover(zk, claim.path, { state: claim.state, version: claim.version }))) return false;
        known.delete(item);
        logger.warn({ item, fireTime: claim.state.fireTime, runId: claim.state.runId }, 'a run stopped by the self-fence is marked for a failover re-run (its session survived)');
        await announceFailover(item, claim.state).catch((error) => logger.warn({ err: toError(error), item }, 'could not announce a failover mark (the item\'s next fire takes it up)'));
        return true;
      } catch (error) {
        if (!isRetryable(error)) {
          logger.warn({ err: toError(error), item, runId: claim.state.runId }, 'could not mark a fenced run for failover');
          return false;
        }
        await untilConnected();
      }
    }
    return false;
  }

  /** Tells everyone of a failover mark: the event, the `failover` webhook, and a command for the item's owner. */
  async function announceFailover(item: number, state: { executor: string; fireTime: number; runId: string }): Promise<void> {
    emitter.emit('failover:marked', { job, item, fireTime: state.fireTime, executor: state.executor, runId: state.runId });
    ctx.eventAlarm?.('failover', job, { item, fireTime: new Date(state.fireTime).toISOString(), crashedExecutor: state.executor, crashedRunId: state.runId });
    try {
      const command = parseCommand({ kind: 'failover', items: [item], fireTime: state.fireTime, requestedAt: Date.now() });
      await zk.create(paths.jobCommand(namespace, job, commandName.failover(item, state.fireTime)), encodeJson(command));
    } catch (error) {
      if (!hasErrorCode(error, 'node-exists')) throw error;
    }
  }

  /** Re-runs this item's crashed fire if the shard holds a failover mark (a new attempt). */
  async function takeFailover(item: number): Promise<void> {
    const c = config;
    if (closed || stopped || !c?.enabled || !c.failover || c.localMode || !effective.has(item)) return;
    try {
      const shard = await readShard(zk, paths.jobShard(namespace, job, item));
      if (shard?.state.state !== 'failover') return;
      const mark = shard.state;
      logger.warn({ item, fireTime: mark.fireTime, crashed: mark.executor, runId: mark.runId }, 'taking over a crashed run (failover)');
      await runShard(item, mark.fireTime, 'failover', mark.attempt + 1);
    } catch (error) {
      if (!isRetryable(error)) logger.error({ err: toError(error), item }, 'failover failed');
    }
  }

  /** When every shard of this fire has succeeded, triggers each downstream job exactly once. */
  async function maybeTriggerDownstream(c: JobConfig, fireTime: number): Promise<void> {
    try {
      await zk.sync(paths.jobShards(namespace, job));
      for (let i = 0; i < c.shardingTotalCount; i += 1) {
        const shard = await readShard(zk, paths.jobShard(namespace, job, i));
        const last = shard?.state.last;
        if (!shard || shard.state.state !== 'idle' || !last || last.fireTime !== fireTime || last.status !== 'succeeded') return;
      }
      const triggered: string[] = [];
      for (const d of c.downstream) {
        // A name made of this job and fire time: whoever sees the fire complete creates it, once.
        const path = paths.jobCommand(namespace, d, commandName.downstream(job, fireTime));
        try {
          if (!(await ensureNode(zk, paths.jobCommands(namespace, d)))) {
            logger.warn({ fireTime, downstream: d }, 'downstream job does not exist; not triggered');
            continue;
          }
          await zk.create(path, encodeJson(parseCommand({ kind: 'run', fireTime, requestedAt: Date.now(), triggeredBy: job })));
          triggered.push(d);
        } catch (error) {
          if (!hasErrorCode(error, 'node-exists')) throw error;
        }
      }
      if (triggered.length > 0) {
        logger.info({ fireTime, downstream: triggered }, 'downstream jobs triggered');
        emitter.emit('downstream:triggered', { job, fireTime, downstream: triggered });
      }
    } catch (error) {
      logger.error({ err: toError(error), fireTime }, 'could not trigger downstream jobs');
    }
  }

  // ---- commands -------------------------------------------------------------------------------

  /** Asks the job leader to reset a shard node this executor cannot read (one command per item at a time). */
  async function requestRepair(item: number): Promise<void> {
    if (latch.isLeader) {
      leaderCheck();
      return;
    }
    try {
      const command = parseCommand({ kind: 'repair', items: [item], requestedAt: Date.now() });
      await zk.create(paths.jobCommand(namespace, job, commandName.repair(item)), encodeJson(command));
    } catch (error) {
      if (!hasErrorCode(error, 'node-exists', 'no-node')) logger.warn({ err: toError(error), item }, 'could not ask the job leader to reset a shard node');
    }
  }

  function onCommand(name: string, { name: parts, command }: CommandNode): void {
    if (command.kind === 'repair') {
      leaderCheck();
      return;
    }
    const c = config;
    if (!c) return;
    const items = (command.items ?? [...effective]).filter((i) => effective.has(i));
    if (command.kind === 'failover') {
      for (const item of items) void takeFailover(item);
      return;
    }
    if (command.kind === 'stop') {
      for (const item of items) {
        queued.delete(item);
        active.get(item)?.handle?.stop('stop');
      }
      logger.info({ command: name, items }, 'stop command');
      return;
    }
    if (!c.enabled) {
      logger.warn({ command: name }, 'run command for a disabled job ignored');
      return;
    }
    const trigger: Trigger = parts.form === 'downstream' ? 'downstream' : 'run-now';
    const fireTime = command.fireTime ?? command.requestedAt;
    logger.info({ command: name, items, trigger }, 'run command');
    for (const item of items) void runShard(item, fireTime, trigger, 1, command.param);
  }

  function pruneCommands(names: string[]): void {
    for (const name of names) {
      // A name ZooKeeper lists but no path can hold is not Orrery's to delete.
      if (!COMMAND_NODE_PATTERN.test(name)) continue;
      const path = paths.jobCommand(namespace, job, name);
      void zk.exists(path).then((stat) => {
        if (stat && Date.now() - stat.ctime > COMMAND_MAX_AGE_MS) return zk.delete(path, stat.version);
        return undefined;
      }).catch(() => undefined); // best effort: an old command not pruned now is pruned on the next pass
    }
  }

  // ---- job leader -----------------------------------------------------------------------------

  // One leader pass at a time; events during a pass ask for one more.
  const leaderPass = createSerialTask(async () => {
    try {
      await releaseDeadClaims();
      await applyAssignment();
    } catch (error) {
      if (!isRetryable(error)) logger.error({ err: toError(error) }, 'job leader check failed');
    }
  }, () => latch.isLeader && !closed);
  const leaderCheck = (): void => {
    if (!closed && latch.isLeader) leaderPass.trigger();
  };

  /** Makes the latest assignment safe to run and publishes it as `applied`. */
  async function applyAssignment(): Promise<void> {
    const read = await zk.get(paths.jobAssignment(namespace, job), () => leaderCheck()).catch((error) => {
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
      if (!(await zk.exists(paths.executorPresence(namespace, e), () => leaderCheck()))) offline.push(e);
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
      // An unreadable node holds no live run (releaseDeadClaims resets it).
      const shard = await readShard(zk, path).catch((error: unknown) => {
        if (hasErrorCode(error, 'bad-data')) return undefined;
        throw error;
      });
      if (shard?.state.state === 'running' && (await ctx.isAlive(shard.state.executor, shard.state.session))) {
        // Look again when that run ends — or now, if it ended between the read and the watch.
        const stat = await zk.exists(path, () => leaderCheck());
        if (stat?.version !== shard.version) leaderCheck();
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
      if (code === 'bad-version' || code === 'node-exists') leaderCheck();
      else throw error;
    }
  }

  /** Assignments refused, by what was refused: each is logged, counted and re-planned once. */
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
   * A claim held by a session that no longer exists can never complete. With `failover` (and not
   * localMode) it is marked for a failover re-run and the owners are told (a `failover-…` command);
   * else it is released. A failover mark of a disabled job is cleared (it never runs late).
   */
  async function releaseDeadClaims(): Promise<void> {
    const c = config;
    if (!c) return;
    const failover = c.enabled && c.failover && !c.localMode;
    const items = await zk.getChildren(paths.jobShards(namespace, job)).catch(() => [] as string[]);
    for (const name of items) {
      const path = `${paths.jobShards(namespace, job)}/${name}`;
      const shard = await readShard(zk, path).catch(async (error: unknown) => {
        if (hasErrorCode(error, 'bad-data')) await resetShard(path, toError(error));
        return undefined;
      });
      if (!shard || shard.state.state === 'idle') continue;
      const { state } = shard;
      if (state.state === 'running' && (await ctx.isAlive(state.executor, state.session))) continue;
      if (state.state === 'failover' && failover) continue;
      if (state.state === 'running' && failover) {
        if (!(await markFailover(zk, path, { state, version: shard.version }))) continue;
        const item = Number(name);
        logger.warn({ item, executor: state.executor, fireTime: state.fireTime, runId: state.runId }, 'marked the run of a dead session for failover');
        await announceFailover(item, state);
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

  // ---- lifecycle ------------------------------------------------------------------------------

  offs.push(
    latch.on('leader:acquired', () => {
      logger.info('became job leader');
      leaderCheck();
      void watchCommands();
    }),
  );
  void latch.start().catch((error) => emitter.emit('error', toError(error)));
  void watchConfig();
  void watchApplied();
  void watchCommands();
  emitter.emit('job:started', { job });

  return {
    job,
    setSummaryItems(items) {
      summaryItems = new Set(items);
      recompute();
    },
    rewatch() {
      void watchConfig();
      void watchApplied();
      void watchCommands();
      leaderCheck();
    },
    onPresenceChange() {
      leaderCheck();
    },
    get running() {
      return active.size;
    },
    fence(graceMs) {
      queued.clear();
      for (const run of active.values()) {
        if (!run.handle) continue;
        run.fenced = true;
        run.handle.stop('fence', graceMs);
      }
      return active.size;
    },
    stopFiring() {
      stopped = true;
      stopTimer();
      queued.clear();
      withdrawPending(() => true);
    },
    async whenIdle() {
      while (active.size > 0) await Promise.all([...active.values()].map((r) => r.finished));
    },
    async close(options = {}) {
      if (closed) {
        // Closed before (a job this executor lost): its last runs may still be going.
        if (options.stopRuns) {
          for (const run of active.values()) run.handle?.stop('shutdown', options.graceMs);
          await Promise.all([...active.values()].map((r) => r.finished));
        }
        return;
      }
      closed = true;
      stopTimer();
      if (commandRetry) clearTimeout(commandRetry);
      withdrawPending(() => true);
      ctx.nodeDemand?.(job, 0);
      for (const off of offs.splice(0)) off();
      queued.clear();
      if (options.stopRuns) {
        for (const run of active.values()) run.handle?.stop('shutdown', options.graceMs);
        await Promise.all([...active.values()].map((r) => r.finished));
      }
      await latch.close();
      await leaderPass.settled();
      emitter.emit('job:stopped', { job });
    },
  };
}
