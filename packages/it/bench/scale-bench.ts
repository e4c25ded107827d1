/**
 * Scale benchmark: 10,000 jobs × 3 shards firing once a minute (second `i % 60` of every minute:
 * 500 shard runs a second on average) on 100 executor instances and one ZooKeeper.
 *
 * - ZooKeeper cost per job, read on the server: znodes (`mntr` zk_znode_count, delta from before
 *   the namespace existed) and watches (`mntr` zk_watch_count; `wchc` sorted by the kind of node
 *   watched and by who holds the watch: executors, allocator, console) once everything is applied,
 *   before the console starts and again with it; transactions per minute (the Zxid delta over a
 *   window of the jobs firing); each ÷ jobs, and a job's znodes listed by kind (the mean of a
 *   sample of job subtrees). The same again at the end, after the jobs are quieted and the
 *   executors cut to a few (the others' sessions closed at once, the shards reallocated): the
 *   per-job figures must not depend on the executor count.
 * - Scale run: full allocation (the allocator started once every executor is online: its own
 *   round time from its log, the pure `allocate()` on the same cluster timed in this process before
 *   anything runs, and the wall time from its spawn until every job's `applied` exists — the
 *   nodes' creation times, checked on ZooKeeper). The jobs are written quiet (once a year) and set
 *   firing once allocated: on one machine the runs of the jobs applied first would take the CPU
 *   the allocation of the rest needs — load a deployment spreads over 100 hosts — and at this size
 *   that starved the embedded instances into self-fencing. The console is started before they fire
 *   (loading the tree under that load took minutes). Then, with every job firing: the
 *   transaction window; the console's paged job list under 10 concurrent clients
 *   (autocannon: the first page, and a different page each request); a config change made through
 *   the console API until every executor holding the job logs `job schedule changed` (their pino
 *   times); kill -9 failover of a real `orrery-executor`
 *   process, alone (its fence guard closes its session) and with its guard and job (the session
 *   expires), until the re-run starts (run ledger), with its steps timed from the kill (presence
 *   gone, new assignment, the allocator's round, the survivor's job leadership, `applied`).
 *   With `quiet`, the console, config-change and failover measures again once every job's cron is
 *   moved to once a year: the job count's cost without the load of the jobs firing.
 * - Memory: peak RSS (VmHWM) of each kind of process, ZooKeeper's included, and mntr's data size.
 *
 * The executors: real `orrery-executor` processes (the failover victims, fence guard included) and
 * embedded instances, several per Node process (scale/executor-host.ts, no fence guard). The jobs
 * are Node no-op jobs (bench/jobs/noop.ts, one worker per instance): a Node run is a message to a
 * warm worker, where a shell run forks the executor — 500 forks a second of 100-MB processes would
 * take more than this machine's two cores.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createZkClient, encodeJson, isRetryable, parseJobConfig, paths, readJson, readShard, type ZkClient } from '@orrery/core';
import { eventually, freePort, startZooKeeper, uniqueRoot, type ZooKeeperServer } from '@orrery/core/testing';
import { createNamespace, runJobNow, stopJob } from '@orrery/console';
import { allocate, EMPTY_ALLOCATION, type Cluster } from '@orrery/sharding';
import { startProcess, type RunningProcess } from '../src/processes.js';
import { checkLedger, ledgerCommand, readLedger } from '../src/run-ledger.js';
import { autocannon, pool, strideRequests, type AutocannonRequest } from './console-bench.js';
import { machineSeconds } from './cost/proc.js';
import { QUIET_CRON, distribution, type Distribution } from './executor-bench.js';
import { descendantsRssMb, parseLogLine, processMemory, renice, startExecutorHost, type ExecutorHost, type LogEvent } from './scale/hosts.js';
import { JOB_KINDS, jobNodeKind, jobSubtree, normalSession, readMntr, tallyWatches, type Mntr, type NodeKind, type WatchRole, type WatchTally } from './scale/zk-cost.js';

const NS = 'scale';
const JOBS_DIR = fileURLToPath(new URL('./jobs/', import.meta.url));
/** The failover probe: a passive one-shard shell job kept on the real executors. */
const PROBE = 'failover-probe';
const ADMIN_PASSWORD = 'scale-bench-admin';
/** Jobs whose shard nodes are read after the transaction window (an even sample). */
const SHARD_SAMPLE_JOBS = 1000;
/** Creates in flight while jobs are written, and reads in flight while they are checked. */
const CONCURRENCY = 256;
/**
 * How long after a command a new job runtime may still take it for a request: the executor's
 * COMMAND_HISTORY_SLACK_MS (5 s) and a margin — a trial kills only once it has passed (see
 * failover-bench.ts, the known issue).
 */
const COMMAND_REPLAY_WINDOW_MS = 6000;

/** Saturn's published 2017 figures: a 5-node ensemble at 24,500 jobs × 3 shards, 2,100 executors. */
export const SATURN_2017 = { jobs: 24_500, executors: 2100, znodes: 3_050_000, watches: 7_570_000 } as const;
/** The targets (issue 16 and the earlier issues). */
export const SCALE_TARGETS = {
  znodesPerJob: 20, watchesPerJob: 30, fullAllocationComputeMs: 200, consoleListP99Ms: 50,
  configChangeMs: 1000, processFailoverP99Ms: 1500, sessionFailoverSlackMs: 1000,
} as const;

/** Options of {@link runScaleBench}; the defaults are the full size. */
export interface ScaleBenchOptions {
  jobs?: number;
  shards?: number;
  /** Executor instances in all, the real ones included. */
  executors?: number;
  /** Real `orrery-executor` processes among them (the failover victims); at least 2 for failover trials. */
  realExecutors?: number;
  /** Node processes the embedded instances are spread over. */
  hosts?: number;
  /** The executor count of the comparison (0: none). */
  compareExecutors?: number;
  /** The transaction window, in seconds. */
  txSeconds?: number;
  /** Measured seconds per console route (after a 3-s warm-up). */
  consoleSeconds?: number;
  configTrials?: number;
  /** Failover trials per kind of kill. */
  failoverTrials?: number;
  /** The real executors' session timeout (the failover victims: the product's default, 10 s). */
  sessionSeconds?: number;
  /**
   * The embedded instances' session timeout. Longer than the product's default: a hundred
   * instances on two cores stall for seconds while they start and while 30,000 shards are
   * allocated; at 10 s they fence themselves (an honest fence: no answered probe for 7 s), the
   * fence kills the Node workers of the runs in progress, and starting those again (0.2–0.7 s of
   * CPU each) stalls them further — a spiral that measures the machine, not ZooKeeper's cost.
   * At 30 s it still happened in a full allocation: every instance's probe waited 24 s while
   * 30,000 runtimes started at once on the two cores.
   */
  embeddedSessionSeconds?: number;
  /**
   * The niceness the executor hosts (the embedded instances and their Node workers) get once every
   * job is allocated; 0 leaves them as they are. They stand in for executors on their own hosts;
   * niced, they leave the CPU to the processes measured, and miss runs themselves when the machine
   * is saturated (see runScaleBench).
   */
  hostsNice?: number;
  /**
   * The niceness the executor hosts get once the transaction window is read, for the latency
   * measures (the console, config changes, failover); 0 keeps `hostsNice`. Higher than `hostsNice`:
   * a nice-10 thread weighs a tenth of a nice-0 one, a nice-19 thread a seventieth, and 25 hosts'
   * threads at nice 10 still took much of the saturated machine from the processes measured. Not
   * for the transaction window: the stand-ins' missed runs would make the transactions read low.
   */
  measureNice?: number;
  /** ZooKeeper's tickTime. */
  tickMs?: number;
  /**
   * Measure the console, config changes and failover again with the jobs quiet (default false: at
   * the full size, quieting 10,000 jobs under load takes minutes, past the bench's time budget).
   */
  quiet?: boolean;
}

/** ZooKeeper's cost at one executor count. */
export interface CostPoint {
  executors: number;
  /** Znodes of the bench's tree (mntr delta from before the namespace existed). */
  znodes: number;
  /** mntr's zk_watch_count (every watch on the server: all of them are the bench's). */
  watches: number;
  /** The watches of wchc by holder, and their sum (compare with `watches`). */
  watchesByRole: Record<WatchRole, number>;
  wchcTotal: number;
  perJob: { znodes: number; watches: number; executorWatches: number };
  /** Per job, by kind of node: znodes (mean of the sampled subtrees) and watches by holder ÷ jobs. */
  byKind: Array<{ kind: NodeKind; znodes: number; watches: Record<WatchRole, number> }>;
  /** Whether the console was running (its watches are in the figures). */
  withConsole: boolean;
  /** Whether the znode count had held still for 3 s before the reading (see znodesSettled). */
  settled: boolean;
  dataBytes: number;
}

export interface ConsoleRow { route: string; p50: number; p99: number; max: number; requestsPerSecond: number; requests: number; failed: number }

/**
 * One kind of kill's trials. The phases, each from the kill: `detection` (the victim's presence
 * gone), `assigned` (the allocator's new assignment of the probe written: its mtime), `applied`
 * (the probe's job leader's `applied` written: its mtime), `total` (the re-run's START); `roundDone`:
 * the allocator's round written (its log: every job, then the executors' summaries); `leader`: the
 * survivor became the probe's job leader (its log).
 */
export interface FailoverScaleRow {
  kill: 'process' | 'host'; sessionSeconds: number; trials: number; total: Distribution; detection: Distribution; assigned?: Distribution; roundDone?: Distribution; leader?: Distribution; applied?: Distribution; overlaps: number;
  /** Each trial's allocator rounds, logged from its kill to the next trial's, `at` ms from the kill (absent in older results). */
  rounds?: Array<Array<{ at: number; durationMs: number; jobsWritten: number; steps?: Record<string, number>; gcMs?: number }>>;
}

/** A part that could not be measured says why. */
export type Measured<T> = T | { error: string };

