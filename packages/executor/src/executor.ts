/**
 * `createExecutor(options)`: an Orrery executor, as the `orrery-executor` process runs it or as a
 * TypeScript service embeds it.
 *
 * Joining: an ephemeral `presence` node (host, pid, version, start time, tags, the Node handlers of
 * `--jobs DIR`, HTTP address) that follows the executor across ZooKeeper sessions. A second live
 * executor with the same name in the namespace is refused with a clear error (a predecessor on the
 * same host whose process is gone is waited for instead: its session is about to expire).
 * Then it watches its own assignment summary — and for each job the summary names, that job's
 * config, `applied` node and commands (see job-runtime.ts) — never a watch or node per job it does
 * not run. Summaries from an older allocatorEpoch than one already seen are ignored.
 *
 * Failures: a session fence (session-fence.ts) stops every run before the session could expire
 * and starts no fire without a live session; a fence guard process kills the job process groups
 * if the executor freezes or dies. Shell runs' process groups are recorded on disk, and a restart
 * after a crash kills what its previous life left before it registers (orphans.ts).
 * `shutdown()` leaves gracefully: no new fires, presence marked `leaving` so the allocator moves
 * the shards away at once, runs in progress finish (up to a timeout), then `close()`.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync } from 'node:fs';
import { hostname, homedir } from 'node:os';
import { join } from 'node:path';
import pLimit from 'p-limit';
import {
  errorCode,
  ORRERY_VERSION,
  OrreryError,
  checkExecutorAssignment,
  checkExecutorInfo,
  hasErrorCode,
  isRetryable,
  createAlarmSender,
  createEmitter,
  createEphemeralNode,
  createMetrics,
  createZkClient,
  isProcessAlive,
  decodeJson,
  paths,
  readJson,
  silentLogger,
  toError,
  type AlarmPost,
  type EphemeralNode,
  type ExecutorInfo,
  type Logger,
  type Metrics,
  type Subscribable,
  type ZkClient,
} from '@orrery/core';
import type { ExecutorEvents } from './executor-events.js';
import { createClaimLead } from './claim-lead.js';
import { reportConnecting } from './connect-progress.js';
import { createExecutorMetrics } from './executor-metrics.js';
import { createHistory, type History } from './history.js';
import { startExecutorHttp, type ExecutorHttp } from './http-api.js';
import { jobEnvironment, redactSecrets, secretValues } from './job-env.js';
import { loadJobModules, type JobModules } from './job-modules.js';
import { createJobFolderWatch } from './job-folder-watch.js';
import { LEADER_APPLIES_AT_ONCE } from './job-leader.js';
import { createJobRuntime, type JobRuntime } from './job-runtime.js';
import { createNodePool, type NodePool } from './node-pool.js';
import { createRunAlarms } from './run-alarms.js';
import { createOrphanRecords } from './orphans.js';
import { createSessionFence, RUN_MARK_ENV, type SessionFence } from './session-fence.js';

/** Options of {@link createExecutor}. */
export interface ExecutorOptions {
  /** ZooKeeper `host:port[,…]`. */
  connect: string;
  /** Default `/orrery`. */
  root?: string;
  /** ZooKeeper digest credentials `user:password`: authenticate, and create nodes with Orrery's ACL. */
  zkAuth?: string;
  /** Default 10 000. */
  sessionTimeoutMs?: number;
  namespace: string;
  /** Default: the host name. */
  name?: string;
  /** Folder of Node job modules. */
  jobsDir?: string;
  tags?: string[];
  /** Run history and logs. Default `~/.local/state/orrery/<namespace>/<name>`. */
  dataDir?: string;
  /** Serve /healthz, /metrics and the run history on this port (0: any free port). */
  httpPort?: number;
  /** Bind address of the HTTP endpoint. Default `127.0.0.1` (this host only); `0.0.0.0` for every interface. */
  httpHost?: string;
  /** Host name put in `httpUrl`. Default: the host name. */
  advertiseHost?: string;
  /** Authenticates the run-history endpoint. */
  clusterToken?: string;
  /**
   * The environment jobs start from (shell jobs, Node job workers, the `--jobs` discovery child).
   * Default: this process's environment. Either way Orrery's own secrets (`BUILT_IN_SECRET_ENV`:
   * `ORRERY_CLUSTER_TOKEN`, `ORRERY_ZK_AUTH`, `ORRERY_ADMIN_PASSWORD`) and what `secretEnv` names
   * are removed from it, once, at `createExecutor`.
   */
  jobEnv?: Readonly<Record<string, string | undefined>>;
  /** More variables jobs never see: names, or a prefix and `*` (`AWS_*`); see `parseSecretEnv`. Default none. */
  secretEnv?: readonly string[];
  /** Between SIGTERM and SIGKILL on a timeout or stop, in ms. Default 5000. */
  killGraceMs?: number;
  /**
   * Claim each cron fire at least this many ms ahead of its time (default 20). The lead otherwise
   * follows the slowest recent claim, up to 800 ms and 40 % of the job's period; claiming ahead
   * keeps ZooKeeper's latency out of the runs' start.
   */
  claimAheadMs?: number;
  /** Start the fence guard process (default true; see session-fence.ts). */
  fenceGuard?: boolean;
  /** Node job worker processes. Default `{min: 1, max: 8}`; more start as Node shards are assigned. */
  nodeWorkers?: { min?: number; max?: number };
  /**
   * History retention. Defaults: 7 days, 1 GiB. The size bound holds at all times for kept runs
   * (each save evicts the oldest at once); runs in progress add at most `maxLogBytes × 2` each.
   * Age is applied at start and every 10 minutes.
   */
  historyMaxAgeMs?: number;
  historyMaxBytes?: number;
  /**
   * Each run's log cap per stream, in bytes (default 64 MiB): past it the output is discarded, the
   * log ends with a marker line and the run record's `truncated` says how much was lost.
   */
  maxLogBytes?: number;
  logger?: Logger;
  metrics?: Metrics;
  /** How run and failover alarms are POSTed (tests). Default: core's `fetchAlarmPost`. */
  postAlarm?: AlarmPost;
}

