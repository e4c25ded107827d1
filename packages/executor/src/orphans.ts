/**
 * Orphan records: every shell run's process group is written down under `<data-dir>/pgroups/`
 * while it runs (its pgid and the kernel's start time of its leader, so a reused pid is never
 * mistaken for it). An executor that restarts after a crash kills the groups its previous life
 * left behind **before it registers** — a shard never runs twice because of a leftover process.
 *
 * (While the executor lives, its fence guard kills its groups when it dies; these records cover
 * what even the guard could not: both killed at once, say.)
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The start time of a process in clock ticks since boot (/proc/<pid>/stat field 22), if it exists. */
export function processStartTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[19]);
  } catch {
    return undefined;
  }
}

/**
 * True when process group `pgid` still has a member that started at or after `sinceTicks`: its
 * leader, or — the leader gone — any process still in the group (a job's background child).
 */
export function groupAlive(pgid: number, sinceTicks: number): boolean {
  if (processStartTicks(pgid) === sinceTicks) return true;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && Number(fields[19]) >= sinceTicks) return true;
    } catch {
      // gone meanwhile
    }
  }
  return false;
}

interface GroupRecord {
  pgid: number;
  startTicks: number;
  job: string;
  runId: string;
}

export interface OrphanRecords {
  /** Records a group while it runs; the returned function removes the record. */
  record(pgid: number, job: string, runId: string): () => void;
  /** Kills the live groups of every record left from an earlier life; resolves what it killed. */
  reap(): Array<{ pgid: number; job: string; runId: string }>;
}

export function createOrphanRecords(dataDir: string): OrphanRecords {
  const dir = join(dataDir, 'pgroups');
  mkdirSync(dir, { recursive: true });
  return {
    record(pgid, job, runId) {
      const startTicks = processStartTicks(pgid);
      const path = join(dir, `${pgid}.json`);
      if (startTicks === undefined) return () => undefined; // already gone
      const record: GroupRecord = { pgid, startTicks, job, runId };
      writeFileSync(path, JSON.stringify(record));
      return () => rmSync(path, { force: true });
    },
    reap() {
      const killed: Array<{ pgid: number; job: string; runId: string }> = [];
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        try {
          const r = JSON.parse(readFileSync(path, 'utf8')) as GroupRecord;
          if (groupAlive(r.pgid, r.startTicks)) {
            process.kill(-r.pgid, 'SIGKILL');
            killed.push({ pgid: r.pgid, job: r.job, runId: r.runId });
          }
        } catch {
          // unreadable record, or the group went meanwhile
        }
        rmSync(path, { force: true });
      }
      return killed;
    },
  };
}