/** What {@link runScaleBench} measured. */
export interface ScaleBenchResult {
  settings: Required<ScaleBenchOptions> & { jobType: string; consoleHeapMb?: number };
  /**
   * `firingSeconds`: from moving every cron to firing until every job's new schedule reached an executor (absent in older results: the jobs were written firing).
   * `consoleBeforeFiring`: the cost without the console was read and the console started before the jobs fired, and the jobs were quieted before the cut to fewer executors (absent in older results: all after).
   * `compareWithoutConsole`: the console was stopped (and the hosts' niceness undone) before the cut to fewer executors (absent in older results: it ran on).
   * `compareSessionsClosed`: the cut closed the other executors' ZooKeeper sessions at once (absent in older results: graceful shutdowns).
   * `standInsOnTmpfs`: the embedded stand-ins kept their run history in memory (absent in older results: on disk).
   */
  setup: { writeSeconds: number; executorsStartSeconds: number; firingSeconds?: number; consoleBeforeFiring?: boolean; compareWithoutConsole?: boolean; compareSessionsClosed?: boolean; standInsOnTmpfs?: boolean };
  allocation: {
    /** Allocator spawn → the last job's `applied` created (the nodes' ctime, the server's clock). */
    wallMs: number;
    /** Allocator spawn → every `applied` seen on ZooKeeper by polling (an upper bound). */
    zkSeenMs: number;
    /** The allocator's rounds until then: each round's time as it logs it (read, compute, write). */
    roundsMs: number[];
    jobsWritten: number;
    /**
     * Ms from the allocator's spawn: it became leader; its first round was written (log times);
     * the first, the median and the last job's `applied` created (the nodes' ctime).
     */
    timeline: { leaderMs: number; firstRoundMs: number; firstAppliedMs: number; medianAppliedMs: number; lastAppliedMs: number };
    /** `allocate()` on the same cluster in this process: first call, and the median of 5 after it. */
    computeColdMs: number;
    computeWarmMs: number;
  };
  cost: CostPoint;
  costWithConsole: Measured<CostPoint>;
  costCompare: Measured<CostPoint> | undefined;
  /** The window of steady firing: ZooKeeper's transactions, and how busy the machine was (cores busy, 1-minute load average at its end). */
  tx: { seconds: number; transactions: number; perMinutePerJob: number; shardsRan: number; shards: number; sampledJobs?: number; watchesMin: number; watchesMax: number; machineBusyCores?: number; cores?: number; loadAverage?: number };
  console: Measured<{ startSeconds: number; rows: ConsoleRow[] }>;
  /** `missing`: (trial, executor) pairs not seen within `waitMs` (absent in older results: 10 s). */
  configChange: Measured<{
    trials: number; holders: number; perExecutor: Distribution; perTrial: Distribution; writeMs: Distribution; missing: number; waitMs?: number;
    /** The jobs are real executors' and the figures theirs (absent in older results: every holder, jobs picked evenly from all). */
    realOnly?: boolean;
    /** The embedded stand-in executors also holding those jobs: their (trial, executor) pairs, those not seen, the times of the rest. */
    standIns?: { pairs: number; missing: number; perExecutor: Distribution };
  }>;
  failover: Measured<FailoverScaleRow[]>;
  /**
   * The console, config-change and failover measures again with the jobs quiet (every cron moved to
   * once a year): the same jobs, assignments, watches and executors, the CPU free — the job count's
   * cost apart from the load of the jobs firing. `busyCores`: the machine's, over these measures.
   */
  quiet: Measured<{ settleSeconds: number; busyCores: number; console: Measured<ConsoleRow[]>; configChange: ScaleBenchResult['configChange']; failover: Measured<FailoverScaleRow[]> }> | undefined;
  memory: Array<{ what: string; processes: number; peakMb: number; rssMb: number }>;
  /** The allocator's or the console's death during the run (none expected): what, when, its last lines. */
  deaths: string[];
  /** ZooKeeper connection trouble the executors logged over the run: links suspended, sessions lost. */
  connection: { suspended: number; lost: number; lostBy?: string[] };
  /**
   * The console's warnings, errors and ZooKeeper connection states over the run (at most
   * {@link CONSOLE_LOG_KEPT}, the last): what explains a console that stopped answering.
   */
  consoleLog?: string[];
  totalSeconds: number;
}

/** How many of the console's log lines a result keeps (see ScaleBenchResult.consoleLog). */
const CONSOLE_LOG_KEPT = 12;

/** The console's lines worth keeping: level warn (40) and above, and its ZooKeeper connection states. */
function consoleTrouble(proc: RunningProcess | undefined): string[] {
  if (!proc) return [];
  return proc.lines
    .filter((l) => /"level":(4|5|6)\d/.test(l) || l.includes('"msg":"zookeeper connection state"'))
    .slice(-CONSOLE_LOG_KEPT)
    .map((l) => l.slice(0, 400));
}

const jobName = (i: number): string => `job-${String(i).padStart(5, '0')}`;
const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error)).slice(0, 600);
/** A progress line on stderr (the bench runs for minutes). */
const progress = (began: number, text: string): void => void process.stderr.write(`scale bench +${Math.round((Date.now() - began) / 1000)} s: ${text}\n`);
const waitUntil = (t: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(0, t - Date.now())));

/**
 * Where the embedded stand-ins keep their run history: in memory (tmpfs) when the machine has one.
 * They stand in for executors on their own hosts, whose disks are not this machine's; their records
 * — a file a run, 500 runs a second — took 14–25 s to delete at the end of a run on disk. The real
 * executors and ZooKeeper keep theirs on disk.
 */
function standInsDir(): { path: string; tmpfs: boolean } {
  try {
    if (statSync('/dev/shm').isDirectory()) return { path: mkdtempSync('/dev/shm/orrery-scale-hosts-'), tmpfs: true };
  } catch {
    // no tmpfs here (or not writable): the disk
  }
  return { path: mkdtempSync(join(tmpdir(), 'orrery-scale-hosts-')), tmpfs: false };
}

/** Job `i`'s cron while measured: firing at second `i % 60` of every minute. */
const firingCron = (i: number): string => `${i % 60} * * * * *`;

/** The bench's job `i`: a Node no-op of `shards` shards, written quiet (see {@link QUIET_CRON}). */
function scaleJob(i: number, shards: number): Record<string, unknown> {
  return { name: jobName(i), type: 'node', handler: 'noop', cron: QUIET_CRON, shardingTotalCount: shards, enabled: true };
}

/** Writes the namespace: `jobs` job configs, quiet, and the failover probe (no assignment: the allocator's job). */
async function writeJobs(zk: ZkClient, jobs: number, shards: number, ledger: string): Promise<void> {
  await createNamespace(zk, NS);
  await zk.mkdirp(paths.jobs(NS));
  await pool(jobs, CONCURRENCY, async (i) => {
    await zk.create(paths.job(NS, jobName(i)), encodeJson(parseJobConfig(scaleJob(i, shards))));
  });
  const probe = parseJobConfig({ name: PROBE, type: 'shell', shardingTotalCount: 1, failover: true, command: ledgerCommand(ledger, 60), enabled: true, preferList: ['real-0', 'real-1'], useDispreferList: false });
  await zk.create(paths.job(NS, PROBE), encodeJson(probe));
}

interface Platform {
  server: ZooKeeperServer;
  zk: ZkClient;
  root: string;
  dir: string;
  hosts: ExecutorHost[];
  real: Map<string, RunningProcess>;
  allocator?: RunningProcess;
  console?: RunningProcess;
  startReal(name: string): Promise<RunningProcess>;
  /** The platform's processes that died before the bench stopped them: what, when, their last lines. */
  deaths: string[];
  stopping: boolean;
  /** Processes the bench stopped before the end (their exit is no death). */
  stopped: Set<RunningProcess>;
}

/** Records `proc`'s death in `p.deaths` (and on stderr) unless the bench is stopping it. */
function watchDeath(p: Platform, proc: RunningProcess, what: string, began: number): void {
  void proc.exited.then(async (code) => {
    if (p.stopping || p.stopped.has(proc)) return;
    const at = Math.round((Date.now() - began) / 1000);
    // Its last words (a fatal error's message on stderr) can arrive after the exit: wait for the
    // pipes to end, for at most 2 s (a child of it may hold them open).
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([proc.drained, new Promise<void>((resolve) => { timer = setTimeout(resolve, 2000); })]);
    clearTimeout(timer);
    const how = proc.signal ? `was killed by ${proc.signal}` : `exited with code ${code}`;
    const text = `${what} (pid ${proc.pid}) ${how} at +${at} s; its last lines: ${proc.lines.slice(-8).map((l) => l.slice(0, 300)).join(' | ')}`;
    p.deaths.push(text);
    progress(began, text);
  });
}

/** Log events of every executor: the hosts' kept events and the real executors' lines. */
function executorEvents(p: Platform, msg: string): LogEvent[] {
  const out: LogEvent[] = [];
  for (const h of p.hosts) for (const e of h.events) if (e.msg === msg) out.push(e);
  for (const r of p.real.values()) {
    for (const line of r.lines) {
      if (!line.includes(`"msg":"${msg}"`)) continue;
      const e = parseLogLine(line);
      if (e) out.push(e);
    }
  }
  return out;
}

/** Jobs of `names` whose `applied` is missing or behind their assignment, or names an executor not in `live`. */
async function pendingJobs(zk: ZkClient, names: readonly string[], live?: ReadonlySet<string>): Promise<string[]> {
  const pending: string[] = [];
  await pool(names.length, CONCURRENCY, async (i) => {
    const name = names[i]!;
    const [assignment, applied] = await Promise.all([
      readJson<{ epoch: number; items: Record<string, number[]> }>(zk, paths.jobAssignment(NS, name)).catch(() => undefined),
      readJson<{ epoch: number; items: Record<string, number[]> }>(zk, paths.jobApplied(NS, name)).catch(() => undefined),
    ]);
    const ok = assignment && applied && applied.value.epoch === assignment.value.epoch
      && (!live || Object.keys(applied.value.items).every((e) => live.has(e)));
    if (!ok) pending.push(name);
  });
  return pending;
}

/** Each job's `applied` creation time (its ctime: the server's clock, this machine's). */
async function appliedCreated(zk: ZkClient, names: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  await pool(names.length, CONCURRENCY, async (i) => {
    const stat = await retrying(zk, () => zk.exists(paths.jobApplied(NS, names[i]!)));
    if (stat) out.set(names[i]!, stat.ctime);
  });
  return out;
}

/** Throws when an executor host died: the rest of the run would measure a broken platform. */
function assertHostsAlive(p: Platform): void {
  const failure = p.hosts.map((h) => h.failure()).find((f) => f !== undefined);
  if (failure) throw new Error(failure);
}

/** Resolves once every job of `names` is applied (see {@link pendingJobs}), confirmed by a full pass. */
async function waitApplied(p: Platform, names: readonly string[], timeoutMs: number, live?: ReadonlySet<string>): Promise<number> {
  const { zk } = p;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let pending = [...names];
    while (pending.length > 0) {
      assertHostsAlive(p);
      if (Date.now() > deadline) throw new Error(`${pending.length} jobs not applied within ${timeoutMs / 1000} s (e.g. ${pending.slice(0, 3).join(', ')})`);
      pending = await pendingJobs(zk, pending, live);
      // Seconds apart: a pass reads two nodes of every pending job — 20,000 reads at first — and
      // back to back those passes took ZooKeeper's time from the executors being measured. (The
      // figures come from the nodes' times, not from when this loop saw them.)
      if (pending.length > 0) await new Promise((r) => setTimeout(r, 2000));
    }
    const seenAt = Date.now();
    if ((await pendingJobs(zk, names, live)).length === 0) return seenAt;
  }
}

