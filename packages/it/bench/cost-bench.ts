/**
 * The cost curve: sustained shard runs per second, stepped up until lateness or misses break
 * down, on one executor and on several executors sharing one ZooKeeper — with the CPU each run
 * costs every process, and ZooKeeper's transactions and disk bytes per run.
 *
 * A step asks for `rate` runs per second as `rate ÷ shardsPerJob` Node jobs of `shardsPerJob`
 * shards on `* * * * * *`, handler `noop` (the job does nothing: Node jobs are the
 * coordination-bound case, every figure is Orrery's own cost). Each curve gets a fresh ZooKeeper
 * root with its executor processes (`bench-1..n`) and an allocator, kept running from step to step,
 * all on one ZooKeeper for the whole bench. A step creates its jobs, and once they are applied and
 * two fires in a row ran every shard (steady state, bounded), a window of whole seconds of fires is
 * measured:
 * - lateness (run start − fire time), missed and duplicate (job, shard, fire) from the executors'
 *   run records; runs achieved per second;
 * - CPU from /proc over exactly `windowSeconds` seconds, 700 ms ahead of the window's fires (a
 *   whole number of periods of a periodic load, so CPU ÷ runs is the cost of a run whatever the
 *   phase; and at that phase the fire before has completed and the next one's claims, at most
 *   600 ms ahead, have not begun, so the interval holds the window's writes): each executor process (all its threads; its main thread — the event loop — apart),
 *   its child processes (the Node workers and the fence guard, see cost/proc.ts), the allocator,
 *   ZooKeeper's JVM, and the machine's busy time;
 * - ZooKeeper transactions per run: the window's own — every write of its fires' shard nodes
 *   (claims, completions, wherever they fall in the log) plus every other transaction of the same
 *   interval — read from the transaction log itself (cost/zk-log.ts, cost/zk-ledger.ts), with
 *   their log bytes; the interval's Zxid delta (`srvr`) and snapshot bytes beside them. The
 *   interval alone would cut the load anywhere but at a quiet point: under load the fire before
 *   the window is still completing at its first sample.
 * Then the step's jobs are disabled, let go by every executor and deleted, so each step runs on
 * executors with nothing else to do and a ZooKeeper holding only its jobs. The curve stops after
 * the first step that breaks down (lateness p99 above a second, or more than
 * 1 % of the window's runs missed); that step is reported too.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createZkClient, encodeJson, parseJobConfig, paths, type ZkClient } from '@orrery/core';
import { eventually, startZooKeeper, uniqueRoot, type ZooKeeperServer } from '@orrery/core/testing';
import { createNamespace } from '@orrery/console';
import { startProcess, type RunningProcess } from '../src/processes.js';
import { distribution, type Distribution } from './executor-bench.js';
import { allProcesses, machineSeconds, processTreeSeconds, threadSeconds } from './cost/proc.js';
import { RunRecords, runKey, type RunRecordLite } from './cost/records.js';
import { ZkDiskMeter, type ZkDiskTotals } from './cost/zk-log.js';
import { TransactionLedger, type WindowTransactions } from './cost/zk-ledger.js';

export { renderCost } from './cost/render.js';

const JOBS_DIR = fileURLToPath(new URL('./jobs/', import.meta.url));
const NS = 'bench';

/** Options of {@link runCostBench}. */
export interface CostBenchOptions {
  /** Runs per second asked, in order; default 100, 500, 1,000, 1,500, 2,000, 3,000, 4,000. */
  rates?: readonly number[];
  /** One curve per entry: how many executor processes share the load. Default [1, 4]. */
  executors?: readonly number[];
  /** Seconds of fires measured per step. Default 15. */
  windowSeconds?: number;
  /** Shards per job (the job count is rate ÷ this, rounded up). Default 10. */
  shardsPerJob?: number;
  /** Node workers of all executors together (`--node-workers` = this ÷ executors, at least 2). Default 8. */
  nodeWorkers?: number;
  /** At most this many seconds from the jobs being applied to steady state. Default 12. */
  steadyTimeoutSeconds?: number;
  /** A step breaks down above this lateness p99 (ms). Default 1,000. */
  latenessP99LimitMs?: number;
  /** A step breaks down above this fraction of missed runs. Default 0.01. */
  missedLimit?: number;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

/** CPU of one step's window: milliseconds per run, and cores (CPU seconds per wall second). */
export interface CpuFigures {
  /** The executor processes themselves, all threads (summed over executors). */
  executor: number;
  /** Their child processes: Node workers and fence guards. */
  workers: number;
  allocator: number;
  zookeeper: number;
}

/** One rate step of a curve. */
export interface CostStep {
  rateAsked: number;
  jobs: number;
  shardsPerJob: number;
  /** True when two fires in a row ran every shard before the bound; else the window started at the bound. */
  steady: boolean;
  /** Seconds from the jobs being applied to the window's first fire. */
  secondsToWindow: number;
  windowSeconds: number;
  /** Distinct (job, shard, fire) that ran in the window. */
  runs: number;
  achievedPerSecond: number;
  missed: number;
  missedFraction: number;
  duplicates: number;
  /** Runs that did not succeed. */
  failed: number;
  /** Run start − fire time, ms. */
  lateness: Distribution;
  /** Runs of the window per executor (bench-1 first). */
  runsPerExecutor: number[];
  /** Wall seconds between the two CPU samples. */
  sampledSeconds: number;
  cpuMsPerRun: CpuFigures;
  cores: CpuFigures & {
    /** The busiest executor's main thread (its event loop), in cores. */
    busiestEventLoop: number;
    /** The machine's busy cores (all processes) and how many cores it has. */
    machineBusy: number;
    machineCores: number;
    /** This bench's own process (idle in the window but for the samples). */
    runner: number;
    /** Machine busy minus Orrery's processes and the runner: whatever else runs on the machine. */
    other: number;
  };
  /** Fires of the window's CPU interval that the executors did not run, by reason (their metric's delta). */
  notRun: Record<string, number>;
  zookeeper: {
    /** The window's transactions, by what they were for (cost/zk-ledger.ts; absent in older results, whose figures are the interval's). */
    window?: WindowTransactions;
    /** `window.total` ÷ runs. */
    transactionsPerRun: number;
    /** The Zxid delta of the sampled interval, whatever fires its writes were for. */
    transactions: number;
    /** Records appended to the transaction log in the interval (a check: equals `transactions` on a standalone server). */
    logRecords: number;
    /** Log bytes of `window.total` ÷ runs. */
    logBytesPerRun: number;
    snapshotBytesPerRun: number;
    snapshotsWritten: number;
  };
  brokeDown: boolean;
  /** Why it broke down (empty when it held). */
  breakdown: string[];
}

/** One curve: the steps run until (and including) the first that broke down. */
export interface CostCurve {
  executors: number;
  nodeWorkersPerExecutor: number;
  steps: CostStep[];
  /** Present when the curve ended on an error (the steps before it are kept). */
  error?: string;
  /** Seconds the curve took. */
  seconds: number;
}

/** What {@link runCostBench} returns (plain JSON). */
export interface CostBenchResult {
  settings: {
    windowSeconds: number;
    shardsPerJob: number;
    nodeWorkers: number;
    steadyTimeoutSeconds: number;
    latenessP99LimitMs: number;
    missedLimit: number;
    zooKeeper: string;
  };
  machine: { cores: number; model: string };
  curves: CostCurve[];
  seconds: number;
}

interface CurveEnv {
  zk: ZkClient;
  dataDirs: string[];
  executors: RunningProcess[];
  /** Each executor's HTTP endpoint (for /metrics). */
  urls: string[];
  allocator: RunningProcess;
  close(): Promise<void>;
}

type JobSpec = Record<string, unknown> & { name: string };

function makeJobs(prefix: string, count: number, shards: number): JobSpec[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `${prefix}-${String(i).padStart(4, '0')}`,
    type: 'node',
    handler: 'noop',
    cron: '* * * * * *',
    shardingTotalCount: shards,
    misfire: { policy: 'skip' },
  }));
}

