/**
 * The executors' run records (`<dataDir>/runs/<job>/<runId>.json`), read incrementally: each scan
 * parses only the records it has not seen, and only those whose run id (which starts with the
 * run's creation time in base 36) is not older than a given time.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The fields of a run record the cost bench reads. */
export interface RunRecordLite { job: string; item: number; executor: string; fireTime: number; startedAt: number; trigger: string; status: string }

/** Key of one (job, shard, fire time). */
export const runKey = (r: { job: string; item: number; fireTime: number }): string => `${r.job}#${r.item}@${r.fireTime}`;

/** The run records of some executors' data dirs, parsed once each as they appear (see the module's note). */
export class RunRecords {
  readonly records: RunRecordLite[] = [];
  private readonly seen = new Set<string>();

  /** Reads the records of the jobs whose names start with `jobPrefix`, in each executor's data dir. */
  constructor(private readonly dataDirs: readonly string[], private readonly jobPrefix = '') {}

  /** Parses the records not seen yet that were created at or after `sinceMs`; returns how many. */
  scan(sinceMs: number): number {
    let added = 0;
    for (const dataDir of this.dataDirs) {
      const runs = join(dataDir, 'runs');
      for (const job of safeList(runs)) {
        if (!job.startsWith(this.jobPrefix)) continue;
        for (const f of safeList(join(runs, job))) {
          if (!f.endsWith('.json') || f.startsWith('.')) continue;
          const path = join(runs, job, f);
          if (this.seen.has(path)) continue;
          if (parseInt(f.slice(0, f.indexOf('-')), 36) < sinceMs) continue;
          try {
            this.records.push(JSON.parse(readFileSync(path, 'utf8')) as RunRecordLite);
            this.seen.add(path);
            added += 1;
          } catch {
            // renamed into place whole, so this is a foreign or vanished file: skip it
          }
        }
      }
    }
    return added;
  }

  /** Distinct (job, shard) pairs that ran, per fire time. */
  shardsPerFire(): Map<number, number> {
    const keys = new Map<number, Set<string>>();
    for (const r of this.records) {
      if (!keys.has(r.fireTime)) keys.set(r.fireTime, new Set());
      keys.get(r.fireTime)!.add(`${r.job}#${r.item}`);
    }
    return new Map([...keys].map(([t, s]) => [t, s.size]));
  }
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