/**
 * Resolves true once mntr's znode count held still for `quietMs` (nothing created or deleted);
 * false if it still changed at `timeoutMs` — an overloaded platform churns command nodes (self-fenced
 * runs marked for failover, their commands pruned a minute later), and the cost is then read anyway
 * and marked unsettled.
 */
async function znodesSettled(server: ZooKeeperServer, quietMs: number, timeoutMs: number): Promise<boolean> {
  let last = -1;
  let since = Date.now();
  return eventually(async () => {
    const { znodes } = await readMntr(server);
    if (znodes !== last) {
      last = znodes;
      since = Date.now();
    }
    if (Date.now() - since < quietMs) throw new Error(`znode count still changing (${znodes})`);
    return true;
  }, { timeoutMs, intervalMs: 500, message: 'a stable znode count' }).catch(() => false);
}

/** The session id a process logged with its ZooKeeper connection state (normalised). */
async function loggedSession(p: RunningProcess): Promise<string> {
  const line = await p.waitForLine(/"sessionId":"(0x)?[0-9a-fA-F]+".*"msg":"zookeeper connection state"/, 30_000);
  return normalSession((JSON.parse(line) as { sessionId: string }).sessionId);
}

/** ZooKeeper's cost now: mntr, wchc sorted by holder, and a sample of job subtrees by kind. */
async function measureCost(p: Platform, base: Mntr, jobs: number, executors: number, settled = true): Promise<CostPoint> {
  const roles = new Map<string, WatchRole>();
  if (p.zk.sessionId) roles.set(normalSession(p.zk.sessionId), 'bench');
  if (p.allocator) roles.set(await loggedSession(p.allocator), 'allocator');
  if (p.console) roles.set(await loggedSession(p.console), 'console');
  const nsPath = `${p.root}${paths.namespace(NS)}`;
  const mntr = await readMntr(p.server);
  const { tally, total } = await tallyWatches(p.server, nsPath, roles);
  const sample = Math.min(jobs, 50);
  const znodeKinds = new Map<NodeKind, number>();
  for (let s = 0; s < sample; s += 1) {
    for (const rel of await jobSubtree(p.zk, paths.job(NS, jobName(Math.floor((s * jobs) / sample))))) {
      const kind = jobNodeKind(rel);
      znodeKinds.set(kind, (znodeKinds.get(kind) ?? 0) + 1 / sample);
    }
  }
  const byRole = (role: WatchRole): number => Object.values(tally).reduce((n, r) => n + r[role], 0);
  const watchesByRole = { executors: byRole('executors'), allocator: byRole('allocator'), console: byRole('console'), bench: byRole('bench') };
  const kinds: NodeKind[] = [...JOB_KINDS, 'jobs folder', 'executors folder', 'executor nodes', 'namespace', 'other'];
  const perRole = (t: WatchTally[NodeKind]): Record<WatchRole, number> => ({ executors: t.executors / jobs, allocator: t.allocator / jobs, console: t.console / jobs, bench: t.bench / jobs });
  return {
    executors,
    znodes: mntr.znodes - base.znodes,
    watches: mntr.watches,
    watchesByRole,
    wchcTotal: total,
    perJob: { znodes: (mntr.znodes - base.znodes) / jobs, watches: mntr.watches / jobs, executorWatches: watchesByRole.executors / jobs },
    byKind: kinds.map((kind) => ({ kind, znodes: znodeKinds.get(kind) ?? 0, watches: perRole(tally[kind]) })),
    withConsole: p.console !== undefined,
    settled,
    dataBytes: mntr.dataBytes,
  };
}

/** The transaction window: the Zxid delta over `seconds`, watch samples, and the shards that ran in it. */
async function measureTransactions(p: Platform, jobs: number, shards: number, seconds: number): Promise<ScaleBenchResult['tx']> {
  const start = Date.now();
  const m0 = machineSeconds();
  const z0 = await p.server.zxid();
  const watches: number[] = [];
  while (Date.now() < start + seconds * 1000) {
    await waitUntil(Math.min(start + seconds * 1000, Date.now() + 5000));
    watches.push((await readMntr(p.server)).watches);
  }
  const z1 = await p.server.zxid();
  const elapsed = (Date.now() - start) / 1000;
  const machineBusyCores = (machineSeconds().busy - m0.busy) / elapsed;
  const loadAverage = loadavg()[0]!;
  // Each shard's last fire time (or its running fire): did every shard fire in the window? Read
  // for an even sample of at most SHARD_SAMPLE_JOBS jobs: all 30,000 shard nodes took 167 s to
  // read on the machine the firing jobs saturate.
  const step = Math.max(1, Math.ceil(jobs / SHARD_SAMPLE_JOBS));
  const sampled = Math.ceil(jobs / step);
  let ran = 0;
  await pool(sampled * shards, CONCURRENCY, async (k) => {
    const read = await readShard(p.zk, paths.jobShard(NS, jobName(Math.floor(k / shards) * step), k % shards)).catch(() => undefined);
    const state = read?.state;
    const fire = state?.state === 'running' ? state.fireTime : state?.last?.fireTime;
    if (fire !== undefined && fire >= start) ran += 1;
  });
  return {
    seconds: elapsed, transactions: z1 - z0, perMinutePerJob: ((z1 - z0) / elapsed) * 60 / jobs,
    shardsRan: ran, shards: sampled * shards, sampledJobs: sampled, watchesMin: Math.min(...watches), watchesMax: Math.max(...watches),
    machineBusyCores, cores: cpus().length, loadAverage,
  };
}

/** The machine's cores busy on average since `m0` (a {@link machineSeconds} reading). */
function busyCoresSince(m0: { busy: number; total: number }): number {
  const m1 = machineSeconds();
  return ((m1.busy - m0.busy) / (m1.total - m0.total)) * cpus().length;
}

/**
 * `action`, tried again (once the link is back) while it fails with a retryable ZooKeeper error: the
 * bench's own link can drop on a saturated machine (a get timed out in one run, and the part ended).
 * Only for actions that may run twice.
 */
async function retrying<T>(zk: ZkClient, action: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await action();
    } catch (error) {
      if (attempt >= attempts || !isRetryable(error)) throw error;
      await zk.whenConnected(60_000);
    }
  }
}

/** Moves every job's cron to `cronOf(i)`, a compare-and-set each (read again if the set's answer was lost). */
async function setCrons(p: Platform, jobs: number, cronOf: (i: number) => string): Promise<void> {
  await pool(jobs, CONCURRENCY, (i) => retrying(p.zk, async () => {
    const path = paths.job(NS, jobName(i));
    const { data, stat } = await p.zk.get(path);
    const config = JSON.parse(data!.toString()) as Record<string, unknown>;
    if (config.cron === cronOf(i)) return;
    await p.zk.set(path, encodeJson({ ...config, cron: cronOf(i) }), stat.version);
  }));
}

/**
 * Starts the jobs firing: every cron moved to {@link firingCron}, then waits until every job's new
 * schedule reached one of its executors (`job schedule changed`; at most 180 s). From then on every
 * job fires once in any minute (its shard nodes exist since it was applied). Resolves with the
 * seconds it took.
 */
async function startFiring(p: Platform, jobs: number): Promise<number> {
  const t0 = Date.now();
  await setCrons(p, jobs, firingCron);
  await eventually(() => {
    const changed = new Set(executorEvents(p, 'job schedule changed').filter((e) => e.time >= t0).map((e) => e.job));
    if (changed.size < jobs) throw new Error(`${jobs - changed.size} jobs' new schedule not seen by an executor`);
  }, { timeoutMs: 180_000, intervalMs: 1000 });
  return (Date.now() - t0) / 1000;
}

/**
 * Quiets the jobs: every job's cron moved to {@link QUIET_CRON} (a compare-and-set each), then
 * waits until the machine has settled (under a quarter of its cores busy over 3 s; at most 90 s).
 * Resolves with the seconds it took.
 */
async function quietJobs(p: Platform, jobs: number): Promise<number> {
  const t0 = performance.now();
  await setCrons(p, jobs, () => QUIET_CRON);
  await settled(90_000);
  return (performance.now() - t0) / 1000;
}

/** Waits until under a quarter of the machine's cores were busy over 3 s, at most `maxMs`. */
async function settled(maxMs: number): Promise<void> {
  const deadline = Date.now() + maxMs;
  for (;;) {
    const m0 = machineSeconds();
    await waitUntil(Date.now() + 3000);
    if (busyCoresSince(m0) < 0.25 * cpus().length || Date.now() > deadline) return;
  }
}

/** A round as the allocator logs it: its end (log time), length, jobs written and, in newer allocators, where its time went (ms). */
interface AllocatorRound { time: number; durationMs: number; jobsWritten: number; steps?: Record<string, number>; gcMs?: number }

/** The allocator's rounds so far, as it logs them (`allocation written`). */
function allocatorRounds(allocator: RunningProcess): AllocatorRound[] {
  const out: AllocatorRound[] = [];
  for (const line of allocator.lines) {
    if (!line.includes('"msg":"allocation written"')) continue;
    try {
      const v = JSON.parse(line) as AllocatorRound;
      out.push({ time: v.time, durationMs: v.durationMs, jobsWritten: v.jobsWritten, ...(v.steps ? { steps: v.steps } : {}), ...(v.gcMs !== undefined ? { gcMs: v.gcMs } : {}) });
    } catch {
      // a line cut by the pipe
    }
  }
  return out;
}

/** `allocate()` on the bench's cluster, in this process: the first call, then the median of 5. */
function computeAllocation(jobs: number, shards: number, executorNames: readonly string[]): { coldMs: number; warmMs: number } {
  const cluster: Cluster = {
    executors: executorNames.map((name) => ({ name, handlers: ['noop'], tags: [], noTraffic: false })),
    jobs: Array.from({ length: jobs }, (_, i) => ({ name: jobName(i), enabled: true, type: 'node', handler: 'noop', shardingTotalCount: shards, localMode: false, loadLevel: 1, preferList: [], useDispreferList: true })),
  };
  const time = (): number => {
    const t0 = performance.now();
    allocate(EMPTY_ALLOCATION, cluster);
    return performance.now() - t0;
  };
  const coldMs = time();
  const warm = Array.from({ length: 5 }, time).sort((a, b) => a - b);
  return { coldMs, warmMs: warm[2]! };
}