/** A fresh root with `count` executors (`bench-1…`) and an allocator; `close` stops them and deletes the root. */
async function startCurve(server: ZooKeeperServer, count: number, workers: number): Promise<CurveEnv> {
  const zk = createZkClient({ connect: server.connectString, root: uniqueRoot('bench-cost') });
  await zk.start();
  const dir = mkdtempSync(join(tmpdir(), 'orrery-bench-cost-'));
  const executors: RunningProcess[] = [];
  let allocator: RunningProcess | undefined;
  const close = async (): Promise<void> => {
    await Promise.all(executors.map((e) => e.stop(10_000)));
    await allocator?.stop();
    await zk.deleteRecursive('/').catch(() => undefined);
    await zk.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await createNamespace(zk, NS);
    await zk.mkdirp(paths.jobs(NS));
    const names = Array.from({ length: count }, (_, i) => `bench-${i + 1}`);
    for (const name of names) {
      executors.push(startProcess('orrery-executor', ['--zk', server.connectString, '--root', zk.options.root, '--namespace', NS, '--name', name, '--jobs', JOBS_DIR, '--data-dir', join(dir, name), '--log-level', 'warn', '--node-workers', String(workers), '--http-port', '0', '--advertise-host', '127.0.0.1'], {}, { echo: process.env.ORRERY_BENCH_ECHO === '1' }));
    }
    const urls = await eventually(async () => Promise.all(names.map(async (name) => {
      const presence = JSON.parse((await zk.get(paths.executorPresence(NS, name))).data?.toString('utf8') ?? '{}') as { httpUrl?: string };
      if (!presence.httpUrl) throw new Error(`no httpUrl in the presence of ${name}`);
      return presence.httpUrl;
    })), { timeoutMs: 60_000, intervalMs: 100 });
    allocator = startProcess('orrery-sharding', ['--zk', server.connectString, '--root', zk.options.root, '--log-level', 'warn']);
    return { zk, dataDirs: names.map((n) => join(dir, n)), executors, urls, allocator, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Creates the step's jobs enabled, and waits until every one is applied (its job leader wrote `applied`). */
async function addJobs(env: CurveEnv, jobs: readonly JobSpec[]): Promise<void> {
  await Promise.all(jobs.map((j) => env.zk.create(paths.job(NS, j.name), encodeJson(parseJobConfig({ ...j, enabled: true })))));
  await eventually(async () => {
    const applied = await Promise.all(jobs.map((j) => env.zk.exists(paths.jobApplied(NS, j.name))));
    if (applied.some((a) => !a)) throw new Error('not all applied yet');
  }, { timeoutMs: 120_000, intervalMs: 200 });
}

/** The named gauges of every executor's /metrics, summed. */
async function gauges(urls: readonly string[], names: readonly string[]): Promise<number[]> {
  const sums = names.map(() => 0);
  for (const url of urls) {
    const text = await (await fetch(`${url}/metrics`)).text();
    names.forEach((name, i) => { sums[i]! += Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN); });
  }
  return sums;
}

/**
 * Disables the step's jobs, waits until no executor holds a job or a run (their gauges
 * `orrery_executor_jobs` and `orrery_executor_runs_in_progress` at 0), then deletes them: the next
 * step starts on executors with nothing else to do, and a ZooKeeper database of its own jobs only.
 */
async function retireJobs(env: CurveEnv, jobs: readonly JobSpec[]): Promise<void> {
  // A job the step could not create (it failed while adding them) has nothing to disable.
  await Promise.all(jobs.map((j) => env.zk.set(paths.job(NS, j.name), encodeJson(parseJobConfig({ ...j, enabled: false }))).catch(() => undefined)));
  await eventually(async () => {
    const [held, running] = await gauges(env.urls, ['orrery_executor_jobs', 'orrery_executor_runs_in_progress']);
    if (held !== 0 || running !== 0) throw new Error(`executors still hold ${held} jobs, ${running} runs`);
  }, { timeoutMs: 60_000, intervalMs: 250 });
  for (let i = 0; i < jobs.length; i += 50) {
    await Promise.all(jobs.slice(i, i + 50).map((j) => env.zk.deleteRecursive(paths.job(NS, j.name))));
  }
}

interface Sample {
  at: number;
  machine: { busy: number; total: number };
  executorSelf: number[];
  executorMain: number[];
  executorChildren: number[];
  allocator: number;
  zookeeper: number;
  /** This process (the bench's runner). */
  runner: number;
  zxid: number;
  disk: ZkDiskTotals;
  /** Fires not run, by reason, summed over the executors (their `orrery_executor_fires_not_run_total`). */
  notRun: Record<string, number>;
}

/** Sums each outcome of `orrery_executor_fires_not_run_total` over the executors' /metrics. */
async function firesNotRun(urls: readonly string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const url of urls) {
    const text = await fetch(`${url}/metrics`).then((r) => r.text()).catch(() => '');
    if (!text) out.unreadable = (out.unreadable ?? 0) + 1; // an executor that does not answer: said, not hidden
    for (const m of text.matchAll(/^orrery_executor_fires_not_run_total\{outcome="([^"]+)"\} (\S+)$/gm)) {
      out[m[1]!] = (out[m[1]!] ?? 0) + Number(m[2]);
    }
  }
  return out;
}

/** CPU first (all from /proc, within a few ms), then the Zxid, ZooKeeper's files and the executors' metrics. */
async function sample(env: CurveEnv, server: ZooKeeperServer, disk: ZkDiskMeter): Promise<Sample> {
  const at = performance.now();
  const procs = allProcesses();
  const machine = machineSeconds();
  const trees = env.executors.map((e) => processTreeSeconds(procs, e.pid));
  const executorMain = env.executors.map((e) => threadSeconds(e.pid));
  const alloc = processTreeSeconds(procs, env.allocator.pid);
  const zkTree = processTreeSeconds(procs, server.pid);
  const own = process.cpuUsage();
  const zxid = await server.zxid();
  return {
    at, machine, executorMain,
    executorSelf: trees.map((t) => t.self),
    executorChildren: trees.map((t) => t.children),
    allocator: alloc.self + alloc.children,
    zookeeper: zkTree.self,
    runner: (own.user + own.system) / 1e6,
    zxid,
    disk: disk.read(zxid),
    notRun: await firesNotRun(env.urls),
  };
}

/** How long before a window's first fire (and its end) the samples are taken; see the module's note. */
const SAMPLE_LEAD_MS = 700;

const sleepUntil = (t: number): Promise<void> => new Promise((r) => setTimeout(r, Math.max(0, t - Date.now())));

/**
 * Polls the run records until two fires in a row ran every shard, or `boundMs` passes. Returns the
 * first of the two fires, or undefined at the bound.
 */
async function waitSteady(records: RunRecords, shards: number, firstFire: number, boundMs: number): Promise<number | undefined> {
  while (Date.now() < boundMs) {
    records.scan(firstFire - 2000);
    const per = records.shardsPerFire();
    for (let f = firstFire; f + 1000 <= Date.now() - 500; f += 1000) {
      if (per.get(f) === shards && per.get(f + 1000) === shards) return f;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return undefined;
}

/** Polls the run records until every shard of every fire in [start, end) ran, or `deadline`. */
async function waitWindowRecords(records: RunRecords, shards: number, start: number, end: number, deadline: number): Promise<void> {
  for (;;) {
    records.scan(start - 2000);
    const per = records.shardsPerFire();
    let complete = true;
    for (let f = start; f < end; f += 1000) if (per.get(f) !== shards) complete = false;
    if (complete || Date.now() >= deadline) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}

function diffCpu(a: Sample, b: Sample): CpuFigures & { busiestEventLoop: number; machineBusy: number; machineTotal: number } {
  const sum = (x: number[], y: number[]): number => y.reduce((acc, v, i) => acc + v - x[i]!, 0);
  return {
    executor: sum(a.executorSelf, b.executorSelf),
    workers: sum(a.executorChildren, b.executorChildren),
    allocator: b.allocator - a.allocator,
    zookeeper: b.zookeeper - a.zookeeper,
    busiestEventLoop: Math.max(...b.executorMain.map((v, i) => v - a.executorMain[i]!)),
    machineBusy: b.machine.busy - a.machine.busy,
    machineTotal: b.machine.total - a.machine.total,
  };
}

interface RunFigures { runs: number; missed: number; duplicates: number; failed: number; lateness: Distribution; runsPerExecutor: number[] }

function runFigures(all: readonly RunRecordLite[], start: number, end: number, expected: number, executors: number): RunFigures {
  const inWindow = all.filter((r) => r.fireTime >= start && r.fireTime < end);
  const seen = new Map<string, number>();
  for (const r of inWindow) seen.set(runKey(r), (seen.get(runKey(r)) ?? 0) + 1);
  const runsPerExecutor = Array.from({ length: executors }, (_, i) => inWindow.filter((r) => r.executor === `bench-${i + 1}`).length);
  return {
    runs: seen.size,
    missed: expected - seen.size,
    duplicates: [...seen.values()].filter((n) => n > 1).length,
    failed: inWindow.filter((r) => r.status !== 'succeeded').length,
    lateness: distribution(inWindow.map((r) => r.startedAt - r.fireTime)),
    runsPerExecutor,
  };
}

interface StepPlan { rate: number; executors: number; workers: number; shardsPerJob: number; windowSeconds: number; steadyTimeoutSeconds: number; latenessP99LimitMs: number; missedLimit: number }

/** One rate step (see the module's note). */
async function measureStep(server: ZooKeeperServer, env: CurveEnv, disk: ZkDiskMeter, ledger: TransactionLedger, plan: StepPlan, log: (line: string) => void): Promise<CostStep> {
  const jobCount = Math.ceil(plan.rate / plan.shardsPerJob);
  const shards = jobCount * plan.shardsPerJob;
  const prefix = `r${shards}`;
  const jobs = makeJobs(prefix, jobCount, plan.shardsPerJob);
  const t0 = Date.now();
  try {
    await addJobs(env, jobs);
    log(`cost: ${plan.executors} executor(s), ${shards} runs/s: applied in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const appliedAt = Date.now();
    const records = new RunRecords(env.dataDirs, `${prefix}-`);
    const firstFire = Math.ceil(appliedAt / 1000) * 1000;
    const steadyFire = await waitSteady(records, shards, firstFire, appliedAt + plan.steadyTimeoutSeconds * 1000);
    disk.read(); // catch up with the log so far: the samples then read only the window's records
    ledger.begin(env.zk.options.root);
    const start = Math.max((steadyFire ?? 0) + 2000, Math.ceil((Date.now() + SAMPLE_LEAD_MS + 100) / 1000) * 1000);
    const end = start + plan.windowSeconds * 1000;
    await sleepUntil(start - SAMPLE_LEAD_MS);
    const a = await sample(env, server, disk);
    await sleepUntil(end - SAMPLE_LEAD_MS);
    const b = await sample(env, server, disk);
    await waitWindowRecords(records, shards, start, end, end + 5000);
    const figures = runFigures(records.records, start, end, shards * plan.windowSeconds, plan.executors);
    // An executor completes a run in ZooKeeper before it records it, so the completions are in the log by now; read them all.
    const txns = await windowTransactions(server, disk, ledger, figures.runs, start, end, a.zxid, b.zxid);
    log(`cost: steady ${steadyFire !== undefined ? 'after' : 'not reached in'} ${((start - 2000 - appliedAt) / 1000).toFixed(1)} s; records read ${((Date.now() - end) / 1000).toFixed(1)} s after the window`);
    return stepResult(plan, jobCount, steadyFire !== undefined, (start - appliedAt) / 1000, figures, a, b, txns);
  } finally {
    const c0 = Date.now();
    await retireJobs(env, jobs);
    log(`cost: jobs disabled, let go and deleted in ${((Date.now() - c0) / 1000).toFixed(1)} s`);
  }
}

/**
 * Reads the log to its end until it holds a completion for each of the window's runs (or 5 s
 * pass), then tallies the window's transactions (see cost/zk-ledger.ts).
 */
async function windowTransactions(server: ZooKeeperServer, disk: ZkDiskMeter, ledger: TransactionLedger, runs: number, start: number, end: number, from: number, to: number): Promise<WindowTransactions> {
  const deadline = Date.now() + 5000;
  for (;;) {
    disk.read(await server.zxid());
    if (ledger.completions(start, end) >= runs || Date.now() >= deadline) return ledger.tally(start, end, from, to);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function stepResult(plan: StepPlan, jobs: number, steady: boolean, secondsToWindow: number, f: RunFigures, a: Sample, b: Sample, txns: WindowTransactions): CostStep {
  const seconds = (b.at - a.at) / 1000;
  const cpu = diffCpu(a, b);
  const perRun = (s: number): number => (f.runs > 0 ? (s * 1000) / f.runs : NaN);
  const orrery = cpu.executor + cpu.workers + cpu.allocator + cpu.zookeeper;
  const transactions = b.zxid - a.zxid;
  const expected = jobs * plan.shardsPerJob * plan.windowSeconds;
  const missedFraction = f.missed / expected;
  const breakdown: string[] = [];
  if (!(f.lateness.p99 <= plan.latenessP99LimitMs)) breakdown.push(`lateness p99 ${Math.round(f.lateness.p99)} ms > ${plan.latenessP99LimitMs} ms`);
  if (missedFraction > plan.missedLimit) breakdown.push(`${(missedFraction * 100).toFixed(1)} % missed > ${plan.missedLimit * 100} %`);
  return {
    rateAsked: jobs * plan.shardsPerJob, jobs, shardsPerJob: plan.shardsPerJob, steady, secondsToWindow,
    windowSeconds: plan.windowSeconds,
    runs: f.runs, achievedPerSecond: f.runs / plan.windowSeconds, missed: f.missed, missedFraction,
    duplicates: f.duplicates, failed: f.failed, lateness: f.lateness, runsPerExecutor: f.runsPerExecutor,
    sampledSeconds: seconds,
    cpuMsPerRun: { executor: perRun(cpu.executor), workers: perRun(cpu.workers), allocator: perRun(cpu.allocator), zookeeper: perRun(cpu.zookeeper) },
    cores: {
      executor: cpu.executor / seconds, workers: cpu.workers / seconds, allocator: cpu.allocator / seconds, zookeeper: cpu.zookeeper / seconds,
      busiestEventLoop: cpu.busiestEventLoop / seconds,
      machineBusy: cpu.machineBusy / seconds,
      machineCores: cpu.machineTotal / seconds,
      runner: (b.runner - a.runner) / seconds,
      other: (cpu.machineBusy - orrery - (b.runner - a.runner)) / seconds,
    },
    notRun: Object.fromEntries(Object.entries(b.notRun).map(([k, v]) => [k, v - (a.notRun[k] ?? 0)]).filter(([, v]) => v !== 0)),
    zookeeper: {
      window: txns,
      transactionsPerRun: f.runs > 0 ? txns.total / f.runs : NaN,
      transactions,
      logRecords: b.disk.logRecords - a.disk.logRecords,
      logBytesPerRun: f.runs > 0 ? txns.bytes / f.runs : NaN,
      snapshotBytesPerRun: f.runs > 0 ? (b.disk.snapshotBytes - a.disk.snapshotBytes) / f.runs : NaN,
      snapshotsWritten: b.disk.snapshots - a.disk.snapshots,
    },
    brokeDown: breakdown.length > 0,
    breakdown,
  };
}

/**
 * Runs the cost curves (see the module's note): for each executor count, the rates in order until
 * the first step that breaks down. One ZooKeeper (standalone, tickTime 500 ms, the JVM's full JIT)
 * for the whole bench.
 */
export async function runCostBench(options: CostBenchOptions = {}): Promise<CostBenchResult> {
  const o = {
    rates: options.rates ?? [100, 500, 1000, 1500, 2000, 3000, 4000],
    executors: options.executors ?? [1, 4],
    windowSeconds: options.windowSeconds ?? 15,
    shardsPerJob: options.shardsPerJob ?? 10,
    nodeWorkers: options.nodeWorkers ?? 8,
    steadyTimeoutSeconds: options.steadyTimeoutSeconds ?? 12,
    latenessP99LimitMs: options.latenessP99LimitMs ?? 1000,
    missedLimit: options.missedLimit ?? 0.01,
  };
  const log = options.log ?? ((): void => undefined);
  const t0 = Date.now();
  const server = await startZooKeeper({ tickTimeMs: 500, fastStart: false });
  try {
    const ledger = new TransactionLedger();
    const disk = new ZkDiskMeter(join(server.dataDir, 'data', 'version-2'), ledger.onRecord);
    const curves: CostCurve[] = [];
    for (const executors of o.executors) {
      const c0 = Date.now();
      const workers = Math.max(2, Math.ceil(o.nodeWorkers / executors));
      const steps: CostStep[] = [];
      let error: string | undefined;
      try {
        const env = await startCurve(server, executors, workers);
        try {
          for (const rate of o.rates) {
            const step = await measureStep(server, env, disk, ledger, { ...o, rate, executors, workers }, log);
            log(`cost: ${executors} executor(s), ${step.rateAsked} runs/s: achieved ${step.achievedPerSecond.toFixed(0)}, p99 ${Math.round(step.lateness.p99)} ms, missed ${step.missed}, machine ${step.cores.machineBusy.toFixed(2)} cores${step.brokeDown ? ` — broke down (${step.breakdown.join('; ')})` : ''}`);
            steps.push(step);
            if (step.brokeDown) break;
          }
        } finally {
          await env.close();
        }
      } catch (e) {
        // The curve ends here; its steps so far and the other curves still count.
        error = e instanceof Error ? e.message : String(e);
        log(`cost: the ${executors}-executor curve failed: ${error}`);
      }
      curves.push({ executors, nodeWorkersPerExecutor: workers, steps, ...(error !== undefined ? { error } : {}), seconds: (Date.now() - c0) / 1000 });
    }
    return {
      settings: {
        windowSeconds: o.windowSeconds, shardsPerJob: o.shardsPerJob, nodeWorkers: o.nodeWorkers,
        steadyTimeoutSeconds: o.steadyTimeoutSeconds, latenessP99LimitMs: o.latenessP99LimitMs, missedLimit: o.missedLimit,
        zooKeeper: 'standalone, tickTime 500 ms, full JIT, forceSync=no (the launcher\'s config)',
      },
      machine: { cores: cpus().length, model: cpus()[0]?.model ?? 'cpu' },
      curves,
      seconds: (Date.now() - t0) / 1000,
    };
  } finally {
    await server.stop();
  }
}
