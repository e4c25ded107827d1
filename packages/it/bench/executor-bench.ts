/**
 * Executor benchmark: fire lateness (run start − scheduled fire time) with every job on
 * `* * * * * *` so all fire in the same instant, on one executor process, for 60 s from
 * {@link WARMUP_SECONDS} after the steady start; missed and
 * duplicate fires; the spawn floor for 100 shells at once; idle RSS and CPU with 1,000 jobs; and
 * ZooKeeper transactions per shard run counted on the server (Zxid delta from `srvr`).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createZkClient, encodeJson, parseJobConfig, paths, readShard, type ZkClient } from '@orrery/core';
import { eventually, startZooKeeper, uniqueRoot, type ZooKeeperServer } from '@orrery/core/testing';
import { createNamespace } from '@orrery/console';
import { startProcess, type RunningProcess } from '../src/processes.js';

const JOBS_DIR = fileURLToPath(new URL('./jobs/', import.meta.url));
const NS = 'bench';
/** A cron that does not fire during a bench (midnight on January 1st): jobs written or set quiet. */
export const QUIET_CRON = '0 0 0 1 1 *';

export interface Distribution { p50: number; p99: number; max: number; count: number }

export function distribution(values: number[]): Distribution {
  const v = [...values].sort((a, b) => a - b);
  const at = (q: number) => v[Math.min(v.length - 1, Math.floor(q * v.length))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99), max: v.at(-1) ?? NaN, count: v.length };
}

interface Setup { zk: ZkClient; root: string; dir: string; executor: RunningProcess; allocator: RunningProcess; close(): Promise<void> }

/**
 * A namespace with `jobs`, one executor and the allocator, every job applied. `quietFirst`: the jobs
 * are written firing once a year, applied, then set to their own cron (their start-up then begins
 * at that change); else enabled one after another with their cron, the first firing while the rest
 * are applied.
 */
