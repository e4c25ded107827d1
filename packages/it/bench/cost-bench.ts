/**
 * The cost curve: sustained shard runs per second, stepped up until lateness or misses break
 * down, on one executor and on several executors sharing one ZooKeeper — with the CPU each run
 * costs every process, and ZooKeeper's transactions and disk bytes per run.
 *
 * A step asks for `rate` runs per second as `rate ÷ shardsPerJob` Node jobs of `shardsPerJob`
 * shards on `* * * * * *`, handler `noop` (the job does nothing: Node jobs are the
 * coordination-bound case, every figure is Orrery's own cost). Each step gets a fresh ZooKeeper
 * root, fresh executor processes (`bench-1..n`) and a fresh allocator, all on one ZooKeeper for the
 * whole bench; the root is deleted after the step. Once two fires in a row ran every shard (steady
 * state, bounded), a window of whole seconds of fires is measured:
 * - lateness (run start − fire time), missed and duplicate (job, shard, fire) from the executors'
 *   run records; runs achieved per second;
 * - CPU from /proc over exactly `windowSeconds` seconds, half a second ahead of the window's fires
 *   (a whole number of periods of a periodic load, so CPU ÷ runs is the cost of a run whatever the
 *   phase): each executor process (all its threads; its main thread — the event loop — apart),
 *   its child processes (the Node workers and the fence guard, see cost/proc.ts), the allocator,
 *   ZooKeeper's JVM, and the machine's busy time;
 * - ZooKeeper transactions (Zxid delta from `srvr`) and the bytes appended to its transaction log
 *   and snapshots (cost/zk-log.ts) over the same interval.
 * The curve stops after the first step that breaks down (lateness p99 above a second, or more than
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

export { renderCost } from './cost/render.js';

const JOBS_DIR = fileURLToPath(new URL('./jobs/', import.meta.url));
const NS = 'bench';

/** Options of {@link runCostBench}. */
export interface CostBenchOptions {
  /** Runs per second asked, in order; default 100, 250, 500, 1,000, 2,000, 4,000. */
  rates?: readonly number[];
  /** One curve per entry: how many executor processes share the load. Default [1, 4]. */
  executors?: readonly number[];
  /** Seconds of fires measured per step. Default 15. */
  windowSeconds?: number;
  /** Shards per job (the job count is rate ÷ this, rounded up). Default 10. */
  shardsPerJob?: number;
  /** Node workers of all executors together (`--node-workers` = this ÷ executors, at least 2). Default 8. */
  nodeWorkers?: number;
  /** At most this many seconds from the jobs being applied to steady state. Default 20. */
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
    /** Machine busy minus Orrery's processes: this bench's runner and whatever else runs on the machine. */
    other: number;
  };
  zookeeper: {
    transactions: number;
    transactionsPerRun: number;
    /** Records appended to the transaction log (a check: equals `transactions` on a standalone server). */
    logRecords: number;
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

interface StepEnv {
  zk: ZkClient;
  dataDirs: string[];
  executors: RunningProcess[];
  allocator: RunningProcess;
  close(): Promise<void>;
}

type JobSpec = Record<string, unknown> & { name: string };

function makeJobs(count: number, shards: number): JobSpec[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `cost-${String(i).padStart(4, '0')}`,
    type: 'node',
    handler: 'noop',
    cron: '* * * * * *',
    shardingTotalCount: shards,
    misfire: { policy: 'skip' },
  }));
}

/** A fresh root with `jobs` (applied), `count` executors and an allocator; `close` stops them and deletes the root. */
async function startStep(server: ZooKeeperServer, jobs: JobSpec[], count: number, workers: number): Promise<StepEnv> {
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
    await Promise.all(jobs.map((j) => zk.create(paths.job(NS, j.name), encodeJson(parseJobConfig({ ...j, enabled: false })))));
    const names = Array.from({ length: count }, (_, i) => `bench-${i + 1}`);
    for (const name of names) {
      executors.push(startProcess('orrery-executor', ['--zk', server.connectString, '--root', zk.options.root, '--namespace', NS, '--name', name, '--jobs', JOBS_DIR, '--data-dir', join(dir, name), '--log-level', 'warn', '--node-workers', String(workers)], {}, { echo: process.env.ORRERY_BENCH_ECHO === '1' }));
    }
    await eventually(async () => {
      for (const name of names) if (!(await zk.exists(paths.executorPresence(NS, name)))) throw new Error(`no presence of ${name}`);
    }, { timeoutMs: 60_000, intervalMs: 100 });
    allocator = startProcess('orrery-sharding', ['--zk', server.connectString, '--root', zk.options.root, '--log-level', 'warn']);
    await Promise.all(jobs.map((j) => zk.set(paths.job(NS, j.name), encodeJson(parseJobConfig({ ...j, enabled: true })))));
    await eventually(async () => {
      const applied = await Promise.all(jobs.map((j) => zk.exists(paths.jobApplied(NS, j.name))));
      if (applied.some((a) => !a)) throw new Error('not all applied yet');
    }, { timeoutMs: 120_000, intervalMs: 200 });
    return { zk, dataDirs: names.map((n) => join(dir, n)), executors, allocator, close };
  } catch (error) {
    await close();
    throw error;
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
  zxid: number;
  disk: ZkDiskTotals;
}

