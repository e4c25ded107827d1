/**
 * Run history and logs on the executor's disk (`--data-dir`): one JSON record and two log files per
 * run, kept by age and by total size. ZooKeeper holds only each shard's last outcome.
 *
 * Layout: `<dataDir>/runs/<job>/<runId>.json`, `<runId>.stdout.log`, `<runId>.stderr.log`.
 * Run ids start with the start time in base 36 (sortable).
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFile } from 'node:fs';
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ShardOutcome } from '@orrery/core';

/** A run record. */
export interface RunRecord extends ShardOutcome {
  job: string;
  item: number;
  trigger: 'cron' | 'run-now' | 'retry' | 'downstream' | 'misfire' | 'failover';
  /** False when the completion found the claim taken over (a stale run: nothing recorded in ZooKeeper). */
  recorded: boolean;
}

export interface HistoryOptions {
  dataDir: string;
  /** Default 7 days. */
  maxAgeMs?: number;
  /** Default 1 GiB. */
  maxBytes?: number;
}

export interface History {
  readonly dir: string;
  /** Paths of a run's log files (created as needed). */
  logPaths(job: string, runId: string): { stdout: string; stderr: string };
  /** Writes the record. */
  save(record: RunRecord): Promise<void>;
  /** Newest first. */
  list(job: string, limit?: number): RunRecord[];
  get(runId: string): { record: RunRecord; job: string } | undefined;
  /** The path of a run's log, if the run exists. */
  logPath(runId: string, stream: 'stdout' | 'stderr'): string | undefined;
  /**
   * Applies retention; resolves the number of runs removed. Asynchronous throughout (the file
   * system's thread pool), so the event loop — fires, claims, the fence's probes — keeps turning
   * however many runs are kept. A prune asked for while one is under way joins it.
   */
  prune(now?: number): Promise<number>;
}

const RUN_ID = /^[0-9a-z]+-[0-9a-z-]+$/;

export function createHistory(options: HistoryOptions): History {
  const dir = join(options.dataDir, 'runs');
  const maxAgeMs = options.maxAgeMs ?? 7 * 86_400_000;
  const maxBytes = options.maxBytes ?? 1024 ** 3;
  mkdirSync(dir, { recursive: true });
  // Folders made once per job (a mkdir per run would block the event loop for nothing).
  const made = new Set<string>();
  const jobDir = (job: string): string => {
    const d = join(dir, job);
    if (!made.has(job)) {
      mkdirSync(d, { recursive: true });
      made.add(job);
    }
    return d;
  };
  let pruning: Promise<number> | undefined;
  const pruneAll = async (now: number): Promise<number> => {
    const runs: Array<{ job: string; runId: string; startedAt: number; bytes: number }> = [];
    for (const job of await readdir(dir)) {
      const files = await readdir(join(dir, job)).catch(() => [] as string[]);
      const sizes = new Map<string, number>();
      // A few stats at a time: enough to keep the thread pool busy, not so many that a run's own
      // file writes wait behind thousands of them.
      for (let i = 0; i < files.length; i += 16) {
        await Promise.all(files.slice(i, i + 16).map(async (f) => {
          const runId = f.replace(/\.(json|stdout\.log|stderr\.log)$/, '');
          const size = await stat(join(dir, job, f)).then((st) => st.size, () => undefined); // gone meanwhile
          if (size !== undefined) sizes.set(runId, (sizes.get(runId) ?? 0) + size);
        }));
      }
      for (const [runId, bytes] of sizes) {
        const startedAt = parseInt(runId.split('-')[0] ?? '', 36);
        if (Number.isFinite(startedAt)) runs.push({ job, runId, startedAt, bytes });
      }
    }
    runs.sort((a, b) => a.startedAt - b.startedAt);
    let total = runs.reduce((sum, r) => sum + r.bytes, 0);
    let removed = 0;
    for (const r of runs) {
      if (now - r.startedAt <= maxAgeMs && total <= maxBytes) break;
      await Promise.all(['.json', '.stdout.log', '.stderr.log'].map((suffix) => rm(join(dir, r.job, `${r.runId}${suffix}`), { force: true })));
      total -= r.bytes;
      removed += 1;
    }
    return removed;
  };
  const findJob = (runId: string): string | undefined => {
    if (!RUN_ID.test(runId)) return undefined;
    for (const job of readdirSync(dir)) {
      try {
        statSync(join(dir, job, `${runId}.json`));
        return job;
      } catch {
        // not this job
      }
    }
    return undefined;
  };
  return {
    dir,
    logPaths(job, runId) {
      const d = jobDir(job);
      return { stdout: join(d, `${runId}.stdout.log`), stderr: join(d, `${runId}.stderr.log`) };
    },
    save(record) {
      // One write (no temporary file and rename: this is per run, on the executor's hot path);
      // readers skip a record they catch half-written.
      const path = join(jobDir(record.job), `${record.runId}.json`);
      return new Promise<void>((resolve, reject) => writeFile(path, JSON.stringify(record), (error) => (error ? reject(error) : resolve())));
    },
    list(job, limit = 100) {
      let names: string[];
      try {
        names = readdirSync(join(dir, job)).filter((f) => f.endsWith('.json') && !f.startsWith('.'));
      } catch {
        return [];
      }
      names.sort().reverse();
      const out: RunRecord[] = [];
      for (const name of names.slice(0, limit)) {
        try {
          out.push(JSON.parse(readFileSync(join(dir, job, name), 'utf8')) as RunRecord);
        } catch {
          // a record being pruned
        }
      }
      return out.sort((a, b) => b.startedAt - a.startedAt || (a.runId < b.runId ? 1 : -1));
    },
    get(runId) {
      const job = findJob(runId);
      if (!job) return undefined;
      return { job, record: JSON.parse(readFileSync(join(dir, job, `${runId}.json`), 'utf8')) as RunRecord };
    },
    logPath(runId, stream) {
      const job = findJob(runId);
      return job ? join(dir, job, `${runId}.${stream}.log`) : undefined;
    },
    prune(now = Date.now()) {
      pruning ??= pruneAll(now).finally(() => { pruning = undefined; });
      return pruning;
    },
  };
}
