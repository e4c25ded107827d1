/**
 * The run ledger: the chaos suite's oracle. Test jobs append one line per event to a single file
 * (each line well under 4 KB and written with `>>`, so O_APPEND keeps lines whole):
 *
 *     START job item fireTime executor runId fencingToken trigger attempt timeNs
 *     TICK  job item fireTime executor runId timeNs          (every ~100 ms while it runs)
 *     END   job item fireTime executor runId timeNs
 *
 * A run killed with SIGKILL writes no END; its last TICK is the last moment it is known to have been
 * alive. Times are the host's wall clock in nanoseconds (`date +%s%N`), shared by every process.
 *
 * {@link checkLedger} asserts, per (job, item): no two runs overlap in time (a run's START comes after
 * the last sign of life of every earlier run); no fire time started twice, except a declared
 * failover re-run (trigger `failover`) with a larger fencing token; fencing tokens grow with
 * start time; and no expected fire time is missing outside the fault windows. (A failover re-run
 * of a run that ended is allowed — at-least-once: its outcome could not be recorded — and counted.)
 */
import { readFileSync, existsSync } from 'node:fs';

/** One run as the ledger saw it. */
export interface LedgerRun {
  job: string;
  item: number;
  fireTime: number;
  executor: string;
  runId: string;
  token: number;
  trigger: string;
  attempt: number;
  /** ms (fractional) of the START line. */
  start: number;
  /** ms of its last line (END or TICK). */
  lastSeen: number;
  ended: boolean;
}

/** Parses ledger text; unknown or torn lines are counted, not fatal. */
export function parseLedger(text: string): { runs: LedgerRun[]; badLines: number } {
  const runs = new Map<string, LedgerRun>();
  let badLines = 0;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const f = line.trim().split(/\s+/);
    const kind = f[0];
    if (kind === 'START' && f.length === 10) {
      const [, job, item, fireTime, executor, runId, token, trigger, attempt, ns] = f as [string, string, string, string, string, string, string, string, string, string];
      const start = Number(BigInt(ns) / 1000n) / 1000;
      runs.set(runId, { job, item: Number(item), fireTime: Number(fireTime), executor, runId, token: Number(token), trigger, attempt: Number(attempt), start, lastSeen: start, ended: false });
    } else if ((kind === 'TICK' || kind === 'END') && f.length === 7) {
      const run = runs.get(f[5]!);
      if (!run) {
        badLines += 1;
        continue;
      }
      run.lastSeen = Math.max(run.lastSeen, Number(BigInt(f[6]!) / 1000n) / 1000);
      if (kind === 'END') run.ended = true;
    } else badLines += 1;
  }
  return { runs: [...runs.values()], badLines };
}

/** Reads and parses a ledger file (empty when it does not exist yet). */
export function readLedger(path: string): { runs: LedgerRun[]; badLines: number } {
  return parseLedger(existsSync(path) ? readFileSync(path, 'utf8') : '');
}

/** What the checker expects: per job, its items and the fire times that should have run. */
export interface LedgerExpectation {
  job: string;
  items: number;
  /** Fire times (ms) that must each have a START for every item, unless inside a fault window. */
  fireTimes: number[];
}

export interface LedgerReport {
  runs: number;
  /** Pairs of runs of one (job, item) alive at the same time. */
  overlaps: Array<{ job: string; item: number; earlier: string; later: string; overlapMs: number }>;
  /** A (job, item, fire time) started more than once, not as a declared failover re-run. */
  duplicates: Array<{ job: string; item: number; fireTime: number; runIds: string[] }>;
  /** Declared failover re-runs seen (allowed duplicates). */
  failoverReruns: number;
  /** Of those, re-runs of a run that had ended (its outcome could not be recorded: ZooKeeper was gone). */
  rerunsOfEnded: number;
  /** Tokens that did not grow with start time. */
  tokenViolations: Array<{ job: string; item: number; earlier: string; later: string }>;
  /** Expected (job, item, fire time) with no START outside every fault window. */
  missed: Array<{ job: string; item: number; fireTime: number }>;
  /** The same, inside a fault window (allowed, reported). */
  missedInFaults: number;
}