/**
 * The console's heap limit at full size, in MB. At 10,000 jobs its cache holds about 150 MB, and the
 * console warns at start that the default 256 is too tight ("raise ORRERY_CONSOLE_HEAP_MB to twice
 * what is in use or more", docs/console.md → Memory): the bench does what it says.
 */
const CONSOLE_HEAP_MB = 512;

/** Starts `orrery-console` on the bench's tree; resolves with its URL once healthy (cache loaded). */
async function startConsole(p: Platform): Promise<{ url: string; startSeconds: number }> {
  const t0 = performance.now();
  const proc = startProcess('orrery-console', ['--zk', p.server.connectString, '--root', p.root, '--port', '0'], { ORRERY_ADMIN_PASSWORD: ADMIN_PASSWORD, ORRERY_CONSOLE_HEAP_MB: String(CONSOLE_HEAP_MB) });
  p.console = proc;
  const line = await proc.waitForLine(/"msg":"console started"/, 180_000);
  const url = (JSON.parse(line) as { url: string }).url;
  await eventually(async () => {
    const health = await fetch(`${url}/healthz`);
    if (!health.ok || ((await health.json()) as { ok?: boolean }).ok !== true) throw new Error('not healthy');
  }, { timeoutMs: 180_000, intervalMs: 100 });
  return { url, startSeconds: (performance.now() - t0) / 1000 };
}

/** Logs in as the first admin and creates an API token: the `Authorization` header's value. */
async function apiToken(url: string): Promise<string> {
  const login = await fetch(`${url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user: 'admin', password: ADMIN_PASSWORD }) });
  if (login.status !== 200) throw new Error(`login: ${login.status} ${await login.text()}`);
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  const created = await fetch(`${url}/api/v1/tokens`, { method: 'POST', headers: { 'content-type': 'application/json', cookie }, body: JSON.stringify({ name: 'scale' }) });
  if (created.status !== 201) throw new Error(`token: ${created.status} ${await created.text()}`);
  return `Bearer ${((await created.json()) as { token: string }).token}`;
}

/**
 * The paged job list under 10 concurrent clients: the first page, asked again and again (as every
 * open jobs page refreshes it: the console renders it once per change and serves the rendered page
 * until then), and a page after a different cursor each request (the cursors stride through all the
 * jobs, more pages than the console keeps: each page is put together for its request, from the
 * items of the jobs as last rendered, re-rendering those that changed or fired since).
 */
async function measureConsole(url: string, auth: string, jobs: number, seconds: number): Promise<ConsoleRow[]> {
  const routes: Array<{ route: string; path?: string; requests?: AutocannonRequest[] }> = [
    { route: 'first page of 50 (the same page each request)', path: `/api/v1/namespaces/${NS}/jobs?limit=50` },
    { route: 'page of 50 after a cursor (a different page each request)', requests: strideRequests(jobs, (i) => `/api/v1/namespaces/${NS}/jobs?limit=50&cursor=${jobName(i)}`) },
  ];
  const rows: ConsoleRow[] = [];
  for (const r of routes) {
    const options = { url: `${url}${r.path ?? ''}`, connections: 10, headers: { authorization: auth }, ...(r.requests ? { requests: r.requests } : {}) };
    await autocannon({ ...options, duration: 3 });
    const a = await autocannon({ ...options, duration: seconds });
    rows.push({ route: r.route, p50: a.latency.p50, p99: a.latency.p99, max: a.latency.max, requestsPerSecond: a.requests.average, requests: a.requests.total, failed: a.non2xx + a.errors + a.timeouts });
  }
  return rows;
}

/**
 * How long a config-change trial waits for every executor holding the job to log the new schedule:
 * five times the target — one not seen by then is counted as not seen (it was 10 s; at the full
 * size on two cores most misses waited it out, 80 s of the bench's half hour).
 */
const CONFIG_SEEN_WAIT_MS = 5 * SCALE_TARGETS.configChangeMs;

/**
 * Config changes through the console API (PUT of the job's config, its time zone toggled: the
 * schedule changes, the fires do not), each to another job, until every executor its `applied`
 * names logs `job schedule changed` for it: ms from the PUT's send to each executor's log time.
 *
 * The jobs are those a real `orrery-executor` holds a shard of (spread over their assignment
 * summaries), and the figure measured against the target is the real executors': the embedded
 * instances stand in for executors on hosts of their own, but share this machine's two cores at a
 * low priority, so when they log the change measures the starved machine, not Orrery. Their times
 * are reported apart (`standIns`), as is every pair not seen within the wait.
 */
async function measureConfigChange(p: Platform, url: string, auth: string, trials: number): Promise<Exclude<ScaleBenchResult['configChange'], { error: string }>> {
  const real: number[] = [];
  const perTrial: number[] = [];
  const standIns: number[] = [];
  const writeMs: number[] = [];
  let missing = 0;
  let holders = 0;
  let standInPairs = 0;
  let standInsMissing = 0;
  /** The stand-ins' side of each trial, read at the end. */
  const pending: Array<{ seen: () => Map<string, number>; owners: string[]; deadline: number }> = [];
  const candidates = [...new Set((await Promise.all([...p.real.keys()].map(async (name) => {
    const summary = await readJson<{ jobs: Record<string, unknown> }>(p.zk, paths.executorAssignment(NS, name));
    return Object.keys(summary?.value.jobs ?? {}).filter((j) => j !== PROBE).sort();
  }))).flat())];
  if (candidates.length === 0) throw new Error('the real executors hold no job');
  for (let t = 0; t < trials; t += 1) {
    const job = candidates[Math.floor((t * candidates.length) / trials)]!;
    const applied = await readJson<{ items: Record<string, number[]> }>(p.zk, paths.jobApplied(NS, job));
    const owners = Object.entries(applied?.value.items ?? {}).filter(([, items]) => items.length > 0).map(([e]) => e);
    const current = (await (await fetch(`${url}/api/v1/namespaces/${NS}/jobs/${job}`, { headers: { authorization: auth } })).json()) as { version: number; config: Record<string, unknown> };
    const config = { ...current.config, timeZone: current.config.timeZone === 'Etc/UTC' ? 'UTC' : 'Etc/UTC' };
    const t0 = Date.now();
    const put = await fetch(`${url}/api/v1/namespaces/${NS}/jobs/${job}`, { method: 'PUT', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify({ version: current.version, config }) });
    writeMs.push(Date.now() - t0);
    if (put.status !== 200) throw new Error(`PUT ${job}: ${put.status} ${await put.text()}`);
    // The real executors are waited for here; the stand-ins' log times are read once every trial is
    // done (waiting for them in each trial cost the whole wait at nice 19).
    const realOwners = owners.filter((e) => p.real.has(e));
    const seen = seenSince(p, job, realOwners, t0);
    await eventually(() => {
      if (seen().size < realOwners.length) throw new Error(`${seen().size} of ${realOwners.length} executors have it`);
    }, { timeoutMs: CONFIG_SEEN_WAIT_MS, intervalMs: 20 }).catch(() => undefined);
    const got = seen();
    holders += realOwners.length;
    missing += realOwners.filter((e) => !got.has(e)).length;
    real.push(...realOwners.flatMap((e) => (got.has(e) ? [got.get(e)!] : [])));
    if (realOwners.length > 0 && realOwners.every((e) => got.has(e))) perTrial.push(Math.max(...realOwners.map((e) => got.get(e)!)));
    const others = owners.filter((e) => !p.real.has(e));
    standInPairs += others.length;
    pending.push({ seen: seenSince(p, job, others, t0), owners: others, deadline: t0 + CONFIG_SEEN_WAIT_MS });
  }
  await eventually(() => {
    if (pending.some((t) => t.seen().size < t.owners.length && Date.now() < t.deadline)) throw new Error('stand-ins still to log the change');
  }, { timeoutMs: CONFIG_SEEN_WAIT_MS + 1000, intervalMs: 100 }).catch(() => undefined);
  for (const t of pending) {
    const got = t.seen();
    standInsMissing += t.owners.filter((e) => !got.has(e)).length;
    standIns.push(...got.values());
  }
  return {
    trials, holders, perExecutor: distribution(real), perTrial: distribution(perTrial), writeMs: distribution(writeMs), missing, waitMs: CONFIG_SEEN_WAIT_MS,
    realOnly: true, standIns: { pairs: standInPairs, missing: standInsMissing, perExecutor: distribution(standIns) },
  };
}

/**
 * Reads, when called, which of `owners` have logged `job schedule changed` for `job` since `t0` (ms
 * after `t0`), counting only those logged within {@link CONFIG_SEEN_WAIT_MS}.
 */
function seenSince(p: Platform, job: string, owners: readonly string[], t0: number): () => Map<string, number> {
  return () => {
    const seen = new Map<string, number>();
    for (const e of executorEvents(p, 'job schedule changed')) {
      if (e.job === job && e.executor && owners.includes(e.executor) && e.time >= t0 && e.time - t0 <= CONFIG_SEEN_WAIT_MS && !seen.has(e.executor)) seen.set(e.executor, e.time - t0);
    }
    return seen;
  };
}

/** The pid of the fence guard an executor started (its log line). */
function guardPid(executor: RunningProcess): number {
  const line = executor.lines.find((l) => l.includes('"msg":"fence guard started"'));
  const pid = Number(/"pid":(\d+),"msg":"fence guard started"/.exec(line ?? '')?.[1]);
  if (!(pid > 0)) throw new Error('no fence guard pid in the executor\'s log');
  return pid;
}

/** `promise`, or a rejection with `message` after `ms`. */
function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${message} after ${ms} ms`)), ms); });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Resolves the time the node at `path` is gone (watch-driven). */
function whenGone(zk: ZkClient, path: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const check = (): void => {
      zk.exists(path, () => check()).then((stat) => { if (!stat) resolve(Date.now()); }, reject);
    };
    check();
  });
}

/**
 * Resolves once the allocator has taken every real executor into account (its last round's members
 * name them) and the probe's `applied` is its latest assignment, on a live executor. A trial starts
 * only then: a run-now just before the allocator moves the probe (a restarted victim rejoining) would
 * leave the move waiting for that run — see the report on job leaders and dead holders.
 */
async function probeSettled(p: Platform): Promise<void> {
  await eventually(async () => {
    const sharding = await readJson<{ members: string[] }>(p.zk, paths.namespaceSharding(NS));
    const missing = [...p.real.keys()].filter((n) => !sharding?.value.members.includes(n));
    if (missing.length > 0) throw new Error(`the allocator's members lack ${missing.join(', ')}`);
    if ((await pendingJobs(p.zk, [PROBE])).length > 0) throw new Error('the probe\'s assignment is not applied');
    const applied = await readJson<{ items: Record<string, number[]> }>(p.zk, paths.jobApplied(NS, PROBE));
    const owner = Object.entries(applied?.value.items ?? {}).find(([, l]) => l.includes(0))?.[0];
    if (!owner || !(await p.zk.exists(paths.executorPresence(NS, owner)))) throw new Error('the probe is not applied to a live executor');
  }, { timeoutMs: 60_000, intervalMs: 100 });
}