/** A running executor. */
export interface Executor extends Subscribable<ExecutorEvents> {
  readonly name: string;
  readonly namespace: string;
  readonly zk: ZkClient;
  readonly history: History;
  /** The HTTP endpoint's port, once started (if any). */
  readonly httpPort: number | undefined;
  /** Jobs this executor is assigned now. */
  jobs(): string[];
  start(): Promise<void>;
  /**
   * Leaves gracefully: starts no new fire, marks its presence `leaving` (the allocator moves its
   * shards away at once), waits up to `timeoutMs` for runs in progress, then `close()`.
   */
  shutdown(timeoutMs?: number): Promise<void>;
  /**
   * Stops: leaves its jobs, stops runs in progress (SIGTERM, SIGKILL after `graceMs`, default the
   * kill grace), removes its presence. Idempotent.
   */
  close(options?: { graceMs?: number }): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}


/** How long (ms) the first connection to ZooKeeper may take before `start()` fails. */
export const ZK_START_TIMEOUT_MS = 60_000;
/**
 * How long one step of `close()` (the presence, the workers, the guard, …) may take before the close
 * goes on without it; stopping the runs may take their kill grace on top.
 */
export const CLOSE_STEP_MS = 15_000;

export function createExecutor(options: ExecutorOptions): Executor {
  const name = options.name ?? hostname();
  const namespace = options.namespace;
  const logger = (options.logger ?? silentLogger()).child({ namespace, executor: name });
  const registry = options.metrics ?? createMetrics();
  const metrics = createExecutorMetrics(registry);
  const emitter = createEmitter<ExecutorEvents>((e) => logger.error({ err: e }, 'event listener failed'));
  const zkRoot = options.root ?? '/orrery';
  const zk = createZkClient({ connect: options.connect, root: zkRoot, sessionTimeoutMs: options.sessionTimeoutMs ?? 10_000, connectTimeoutMs: ZK_START_TIMEOUT_MS, metrics: registry, ...(options.zkAuth ? { auth: options.zkAuth } : {}) });
  const dataDir = options.dataDir ?? join(homedir(), '.local', 'state', 'orrery', namespace, name);
  const tmpDir = join(dataDir, 'tmp');
  const history = createHistory({ dataDir, maxAgeMs: options.historyMaxAgeMs, maxBytes: options.historyMaxBytes, maxLogBytes: options.maxLogBytes, logger: logger.child({ component: 'history' }) });
  const runtimes = new Map<string, JobRuntime>();
  /** Runtimes of jobs this executor no longer has, while their last runs finish. */
  const retired = new Set<JobRuntime>();
  const allRuntimes = (): JobRuntime[] => [...runtimes.values(), ...retired];
  const orphans = createOrphanRecords(dataDir);
  // An embedding service that gives no environment lends its own (the one read of process.env
  // outside main.ts): jobs always ran with it; now without Orrery's secrets.
  // Every job process carries this executor's run mark, so that its fence guard finds even a job
  // group it was never told about (spawned in the instant before the executor died).
  const runMark = randomBytes(16).toString('hex');
  const jobEnv = Object.freeze({ ...jobEnvironment(options.jobEnv ?? process.env, options.secretEnv ?? []), [RUN_MARK_ENV]: runMark });
  // What jobs may not see must not come back out in their messages either (ZooKeeper, alarms).
  const hidden = secretValues(options.jobEnv ?? process.env, options.secretEnv ?? []);
  const redact = (text: string): string => redactSecrets(text, hidden);
  let leaving = false;
  const fence: SessionFence = createSessionFence({
    zk, logger, runMark, killGraceMs: options.killGraceMs ?? 5000, guard: options.fenceGuard ?? true,
    onFence: (reason, graceMs) => {
      let runs = 0;
      for (const r of allRuntimes()) runs += r.fence(graceMs);
      metrics.fenced.inc({ reason });
      emitter.emit('fenced', { reason, runs });
    },
  });
  /** Node shards per job run here: the pool keeps that many workers (up to its max) started. */
  const nodeDemand = new Map<string, number>();
  const leaderApplies = pLimit(LEADER_APPLIES_AT_ONCE);
  const claimLead = createClaimLead(options.claimAheadMs !== undefined ? { minLeadMs: options.claimAheadMs } : {});
  let modules: JobModules = new Map();
  let nodePool: NodePool | undefined;
  let presence: EphemeralNode | undefined;
  let presenceInfo: ExecutorInfo | undefined;
  let http: ExecutorHttp | undefined;
  let maxAllocatorEpoch = 0;
  let closed = false;
  let closing: Promise<void> | undefined;
  /** Aborted by `close()`: a start still connecting to ZooKeeper gives up at once. */
  const closeSignal = new AbortController();
  /** `step`, unless the executor is closed first: then a `closed` error at once (the step goes on unheard). */
  const untilClosed = <T>(step: Promise<T>): Promise<T> => {
    if (closeSignal.signal.aborted) return Promise.reject(new OrreryError('closed', 'the executor was closed while it started'));
    return new Promise<T>((resolve, reject) => {
      const onClose = (): void => reject(new OrreryError('closed', 'the executor was closed while it started'));
      closeSignal.signal.addEventListener('abort', onClose, { once: true });
      step.then(resolve, reject).finally(() => closeSignal.signal.removeEventListener('abort', onClose));
    });
  };
  let started = false;
  let pruneTimer: NodeJS.Timeout | undefined;
  const offs: Array<() => void> = [];
  const alarmSender = createAlarmSender({ logger: logger.child({ component: 'alarms' }), metrics: registry, ...(options.postAlarm ? { post: options.postAlarm } : {}) });
  // Runs in progress are read when /metrics is scraped.
  offs.push(registry.onCollect(() => {
    let running = 0;
    for (const r of allRuntimes()) running += r.running;
    metrics.running.set(running);
  }));
  const alarms = createRunAlarms({
    zk, namespace, executor: name, logger, sender: alarmSender,
    onSent: (job, kind) => {
      metrics.alarms.inc({ kind });
      emitter.emit('alarm:sent', { job, kind });
    },
  });

  async function isAlive(executor: string, session: string): Promise<boolean> {
    const stat = await zk.exists(paths.executorPresence(namespace, executor));
    return stat !== null && stat.ephemeralOwner === session;
  }

  function runtimeFor(job: string): JobRuntime {
    let r = runtimes.get(job);
    if (!r) {
      r = createJobRuntime({
        zk, namespace, executor: name, logger, emitter, metrics, history, nodePool: nodePool!, modules,
        killGraceMs: options.killGraceMs ?? 5000, tmpDir, alarms, isAlive, claimLead, jobEnv, redact, leaderApplies,
        canStart: () => !leaving && fence.canStart(),
        eventAlarm: (kind, j, body) => alarms.jobEvent(kind, j, body),
        trackProcessGroup: (pgid, j, runId, done) => {
          // Once this turn's spawns are done: a burst of fires spawns its runs back to back in one
          // turn, and telling the guard and writing the record (a third of a millisecond a run) would
          // make every later run of the burst start that much later. Until then the run mark covers
          // the group: the guard kills every process carrying it, at the fence deadline and when the
          // executor dies; a self-fence stops the run through its handle.
          setImmediate(() => {
            fence.track(pgid);
            const forget = orphans.record(pgid, j, runId);
            void done.finally(() => {
              fence.untrack(pgid);
              forget();
            });
          });
        },
        nodeDemand: (j, items) => {
          if (items > 0) nodeDemand.set(j, items);
          else nodeDemand.delete(j);
          let total = 0;
          for (const n of nodeDemand.values()) total += n;
          nodePool?.warm(total);
        },
      }, job);
      runtimes.set(job, r);
      metrics.jobs.set(runtimes.size);
    }
    return r;
  }

  async function watchSummary(): Promise<void> {
    if (closed) return;
    const path = paths.executorAssignment(namespace, name);
    try {
      const stat = await zk.exists(path, () => void watchSummary());
      const read = stat ? await readJson(zk, path, checkExecutorAssignment) : undefined;
      if (read && read.value.allocatorEpoch < maxAllocatorEpoch) {
        logger.warn({ theirs: read.value.allocatorEpoch, seen: maxAllocatorEpoch }, 'ignoring a summary from a deposed allocator');
        return;
      }
      if (read) maxAllocatorEpoch = read.value.allocatorEpoch;
      const jobs = read?.value.jobs ?? {};
      for (const [job, { items }] of Object.entries(jobs)) runtimeFor(job).setSummaryItems(items);
      for (const [job, runtime] of runtimes) {
        if (jobs[job]) continue;
        runtime.setSummaryItems([]);
        runtimes.delete(job);
        metrics.jobs.set(runtimes.size);
        retired.add(runtime);
        void runtime.close().then(() => runtime.whenIdle()).finally(() => retired.delete(runtime));
      }
    } catch (error) {
      const code = errorCode(error);
      if (code === 'bad-data') logger.error({ err: toError(error) }, 'the assignment summary is invalid; keeping the last one');
      else if (!isRetryable(error)) emitter.emit('error', toError(error));
    }
  }

  /**
   * Watches the executors' folder — its children are the executors' names, created once per name
   * and removed only by hand (the console), not their presences — and tells every job runtime when
   * it changes. (The name says more than it does; see JobRuntime.onPresenceChange.)
   */
  async function watchPresences(): Promise<void> {
    if (closed) return;
    try {
      await zk.getChildren(paths.executors(namespace), () => {
        for (const r of runtimes.values()) r.onPresenceChange();
        void watchPresences();
      });
    } catch (error) {
      if (!isRetryable(error)) emitter.emit('error', toError(error));
    }
  }

  /** Refuses a name another live executor uses; waits for a crashed predecessor's session to end. */
  async function checkName(): Promise<'free' | 'predecessor'> {
    const path = paths.executorPresence(namespace, name);
    // Only a missing node means the name is free: a connection loss says nothing about it (ask
    // again once connected), and any other error stops the start.
    let read: { data: Buffer | null; stat: { ephemeralOwner: string } } | undefined;
    for (let tries = 1; ; tries += 1) {
      try {
        read = await zk.get(path);
        break;
      } catch (error) {
        if (hasErrorCode(error, 'no-node')) break;
        if (!isRetryable(error) || tries >= 5) throw error;
        await zk.whenConnected();
      }
    }
    if (!read || read.stat.ephemeralOwner === zk.sessionId) return 'free';
    // A presence whose data cannot be read is still another live executor's (or a hand-made node).
    let decoded: unknown;
    try {
      decoded = decodeJson(read.data, path);
    } catch {
      decoded = undefined;
    }
    const info = checkExecutorInfo(decoded);
    const host = options.advertiseHost ?? hostname();
    if (info.ok && info.value.host === host && !isProcessAlive(info.value.pid)) return 'predecessor';
    const who = info.ok ? ` (host ${info.value.host}, pid ${info.value.pid}, started ${new Date(info.value.startedAt).toISOString()})` : '';
    throw new OrreryError('already-exists', `an executor named '${name}' is already online in namespace '${namespace}'${who}; give this one another --name`, {
      details: { namespace, executor: name },
    });
  }

  const executor: Executor = {
    name,
    namespace,
    zk,
    history,
    get httpPort() {
      return http?.port;
    },
    on: emitter.on,
    jobs: () => [...runtimes.keys()].sort(),
    async start() {
      if (started) throw new OrreryError('usage', 'this executor was started already');
      started = true;
      // Private: result files of runs land here.
      mkdirSync(tmpDir, { recursive: true, mode: 0o700 });
      chmodSync(tmpDir, 0o700);
      modules = await loadJobModules(options.jobsDir, undefined, jobEnv, logger);
      // What a crashed previous life of this executor left running dies before it registers.
      const reaped = await orphans.reap();
      if (reaped.length > 0) logger.warn({ groups: reaped }, 'killed job process groups left by a previous run of this executor');
      nodePool = createNodePool({
        min: modules.size > 0 ? (options.nodeWorkers?.min ?? 1) : 0,
        max: options.nodeWorkers?.max ?? 8,
        env: jobEnv,
        logger,
        onWorker: (pgid, exited) => {
          fence.track(pgid);
          void exited.then(() => fence.untrack(pgid));
        },
      });
      offs.push(zk.on('state', (s) => {
        metrics.zkConnected.set(s.state === 'CONNECTED' || s.state === 'RECONNECTED' ? 1 : 0);
        logger.info({ state: s.state, sessionId: s.sessionId, newSession: s.newSession }, 'zookeeper connection state');
      }));
      const stopReporting = reportConnecting({ logger, connect: options.connect, root: zkRoot, timeoutMs: ZK_START_TIMEOUT_MS });
      try {
        await untilClosed(zk.start());
      } finally {
        stopReporting();
      }
      metrics.zkConnected.set(1);
      await fence.start();
      if (!(await zk.exists(paths.namespace(namespace)))) {
        throw new OrreryError('not-found', `namespace '${namespace}' does not exist (create it with: orrery ns create ${namespace})`);
      }
      const nameState = await checkName();
      if (options.httpPort !== undefined) {
        http = await startExecutorHttp({
          port: options.httpPort, host: options.httpHost ?? '127.0.0.1', metrics: registry, history, clusterToken: options.clusterToken, logger,
          health: () => ({ ok: zk.phase === 'connected', zookeeper: zk.phase, executor: name, namespace, jobs: runtimes.size, version: ORRERY_VERSION }),
        });
      }
      const info: ExecutorInfo = presenceInfo = {
        host: options.advertiseHost ?? hostname(),
        pid: process.pid,
        version: ORRERY_VERSION,
        startedAt: Date.now(),
        handlers: [...modules.keys()].sort(),
        tags: options.tags ?? [],
        ...(http ? { httpUrl: `http://${options.advertiseHost ?? hostname()}:${http.port}` } : {}),
      };
      await zk.mkdirp(paths.executor(namespace, name));
      if (nameState === 'predecessor') logger.warn('waiting for the session of this executor\'s previous process to expire');
      // Its parents are made above, once: a namespace deleted while this executor runs is not
      // brought back (empty and broken) when the presence is re-created.
      presence = createEphemeralNode(zk, paths.executorPresence(namespace, name), info, { conflict: nameState === 'predecessor' ? 'wait' : 'fail', createParent: false });
      offs.push(presence.on('error', (error) => {
        if (hasErrorCode(error, 'no-node')) logger.error({ err: error }, 'the namespace (or this executor\'s node in it) was deleted: this executor is no longer registered and runs nothing; stop it, or restart it once the namespace exists again');
        else logger.warn({ err: error }, 'could not keep the presence node');
      }));
      await presence.start();
      if (options.jobsDir) {
        // Hot reload: edited, added or removed job modules take effect without a restart.
        const jobsWatch = createJobFolderWatch({
          dir: options.jobsDir, modules: modules as Map<string, string>, pool: nodePool, logger, env: jobEnv,
          onHandlers: (handlers) => {
            if (!presence || !presenceInfo || leaving) return;
            presenceInfo = { ...presenceInfo, handlers };
            presence.update(presenceInfo).catch((error: unknown) => logger.warn({ err: toError(error) }, 'could not announce the new handlers'));
          },
        });
        offs.push(() => jobsWatch.close());
      }
      offs.push(presence.on('node:created', ({ sessionId }) => emitter.emit('executor:registered', { name, sessionId })));
      offs.push(zk.on('session', () => {
        void watchSummary();
        void watchPresences();
        for (const r of runtimes.values()) r.rewatch();
      }));
      await watchSummary();
      await watchPresences();
      const prune = (): void => {
        history.prune().then(
          (removed) => { if (removed > 0) logger.info({ removed }, 'run history pruned'); },
          (error: unknown) => logger.warn({ err: toError(error) }, 'could not prune the run history'),
        );
      };
      prune();
      pruneTimer = setInterval(prune, 10 * 60_000);
      pruneTimer.unref();
      logger.info({ handlers: info.handlers, tags: info.tags, httpUrl: info.httpUrl }, 'executor registered');
      emitter.emit('executor:registered', { name, sessionId: zk.sessionId ?? '' });
    },
    async shutdown(timeoutMs = 30_000) {
      if (closed || leaving) return executor.close();
      leaving = true;
      const t0 = Date.now();
      for (const r of allRuntimes()) r.stopFiring();
      logger.info({ timeoutMs }, 'shutting down: no new fires; handing the shards over');
      if (presence && presenceInfo) await presence.update({ ...presenceInfo, leaving: true }).catch((error) => logger.warn({ err: toError(error) }, 'could not mark the presence as leaving'));
      const idle = Promise.all(allRuntimes().map((r) => r.whenIdle()));
      let timer: NodeJS.Timeout | undefined;
      const finished = await Promise.race([idle.then(() => true), new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), timeoutMs); })]);
      if (timer) clearTimeout(timer);
      logger.info({ ms: Date.now() - t0, runsFinished: finished }, finished ? 'runs in progress finished' : 'shutdown timeout: stopping the runs still in progress');
      await executor.close();
    },
    async close(closeOptions = {}) {
      if (closed) {
        // A second, quicker close (a second signal): stop what still runs now.
        if (closeOptions.graceMs !== undefined) for (const r of allRuntimes()) r.fence(closeOptions.graceMs);
        return closing;
      }
      closed = true;
      leaving = true;
      closeSignal.abort();
      let done!: () => void;
      closing = new Promise<void>((resolve) => { done = resolve; });
      for (const off of offs.splice(0)) off();
      if (pruneTimer) clearInterval(pruneTimer);
      // Each step is logged (debug), and none may hold the close for ever: one that outlasts its
      // bound is logged as an error naming it, and the close goes on (a process asked to stop stops).
      const step = async (what: string, action: () => Promise<unknown> | undefined, boundMs = CLOSE_STEP_MS): Promise<void> => {
        logger.debug({ step: what }, 'closing');
        let timer: NodeJS.Timeout | undefined;
        const outlasted = new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(true), boundMs); });
        const late = await Promise.race([Promise.resolve(action()).then(() => false), outlasted]);
        clearTimeout(timer);
        if (late) logger.error({ step: what, boundMs }, 'a step of the close did not finish in time: going on without it');
      };
      const runGraceMs = closeOptions.graceMs ?? options.killGraceMs ?? 5000;
      await step('jobs', () => Promise.all(allRuntimes().map((r) => r.close({ stopRuns: true, sessionEnding: true, ...(closeOptions.graceMs !== undefined ? { graceMs: closeOptions.graceMs } : {}) }))), runGraceMs + CLOSE_STEP_MS);
      runtimes.clear();
      await step('presence', () => presence?.close());
      await step('node workers', () => nodePool?.close());
      await step('fence', () => fence.close());
      await step('http', () => http?.close());
      await step('alarms', () => alarmSender.close());
      await step('zookeeper', () => zk.close());
      logger.debug('closed');
      emitter.clear();
      done();
    },
    [Symbol.asyncDispose]() {
      return executor.close();
    },
  };
  return executor;
}