export function checkLedger(runs: LedgerRun[], expectations: LedgerExpectation[] = [], faultWindows: Array<[number, number]> = []): LedgerReport {
  const report: LedgerReport = { runs: runs.length, overlaps: [], duplicates: [], failoverReruns: 0, rerunsOfEnded: 0, tokenViolations: [], missed: [], missedInFaults: 0 };
  const byShard = new Map<string, LedgerRun[]>();
  for (const r of runs) {
    const key = `${r.job}\0${r.item}`;
    if (!byShard.has(key)) byShard.set(key, []);
    byShard.get(key)!.push(r);
  }
  for (const list of byShard.values()) {
    list.sort((a, b) => a.start - b.start);
    // Overlaps: every run must start after the last sign of life of every earlier run.
    let latest: LedgerRun | undefined;
    for (const r of list) {
      if (latest && latest.lastSeen > r.start) {
        report.overlaps.push({ job: r.job, item: r.item, earlier: latest.runId, later: r.runId, overlapMs: latest.lastSeen - r.start });
      }
      if (!latest || r.lastSeen > latest.lastSeen) latest = r;
    }
    for (let i = 1; i < list.length; i += 1) {
      if (list[i]!.token <= list[i - 1]!.token) report.tokenViolations.push({ job: list[i]!.job, item: list[i]!.item, earlier: list[i - 1]!.runId, later: list[i]!.runId });
    }
    // Duplicates: a fire time's later starts must be failover re-runs of a run that never ended.
    const byFire = new Map<number, LedgerRun[]>();
    for (const r of list) {
      if (!byFire.has(r.fireTime)) byFire.set(r.fireTime, []);
      byFire.get(r.fireTime)!.push(r);
    }
    for (const [fireTime, starts] of byFire) {
      if (starts.length < 2) continue;
      let allowed = true;
      for (let i = 1; i < starts.length; i += 1) {
        const prev = starts[i - 1]!;
        const next = starts[i]!;
        if (next.trigger === 'failover' && next.token > prev.token) {
          report.failoverReruns += 1;
          if (prev.ended) report.rerunsOfEnded += 1;
        } else allowed = false;
      }
      if (!allowed) report.duplicates.push({ job: list[0]!.job, item: list[0]!.item, fireTime, runIds: starts.map((s) => s.runId) });
    }
  }
  const started = new Set(runs.map((r) => `${r.job}\0${r.item}\0${r.fireTime}`));
  const inFault = (t: number): boolean => faultWindows.some(([from, to]) => t >= from && t <= to);
  for (const e of expectations) {
    for (const fireTime of e.fireTimes) {
      for (let item = 0; item < e.items; item += 1) {
        if (started.has(`${e.job}\0${item}\0${fireTime}`)) continue;
        if (inFault(fireTime)) report.missedInFaults += 1;
        else report.missed.push({ job: e.job, item, fireTime });
      }
    }
  }
  return report;
}

/** The shell command of a ledger job: START, a TICK every ~100 ms for `seconds`, END. */
export function ledgerCommand(ledger: string, seconds: number): string {
  const id = '$ORRERY_JOB $ORRERY_SHARD_ITEM $ORRERY_FIRE_TIME $ORRERY_EXECUTOR $ORRERY_RUN_ID';
  const ticks = Math.max(0, Math.round(seconds * 10));
  return [
    `L='${ledger.replace(/'/g, `'\\''`)}'`,
    `echo "START ${id} $ORRERY_FENCING_TOKEN $ORRERY_TRIGGER $ORRERY_ATTEMPT $(date +%s%N)" >> "$L"`,
    `i=0; while [ $i -lt ${ticks} ]; do sleep 0.1; echo "TICK ${id} $(date +%s%N)" >> "$L"; i=$((i+1)); done`,
    `echo "END ${id} $(date +%s%N)" >> "$L"`,
  ].join('\n');
}