/**
 * kill -9 of the real executor running the probe's shard (started by a run-now), at scale: `process`
 * kills the executor alone (its guard kills the run and closes the session); `host` freezes it, kills
 * its guard and its job's process group, then kills it (the session expires). Kill → the re-run's
 * START in the ledger; kill → the victim's presence gone.
 */
async function failoverTrials(p: Platform, kill: 'process' | 'host', trials: number, ledger: string, sessionSeconds: number, restartLast = true): Promise<FailoverScaleRow> {
  const totals: number[] = [];
  const detection: number[] = [];
  const assigned: number[] = [];
  const applied: number[] = [];
  const leaders: number[] = [];
  const kills: number[] = [];
  for (let trial = 0; trial < trials; trial += 1) {
    await probeSettled(p);
    const before = readLedger(ledger).runs.length;
    const requestedAt = Date.now();
    await runJobNow(p.zk, NS, PROBE);
    let victim = '';
    await eventually(() => {
      const runs = readLedger(ledger).runs;
      if (runs.length <= before) throw new Error('not started');
      victim = runs.at(-1)!.executor;
    }, { timeoutMs: 15_000, intervalMs: 10 });
    await waitUntil(requestedAt + COMMAND_REPLAY_WINDOW_MS);
    const runsBefore = readLedger(ledger).runs.length;
    const victimProcess = p.real.get(victim)!;
    const gone = whenGone(p.zk, paths.executorPresence(NS, victim));
    if (kill === 'host') {
      victimProcess.kill('SIGSTOP');
      process.kill(guardPid(victimProcess), 'SIGKILL');
      for (const pgid of recordedGroups(join(p.dir, victim))) {
        try {
          process.kill(-pgid, 'SIGKILL');
        } catch {
          // gone already
        }
      }
    }
    const killedAt = Date.now();
    victimProcess.kill('SIGKILL');
    detection.push((await withTimeout(gone, sessionSeconds * 1000 + 30_000, `${victim}'s presence still there`)) - killedAt);
    let startedAt = 0;
    await eventually(() => {
      const rerun = readLedger(ledger).runs.slice(runsBefore).find((r) => r.trigger === 'failover');
      if (!rerun) throw new Error('no re-run yet');
      startedAt = rerun.start;
    }, { timeoutMs: sessionSeconds * 1000 + 30_000, intervalMs: 5 });
    totals.push(startedAt - killedAt);
    // The nodes' mtimes are the server's clock: this machine's, as killedAt is.
    assigned.push((await p.zk.exists(paths.jobAssignment(NS, PROBE)))!.mtime - killedAt);
    applied.push((await p.zk.exists(paths.jobApplied(NS, PROBE)))!.mtime - killedAt);
    // The survivor's log: when it became the probe's job leader (its runtime was new: the probe had no other executor).
    const survivor = [...p.real].find(([n]) => n !== victim)?.[1];
    const lead = survivor?.lines.map(parseLogLine).find((e) => e?.msg === 'became job leader' && e.job === PROBE && e.time >= killedAt);
    leaders.push(lead ? lead.time - killedAt : Number.NaN);
    if (process.env.ORRERY_BENCH_HOST_LOGS && survivor) writeFileSync(join(process.env.ORRERY_BENCH_HOST_LOGS, `survivor-${kill}-${trial}-${killedAt}.log`), survivor.lines.filter((l) => (parseLogLine(l)?.time ?? 0) >= killedAt - 2000).join('\n'));
    await stopJob(p.zk, NS, PROBE);
    await victimProcess.exited;
    kills.push(killedAt);
    // The last victim of the bench stays dead: nothing after the trials needs it, and its restart
    // (its rejoin moves a hundredth of the shards back) cost about half a minute at full size.
    if (trial < trials - 1 || restartLast) await p.startReal(victim);
    else p.real.delete(victim);
  }
  // The allocator's rounds of each trial, read at the end: a round logs once its last write is
  // answered, which can be after the re-run started (the probe's assignment is among its first writes)
  // — for the last trial, waited for (at most 10 s).
  const lastKill = kills.at(-1);
  if (p.allocator && lastKill !== undefined) {
    const allocator = p.allocator;
    await eventually(() => {
      if (!allocatorRounds(allocator).some((r) => r.time >= lastKill)) throw new Error('no round logged since the last kill');
    }, { timeoutMs: 10_000, intervalMs: 100 }).catch(() => undefined);
  }
  const logged = p.allocator ? allocatorRounds(p.allocator) : [];
  const rounds = kills.map((at, i) => logged.filter((r) => r.time >= at && r.time < (kills[i + 1] ?? Infinity)).map(({ time, ...r }) => ({ at: time - at, ...r })));
  rounds.forEach((r, i) => process.stderr.write(`scale bench: failover (${kill}) trial ${i + 1}: re-run ${Math.round(totals[i]!)} ms after the kill; the allocator's rounds since: ${JSON.stringify(r)}\n`));
  if (process.env.ORRERY_BENCH_HOST_LOGS && p.allocator && kills.length > 0) writeFileSync(join(process.env.ORRERY_BENCH_HOST_LOGS, `allocator-${kill}-${kills[0]}.log`), p.allocator.lines.filter((l) => (parseLogLine(l)?.time ?? 0) >= kills[0]! - 10_000).join('\n'));
  const roundsDone = rounds.map((r) => r[0]?.at ?? Number.NaN);
  const overlaps = checkLedger(readLedger(ledger).runs, [], []).overlaps.length;
  return { kill, sessionSeconds, trials, total: distribution(totals), detection: distribution(detection), assigned: distribution(assigned), roundDone: distribution(roundsDone.filter(Number.isFinite)), leader: distribution(leaders.filter(Number.isFinite)), applied: distribution(applied), overlaps, rounds };
}

/** The process groups an executor's orphan records (`<data-dir>/pgroups/`) name: its shell runs in progress. */
function recordedGroups(dataDir: string): number[] {
  const groups = join(dataDir, 'pgroups');
  if (!existsSync(groups)) return [];
  return readdirSync(groups).map((f) => Number(/^(\d+)\.json$/.exec(f)?.[1])).filter((pgid) => pgid > 1);
}

/** Peak and current RSS by kind of process (children — Node workers, guards — counted with their parent's RSS now). */
function memoryFigures(p: Platform): ScaleBenchResult['memory'] {
  const row = (what: string, pids: number[], withChildren: boolean): ScaleBenchResult['memory'][number] => {
    const mems = pids.map((pid) => processMemory(pid)).filter((m): m is NonNullable<typeof m> => m !== undefined);
    const children = withChildren ? pids.reduce((n, pid) => n + descendantsRssMb(pid), 0) : 0;
    return { what, processes: mems.length, peakMb: Math.max(0, ...mems.map((m) => m.peakMb)), rssMb: mems.reduce((n, m) => n + m.rssMb, 0) + children };
  };
  const rows = [
    row('ZooKeeper (java)', [p.server.pid], false),
    row('executor hosts (embedded instances; RSS with their Node workers)', p.hosts.map((h) => h.pid), true),
    row('real orrery-executor (RSS with guard and workers)', [...p.real.values()].map((r) => r.pid), true),
  ];
  if (p.allocator) rows.push(row('allocator', [p.allocator.pid], false));
  if (p.console) rows.push(row('console', [p.console.pid], false));
  return rows;
}

