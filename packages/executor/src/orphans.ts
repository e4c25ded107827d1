/**
 * Orphan records: every shell run's process group is written down under `<data-dir>/pgroups/`
 * while it runs (its pgid and the kernel's start time of its leader, so a reused pid is never
 * mistaken for it). An executor that restarts after a crash kills the groups its previous life
 * left behind **before it registers** — a shard never runs twice because of a leftover process.
 *
 * (While the executor lives, its fence guard kills its groups when it dies; these records cover
 * what even the guard could not: both killed at once, say.)
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** /proc/<pid>/stat from field 3 (state) on, if the process exists. */
function statFields(pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** The start time of a process in clock ticks since boot (/proc/<pid>/stat field 22), if it exists. */
export function processStartTicks(pid: number): number | undefined {
  const fields = statFields(pid);
  return fields ? Number(fields[19]) : undefined;
}

/** A zombie (or a process being torn down) runs nothing: it is dead, only not yet reaped. */
const dead = (fields: string[]): boolean => fields[0] === 'Z' || fields[0] === 'X';

/**
 * True when process group `pgid` still has a live member that started at or after `sinceTicks`:
 * its leader, or — the leader gone — any process still in the group (a job's background child).
 */
export function groupAlive(pgid: number, sinceTicks: number): boolean {
  const leader = statFields(pgid);
  if (leader && Number(leader[19]) === sinceTicks && !dead(leader)) return true;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const fields = statFields(name);
    if (fields && Number(fields[2]) === pgid && Number(fields[19]) >= sinceTicks && !dead(fields)) return true;
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
  /**
   * Records a group while it runs; the returned function removes the record. The record is written
   * off the event loop (a synchronous write cost about 1 ms a run here, a quarter of the executor's
   * work per shell run in a burst of fires); its removal waits for the write. In the moment before
   * it lands, a crashed executor's group is still killed by its fence guard (which is told of the
   * group at once, and kills every process carrying the executor's run mark).
   */
  record(pgid: number, job: string, runId: string): () => void;
  /**
   * Kills the live groups of every record left from an earlier life, and waits (up to `waitMs`)
   * until none of them has a live member; resolves what it killed.
   */
  reap(waitMs?: number): Promise<Array<{ pgid: number; job: string; runId: string }>>;
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
      const written = writeFile(path, JSON.stringify(record)).then(() => true, () => false);
      return () => void written.then((ok) => (ok ? rm(path, { force: true }) : undefined)).catch(() => undefined);
    },
    async reap(waitMs = 5000) {
      const killed: Array<{ pgid: number; job: string; runId: string; startTicks: number }> = [];
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        try {
          const r = JSON.parse(readFileSync(path, 'utf8')) as GroupRecord;
          if (groupAlive(r.pgid, r.startTicks)) {
            process.kill(-r.pgid, 'SIGKILL');
            killed.push({ pgid: r.pgid, job: r.job, runId: r.runId, startTicks: r.startTicks });
          }
        } catch {
          // unreadable record, or the group went meanwhile
        }
        rmSync(path, { force: true });
      }
      // SIGKILL is delivered asynchronously: dead means no live member left, not "signal sent".
      const deadline = Date.now() + waitMs;
      while (killed.some((k) => groupAlive(k.pgid, k.startTicks)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      return killed.map(({ pgid, job, runId }) => ({ pgid, job, runId }));
    },
  };
}
