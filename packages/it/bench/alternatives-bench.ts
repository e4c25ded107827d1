/**
 * Fire lateness of the alternatives Orrery is compared with, under the executor bench's load: N jobs
 * on `* * * * * *` (all N fire in the same instant), no-op work, N = 100 and 1,000.
 *
 * - croner: one plain `node` process with N `new Cron('* * * * * *', fn)` (the floor for Node timers).
 * - BullMQ: N job schedulers (`upsertJobScheduler(id, { pattern: '* * * * * *' })`) on a Redis of
 *   its own (Debian's `redis-server`, see ../src/redis.ts), created by a short producer process; one
 *   Worker process (the like-for-like of one executor) with a no-op processor. One row per worker
 *   concurrency in `bullmqConcurrency`: N (no due job ever waits for a free slot) and a moderate
 *   one, because BullMQ's Worker.mainLoop fetches up to `concurrency` jobs one after another before
 *   it starts the first, so at concurrency N a burst of N starts only once all N were fetched.
 *
 * Each system runs in child processes of its own (alternatives/*.mjs), not in this busy process.
 * Lateness = the start of the job's function − the time it was scheduled for; how each child finds
 * the scheduled time is written at the top of its script. The window: after a warm-up that ends
 * when every job has fired once (at most `warmupMaxMs`), and WARMUP_SECONDS more (the executor
 * bench's, so that every system is measured warm alike; their lateness is reported apart), exactly
 * `seconds` whole seconds of scheduled fires. Missed = N × seconds − the distinct (job, scheduled time) pairs in the window;
 * duplicates = the pairs seen more than once. The children are stopped only once every job is past
 * the window (its fire for the window's last second, or a later one, started), so a late fire is
 * counted as late, not as missed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stdioWithoutSockets } from '@orrery/core';
import { eventually } from '@orrery/core/testing';
import { distribution, WARMUP_SECONDS, type Distribution } from './executor-bench.js';
import { redisServerVersion, startRedis } from '../src/redis.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const SCRIPTS = join(HERE, 'alternatives');
const PERIOD_MS = 1000; // `* * * * * *`

/** Options of {@link runAlternativesBench}. */
export interface AlternativesOptions {
  /** Whole seconds of scheduled fires measured per row. Default 60. */
  seconds?: number;
  /** The numbers of jobs, one row per system and size. Default [100, 1000]. */
  sizes?: number[];
  /** Which systems to run. Default both. */
  systems?: AlternativeSystem[];
  /** The longest warm-up (until every job has fired once) before the window starts anyway. Default 10 000. */
  warmupMaxMs?: number;
  /** How long after the window's end to wait for every job to be past it. Default 30 000. */
  tailMaxMs?: number;
  /** BullMQ worker concurrencies, one row each per size, in this order; `'jobs'` = the row's number of jobs. Default [50, 'jobs']. */
  bullmqConcurrency?: Array<number | 'jobs'>;
  /**
   * Redis's `hz` (how often its timers run: a worker blocked on BZPOPMIN until a delayed job is due
   * wakes only at such a tick). Default: Redis's own, 10, as Debian ships it.
   */
  redisHz?: number;
}

export type AlternativeSystem = 'croner' | 'bullmq';

/** One system at one size. */
export interface AlternativeRow {
  system: AlternativeSystem;
  jobs: number;
  /** ms from the scheduled time to the start of the job's function, over the window's fires. */
  lateness: Distribution;
  /** Fires in the window (including duplicates). */
  runs: number;
  missed: number;
  duplicates: number;
  /** BullMQ rows: the worker's concurrency. */
  concurrency?: number;
  /** ms from the start of scheduling (croner: creating the crons; BullMQ: upserting the schedulers) until every job had fired once; null if not within the warm-up limit or not measured. */
  startupMs: number | null;
  /** The lateness of the warm-up's fires, before the window (absent in older results: no warm-up). */
  warmup?: Distribution;
  /** What the reader should know: incomplete warm-up, fires that never came, worker errors, settings. */
  notes?: string[];
}

/** The same as {@link AlternativesResult} (the name the bench runner imports). */
export type AlternativesBenchResult = AlternativesResult;

/** What {@link runAlternativesBench} measured. */
export interface AlternativesResult {
  versions: { node: string; croner: string; bullmq: string; ioredis: string; redis: string };
  seconds: number;
  /** Redis's `hz` in the BullMQ rows (10 unless `redisHz` said otherwise). */
  redisHz: number;
  rows: AlternativeRow[];
}