async function setup(server: ZooKeeperServer, jobs: Array<Record<string, unknown>>, label: string, quietFirst = false): Promise<Setup> {
  const root = uniqueRoot(`bench-${label}`);
  const zk = createZkClient({ connect: server.connectString, root });
  await zk.start();
  await createNamespace(zk, NS);
  await zk.mkdirp(paths.jobs(NS));
  const cronOf = (j: Record<string, unknown>): unknown => (quietFirst ? QUIET_CRON : j.cron);
  await Promise.all(jobs.map((j) => zk.create(paths.job(NS, String(j.name)), encodeJson(parseJobConfig({ ...j, cron: cronOf(j), enabled: false })))));
  const dir = mkdtempSync(join(tmpdir(), `orrery-bench-${label}-`));
  const executor = startProcess('orrery-executor', ['--zk', server.connectString, '--root', root, '--namespace', NS, '--name', 'bench-1', '--jobs', JOBS_DIR, '--data-dir', join(dir, 'data'), '--log-level', 'warn', '--node-workers', '8'], { ORRERY_CLUSTER_TOKEN: 't' }, {
    echo: process.env.ORRERY_BENCH_ECHO === '1',
    // ORRERY_BENCH_CPU_PROF=DIR: a V8 CPU profile of each scenario's executor, written to DIR when it stops.
    ...(process.env.ORRERY_BENCH_CPU_PROF ? { nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${process.env.ORRERY_BENCH_CPU_PROF}`] } : {}),
  });
  // (Its log level is warn: no "registered" line to wait for — waiting for one cost 60 s a row.)
  await eventually(async () => { if (!(await zk.exists(paths.executorPresence(NS, 'bench-1')))) throw new Error('no presence'); }, { timeoutMs: 60_000 });
  const allocator = startProcess('orrery-sharding', ['--zk', server.connectString, '--root', root, '--log-level', 'warn']);
  // Enable every job (one write each), then wait until all are applied to the executor.
  for (const j of jobs) await zk.set(paths.job(NS, String(j.name)), encodeJson(parseJobConfig({ ...j, cron: cronOf(j), enabled: true })));
  await eventually(async () => {
    const missing = (await Promise.all(jobs.map((j) => zk.exists(paths.jobApplied(NS, String(j.name)))))).filter((stat) => !stat).length;
    if (missing > 0) throw new Error(`${missing} jobs not applied yet`);
  }, { timeoutMs: 120_000, intervalMs: 500 });
  if (quietFirst) await Promise.all(jobs.map((j) => zk.set(paths.job(NS, String(j.name)), encodeJson(parseJobConfig({ ...j, enabled: true })))));
  return {
    zk, root, dir, executor, allocator,
    async close() {
      await executor.stop(10_000);
      await allocator.stop();
      await zk.close();
    },
  };
}

interface RunRecordLite { job: string; fireTime: number; startedAt: number; trigger: string; status: string }

function readRecords(dataDir: string): RunRecordLite[] {
  const out: RunRecordLite[] = [];
  const runs = join(dataDir, 'runs');
  for (const job of readdirSync(runs)) {
    for (const f of readdirSync(join(runs, job))) {
      if (!f.endsWith('.json') || f.startsWith('.')) continue;
      try {
        out.push(JSON.parse(readFileSync(join(runs, job, f), 'utf8')) as RunRecordLite);
      } catch {
        // being written
      }
    }
  }
  return out;
}

export interface LatenessRow {
  scenario: string; kind: 'node' | 'shell'; jobs: number; lateness: Distribution; runs: number; missed: number; duplicates: number; failoverReruns: number; failed: number; startupMissed: number; startupSeconds: number;
  /** The lateness of the warm-up's fires, between the steady start and the window (absent in older results: no warm-up). */
  warmup?: Distribution;
  warmupMissed?: number;
  /** The jobs were written firing once a year, applied, then set to their cron; the start-up counts from that change (absent: enabled one after another with it). */
  quietFirst?: boolean;
}

/**
 * Seconds of fires between the steady start and the measured window, in every fire-lateness row of
 * every system (the alternatives bench uses it too). Steady means every job ran, not that the runs
 * are on time: in the first seconds a process still compiles its hot paths and collects its start-up
 * garbage — Orrery's executor and its workers, and croner's and BullMQ's processes alike. At
 * 1,000 Node jobs those seconds made the whole window's p99 (it is the 600th latest of 60,000 runs:
 * one slow burst of 1,000 decides it), 161–258 ms in them and 43 ms at most afterwards in one run.
 * Their lateness is reported apart.
 */
export const WARMUP_SECONDS = 5;

/** The longest start-up waited for before the window starts anyway (a load that never gets steady is measured as it is). */
const MAX_WARMUP_MS = 12_000;

/** A progress line on stderr (the bench runs for minutes). */
const progress = (text: string): void => void process.stderr.write(`executor bench: ${text}\n`);

/** Fires per fire time: the jobs that ran it (failover re-runs included). */
function jobsPerFire(records: readonly RunRecordLite[]): Map<number, Set<string>> {
  const ranPerFire = new Map<number, Set<string>>();
  for (const r of records) {
    if (!ranPerFire.has(r.fireTime)) ranPerFire.set(r.fireTime, new Set());
    ranPerFire.get(r.fireTime)!.add(r.job);
  }
  return ranPerFire;
}

/** Whether the fire at `t` and the next one both ran for all `count` jobs: the steady state starts there. */
function steadyAt(ran: ReadonlyMap<number, ReadonlySet<string>>, count: number, t: number): boolean {
  return (ran.get(t)?.size ?? 0) === count && (ran.get(t + 1000)?.size ?? 0) === count;
}

/**
 * The first fire from `warmFrom` that, with the next one, ran for all `count` jobs, as seen by
 * reading the records once a second (a fire is judged once 1.5 s have passed since the next one);
 * `latest` if none by then.
 */
async function firstSteadyFire(dataDir: string, count: number, warmFrom: number, latest: number): Promise<number> {
  let t = warmFrom;
  while (t < latest) {
    await new Promise((r) => setTimeout(r, 1000));
    const ran = jobsPerFire(readRecords(dataDir));
    while (t < latest && Date.now() > t + 2500) {
      if (steadyAt(ran, count, t)) return t;
      t += 1000;
    }
  }
  return latest;
}

/** `count` jobs of one kind firing every second for `seconds` seconds. */
async function lateness(server: ZooKeeperServer, scenario: string, count: number, kind: 'node' | 'shell', seconds: number): Promise<LatenessRow> {
  const jobs = Array.from({ length: count }, (_, i) => ({
    name: `${kind}-${String(i).padStart(4, '0')}`,
    type: kind,
    ...(kind === 'node' ? { handler: 'noop' } : { command: 'exit 0' }),
    cron: '* * * * * *',
    misfire: { policy: 'skip' },
  }));
  const t0 = Date.now();
  // Shell jobs are applied quiet first: enabled one after another with their cron, 1,000 of them
  // took 68 s to be applied, the first firing a shell each a second on the same two cores. (Node
  // jobs are not: in the one run that set 1,000 of them firing in one instant they were not steady
  // within the 12 s — on a slow night, when enabled one after another they were not either.)
  const quietFirst = kind === 'shell';
  const s = await setup(server, jobs, `${kind}${count}`, quietFirst);
  progress(`${scenario}: applied ${((Date.now() - t0) / 1000).toFixed(1)} s after the jobs were written`);
  // Measure whole seconds of steady state. It starts once two fires in a row ran for every job (at
  // most 12 s after the jobs were applied — and set to fire, if quiet first): the start-up before
  // it — catch-up fires, Node workers starting, every job's first claims reading their shards — is
  // reported separately, as its length and the fires it missed.
  const warmFrom = Math.ceil(Date.now() / 1000) * 1000;
  const latest = warmFrom + MAX_WARMUP_MS;
  // How long to wait: the window of the first steady start seen while waiting (read once a second
  // during the start-up only). The start computed afterwards from every record is never later.
  const seenStart = await firstSteadyFire(join(s.dir, 'data'), count, warmFrom, latest);
  await new Promise((r) => setTimeout(r, seenStart + (WARMUP_SECONDS + seconds) * 1000 - Date.now() + 3000));
  const all = readRecords(join(s.dir, 'data'));
  const c0 = Date.now();
  await s.close();
  progress(`${scenario}: steady ${(seenStart - warmFrom) / 1000} s after it was applied, measured from ${WARMUP_SECONDS} s later; stopped in ${((Date.now() - c0) / 1000).toFixed(1)} s`);
  const ranPerFire = jobsPerFire(all);
  let steady = warmFrom;
  while (steady < latest && !steadyAt(ranPerFire, count, steady)) steady += 1000;
  const start = steady + WARMUP_SECONDS * 1000;
  const end = start + seconds * 1000;
  const records = all.filter((r) => r.fireTime >= start && r.fireTime < end);
  const warm = new Set(all.filter((r) => r.fireTime >= warmFrom && r.fireTime < steady).map((r) => `${r.job}@${r.fireTime}`));
  const startupMissed = count * ((steady - warmFrom) / 1000) - warm.size;
  const warmupRuns = all.filter((r) => r.fireTime >= steady && r.fireTime < start && r.trigger !== 'failover');
  const warmup = distribution(warmupRuns.map((r) => r.startedAt - r.fireTime));
  const warmupMissed = count * WARMUP_SECONDS - new Set(warmupRuns.map((r) => `${r.job}@${r.fireTime}`)).size;
  // A failover re-run (of a run whose executor fenced itself or died) is the one second run of a
  // fire the design allows: counted apart, not as a duplicate, and not in the fire's lateness.
  const firsts = records.filter((r) => r.trigger !== 'failover');
  const seen = new Map<string, number>();
  for (const r of firsts) seen.set(`${r.job}@${r.fireTime}`, (seen.get(`${r.job}@${r.fireTime}`) ?? 0) + 1);
  const duplicates = [...seen.values()].filter((n) => n > 1).length;
  // Where in the window the worst starts fell (a start-up that runs into the window shows here).
  const perSecond = new Map<number, number[]>();
  for (const r of firsts) {
    const k = Math.floor((r.fireTime - start) / 1000);
    if (!perSecond.has(k)) perSecond.set(k, []);
    perSecond.get(k)!.push(r.startedAt - r.fireTime);
  }
  const worst = [...perSecond].map(([k, v]) => [k, distribution(v).p99] as const).sort((a, b) => b[1] - a[1]).slice(0, 6);
  progress(`${scenario}: the seconds of the window with the highest p99 (second: ms): ${worst.map(([k, v]) => `${k}: ${Math.round(v)}`).join(', ')}`);
  const ran = new Set(records.map((r) => `${r.job}@${r.fireTime}`));
  const missed = count * seconds - ran.size;
  return {
    scenario,
    kind,
    jobs: count,
    lateness: distribution(firsts.map((r) => r.startedAt - r.fireTime)),
    runs: records.length,
    missed,
    duplicates,
    failoverReruns: records.length - firsts.length,
    startupMissed,
    startupSeconds: (steady - warmFrom) / 1000,
    ...(quietFirst ? { quietFirst } : {}),
    warmup,
    warmupMissed,
    failed: records.filter((r) => r.status !== 'succeeded').length,
  };
}

/** The floor for a burst: this machine's Node spawning 100 `sh -c 'exit 0'` at once (ms from the burst to each spawn). */
export async function spawnFloor(rounds = 10, size = 100): Promise<Distribution> {
  const values: number[] = [];
  for (let r = 0; r < rounds; r += 1) {
    const t0 = performance.now();
    await Promise.all(Array.from({ length: size }, () => new Promise<void>((resolve) => {
      const child = spawn('/bin/sh', ['-c', 'exit 0'], { stdio: 'ignore', detached: true });
      child.once('spawn', () => values.push(performance.now() - t0));
      child.once('exit', () => resolve());
      child.once('error', () => resolve());
    })));
  }
  return distribution(values);
}

function procStats(pid: number): { rssMb: number; cpuTicks: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return { rssMb: rssKb / 1024, cpuTicks: Number(stat[11]) + Number(stat[12]) };
}

export interface IdleRow { jobs: number; rssMb: number; peakRssMb: number; cpuPercent: number; seconds: number }

/**
 * RSS and CPU of an executor holding 1,000 jobs that do not fire, sampled every second for
 * `seconds` after the jobs were applied. The figure is the last sample (idle, settled); the peak
 * shows the start-up's garbage, which V8 keeps until its memory reducer runs (about half a minute
 * after the allocation stops).
 */
async function idle(server: ZooKeeperServer, count: number, seconds: number): Promise<IdleRow> {
  const jobs = Array.from({ length: count }, (_, i) => ({ name: `idle-${String(i).padStart(4, '0')}`, type: 'shell', command: 'exit 0', cron: '0 0 1 1 *' }));
  const s = await setup(server, jobs, 'idle');
  const a = procStats(s.executor.pid);
  const t0 = Date.now();
  const rss: number[] = [];
  for (let i = 1; i <= seconds; i += 1) {
    await new Promise((r) => setTimeout(r, t0 + i * 1000 - Date.now()));
    rss.push(procStats(s.executor.pid).rssMb);
  }
  const b = procStats(s.executor.pid);
  const elapsed = (Date.now() - t0) / 1000;
  await s.close();
  return { jobs: count, rssMb: rss.at(-1)!, peakRssMb: Math.max(...rss), cpuPercent: ((b.cpuTicks - a.cpuTicks) / 100 / elapsed) * 100, seconds: elapsed };
}

export interface TxRow { runs: number; transactions: number; perRun: number }

/**
 * ZooKeeper transactions per shard run: the server's Zxid delta over a window of whole fires ÷ the
 * runs of those fires. Each end of the window is a quiet point, checked rather than guessed: every
 * run of the fire just past has recorded its outcome before the Zxid is read, and afterwards every
 * shard is still idle with that fire as its last (the next fire's claims had not started).
 */
export async function transactionsPerRun(server: ZooKeeperServer, seconds: number): Promise<TxRow> {
  const perJob = 5;
  const jobs = Array.from({ length: 20 }, (_, i) => ({ name: `tx-${i}`, type: 'shell', command: 'exit 0', cron: '* * * * * *', shardingTotalCount: perJob }));
  const shards = jobs.length * perJob;
  const s = await setup(server, jobs, 'tx');
  const data = join(s.dir, 'data');
  const quietPoint = async (): Promise<{ zxid: number; fire: number }> => {
    for (let tries = 0; tries < 30; tries += 1) {
      const fire = Date.now() - (Date.now() % 1000);
      while (readRecords(data).filter((r) => r.fireTime === fire).length < shards && Date.now() < fire + 950) await new Promise((r) => setTimeout(r, 10));
      const zxid = await server.zxid();
      const states = await Promise.all(jobs.flatMap((j) => Array.from({ length: perJob }, (_, i) => readShard(s.zk, paths.jobShard(NS, String(j.name), i)))));
      if (states.every((st) => st?.state.state === 'idle' && st.state.last?.fireTime === fire)) return { zxid, fire };
      await new Promise((r) => setTimeout(r, fire + 1000 - Date.now()));
    }
    throw new Error('no quiet point in 30 s: the runs of a fire had not all completed before the next fire\'s claims');
  };
  await new Promise((r) => setTimeout(r, 2000));
  const a = await quietPoint();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const b = await quietPoint();
  const records = readRecords(data).filter((r) => r.fireTime > a.fire && r.fireTime <= b.fire);
  await s.close();
  return { runs: records.length, transactions: b.zxid - a.zxid, perRun: (b.zxid - a.zxid) / records.length };
}

/** The parts of the executor bench, all run by default (`ORRERY_BENCH_EXECUTOR=shell` names some, see run.ts). */
export const EXECUTOR_BENCH_PARTS = ['node', 'shell', 'idle', 'tx'] as const;
export type ExecutorBenchPart = (typeof EXECUTOR_BENCH_PARTS)[number];

/** The shell scenario's target: its lateness p99 at most this many times the spawn floor's p99 of the same run. */
export const SHELL_FLOOR_RATIO_TARGET = 1.3;

export interface ExecutorBenchResult {
  rows: LatenessRow[];
  floor: Distribution;
  /** The shell scenario's lateness p99 ÷ the floor's p99 (present when the shell scenario ran). */
  shellFloorRatio?: number;
  idle?: IdleRow;
  tx?: TxRow;
}

export async function runExecutorBench(seconds = 60, parts: readonly ExecutorBenchPart[] = EXECUTOR_BENCH_PARTS): Promise<ExecutorBenchResult> {
  // The JVM's full JIT and default collector, as production runs (as the failover bench does); the
  // tests' quick-start settings (C1 only, a serial collector in 256 MB) measure a slower server.
  const server = await startZooKeeper({ tickTimeMs: 500, fastStart: false });
  try {
    const rows: LatenessRow[] = [];
    if (parts.includes('node')) {
      rows.push(await lateness(server, '100 node jobs', 100, 'node', seconds));
      rows.push(await lateness(server, '1,000 node jobs', 1000, 'node', seconds));
    }
    // Right before the shell scenario it is compared with (the machine's load drifts over minutes).
    const floor = await spawnFloor();
    let shellFloorRatio: number | undefined;
    if (parts.includes('shell')) {
      const shell = await lateness(server, '100 shell jobs', 100, 'shell', seconds);
      rows.push(shell);
      shellFloorRatio = shell.lateness.p99 / floor.p99;
      rows.push(await lateness(server, '1,000 shell jobs', 1000, 'shell', seconds));
    }
    const idleRow = parts.includes('idle') ? await idle(server, 1000, 60) : undefined;
    const tx = parts.includes('tx') ? await transactionsPerRun(server, 10) : undefined;
    return { rows, floor, ...(shellFloorRatio !== undefined ? { shellFloorRatio } : {}), ...(idleRow ? { idle: idleRow } : {}), ...(tx ? { tx } : {}) };
  } finally {
    await server.stop();
  }
}
