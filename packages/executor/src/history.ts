/**
 * Run history and logs on the executor's disk (`--data-dir`): one JSON record and two log files per
 * run, kept by age and by total size. ZooKeeper holds only each shard's last outcome.
 *
 * Layout: `<dataDir>/runs/<job>/<runId>.json`, `<runId>.stdout.log`, `<runId>.stderr.log`.
 * Run ids start with the start time in base 36 (sortable).
 *
 * Guarantees:
 * - A record is written whole or not at all: to a temporary file in the same folder
 *   (`.<runId>.json.<pid>-<n>.tmp`, never listed as a run), then renamed into place. (Atomic against
 *   a crash of the process; no fsync, so after a power loss a record may be empty — readers skip it.)
 * - Readers (`list`, `get`, `logPath`) never throw: a record that is truncated, not JSON, or not a
 *   run record (a foreign file) is skipped, and logged once, naming the file.
 * - Private: `runs/` and every job folder are 0700, every record and log file 0600 (the mode is set
 *   when each is created, and folders are chmod-ed, whatever the umask).
 * - Size bound: kept runs (finished runs' records and logs) total at most `maxBytes` after every
 *   `save` and every `prune` — an in-memory index of kept runs and their sizes (built by the first
 *   `prune`'s scan, added to by each `save`) evicts the oldest at once when a save takes the total
 *   over. Runs in progress are not in it; each is bounded by its log cap: at most
 *   `maxLogBytes × 2` (+ two marker lines) per running run. So the folder holds at most
 *   `maxBytes + maxLogBytes × 2 × runs in progress`.
 * - Age: runs older than `maxAgeMs` go at each `prune` (the executor prunes every 10 minutes).
 * - Run tally: the size index also holds each kept run's end time and outcome (from `save`, and
 *   from its record, read once, by the scan that rebuilds the index), so `summary(since)` — runs,
 *   failures and time-outs per job of the runs that ended at or after `since` — reads no file. Its
 *   memory is two fields per kept run: bounded as the kept runs are (by age and by bytes). Runs in
 *   progress, and kept runs without a readable record (a corrupt record, a crash's record-less
 *   logs), are not counted.
 *
 * Not guaranteed: files changed behind the index's back (written by hand, or a record-less run's
 * logs that grow later) are counted from the next `prune`'s scan, and so are the logs of a run whose
 * record has empty tails (a `save` takes that as no output; only bytes that are not UTF-8 at all
 * leave a tail empty); and a run's logs left without a
 * record by a crash of an earlier process count as a kept run (at their size) from that scan. The
 * tally counts what is kept: runs the size bound evicted (or an earlier process pruned) are gone
 * from it as from `list`.
 */