/** A child running one of the alternatives/*.mjs scripts with plain `node`. */
interface Child {
  readonly pid: number;
  readonly lines: string[];
  readonly exited: Promise<number | null>;
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<string | undefined>;
  request<T>(message: Record<string, unknown>, reply: string, timeoutMs: number): Promise<T>;
  stop(graceMs?: number): Promise<void>;
}

function startChild(script: string, args: readonly string[]): Child {
  const child: ChildProcess = spawn(process.execPath, [join(SCRIPTS, script), ...args], {
    stdio: stdioWithoutSockets(['ignore', 'pipe', 'pipe', 'ipc']),
    env: process.env,
  });
  if (child.pid === undefined) throw new Error(`could not start ${script}`);
  const lines: string[] = [];
  const collector = (): ((chunk: Buffer) => void) => {
    let rest = '';
    return (chunk) => {
      const parts = (rest + chunk.toString('utf8')).split('\n');
      rest = parts.pop()!;
      for (const line of parts) if (line) lines.push(line);
    };
  };
  child.stdout!.on('data', collector());
  child.stderr!.on('data', collector());
  // A send on a closed channel is reported here (and rejected by request()); it must not crash this process.
  child.on('error', (error) => lines.push(`[bench] ${error.message}`));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let alive = true;
  void exited.then(() => { alive = false; });
  const tail = (): string => lines.slice(-10).join('\n');
  return {
    pid: child.pid,
    lines,
    exited,
    async waitForLine(pattern, timeoutMs) {
      try {
        return await eventually<string>(() => {
          const found = lines.find((l) => pattern.test(l));
          if (found !== undefined) return found;
          if (!alive) throw new Error('exited');
          throw new Error('not yet');
        }, { timeoutMs, intervalMs: 20 });
      } catch {
        if (!alive) throw new Error(`${script} exited before printing ${pattern}; last lines:\n${tail()}`);
        return undefined; // not within timeoutMs
      }
    },
    request<T>(message: Record<string, unknown>, reply: string, timeoutMs: number) {
      return new Promise<T>((resolve, reject) => {
        const onMessage = (m: unknown): void => {
          if ((m as { type?: string } | null)?.type !== reply) return;
          clearTimeout(timer);
          child.off('message', onMessage);
          resolve(m as T);
        };
        const timer = setTimeout(() => {
          child.off('message', onMessage);
          reject(new Error(`${script}: no '${reply}' answer within ${timeoutMs} ms; last lines:\n${tail()}`));
        }, timeoutMs);
        child.on('message', onMessage);
        child.send(message, (error) => {
          if (!error) return;
          clearTimeout(timer);
          child.off('message', onMessage);
          reject(new Error(`${script}: could not send ${String(message.type)}: ${error.message}; last lines:\n${tail()}`));
        });
      });
    },
    async stop(graceMs = 5000) {
      if (!alive) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Runs a short child to its end; resolves with its last stdout line parsed as JSON. */
async function runStep(script: string, args: readonly string[], timeoutMs = 60_000): Promise<Record<string, unknown>> {
  const child = startChild(script, args);
  const timer = setTimeout(() => void child.stop(1000), timeoutMs);
  const code = await child.exited;
  clearTimeout(timer);
  const last = child.lines.at(-1) ?? '';
  if (code !== 0) throw new Error(`${script} ${args.join(' ')} exited with ${code}:\n${child.lines.slice(-10).join('\n')}`);
  return JSON.parse(last) as Record<string, unknown>;
}

/** The version of an installed package, found the way Node resolves it (node_modules upwards from here). */
function packageVersion(name: string): string {
  for (let dir = HERE; ; dir = dirname(dir)) {
    const file = join(dir, 'node_modules', name, 'package.json');
    if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
    if (dirname(dir) === dir) return 'not installed';
  }
}

interface FireRecord { job: number; scheduled: number; started: number }

function readFireRecords(file: string): FireRecord[] {
  const out: FireRecord[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue;
    const [job, scheduled, started] = line.split(' ').map(Number);
    out.push({ job: job!, scheduled: scheduled!, started: started! });
  }
  return out;
}

/** `steady`: the first whole period after every job fired once; `start`: {@link WARMUP_SECONDS} later, the window's. */
interface Window { steady: number; start: number; end: number; startupMs: number | null; notes: string[] }

/**
 * Waits for the child's `warm` line (every job fired once), at most `warmupMaxMs` after
 * `scheduledFrom`; the window starts {@link WARMUP_SECONDS} whole periods after the next one (the
 * warm-up Orrery's rows get too).
 */
async function chooseWindow(child: Child, jobs: number, scheduledFrom: number, seconds: number, warmupMaxMs: number): Promise<Window> {
  const line = await child.waitForLine(/^warm \d+$/, Math.max(0, scheduledFrom + warmupMaxMs - Date.now()));
  const notes: string[] = [];
  const warmAt = line !== undefined ? Number(line.split(' ')[1]) : Date.now();
  if (line === undefined) notes.push(`warm-up incomplete: not every one of the ${jobs} jobs had fired ${warmupMaxMs / 1000} s after scheduling began; measured from then on anyway`);
  const steady = Math.floor(warmAt / PERIOD_MS) * PERIOD_MS + PERIOD_MS;
  const start = steady + WARMUP_SECONDS * PERIOD_MS;
  return { steady, start, end: start + seconds * PERIOD_MS, startupMs: line !== undefined ? warmAt - scheduledFrom : null, notes };
}

/**
 * Waits until the window is over and every job is past it, then stops the child, which writes its
 * records; returns them with the child's notes.
 */
async function finish(child: Child, jobs: number, window: Window, file: string, tailMaxMs: number): Promise<{ records: FireRecord[]; notes: string[] }> {
  await new Promise((r) => setTimeout(r, Math.max(0, window.end - Date.now())));
  const lastInWindow = window.end - PERIOD_MS;
  const notes: string[] = [];
  let done = 0;
  try {
    await eventually(async () => {
      done = (await child.request<{ done: number }>({ type: 'progress', lastInWindow }, 'progress', 10_000)).done;
      return done === jobs;
    }, { timeoutMs: tailMaxMs, intervalMs: 200, message: 'every job past the window' });
  } catch {
    notes.push(`${jobs - done} jobs were not past the window ${tailMaxMs / 1000} s after it ended: their fires still to come count as missed`);
  }
  const stopped = await child.request<{ notes: string[] }>({ type: 'stop', file }, 'stopped', 60_000);
  await child.exited;
  return { records: readFireRecords(file), notes: [...notes, ...stopped.notes] };
}

/** The row's figures from the records of one run (only the fires scheduled inside the window count). */
function summarise(system: AlternativeSystem, jobs: number, seconds: number, window: Window, records: FireRecord[], notes: string[]): AlternativeRow {
  const inWindow = records.filter((r) => r.scheduled >= window.start && r.scheduled < window.end);
  const seen = new Map<string, number>();
  for (const r of inWindow) seen.set(`${r.job}@${r.scheduled}`, (seen.get(`${r.job}@${r.scheduled}`) ?? 0) + 1);
  const offPattern = inWindow.filter((r) => r.scheduled % PERIOD_MS !== 0).length;
  const early = inWindow.filter((r) => r.started < r.scheduled).length;
  const allNotes = [...window.notes, ...notes];
  if (offPattern > 0) allNotes.push(`${offPattern} fires attributed to a time that is not a whole second (the attribution is wrong somewhere)`);
  if (early > 0) allNotes.push(`${early} fires started before their scheduled time`);
  return {
    system,
    jobs,
    lateness: distribution(inWindow.map((r) => r.started - r.scheduled)),
    runs: inWindow.length,
    missed: jobs * seconds - seen.size,
    duplicates: [...seen.values()].filter((n) => n > 1).length,
    startupMs: window.startupMs,
    warmup: distribution(records.filter((r) => r.scheduled >= window.steady && r.scheduled < window.start).map((r) => r.started - r.scheduled)),
    ...(allNotes.length > 0 ? { notes: allNotes } : {}),
  };
}

interface RunSettings { seconds: number; warmupMaxMs: number; tailMaxMs: number; redisHz: number; dir: string }

/** croner: N crons in one child process. */
async function runCroner(jobs: number, s: RunSettings): Promise<AlternativeRow> {
  const child = startChild('croner-child.mjs', [String(jobs)]);
  try {
    const ready = await child.waitForLine(/^ready \d+$/, 30_000);
    if (ready === undefined) throw new Error(`croner child: not ready in 30 s:\n${child.lines.join('\n')}`);
    const scheduledFrom = Number(ready.split(' ')[1]); // as it began creating the crons
    const window = await chooseWindow(child, jobs, scheduledFrom, s.seconds, s.warmupMaxMs);
    const { records, notes } = await finish(child, jobs, window, join(s.dir, `croner-${jobs}.txt`), s.tailMaxMs);
    return summarise('croner', jobs, s.seconds, window, records, notes);
  } finally {
    await child.stop();
  }
}

/** BullMQ: a fresh Redis, one Worker process, N schedulers upserted by a producer process. */
async function runBullmq(jobs: number, concurrency: number, s: RunSettings): Promise<AlternativeRow> {
  const redis = await startRedis({ baseDir: s.dir, extraArgs: ['--hz', String(s.redisHz)] });
  const queue = `bench-${jobs}`;
  let worker: Child | undefined;
  try {
    worker = startChild('bullmq-worker.mjs', [String(redis.port), queue, String(jobs), String(concurrency)]);
    if ((await worker.waitForLine(/^ready \d+$/, 30_000)) === undefined) throw new Error(`bullmq worker: not ready in 30 s:\n${worker.lines.join('\n')}`);
    const scheduledFrom = Date.now();
    await runStep('bullmq-admin.mjs', [String(redis.port), queue, 'upsert', String(jobs)]);
    const window = await chooseWindow(worker, jobs, scheduledFrom, s.seconds, s.warmupMaxMs);
    const { records, notes } = await finish(worker, jobs, window, join(s.dir, `bullmq-${jobs}-${concurrency}.txt`), s.tailMaxMs);
    const cleanup = await runStep('bullmq-admin.mjs', [String(redis.port), queue, 'cleanup']);
    if (cleanup.left !== 0) notes.push(`cleanup left ${String(cleanup.left)} schedulers`);
    return { ...summarise('bullmq', jobs, s.seconds, window, records, notes), concurrency };
  } finally {
    await worker?.stop();
    await redis.stop();
  }
}

/**
 * Runs croner and BullMQ at each size, one after the other, each in processes of its own; see the
 * module's comment for what is measured and how. Takes about 2 × sizes × (seconds + 10) s.
 */
export async function runAlternativesBench(options: AlternativesOptions = {}): Promise<AlternativesResult> {
  const { seconds = 60, sizes = [100, 1000], systems = ['croner', 'bullmq'], warmupMaxMs = 10_000, tailMaxMs = 30_000, bullmqConcurrency = [50, 'jobs'], redisHz = 10 } = options;
  const versions = {
    node: process.version,
    croner: packageVersion('croner'),
    bullmq: packageVersion('bullmq'),
    ioredis: packageVersion('ioredis'),
    redis: systems.includes('bullmq') ? redisServerVersion() : 'not used',
  };
  const dir = mkdtempSync(join(tmpdir(), 'orrery-bench-alternatives-'));
  const settings: RunSettings = { seconds, warmupMaxMs, tailMaxMs, redisHz, dir };
  const rows: AlternativeRow[] = [];
  try {
    for (const jobs of sizes) {
      if (systems.includes('croner')) rows.push(await measured('croner', jobs, undefined, () => runCroner(jobs, settings)));
      if (!systems.includes('bullmq')) continue;
      const concurrencies = [...new Set(bullmqConcurrency.map((c) => (c === 'jobs' ? jobs : c)))];
      for (const c of concurrencies) rows.push(await measured('bullmq', jobs, c, () => runBullmq(jobs, c, settings)));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { versions, seconds, redisHz, rows };
}

/** A row that could not be measured says so instead of ending the whole bench. */
async function measured(system: AlternativeSystem, jobs: number, concurrency: number | undefined, run: () => Promise<AlternativeRow>): Promise<AlternativeRow> {
  try {
    return await run();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { system, jobs, ...(concurrency !== undefined ? { concurrency } : {}), lateness: distribution([]), runs: 0, missed: NaN, duplicates: NaN, startupMs: null, notes: [`not measured: ${message}`] };
  }
}

/** The row's name in the scenario column, in the executor bench's style ("1,000 node jobs"). */
export function alternativeScenario(row: AlternativeRow): string {
  const jobs = `${row.jobs.toLocaleString('en')} jobs`;
  return row.system === 'croner' ? `${jobs}, croner (one process)` : `${jobs}, BullMQ (one worker, concurrency ${row.concurrency ?? '?'})`;
}

const ms = (x: number): string => (Number.isNaN(x) ? '–' : `${Math.round(x)}`);
const count = (x: number): string => (Number.isNaN(x) ? '–' : String(x));

/**
 * The Markdown for BENCHMARKS.md (no heading): one line of settings, a table whose columns match the
 * executor bench's lateness table (scenario, lateness p50 / p99 / max (ms), runs, missed,
 * duplicates, start-up) so Orrery's rows can join it, the rows' notes, and a short reading.
 */
export function renderAlternatives(result: AlternativesResult): string {
  const v = result.versions;
  const redis = v.redis.split(' ').find((w) => w.startsWith('v=')) ?? v.redis;
  const out: string[] = [];
  out.push(`Every job on \`* * * * * *\`, no-op work, ${result.seconds} s of scheduled fires per row after a warm-up (until every job had fired once${result.rows.some((r) => r.warmup) ? `, then ${WARMUP_SECONDS} s more, as for Orrery` : ''}); each system in processes of its own, Node ${v.node}: croner ${v.croner} in one process; BullMQ ${v.bullmq} (ioredis ${v.ioredis}) job schedulers upserted by a producer process, one Worker process, Redis ${redis} (Debian's, no persistence, hz ${result.redisHz}).`);
  out.push('');
  out.push('| scenario | lateness p50 / p99 / max (ms) | runs | missed | duplicates | start-up: s until every job had fired | warm-up lateness p99 / max (ms) |');
  out.push('|---|---|---|---|---|---|---|');
  for (const r of result.rows) {
    const startup = r.startupMs === null ? '–' : `${(r.startupMs / 1000).toFixed(1)} s`;
    const warmup = r.warmup && r.warmup.count > 0 ? `${ms(r.warmup.p99)} / ${ms(r.warmup.max)}` : '–';
    out.push(`| ${alternativeScenario(r)} | ${ms(r.lateness.p50)} / ${ms(r.lateness.p99)} / ${ms(r.lateness.max)} | ${r.runs} | ${count(r.missed)} | ${count(r.duplicates)} | ${startup} | ${warmup} |`);
  }
  const noted = result.rows.filter((r) => r.notes && r.notes.length > 0);
  if (noted.length > 0) {
    out.push('');
    for (const r of noted) out.push(`- ${alternativeScenario(r)}: ${r.notes!.join('; ')}.`);
  }
  out.push('');
  out.push(...reading(result));
  return out.join('\n');
}

/** BullMQ's best row at a size: the lowest p99 of its concurrencies (the fair one to compare with). */
export function bestBullmq(result: AlternativesResult, jobs: number): AlternativeRow | undefined {
  return result.rows.filter((r) => r.system === 'bullmq' && r.jobs === jobs && !Number.isNaN(r.lateness.p99)).sort((a, b) => a.lateness.p99 - b.lateness.p99)[0];
}

function reading(result: AlternativesResult): string[] {
  const lines: string[] = [
    'Lateness: the start of the job\'s function minus the time it was scheduled for (croner: the second it planned the fire for; BullMQ: the iteration\'s time, in its job id). All N jobs are due in the same instant, so p99 and max are how long the system takes to start the whole burst. Missed: scheduled (job, second) pairs of the window that never started.',
  ];
  const parts: string[] = [];
  for (const jobs of [...new Set(result.rows.map((r) => r.jobs))]) {
    const c = result.rows.find((r) => r.system === 'croner' && r.jobs === jobs);
    const b = bestBullmq(result, jobs);
    if (!c || !b || Number.isNaN(c.lateness.p99)) continue;
    parts.push(`at ${jobs.toLocaleString('en')} jobs croner's p99 is ${ms(c.lateness.p99)} ms (Orrery's Node-job target: ≤ ${ms(1.5 * c.lateness.p99)} ms, 1.5 ×) and BullMQ's best is ${ms(b.lateness.p99)} ms (concurrency ${b.concurrency ?? '?'}; Orrery's must be lower)`);
  }
  if (parts.length > 0) lines.push(`In this run ${parts.join('; ')}.`);
  lines.push('croner is the floor for Node timers: one event loop running N timer callbacks (croner works out each job\'s next time as it fires). BullMQ adds Redis round trips per job (take the job, add the scheduler\'s next iteration, complete it), and a worker waiting for a delayed job blocks on Redis, which wakes it only at its next `hz` tick: up to 100 ms at Debian\'s 10.');
  lines.push('BullMQ\'s worker fetches up to `concurrency` jobs one after another before it starts the first, so at concurrency = N the burst starts only once it is all fetched. The worker also adds each scheduler\'s next iteration from the time it took the current one, so an iteration taken more than a second late skips seconds: BullMQ\'s missed fires, if any, are such skips, not a queue that grows.');
  return lines;
}