/** CPU first (all from /proc, within a few ms), then the Zxid and ZooKeeper's files. */
async function sample(env: StepEnv, server: ZooKeeperServer, disk: ZkDiskMeter): Promise<Sample> {
  const at = performance.now();
  const procs = allProcesses();
  const machine = machineSeconds();
  const trees = env.executors.map((e) => processTreeSeconds(procs, e.pid));
  const executorMain = env.executors.map((e) => threadSeconds(e.pid));
  const alloc = processTreeSeconds(procs, env.allocator.pid);
  const zkTree = processTreeSeconds(procs, server.pid);
  const zxid = await server.zxid();
  return {
    at, machine, executorMain,
    executorSelf: trees.map((t) => t.self),
    executorChildren: trees.map((t) => t.children),
    allocator: alloc.self + alloc.children,
    zookeeper: zkTree.self,
    zxid,
    disk: disk.read(),
  };
}

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
async function measureStep(server: ZooKeeperServer, disk: ZkDiskMeter, plan: StepPlan): Promise<CostStep> {
  const jobCount = Math.ceil(plan.rate / plan.shardsPerJob);
  const shards = jobCount * plan.shardsPerJob;
  const env = await startStep(server, makeJobs(jobCount, plan.shardsPerJob), plan.executors, plan.workers);
  try {
    const appliedAt = Date.now();
    const records = new RunRecords(env.dataDirs);
    const firstFire = Math.ceil(appliedAt / 1000) * 1000;
    const steadyFire = await waitSteady(records, shards, firstFire, appliedAt + plan.steadyTimeoutSeconds * 1000);
    disk.read(); // catch up with the log so far: the samples then read only the window's records
    const start = Math.max((steadyFire ?? 0) + 2000, Math.ceil((Date.now() + 600) / 1000) * 1000);
    const end = start + plan.windowSeconds * 1000;
    await sleepUntil(start - 500);
    const a = await sample(env, server, disk);
    await sleepUntil(end - 500);
    const b = await sample(env, server, disk);
    await waitWindowRecords(records, shards, start, end, end + 5000);
    const figures = runFigures(records.records, start, end, shards * plan.windowSeconds, plan.executors);
    return stepResult(plan, jobCount, steadyFire !== undefined, (start - appliedAt) / 1000, figures, a, b);
  } finally {
    await env.close();
  }
}

function stepResult(plan: StepPlan, jobs: number, steady: boolean, secondsToWindow: number, f: RunFigures, a: Sample, b: Sample): CostStep {
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
      other: (cpu.machineBusy - orrery) / seconds,
    },
    zookeeper: {
      transactions,
      transactionsPerRun: f.runs > 0 ? transactions / f.runs : NaN,
      logRecords: b.disk.logRecords - a.disk.logRecords,
      logBytesPerRun: f.runs > 0 ? (b.disk.logBytes - a.disk.logBytes) / f.runs : NaN,
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
    rates: options.rates ?? [100, 250, 500, 1000, 2000, 4000],
    executors: options.executors ?? [1, 4],
    windowSeconds: options.windowSeconds ?? 15,
    shardsPerJob: options.shardsPerJob ?? 10,
    nodeWorkers: options.nodeWorkers ?? 8,
    steadyTimeoutSeconds: options.steadyTimeoutSeconds ?? 20,
    latenessP99LimitMs: options.latenessP99LimitMs ?? 1000,
    missedLimit: options.missedLimit ?? 0.01,
  };
  const log = options.log ?? ((): void => undefined);
  const t0 = Date.now();
  const server = await startZooKeeper({ tickTimeMs: 500, fastStart: false });
  try {
    const disk = new ZkDiskMeter(join(server.dataDir, 'data', 'version-2'));
    const curves: CostCurve[] = [];
    for (const executors of o.executors) {
      const c0 = Date.now();
      const workers = Math.max(2, Math.ceil(o.nodeWorkers / executors));
      const steps: CostStep[] = [];
      for (const rate of o.rates) {
        const step = await measureStep(server, disk, { ...o, rate, executors, workers });
        log(`cost: ${executors} executor(s), ${step.rateAsked} runs/s: achieved ${step.achievedPerSecond.toFixed(0)}, p99 ${Math.round(step.lateness.p99)} ms, missed ${step.missed}, machine ${step.cores.machineBusy.toFixed(2)} cores${step.brokeDown ? ` — broke down (${step.breakdown.join('; ')})` : ''}`);
        steps.push(step);
        if (step.brokeDown) break;
      }
      curves.push({ executors, nodeWorkersPerExecutor: workers, steps, seconds: (Date.now() - c0) / 1000 });
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