/** ORRERY_BENCH_CPU_PROF=DIR: the real executors and the allocator write V8 CPU profiles to DIR when they exit (the hosts too: hosts.ts). */
function profiled(): { nodeFlags?: string[] } {
  const dir = process.env.ORRERY_BENCH_CPU_PROF;
  return dir ? { nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${dir}`] } : {};
}

/** Splits `names` over `hosts` processes (round robin keeps each host's share even). */
function spread(names: readonly string[], hosts: number): string[][] {
  const out: string[][] = Array.from({ length: hosts }, () => []);
  names.forEach((n, i) => out[i % hosts]!.push(n));
  return out.filter((l) => l.length > 0);
}

const DEFAULTS: Required<ScaleBenchOptions> = {
  jobs: 10_000, shards: 3, executors: 100, realExecutors: 2, hosts: 25, compareExecutors: 20,
  txSeconds: 60, consoleSeconds: 10, configTrials: 10, failoverTrials: 3, sessionSeconds: 10, embeddedSessionSeconds: 60, tickMs: 500, quiet: false, hostsNice: 10, measureNice: 19,
};

/**
 * Runs the scale bench (see the module header). Every process it starts is stopped in `finally`;
 * a part that fails (console, config change, failover, comparison) is reported with its error and
 * the others still run.
 */
export async function runScaleBench(options: ScaleBenchOptions = {}): Promise<ScaleBenchResult> {
  const o = { ...DEFAULTS, ...options };
  const began = Date.now();
  const server = await startZooKeeper({ tickTimeMs: o.tickMs, fastStart: false });
  const root = uniqueRoot('scale');
  const zk = createZkClient({ connect: server.connectString, root });
  const dir = mkdtempSync(join(tmpdir(), 'orrery-scale-'));
  const hostsDir = standInsDir();
  const ledger = join(dir, 'ledger.txt');
  const all: RunningProcess[] = [];
  const p: Platform = {
    server, zk, root, dir, hosts: [], real: new Map(), deaths: [], stopping: false, stopped: new Set(),
    async startReal(name) {
      const proc = startProcess('orrery-executor', [
        '--zk', server.connectString, '--root', root, '--namespace', NS, '--name', name, '--data-dir', join(dir, name),
        '--jobs', JOBS_DIR, '--node-workers', '1', '--session-timeout', String(o.sessionSeconds), '--kill-grace', '1',
        '--http-port', String(await freePort()), '--http-host', '127.0.0.1',
      ], {}, profiled());
      all.push(proc);
      p.real.set(name, proc);
      await proc.waitForLine(/"executor started"/, 120_000);
      return proc;
    },
  };
  try {
    await zk.start();
    const base = await readMntr(server);
    const w0 = performance.now();
    await writeJobs(zk, o.jobs, o.shards, ledger);
    const writeSeconds = (performance.now() - w0) / 1000;
    progress(began, `${o.jobs} jobs written in ${writeSeconds.toFixed(1)} s`);
    // The pure compute first, on a quiet machine: timed once the jobs fire, it measures the load.
    const realNames = Array.from({ length: o.realExecutors }, (_, i) => `real-${i}`);
    const embedded = Array.from({ length: o.executors - o.realExecutors }, (_, i) => `exec-${String(i).padStart(3, '0')}`);
    const compute = computeAllocation(o.jobs, o.shards, [...realNames, ...embedded]);

    // The executors: real processes and hosts of embedded instances, all online before the allocator.
    const e0 = performance.now();
    const tsx = import.meta.resolve('tsx');
    // One host after another, two instances at a time: started all at once, a hundred instances
    // (each spawning its job discovery child and a Node worker) starve the two cores for seconds,
    // sessions time out and the first executors fence themselves before they ever run. (Two hosts
    // at a time were no faster: 110 s against 106–121 s.)
    for (const names of spread(embedded, o.hosts)) {
      const host = startExecutorHost({ zk: server.connectString, root, namespace: NS, names, dataDir: hostsDir.path, jobsDir: JOBS_DIR, sessionTimeoutMs: o.embeddedSessionSeconds * 1000, nodeWorkers: 1, startConcurrency: 2 }, tsx);
      p.hosts.push(host);
      await host.started;
    }
    for (const name of realNames) await p.startReal(name);
    const executorsStartSeconds = (performance.now() - e0) / 1000;
    progress(began, `${o.executors} executors online in ${executorsStartSeconds.toFixed(1)} s`);

    // Full allocation: the allocator's spawn → every job applied.
    const jobNames = [...Array.from({ length: o.jobs }, (_, i) => jobName(i)), PROBE];
    const a0 = Date.now();
    p.allocator = startProcess('orrery-sharding', ['--zk', server.connectString, '--root', root, '--log-level', 'info'], {}, profiled());
    all.push(p.allocator);
    watchDeath(p, p.allocator, 'the allocator', began);
    const zkSeenAt = await waitApplied(p, jobNames, 600_000);
    const firstApplied = await appliedCreated(zk, jobNames);
    const rounds = allocatorRounds(p.allocator);
    const appliedTimes = jobNames.map((j) => (firstApplied.get(j) ?? Number.NaN) - a0).sort((x, y) => x - y);
    const leaderLine = p.allocator.lines.find((l) => l.includes('"msg":"became the allocator leader"'));
    const allocation = {
      wallMs: appliedTimes.at(-1)!,
      timeline: {
        leaderMs: (leaderLine ? parseLogLine(leaderLine)?.time ?? Number.NaN : Number.NaN) - a0,
        firstRoundMs: (rounds[0]?.time ?? Number.NaN) - a0,
        firstAppliedMs: appliedTimes[0]!,
        medianAppliedMs: appliedTimes[Math.floor(appliedTimes.length / 2)]!,
        lastAppliedMs: appliedTimes.at(-1)!,
      },
      zkSeenMs: zkSeenAt - a0,
      roundsMs: rounds.map((r) => r.durationMs),
      jobsWritten: rounds.reduce((n, r) => n + r.jobsWritten, 0),
      computeColdMs: compute.coldMs,
      computeWarmMs: compute.warmMs,
    };
    progress(began, `allocated in ${allocation.wallMs} ms (seen on ZooKeeper after ${allocation.zkSeenMs} ms), rounds ${allocation.roundsMs.join(', ')} ms`);
    // From here on the embedded executors — stand-ins for executors on hosts of their own — yield the
    // CPU to the processes measured: ZooKeeper, the allocator, the console and the two real
    // executors get what they would have on their own machines. (At nice 0 the firing jobs kept
    // the two cores busy, the console fell minutes behind its mirror and a config PUT took 93 s.
    // Not before the allocation: hosts niced from their start starved into self-fencing there.)
    // The price, when the machine is saturated: the niced executors can miss runs (2,551 of 3,000
    // sampled shards fired in the window of one full run, all 3,000 in the next), and the
    // transactions per minute then read low.
    if (o.hostsNice > 0) progress(began, `executor hosts at nice ${o.hostsNice}: ${p.hosts.reduce((n, h) => n + renice(h.pid, o.hostsNice), 0)} threads`);

    // The cost without the console, read now: znodes and watches do not depend on the firing (every
    // shard node exists since its job was applied); the transactions are read once the jobs fire.
    const cost = await measureCost(p, base, o.jobs, o.executors, await znodesSettled(server, 3000, 30_000));
    progress(began, `${cost.perJob.znodes.toFixed(2)} znodes, ${cost.perJob.watches.toFixed(2)} watches per job`);

    // The console, started while the jobs are quiet: loading 10,000 jobs on a machine the firing
    // jobs saturate took 55 s in one run and did not finish in 180 s in another.
    let consoleStart: Measured<{ startSeconds: number }>;
    /** The console's URL and an API token's header (set once it runs): the later measures use them. */
    let api: { url: string; auth: string } | undefined;
    try {
      const c = await startConsole(p);
      all.push(p.console!);
      watchDeath(p, p.console!, 'the console', began);
      api = { url: c.url, auth: await apiToken(c.url) };
      consoleStart = { startSeconds: c.startSeconds };
      progress(began, `console healthy after ${c.startSeconds.toFixed(1)} s`);
    } catch (error) {
      consoleStart = { error: errorText(error) };
    }

    const firingSeconds = await startFiring(p, o.jobs);
    progress(began, `every job firing once a minute (the new schedules reached the executors in ${firingSeconds.toFixed(1)} s)`);
    const tx = await measureTransactions(p, o.jobs, o.shards, o.txSeconds);
    progress(began, `${tx.perMinutePerJob.toFixed(2)} txns/min per job`);

    if (o.measureNice > 0) progress(began, `executor hosts at nice ${o.measureNice} for the latency measures: ${p.hosts.reduce((n, h) => n + renice(h.pid, o.measureNice), 0)} threads`);

    // The console under the firing load: the job list, its own watches, config changes through it.
    let consoleResult: ScaleBenchResult['console'];
    let costWithConsole: ScaleBenchResult['costWithConsole'];
    let configChange: ScaleBenchResult['configChange'];
    if (api && !isError(consoleStart)) {
      consoleResult = { startSeconds: consoleStart.startSeconds, rows: await measureConsole(api.url, api.auth, o.jobs, o.consoleSeconds) };
      progress(began, `job list measured: p99 ${consoleResult.rows.map((r) => `${r.p99} ms`).join(', ')}`);
      costWithConsole = await measureCost(p, base, o.jobs, o.executors).catch((error: unknown) => ({ error: errorText(error) }));
      if (!isError(costWithConsole)) progress(began, `the console holds ${costWithConsole.watchesByRole.console} watches`);
      configChange = await measureConfigChange(p, api.url, api.auth, o.configTrials).catch((error: unknown) => ({ error: errorText(error) }));
      progress(began, isError(configChange) ? `config changes failed: ${configChange.error}` : `config changes measured: p99 ${Math.round(configChange.perExecutor.p99)} ms to the real executors (${configChange.missing} not seen), ${configChange.standIns ? `${Math.round(configChange.standIns.perExecutor.p99)} ms to the stand-ins (${configChange.standIns.missing} not seen)` : ''}`);
    } else {
      consoleResult = isError(consoleStart) ? consoleStart : { error: 'the console did not run' };
      costWithConsole = { error: 'the console did not run' };
      configChange = { error: 'the console did not run' };
    }

    // Failover of a real executor process at scale: each kind of kill.
    const allFailoverTrials = async (restartLastVictim: boolean): Promise<ScaleBenchResult['failover']> => {
      try {
        if (o.realExecutors < 2) throw new Error('needs 2 real executors');
        const rows: FailoverScaleRow[] = [];
        for (const kill of ['process', 'host'] as const) {
          const row = await failoverTrials(p, kill, o.failoverTrials, ledger, o.sessionSeconds, kill !== 'host' || restartLastVictim);
          rows.push(row);
          progress(began, `failover (${kill}): re-run ${Math.round(row.total.p50)} / ${Math.round(row.total.max)} ms (p50 / max) after the kill`);
        }
        return rows;
      } catch (error) {
        return { error: errorText(error) };
      }
    };
    const failover = await allFailoverTrials(o.quiet);
    progress(began, 'failover trials done');
    const memory = memoryFigures(p);

    // The same measures with the jobs quiet (see ScaleBenchResult.quiet).
    let quiet: ScaleBenchResult['quiet'];
    let quieted = false;
    if (o.quiet) {
      try {
        if (!api) throw new Error('the console did not run');
        const settleSeconds = await quietJobs(p, o.jobs);
        quieted = true;
        progress(began, `jobs quiet after ${settleSeconds.toFixed(1)} s`);
        const m0 = machineSeconds();
        const consoleRows = await measureConsole(api.url, api.auth, o.jobs, o.consoleSeconds).catch((error: unknown) => ({ error: errorText(error) }));
        const quietConfig = await measureConfigChange(p, api.url, api.auth, o.configTrials).catch((error: unknown) => ({ error: errorText(error) }));
        const quietFailover = await allFailoverTrials(false);
        quiet = { settleSeconds, busyCores: busyCoresSince(m0), console: consoleRows, configChange: quietConfig, failover: quietFailover };
      } catch (error) {
        quiet = { error: errorText(error) };
      }
      progress(began, 'quiet measures done');
    }
    const states = executorEvents(p, 'zookeeper connection state');
    const lostEvents = states.filter((e) => e.state === 'LOST');
    const connection = { suspended: states.filter((e) => e.state === 'SUSPENDED').length, lost: lostEvents.length, lostBy: lostEvents.map((e) => `${e.executor ?? '?'} at +${Math.round((e.time - began) / 1000)} s`) };

    // Fewer executors: the same jobs, the per-job cost again, without the console (its cost was read
    // above; it would mirror every moved assignment meanwhile), to compare with the first row. The
    // hosts get the CPU back: the latencies measured with them niced are all taken. The jobs are
    // quieted first: moving 24,000 shards onto 20 executors while 500 shard runs a second fire took
    // 532 s in one run. The other executors' sessions are closed at once, as when their processes die
    // and their guards close them: their graceful shutdowns waited 44–67 s each for the hosts to
    // work through the quieted crons' 30,000 schedule changes first (95 s for the 80 in one run),
    // and their staggered leaves made the allocator's rounds name executors gone meanwhile (1,600
    // assignments refused and re-planned).
    let costCompare: ScaleBenchResult['costCompare'];
    if (o.compareExecutors > 0 && o.compareExecutors < o.executors) {
      try {
        const c0 = Date.now();
        if (p.console) {
          p.stopped.add(p.console);
          await p.console.stop(5000);
        }
        // The crons are quieted while the hosts are still niced: the writes (and ZooKeeper) come
        // first for the CPU — at nice 0 the hosts' firing slowed the 20,000 requests to 40–116 s.
        if (!quieted) await setCrons(p, o.jobs, () => QUIET_CRON);
        if (o.hostsNice > 0 || o.measureNice > 0) for (const h of p.hosts) renice(h.pid, 0);
        // Then the hosts take the new crons in and finish the runs they had claimed: a run in
        // progress when its session closes is a crashed run, re-run by failover on a survivor (in
        // one run thousands were, and the survivors took 171 s to apply against 102–108).
        if (!quieted) await settled(90_000);
        // The real executors still running (the last failover victim is not restarted), the rest embedded.
        const keep = new Set([...p.real.keys(), ...embedded.slice(0, o.compareExecutors - p.real.size)]);
        const c1 = Date.now();
        await Promise.all(p.hosts.map((h) => h.shutdown(h.names.filter((n) => !keep.has(n)), 'sessions')));
        const c2 = Date.now();
        await waitApplied(p, jobNames.filter((j) => j !== PROBE), 600_000, keep);
        const c3 = Date.now();
        costCompare = await measureCost(p, base, o.jobs, keep.size, await znodesSettled(server, 3000, 30_000));
        const s = (ms: number): string => `${Math.round(ms / 1000)} s`;
        progress(began, `cut to ${keep.size} executors in ${s(Date.now() - c0)} (quiet ${s(c1 - c0)}, sessions closed ${s(c2 - c1)}, applied ${s(c3 - c2)}, settled ${s(Date.now() - c3)}): ${costCompare.perJob.watches.toFixed(2)} watches per job`);
      } catch (error) {
        costCompare = { error: errorText(error) };
      }
    }
    return {
      settings: { ...o, jobType: 'node no-op (bench/jobs/noop.ts), 1 worker per instance', consoleHeapMb: CONSOLE_HEAP_MB },
      setup: { writeSeconds, executorsStartSeconds, firingSeconds, consoleBeforeFiring: true, compareWithoutConsole: true, compareSessionsClosed: true, standInsOnTmpfs: hostsDir.tmpfs },
      allocation, cost, costWithConsole, costCompare, tx,
      console: consoleResult, configChange, failover, quiet, memory, connection, consoleLog: consoleTrouble(p.console), deaths: p.deaths,
      totalSeconds: (Date.now() - began) / 1000,
    };
  } finally {
    p.stopping = true;
    const t0 = Date.now();
    // Stand-ins: 5 s to close their instances, then SIGKILL (not the 20 s default grace).
    await Promise.all(p.hosts.map((h) => h.stop(5000)));
    const t1 = Date.now();
    await Promise.all(all.map((proc) => proc.stop(5000)));
    const t2 = Date.now();
    await zk.close().catch(() => undefined);
    await server.stop();
    const t3 = Date.now();
    // Hundreds of thousands of run records: rm(1) deletes them in less than half of rmSync's time.
    for (const d of [dir, hostsDir.path]) if (spawnSync('rm', ['-rf', d], { stdio: 'ignore' }).status !== 0) rmSync(d, { recursive: true, force: true });
    const s = (from: number, to: number): string => ((to - from) / 1000).toFixed(1);
    progress(began, `stopped everything in ${s(t0, Date.now())} s (hosts ${s(t0, t1)}, processes ${s(t1, t2)}, ZooKeeper ${s(t2, t3)}, data dirs ${s(t3, Date.now())})`);
  }
}

// ---- rendering ------------------------------------------------------------------------------

const f1 = (v: number): string => (Number.isFinite(v) ? v.toFixed(1) : 'n/a');
const f0 = (v: number): string => (Number.isFinite(v) ? Math.round(v).toLocaleString('en') : 'n/a');
const dist = (d: Distribution): string => `${f0(d.p50)} / ${f0(d.p99)} / ${f0(d.max)}`;
const met = (ok: boolean): string => (ok ? 'yes' : '**no**');
const isError = <T extends object>(v: T | { error: string }): v is { error: string } => 'error' in v;

function costRows(r: ScaleBenchResult): string[] {
  const rows: string[] = [];
  const row = (label: string, c: CostPoint, tx: string): void => {
    rows.push(`| ${label}${c.settled ? '' : ' (znode count still changing when read)'} | ${f1(c.perJob.znodes)} | ${f1(c.perJob.watches)} (executors ${f1(c.perJob.executorWatches)}) | ${tx} | ≤ ${SCALE_TARGETS.znodesPerJob} / ≤ ${SCALE_TARGETS.watchesPerJob}: ${met(c.perJob.znodes <= SCALE_TARGETS.znodesPerJob && c.perJob.watches <= SCALE_TARGETS.watchesPerJob)} |`);
  };
  const n = r.settings.jobs.toLocaleString('en');
  row(`Orrery, ${n} jobs × ${r.settings.shards}, ${r.cost.executors} executors, no console${r.setup.consoleBeforeFiring ? ' (read once allocated, before the jobs fired; transactions while they fired)' : ''}`, r.cost, f1(r.tx.perMinutePerJob));
  if (!isError(r.costWithConsole)) row(`Orrery, the same with the console running${r.setup.consoleBeforeFiring ? ', the jobs firing' : ''}`, r.costWithConsole, '');
  else rows.push(`| Orrery with the console | not measured: ${r.costWithConsole.error} | | | |`);
  if (r.costCompare && !isError(r.costCompare)) row(`Orrery, the same cut to ${r.costCompare.executors} executors (${r.setup.compareWithoutConsole ? 'no console' : 'console running'}${r.setup.consoleBeforeFiring ? ', the jobs quieted first' : ''}${r.setup.compareSessionsClosed ? ', the other sessions closed at once' : ''})`, r.costCompare, '');
  else if (r.costCompare) rows.push(`| Orrery at fewer executors | not measured: ${r.costCompare.error} | | | |`);
  rows.push(`| Saturn 2017: 24,500 jobs × 3, 2,100 executors, 5-node ensemble | ${f1(SATURN_2017.znodes / SATURN_2017.jobs)} | ${f1(SATURN_2017.watches / SATURN_2017.jobs)} | not published | |`);
  return rows;
}

function kindRows(r: ScaleBenchResult): string[] {
  const points = [r.cost, ...(isError(r.costWithConsole) ? [] : [r.costWithConsole])];
  const last = points.at(-1)!;
  const compare = r.costCompare && !isError(r.costCompare) ? r.costCompare : undefined;
  const out: string[] = [];
  for (const k of last.byKind) {
    const w = k.watches;
    const total = w.executors + w.allocator + w.console + w.bench;
    const other = compare?.byKind.find((x) => x.kind === k.kind);
    if (k.znodes === 0 && total === 0) continue;
    const otherText = other ? ` | ${f1(other.watches.executors)}` : '';
    out.push(`| ${k.kind} | ${k.znodes ? k.znodes.toFixed(2) : '—'} | ${f1(w.executors)} | ${f1(w.allocator)} | ${f1(w.console)}${otherText} |`);
  }
  return out;
}

function scaleRows(r: ScaleBenchResult): string[] {
  const rows: string[] = [];
  const a = r.allocation;
  rows.push(`| full allocation, compute (\`allocate()\` on this cluster: first call / warm median) | ${f0(a.computeColdMs)} / ${f0(a.computeWarmMs)} ms | ≤ ${SCALE_TARGETS.fullAllocationComputeMs} ms (set for 1,000 × 10 × 100) | ${met(a.computeWarmMs <= SCALE_TARGETS.fullAllocationComputeMs)} |`);
  rows.push(`| full allocation, the allocator's rounds as it logs them (read + compute + ${f0(a.jobsWritten)} CAS writes) | ${a.roundsMs.map(f0).join(' + ')} ms | — | |`);
  rows.push(`| full allocation, wall: allocator spawn → every job's \`applied\` (the nodes' ctime; seen by polling) | ${f1(a.wallMs / 1000)} s (${f1(a.zkSeenMs / 1000)} s) | — | |`);
  const t = a.timeline;
  rows.push(`| … its course from the spawn: allocator leader / first round written / first, median, last job applied | ${[t.leaderMs, t.firstRoundMs, t.firstAppliedMs, t.medianAppliedMs, t.lastAppliedMs].map((v) => f1(v / 1000)).join(' / ')} s | — | |`);
  rows.push(...latencyRows(isError(r.console) ? r.console : r.console.rows, r.configChange, r.failover));
  return rows;
}

/** A failover row's steps, p50 from the kill (results written before a step was timed lack it). */
function failoverSteps(f: FailoverScaleRow): string {
  const steps: Array<[string, Distribution | undefined]> = [
    ['presence gone', f.detection], ['new assignment written', f.assigned], ["allocator's round written", f.roundDone],
    ['survivor job leader', f.leader], ['`applied` written', f.applied],
  ];
  return steps.filter(([, d]) => d !== undefined).map(([label, d]) => `${label} ${f0(d!.p50)}`).join(', ');
}

/** The console's job list, config changes and failover: rows of the scale table (loaded or quiet). */
function latencyRows(consoleRows: Measured<ConsoleRow[]>, cc: ScaleBenchResult['configChange'], failover: ScaleBenchResult['failover']): string[] {
  const rows: string[] = [];
  if (isError(consoleRows)) rows.push(`| console job list | not measured: ${consoleRows.error} | ≤ ${SCALE_TARGETS.consoleListP99Ms} ms | |`);
  else for (const c of consoleRows) rows.push(`| console job list, ${c.route}: p50 / p99 / max (${f0(c.requests)} requests, ${c.failed} failed) | ${c.p50} / **${c.p99}** / ${c.max} ms | p99 ≤ ${SCALE_TARGETS.consoleListP99Ms} ms | ${met(c.p99 <= SCALE_TARGETS.consoleListP99Ms && c.failed === 0)} |`);
  if (isError(cc)) rows.push(`| config change → its executors | not measured: ${cc.error} | ≤ 1 s | |`);
  else {
    const who = cc.realOnly ? 'each real `orrery-executor` holding the job' : 'each executor holding the job';
    rows.push(`| config change (console PUT) → ${who}: p50 / p99 / max, ${cc.holders} (trial, executor) pairs, ${cc.missing} not seen in ${(cc.waitMs ?? 10_000) / 1000} s | ${dist(cc.perExecutor)} ms | ≤ ${SCALE_TARGETS.configChangeMs} ms | ${met(cc.missing === 0 && cc.perExecutor.max <= SCALE_TARGETS.configChangeMs)} |`);
    if (cc.standIns) rows.push(`| … the embedded stand-ins also holding those jobs (niced, sharing the two cores): p50 / p99 / max, ${cc.standIns.pairs} pairs, ${cc.standIns.missing} not seen in ${(cc.waitMs ?? 10_000) / 1000} s | ${cc.standIns.perExecutor.count > 0 ? `${dist(cc.standIns.perExecutor)} ms` : 'none seen'} | — | |`);
    rows.push(`| … the PUT itself (console → ZooKeeper → answer), ${cc.trials} trials | ${dist(cc.writeMs)} ms | — | |`);
  }
  if (isError(failover)) rows.push(`| failover of one executor | not measured: ${failover.error} | | |`);
  else {
    for (const f of failover) {
      const target = f.kill === 'process' ? SCALE_TARGETS.processFailoverP99Ms : f.sessionSeconds * 1000 + SCALE_TARGETS.sessionFailoverSlackMs;
      const label = f.kill === 'process' ? 'kill -9 of an executor process (its guard closes the session)' : `kill -9 of executor, guard and job (session of ${f.sessionSeconds} s expires)`;
      rows.push(`| failover, ${label} → re-run start: p50 / p99 / max of ${f.trials} (p50 from the kill: ${failoverSteps(f)} ms; ${f.overlaps} overlaps) | ${dist(f.total)} ms | p99 ≤ ${f0(target)} ms | ${met(f.total.p99 <= target && f.overlaps === 0)} |`);
    }
  }
  return rows;
}

/** The Markdown for BENCHMARKS.md (no heading): settings, the two tables, the breakdown, a reading. */
export function renderScale(r: ScaleBenchResult): string {
  const s = r.settings;
  const lines: string[] = [];
  lines.push(`${s.jobs.toLocaleString('en')} jobs × ${s.shards} shards (Node no-op, each firing once a minute at second i % 60), ${s.executors} executors (${s.realExecutors} \`orrery-executor\` processes, session ${s.sessionSeconds} s, + ${s.executors - s.realExecutors} embedded in ${s.hosts} Node processes, session ${s.embeddedSessionSeconds} s${r.setup.standInsOnTmpfs ? ', their run history in memory (tmpfs)' : ''}), one ZooKeeper (tickTime ${s.tickMs} ms, full JIT)${s.consoleHeapMb ? `, the console with ORRERY_CONSOLE_HEAP_MB=${s.consoleHeapMb}` : ''}${s.hostsNice ? `; once every job was allocated the embedded executors' processes ran at nice ${s.hostsNice} (stand-ins for executors on their own hosts: the processes measured — ZooKeeper, the allocator, the console, the real executors — came first for the CPU)${s.measureNice ? `, and at nice ${s.measureNice} once the transaction window was read (the console, config-change and failover measures)` : ''}` : ''}; ${s.txSeconds}-s transaction window; whole run ${f0(r.totalSeconds)} s (jobs written in ${f1(r.setup.writeSeconds)} s, executors online in ${f1(r.setup.executorsStartSeconds)} s${r.setup.firingSeconds !== undefined ? `; the jobs were written quiet, allocated, then set firing — the new schedules reached the executors in ${f1(r.setup.firingSeconds)} s — and measured from then on` : ''}).`);
  lines.push('');
  lines.push('**ZooKeeper cost per job** (znodes: mntr delta from before the namespace; watches: mntr zk_watch_count, all holders; transactions: Zxid delta over the window)');
  lines.push('');
  lines.push('| setup | znodes / job | watches / job | transactions / min / job | target met? |');
  lines.push('|---|---|---|---|---|');
  lines.push(...costRows(r));
  lines.push('');
  const compare = r.costCompare && !isError(r.costCompare) ? r.costCompare : undefined;
  lines.push(`What one job costs, by node (znodes: mean of 50 sampled job subtrees; watches: wchc ÷ jobs, by holder${compare ? `; last column: executors' watches at ${compare.executors} executors` : ''})`);
  lines.push('');
  lines.push(`| node | znodes / job | executors' watches / job | allocator's | console's${compare ? ` | executors' at ${compare.executors}` : ''} |`);
  lines.push(`|---|---|---|---|---|${compare ? '---|' : ''}`);
  lines.push(...kindRows(r));
  lines.push('');
  lines.push('**Scale run**');
  lines.push('');
  lines.push('| measure | figure | target | met? |');
  lines.push('|---|---|---|---|');
  lines.push(...scaleRows(r));
  lines.push('');
  if (r.quiet) lines.push(...quietSection(r.quiet, r.settings.jobs));
  lines.push(`ZooKeeper links the executors saw suspended over the run: ${r.connection.suspended}; sessions lost: ${r.connection.lost}${r.connection.lostBy?.length ? ` (${r.connection.lostBy.join(', ')})` : ''}.`);
  for (const d of r.deaths ?? []) lines.push('', `**Died during the run**: ${d}`);
  // The first state line is its start; more than that, or any warning, is trouble worth reading.
  if (r.consoleLog && (r.consoleLog.length > 1 || r.consoleLog.some((l) => !l.includes('zookeeper connection state')))) {
    lines.push('', 'The console\'s warnings, errors and ZooKeeper connection states over the run (the last lines):', '', ...r.consoleLog.map((l) => `    ${l}`));
  }
  lines.push('');
  lines.push(`Peak RSS (VmHWM) per process / RSS now of all of a kind: ${r.memory.map((m) => `${m.what} ${f0(m.peakMb)} / ${f0(m.rssMb)} MB (${m.processes})`).join('; ')}. ZooKeeper's data: ${f1(r.cost.dataBytes / 2 ** 20)} MB (mntr zk_approximate_data_size).`);
  lines.push('');
  lines.push(...reading(r));
  return lines.join('\n');
}

/** The same latencies with the jobs quiet: a second table. */
function quietSection(q: NonNullable<ScaleBenchResult['quiet']>, jobs: number): string[] {
  if (isError(q)) return [`**The same with the jobs quiet**: not measured: ${q.error}`, ''];
  return [
    `**The same with the jobs quiet** — every job's cron then moved to once a year (the machine settled ${f1(q.settleSeconds)} s after the first write): the same ${jobs.toLocaleString('en')} jobs, assignments, watches and executors, with ${q.busyCores.toFixed(2)} cores busy over these measures`,
    '',
    '| measure | figure | target | met? |',
    '|---|---|---|---|',
    ...latencyRows(q.console, q.configChange, q.failover),
    '',
  ];
}

function reading(r: ScaleBenchResult): string[] {
  const c = r.cost;
  const out: string[] = [];
  out.push(`- Per job Orrery keeps ${f1(c.perJob.znodes)} znodes and ${f1(c.perJob.watches)} watches (Saturn: ${f1(SATURN_2017.znodes / SATURN_2017.jobs)} and ${f1(SATURN_2017.watches / SATURN_2017.jobs)}): the job's own nodes, and watches only from the executors its assignment names, its job leader, the allocator and the console — none per other executor.`);
  if (r.costCompare && !isError(r.costCompare)) out.push(`- With ${r.costCompare.executors} executors instead of ${c.executors} the executors' watches per job are ${f1(r.costCompare.perJob.executorWatches)} against ${f1(c.perJob.executorWatches)}: the per-job cost does not grow with the executor count.`);
  out.push(`- ${f1(r.tx.perMinutePerJob)} transactions per minute per job: two writes per shard run (claim, completion) × ${r.settings.shards} shards firing once a minute; ${f0(r.tx.shardsRan)} of ${f0(r.tx.shards)} shards${r.tx.sampledJobs !== undefined && r.tx.sampledJobs < r.settings.jobs ? ` (those of ${f0(r.tx.sampledJobs)} jobs, every ${f0(Math.ceil(r.settings.jobs / r.tx.sampledJobs))}th)` : ''} had a fire in the window.`);
  const t = r.allocation.timeline;
  out.push(`- The allocator's compute is ${f0(r.allocation.computeWarmMs)} ms warm for ${r.settings.jobs.toLocaleString('en')} × ${r.settings.shards} × ${r.settings.executors}, its whole first round (reads, compute, ${f0(r.allocation.jobsWritten)} compare-and-set writes) ${f0(r.allocation.roundsMs[0] ?? Number.NaN)} ms; the first job is applied ${f1((t.firstAppliedMs - t.firstRoundMs) / 1000)} s after that round and the last ${f1((t.lastAppliedMs - t.firstRoundMs) / 1000)} s after it: the wall time is the executors' side (every job's runtime on 3 executors, its leader latch, its leader's checks and \`applied\` write)${r.setup.firingSeconds !== undefined ? ', with the jobs quiet' : ', on the same two cores as the firing jobs'}.`);
  if (r.tx.machineBusyCores !== undefined && r.tx.cores !== undefined) {
    const saturated = r.tx.machineBusyCores >= 0.9 * r.tx.cores;
    out.push(`- While the jobs fired steadily (the transaction window) the machine had ${r.tx.machineBusyCores.toFixed(2)} of its ${r.tx.cores} cores busy (1-minute load average ${f1(r.tx.loadAverage ?? Number.NaN)})${saturated ? ': saturated — the console, config-change and failover figures here are latencies on a machine with no CPU to spare (all 100 executors, their 100 Node workers, ZooKeeper, the allocator and the console share it), not what a deployment with executors on their own hosts sees' : ''}.`);
  }
  const q = r.quiet && !isError(r.quiet) ? r.quiet : undefined;
  if (q) {
    const pairs: string[] = [];
    const p99 = (v: Measured<{ p99: number }> | undefined): string => (v && !isError(v) ? f0(v.p99) : 'n/a');
    const firstPage = (c: Measured<ConsoleRow[]> | Measured<{ rows: ConsoleRow[] }>): Measured<{ p99: number }> | undefined => (isError(c) ? c : (Array.isArray(c) ? c : c.rows)[0]);
    pairs.push(`console first page ${p99(firstPage(r.console))} → ${p99(firstPage(q.console))} ms`);
    const ccP99 = (cc: ScaleBenchResult['configChange']): Measured<{ p99: number }> => (isError(cc) ? cc : cc.perExecutor);
    pairs.push(`config change ${p99(ccP99(r.configChange))} → ${p99(ccP99(q.configChange))} ms`);
    for (const kill of ['process', 'host'] as const) {
      const row = (f: ScaleBenchResult['failover']): Measured<{ p99: number }> | undefined => (isError(f) ? f : f.find((x) => x.kill === kill)?.total);
      pairs.push(`${kill === 'process' ? 'process failover' : 'session-expiry failover'} ${p99(row(r.failover))} → ${p99(row(q.failover))} ms`);
    }
    out.push(`- p99 with the jobs firing → with them quiet: ${pairs.join('; ')}.`);
  }
  if (r.connection.suspended === 0 && r.connection.lost === 0) out.push('- No executor\'s ZooKeeper link dropped over the run.');
  else out.push(`- Executors' ZooKeeper links suspended ${r.connection.suspended} times and ${r.connection.lost} sessions were lost over the run: figures taken while links drop measure an overloaded machine (see the settings).`);
  return out;
}
