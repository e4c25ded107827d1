/**
 * CPU time of processes and of the machine, read from /proc (Linux), in seconds.
 *
 * A process's cost includes its children: {@link processTreeSeconds} sums, over the process and
 * every live descendant, user + system time of the process itself (all its threads) plus that of
 * its children it has already waited for (`cutime` + `cstime`). A child that exits inside a
 * measured interval is counted either way — alive at the start (its own time), reaped by the end
 * (its parent's `cutime`) — so the difference of two samples is the tree's CPU in between. Not
 * counted: a descendant orphaned to init (its parent died before it), which a healthy executor
 * never does to its workers.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's times (`getconf CLK_TCK`; 100 on Linux almost always). */
export const CLOCK_TICKS: number = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

interface ProcStat { pid: number; ppid: number; ownTicks: number; reapedTicks: number }

function parseStat(text: string, pid: number): ProcStat | undefined {
  // The command name (field 2) may hold spaces and parentheses: the fields after it follow the last ')'.
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  if (rest.length < 15) return undefined;
  const n = (i: number): number => Number(rest[i]);
  return { pid, ppid: n(1), ownTicks: n(11) + n(12), reapedTicks: n(13) + n(14) };
}

function readStat(path: string, pid: number): ProcStat | undefined {
  try {
    return parseStat(readFileSync(path, 'utf8'), pid);
  } catch {
    return undefined; // gone meanwhile
  }
}

/** Every process's stat now, by pid. */
export function allProcesses(): Map<number, ProcStat> {
  const out = new Map<number, ProcStat>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = readStat(`/proc/${name}/stat`, Number(name));
    if (s) out.set(s.pid, s);
  }
  return out;
}

/** CPU seconds of one process tree (see the module's note) in a snapshot from {@link allProcesses}. */
export function processTreeSeconds(procs: Map<number, ProcStat>, root: number): { self: number; children: number } {
  const kids = new Map<number, number[]>();
  for (const p of procs.values()) {
    if (!kids.has(p.ppid)) kids.set(p.ppid, []);
    kids.get(p.ppid)!.push(p.pid);
  }
  const top = procs.get(root);
  if (!top) return { self: NaN, children: NaN };
  let children = top.reapedTicks;
  const stack = [...(kids.get(root) ?? [])];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    const p = procs.get(pid)!;
    children += p.ownTicks + p.reapedTicks;
    stack.push(...(kids.get(pid) ?? []));
  }
  return { self: top.ownTicks / CLOCK_TICKS, children: children / CLOCK_TICKS };
}

/** CPU seconds of one thread (`/proc/<pid>/task/<tid>`); the main thread's tid is the pid — for Node, the event loop. */
export function threadSeconds(pid: number, tid = pid): number {
  const s = readStat(`/proc/${pid}/task/${tid}/stat`, tid);
  return s ? s.ownTicks / CLOCK_TICKS : NaN;
}

/** The machine's CPU seconds, all cores: busy (not idle, not waiting for I/O) and total. */
export function machineSeconds(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already inside user)
  const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = (v[3] ?? 0) + (v[4] ?? 0);
  return { busy: (total - idle) / CLOCK_TICKS, total: total / CLOCK_TICKS };
}