import { chmodSync, closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { NODE_NAME_PATTERN, silentLogger, toError, type Logger, type ShardOutcome } from '@orrery/core';
import { DEFAULT_MAX_LOG_BYTES, PRIVATE_FILE_MODE } from './lazy-file.js';
import type { LogTruncation } from './run-types.js';

/** A run record. */
export interface RunRecord extends ShardOutcome {
  job: string;
  item: number;
  trigger: 'cron' | 'run-now' | 'retry' | 'downstream' | 'misfire' | 'failover';
  /** False when the completion found the claim taken over (a stale run: nothing recorded in ZooKeeper). */
  recorded: boolean;
  /** Present when a log reached the cap: the bytes discarded past it, per stream. */
  truncated?: LogTruncation;
}

export interface HistoryOptions {
  dataDir: string;
  /** Default 7 days. */
  maxAgeMs?: number;
  /** Bound on the kept runs' total size, in bytes. Default 1 GiB. */
  maxBytes?: number;
  /** Each run's per-stream log cap, in bytes (runners read it here). Default 64 MiB. */
  maxLogBytes?: number;
  /** Where corrupt records and failed evictions are reported. Default: silent. */
  logger?: Logger;
}

/** One job's runs in a {@link RunSummary}: those that ended at or after its `since`. */
export interface JobRunTally {
  job: string;
  /** Runs that ended in the window, whatever their outcome. */
  runs: number;
  /** Of them, runs that failed or timed out. */
  failures: number;
  /** Of the failures, runs that timed out. */
  timedOut: number;
  /** When the latest failure ended (epoch ms); null without failures. */
  lastFailureAt: number | null;
}

/** What {@link History.summary} answers: per job (by name), the kept runs that ended at or after `since`. */
export interface RunSummary {
  since: number;
  /** Jobs with at least one such run, by name. */
  jobs: JobRunTally[];
}

export interface History {
  readonly dir: string;
  /** Each run's per-stream log cap, in bytes. */
  readonly maxLogBytes: number;
  /** Paths of a run's log files (created as needed). */
  logPaths(job: string, runId: string): { stdout: string; stderr: string };
  /**
   * Writes the record atomically (temporary file, rename), adds the run — record and logs, which
   * are complete by now — to the size index and evicts the oldest kept runs while the total is over
   * `maxBytes`.
   */
  save(record: RunRecord): Promise<void>;
  /** Newest first, only runs started before `before` (epoch ms) when given; skips (and logs once) records it cannot read. Never throws. */
  list(job: string, limit?: number, before?: number): RunRecord[];
  /** Never throws: undefined for an unknown run or a corrupt record. */
  get(runId: string): { record: RunRecord; job: string } | undefined;
  /** The path of a run's log, if the run exists (a record, or a log: a run in progress). Never throws. */
  logPath(runId: string, stream: 'stdout' | 'stderr'): string | undefined;
  /**
   * Applies retention; resolves the number of runs removed. Scans the folder (rebuilding the size
   * index from what is on disk), removes runs older than `maxAgeMs`, then the oldest while the total
   * is over `maxBytes`, and temporary files a crash left. Asynchronous throughout (the file
   * system's thread pool), so the event loop — fires, claims, the fence's probes — keeps turning
   * however many runs are kept. A prune asked for while one is under way joins it.
   */
  prune(now?: number): Promise<number>;
  /** What the size index holds now: kept runs and their total bytes. */
  usage(): { runs: number; bytes: number };
  /**
   * Per job, the kept runs that ended at or after `since` (epoch ms): from the in-memory index, no
   * file read. Before the first scan of the folder it waits for one — joining the prune under way,
   * or scanning without pruning (a read removes nothing) — so what an earlier process kept is
   * counted too. A corrupt record is skipped, never an error.
   */
  summary(since: number): Promise<RunSummary>;
}

const RUN_ID = /^[0-9a-z]+-[0-9a-z-]+$/;
const RUN_FILE = /^([0-9a-z]+-[0-9a-z-]+)\.(json|stdout\.log|stderr\.log)$/;
const TEMP_FILE = /^\.[0-9a-z]+-[0-9a-z-]+\.json\.[0-9]+-[0-9]+\.tmp$/;
const SUFFIXES = ['.json', '.stdout.log', '.stderr.log'] as const;
/** A temporary record older than this was left by a crash (a save renames it within milliseconds). */
const STALE_TEMP_MS = 60_000;
const PRIVATE_DIR_MODE = 0o700;
/** Files stat-ed at once by a scan: enough to keep the thread pool busy, few enough that a run's own writes do not wait behind thousands. */
const SCAN_BATCH = 16;

/**
 * Writes `text` to the new file `temp` (private; it must not exist yet), then renames it to `path`.
 * Synchronously, on purpose: a record is saved per run, up to thousands a second on one event loop,
 * and each asynchronous file operation hands work to the thread pool and wakes one of its threads.
 * Measured on a 2-core machine, 2,000 records saved two a millisecond: 68–91 µs of the event loop's
 * time and 82–109 µs of CPU per record this way, against 93–138 and 199–265 µs with fs's callbacks
 * (fs/promises costs more still: a `FileHandle` per call). Four local calls on a small file; the
 * page cache absorbs the write (no fsync, see the module header).
 */
function writeRenamed(temp: string, path: string, text: string): void {
  const fd = openSync(temp, 'wx', PRIVATE_FILE_MODE);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
}

/** The start time a run id begins with (ms since the epoch), or undefined for a name that is not a run id. */
export function runStartedAt(runId: string): number | undefined {
  if (!RUN_ID.test(runId)) return undefined;
  const t = parseInt(runId.split('-')[0]!, 36);
  return Number.isSafeInteger(t) ? t : undefined;
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/**
 * Parses a record file's text; undefined (with the reason) when it is not the record of run `runId`
 * of `job` — truncated, not JSON, not an object, missing the fields readers sort and show by.
 */
export function parseRunRecord(text: string, job: string, runId: string): { record: RunRecord } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: text.length === 0 ? 'empty' : 'not JSON (truncated?)' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { problem: 'not a JSON object' };
  const r = value as Record<string, unknown>;
  if (r.runId !== runId) return { problem: 'its runId is not its file name' };
  if (r.job !== job) return { problem: 'its job is not its folder' };
  if (!isNumber(r.startedAt) || !isNumber(r.endedAt) || !isString(r.status)) return { problem: 'startedAt, endedAt or status missing' };
  return { record: value as RunRecord };
}

/** A kept run's outcome in the index: `fault` for a failure, undefined for any other outcome. */
export type RunFault = 'failed' | 'timed-out';

/** What the tally needs of a kept run. */
export interface TalliedRun {
  job: string;
  /**
   * When it ended (epoch ms), from its record: a number once read; null when it has no record to
   * read (logs a crash left); undefined when its record could not be read (read again by the next scan).
   */
  endedAt?: number | null;
  /** Set when it failed or timed out. */
  fault?: RunFault;
}

interface Kept extends TalliedRun {
  runId: string;
  startedAt: number;
  bytes: number;
}

/** The index's outcome of a record status (pure); the literals are shared, not one string per run. */
function faultOf(status: string): RunFault | undefined {
  if (status === 'failed') return 'failed';
  if (status === 'timed-out') return 'timed-out';
  return undefined;
}

/**
 * Tallies kept runs that ended at or after `since`, per job (pure): runs without an end time are
 * not counted. Jobs in name order.
 */
export function tallyRuns(runs: Iterable<TalliedRun>, since: number): JobRunTally[] {
  const byJob = new Map<string, JobRunTally>();
  for (const run of runs) {
    if (typeof run.endedAt !== 'number' || run.endedAt < since) continue;
    let tally = byJob.get(run.job);
    if (!tally) {
      tally = { job: run.job, runs: 0, failures: 0, timedOut: 0, lastFailureAt: null };
      byJob.set(run.job, tally);
    }
    tally.runs += 1;
    if (run.fault === undefined) continue;
    tally.failures += 1;
    if (run.fault === 'timed-out') tally.timedOut += 1;
    if (tally.lastFailureAt === null || run.endedAt > tally.lastFailureAt) tally.lastFailureAt = run.endedAt;
  }
  return [...byJob.values()].sort((a, b) => (a.job < b.job ? -1 : a.job > b.job ? 1 : 0));
}

/** Kept runs, oldest first, and their total size. */
function createSizeIndex() {
  const byId = new Map<string, Kept>();
  let order: Kept[] = [];
  let total = 0;
  return {
    get total() {
      return total;
    },
    get size() {
      return byId.size;
    },
    has: (runId: string) => byId.has(runId),
    get: (runId: string) => byId.get(runId),
    add(run: Kept): void {
      const before = byId.get(run.runId);
      if (before) {
        total += run.bytes - before.bytes;
        before.bytes = run.bytes;
        before.endedAt = run.endedAt;
        before.fault = run.fault;
        return;
      }
      byId.set(run.runId, run);
      total += run.bytes;
      // Runs are saved in about the order they started: search from the end.
      let i = order.length;
      while (i > 0 && order[i - 1]!.startedAt > run.startedAt) i -= 1;
      order.splice(i, 0, run);
    },
    oldest: (): Kept | undefined => order[0],
    remove(runId: string): void {
      const run = byId.get(runId);
      if (!run) return;
      byId.delete(runId);
      total -= run.bytes;
      if (order[0] === run) order.shift();
      else order = order.filter((r) => r !== run);
    },
    replace(runs: Iterable<Kept>): void {
      byId.clear();
      order = [];
      total = 0;
      for (const r of runs) {
        byId.set(r.runId, r);
        order.push(r);
        total += r.bytes;
      }
      order.sort((a, b) => a.startedAt - b.startedAt);
    },
    all: (): Kept[] => [...order],
    values: (): Iterable<Kept> => byId.values(),
  };
}

export function createHistory(options: HistoryOptions): History {
  const dir = join(options.dataDir, 'runs');
  const maxAgeMs = options.maxAgeMs ?? 7 * 86_400_000;
  const maxBytes = options.maxBytes ?? 1024 ** 3;
  const maxLogBytes = options.maxLogBytes ?? DEFAULT_MAX_LOG_BYTES;
  const logger = options.logger ?? silentLogger();
  /** Runs that started before this (in an earlier process) cannot be in progress here. */
  const bornAt = Date.now();
  const makePrivateDir = (d: string): void => {
    mkdirSync(d, { recursive: true, mode: PRIVATE_DIR_MODE });
    chmodSync(d, PRIVATE_DIR_MODE); // made by an older version, or under an odd umask
  };
  makePrivateDir(dir);
  // Folders made once per job (a mkdir per run would block the event loop for nothing).
  const made = new Set<string>();
  const jobDir = (job: string): string => {
    const d = join(dir, job);
    if (!made.has(job)) {
      makePrivateDir(d);
      made.add(job);
    }
    return d;
  };
  const index = createSizeIndex();
  let tempSeq = 0;

  /** Files already reported corrupt (each is logged once); bounded so a flood of them cannot grow it forever. */
  const reported = new Set<string>();
  const reportCorrupt = (file: string, problem: string): void => {
    if (reported.has(file)) return;
    if (reported.size >= 10_000) reported.clear();
    reported.add(file);
    logger.warn({ file, problem }, 'skipping a run record that cannot be read');
  };
  const readRecord = (job: string, runId: string): RunRecord | undefined => {
    const file = join(dir, job, `${runId}.json`);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      // Gone meanwhile (pruned) is no news; anything else (a folder, no permission) is.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') reportCorrupt(file, toError(error).message);
      return undefined;
    }
    const parsed = parseRunRecord(text, job, runId);
    if ('problem' in parsed) {
      reportCorrupt(file, parsed.problem);
      return undefined;
    }
    return parsed.record;
  };

  const removeRun = async (run: { job: string; runId: string }): Promise<void> => {
    await Promise.all(SUFFIXES.map((suffix) => rm(join(dir, run.job, `${run.runId}${suffix}`), { force: true }))).catch((error: unknown) => {
      logger.warn({ err: toError(error), job: run.job, runId: run.runId }, 'could not remove a run from the history');
    });
  };

  // While a scan runs, saves and evictions also go to these, so that its result can be merged with them.
  let scanning: { added: Set<string>; removed: Set<string> } | undefined;
  const evict = (run: Kept): Promise<void> => {
    index.remove(run.runId);
    scanning?.added.delete(run.runId);
    scanning?.removed.add(run.runId);
    return removeRun(run);
  };
  /** Evicts the oldest kept runs while the total is over `maxBytes` (and those older than `maxAgeMs` when `now` is given). */
  const enforce = async (now?: number): Promise<number> => {
    const removals: Array<Promise<void>> = [];
    for (let run = index.oldest(); run; run = index.oldest()) {
      const tooOld = now !== undefined && now - run.startedAt > maxAgeMs;
      if (!tooOld && index.total <= maxBytes) break;
      removals.push(evict(run));
    }
    await Promise.all(removals);
    return removals.length;
  };

  /** A record's end time and outcome, read from disk (asynchronously); undefined when it cannot be read. */
  const readOutcome = async (job: string, runId: string): Promise<Pick<Kept, 'endedAt' | 'fault'> | undefined> => {
    const file = join(dir, job, `${runId}.json`);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') reportCorrupt(file, toError(error).message);
      return undefined;
    }
    const parsed = parseRunRecord(text, job, runId);
    if ('problem' in parsed) {
      reportCorrupt(file, parsed.problem);
      return undefined;
    }
    const fault = faultOf(parsed.record.status);
    return { endedAt: parsed.record.endedAt, ...(fault ? { fault } : {}) };
  };

  /**
   * Every run in the folder with its size on disk and its outcome; removes stale temporary files.
   * An outcome the index already holds is kept (a record does not change), so only records not seen
   * yet are read — all of them at start, the new ones at each retention — except, when `pruneAt` is
   * given, those of runs old enough to be pruned at once.
   */
  const scan = async (pruneAt: number | undefined): Promise<Map<string, Kept>> => {
    const found = new Map<string, Kept & { hasRecord: boolean }>();
    const jobs = await readdir(dir).catch(() => [] as string[]);
    for (const job of jobs) {
      const files = await readdir(join(dir, job)).catch(() => [] as string[]); // not a folder: foreign, left alone
      for (let i = 0; i < files.length; i += SCAN_BATCH) {
        await Promise.all(files.slice(i, i + SCAN_BATCH).map(async (f) => {
          const path = join(dir, job, f);
          if (TEMP_FILE.test(f)) {
            const st = await stat(path).catch(() => undefined);
            if (st && Date.now() - st.mtimeMs > STALE_TEMP_MS) await rm(path, { force: true }).catch(() => undefined);
            return;
          }
          const m = RUN_FILE.exec(f);
          if (!m) return; // a foreign file: neither counted nor removed
          const runId = m[1]!;
          const startedAt = runStartedAt(runId);
          if (startedAt === undefined) return;
          const st = await stat(path).catch(() => undefined); // gone meanwhile
          if (!st?.isFile()) return;
          const run = found.get(runId) ?? { job, runId, startedAt, bytes: 0, hasRecord: false };
          run.bytes += st.size;
          if (m[2] === 'json') run.hasRecord = true;
          found.set(runId, run);
        }));
      }
    }
    const runs = new Map<string, Kept>();
    const toRead: Kept[] = [];
    for (const [runId, { hasRecord, ...run }] of found) {
      // Logs without a record are a run in progress — unless it started before this process did
      // (a crash left them): those are kept runs like any other, with no outcome to count.
      if (!hasRecord) {
        if (run.startedAt < bornAt) runs.set(runId, { ...run, endedAt: null });
        continue;
      }
      runs.set(runId, run);
      const known = index.get(runId);
      if (known && known.job === run.job && typeof known.endedAt === 'number') {
        run.endedAt = known.endedAt;
        if (known.fault) run.fault = known.fault;
      } else if (pruneAt === undefined || pruneAt - run.startedAt <= maxAgeMs) {
        toRead.push(run);
      }
    }
    for (let i = 0; i < toRead.length; i += SCAN_BATCH) {
      await Promise.all(toRead.slice(i, i + SCAN_BATCH).map(async (run) => {
        const outcome = await readOutcome(run.job, run.runId);
        if (outcome) Object.assign(run, outcome);
      }));
    }
    return runs;
  };

  /** The prune under way; the first summary's scan (a rebuild without retention) under way. Never both scan at once. */
  let pruning: Promise<number> | undefined;
  let loading: Promise<void> | undefined;
  /** True once a scan has rebuilt the index from the folder (what an earlier process kept is in it). */
  let scanned = false;
  /** Rebuilds the size index from the folder (`pruneAt`: the prune's clock, see `scan`). */
  const rebuild = async (pruneAt: number | undefined): Promise<void> => {
    const changes = { added: new Set<string>(), removed: new Set<string>() };
    scanning = changes;
    let found: Map<string, Kept>;
    try {
      found = await scan(pruneAt);
    } finally {
      scanning = undefined;
    }
    // Runs saved during the scan are known exactly; runs evicted during it are gone.
    for (const runId of changes.added) {
      const run = index.get(runId);
      if (run) found.set(runId, run);
    }
    for (const runId of changes.removed) found.delete(runId);
    index.replace(found.values());
    scanned = true;
  };
  const pruneAll = async (now: number): Promise<number> => {
    if (loading) await loading;
    await rebuild(now);
    return enforce(now);
  };
  /** Waits until the index holds what is on disk: joins the scan under way, or scans without pruning. */
  const loaded = async (): Promise<void> => {
    if (scanned) return;
    if (pruning) {
      await pruning;
      return;
    }
    loading ??= rebuild(undefined).finally(() => { loading = undefined; });
    await loading;
  };

  // `orLog`: a run without a record yet (in progress) is found by its logs.
  const findJob = (runId: string, orLog = false): string | undefined => {
    if (!RUN_ID.test(runId)) return undefined;
    let jobs: string[];
    try {
      jobs = readdirSync(dir);
    } catch {
      return undefined;
    }
    for (const job of jobs) {
      try {
        if (statSync(join(dir, job, `${runId}.json`)).isFile()) return job;
      } catch {
        // not this job
      }
      if (!orLog) continue;
      for (const suffix of ['.stdout.log', '.stderr.log']) {
        try {
          if (statSync(join(dir, job, `${runId}${suffix}`)).isFile()) return job;
        } catch {
          // not this job
        }
      }
    }
    return undefined;
  };

  const prune = (now = Date.now()): Promise<number> => {
    pruning ??= pruneAll(now).finally(() => { pruning = undefined; });
    return pruning;
  };

  // Synchronous on purpose: a local stat is microseconds, while the promise form costs a thread-pool
  // round trip and, for the many runs that write no log at all, a thrown ENOENT (together about
  // 7 % of the executor's CPU per short run, profiled with 1,000 every-second jobs).
  const sizeOf = (path: string): number => {
    try {
      return statSync(path, { throwIfNoEntry: false })?.size ?? 0;
    } catch {
      return 0;
    }
  };

  return {
    dir,
    maxLogBytes,
    logPaths(job, runId) {
      const d = jobDir(job);
      return { stdout: join(d, `${runId}.stdout.log`), stderr: join(d, `${runId}.stderr.log`) };
    },
    async save(record) {
      const d = jobDir(record.job);
      const path = join(d, `${record.runId}.json`);
      const text = JSON.stringify(record);
      tempSeq += 1;
      const temp = join(d, `.${record.runId}.json.${process.pid}-${tempSeq}.tmp`);
      try {
        writeRenamed(temp, path, text);
      } catch (error) {
        try {
          rmSync(temp, { force: true });
        } catch {
          // the error that matters is the write's
        }
        throw error;
      }
      const startedAt = runStartedAt(record.runId) ?? record.startedAt;
      // A run whose tails are both empty wrote no output: its logs were never created, so they are
      // not looked for (two stats a run were 4 % of the executor's CPU with 1,000 every-second jobs).
      const silent = record.stdoutTail === '' && record.stderrTail === '';
      const out = silent ? 0 : sizeOf(join(d, `${record.runId}.stdout.log`));
      const err = silent ? 0 : sizeOf(join(d, `${record.runId}.stderr.log`));
      const fault = faultOf(record.status);
      index.add({ job: record.job, runId: record.runId, startedAt, bytes: Buffer.byteLength(text) + out + err, endedAt: record.endedAt, ...(fault ? { fault } : {}) });
      scanning?.added.add(record.runId);
      scanning?.removed.delete(record.runId);
      await enforce();
    },
    list(job, limit = 100, before) {
      if (!NODE_NAME_PATTERN.test(job)) return [];
      let names: string[];
      try {
        names = readdirSync(join(dir, job)).filter((f) => f.endsWith('.json') && RUN_ID.test(f.slice(0, -5))
          && (before === undefined || (runStartedAt(f.slice(0, -5)) ?? 0) < before));
      } catch {
        return [];
      }
      names.sort().reverse();
      const out: RunRecord[] = [];
      for (const name of names) {
        if (out.length >= limit) break;
        const record = readRecord(job, name.slice(0, -5));
        if (record) out.push(record);
      }
      return out.sort((a, b) => b.startedAt - a.startedAt || (a.runId < b.runId ? 1 : -1));
    },
    get(runId) {
      const job = findJob(runId);
      if (!job) return undefined;
      const record = readRecord(job, runId);
      return record ? { job, record } : undefined;
    },
    logPath(runId, stream) {
      const job = findJob(runId, true);
      return job ? join(dir, job, `${runId}.${stream}.log`) : undefined;
    },
    prune,
    usage() {
      return { runs: index.size, bytes: index.total };
    },
    async summary(since) {
      await loaded();
      return { since, jobs: tallyRuns(index.values(), since) };
    },
  };
}
