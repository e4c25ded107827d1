/**
 * The scale bench's processes: executor hosts (executor-host.ts, several embedded executors in one
 * Node process) and their log events; memory figures from /proc.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { stdioWithoutSockets } from '@orrery/core';
import type { HostSettings } from './executor-host.js';

const HOST_SCRIPT = fileURLToPath(new URL('./executor-host.ts', import.meta.url));
const SOURCE_CONDITION = '--conditions=@orrery/source';

/** A log line the bench acts on: its time (pino's, epoch ms), message, executor and job. */
export interface LogEvent { time: number; msg: string; executor?: string; job?: string; state?: string }

/** Messages kept from the executors' logs (the rest is dropped as it comes, to bound memory). */
const KEPT = new Set(['job schedule changed', 'host started', 'host could not start', 'executor error', 'zookeeper connection state']);

/** Parses one JSON log line into a {@link LogEvent}; undefined for anything else. */
export function parseLogLine(line: string): LogEvent | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const v = JSON.parse(line) as { time?: number; msg?: string; executor?: string; job?: string; state?: string };
    if (typeof v.time !== 'number' || typeof v.msg !== 'string') return undefined;
    return { time: v.time, msg: v.msg, ...(v.executor ? { executor: v.executor } : {}), ...(v.job ? { job: v.job } : {}), ...(v.state ? { state: v.state } : {}) };
  } catch {
    return undefined;
  }
}

/** A running executor host. */
export interface ExecutorHost {
  readonly pid: number;
  readonly names: readonly string[];
  /** Kept events, in arrival order. */
  readonly events: LogEvent[];
  /** The last lines of any kind (for error messages). */
  tail(): string[];
  /** Why the host is gone (its exit code and last lines), once it exited without being asked to. */
  failure(): string | undefined;
  /** Resolves once every instance registered; rejects if the host fails or exits first. */
  readonly started: Promise<void>;
  /**
   * Shuts the named instances down gracefully; resolves when they are closed. `sessions`: closes
   * their ZooKeeper sessions first instead (their presences and leader latches go at once, as when
   * a process dies and its fence guard closes its session), then the rest of each instance.
   */
  shutdown(names: readonly string[], how?: 'graceful' | 'sessions'): Promise<void>;
  /** SIGTERM (the host closes its instances), SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** Starts an executor host running `settings.names`. */
export function startExecutorHost(settings: HostSettings, tsxLoader: string): ExecutorHost {
  const options = process.env.NODE_OPTIONS ?? '';
  const env = { ...process.env, NODE_OPTIONS: options.split(/\s+/).includes(SOURCE_CONDITION) ? options : `${options} ${SOURCE_CONDITION}`.trim() };
  // ORRERY_BENCH_CPU_PROF=DIR: each host writes a V8 CPU profile to DIR when it exits on its own; a
  // host killed when the bench stops it writes none (in one run, 2 of 25 wrote theirs).
  const profDir = process.env.ORRERY_BENCH_CPU_PROF;
  const profile = profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [];
  const child: ChildProcess = spawn(process.execPath, [...profile, '--import', tsxLoader, HOST_SCRIPT, JSON.stringify(settings)], {
    stdio: stdioWithoutSockets(['ignore', 'pipe', 'pipe', 'ipc']),
    env,
  });
  if (child.pid === undefined) throw new Error('could not start an executor host');
  const events: LogEvent[] = [];
  const last: string[] = [];
  /** Its stderr apart: a native abort's message (a C assertion) would drown among the log lines. */
  const lastErr: string[] = [];
  let stopping = false;
  let exit: string | undefined;
  let error: string | undefined;
  // Built when asked for, not at 'exit': the last of stderr may still be in the pipe then.
  const failure = (): string | undefined => error ?? (exit === undefined ? undefined
    : `executor host ${child.pid} exited (${exit}); its stderr ended with:\n${lastErr.join('\n') || '(nothing)'}\nlast lines:\n${last.join('\n')}`);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code, signal) => {
    if (!stopping) exit = `code ${code}, signal ${signal}`;
    resolve(code);
  }));
  let onStarted: (() => void) | undefined;
  const started = new Promise<void>((resolve, reject) => {
    onStarted = resolve;
    void exited.then((code) => reject(new Error(`executor host ${child.pid} exited (${code}) before it started; last lines:\n${last.join('\n')}`)));
  });
  started.catch(() => undefined);
  // ORRERY_BENCH_HOST_LOGS=DIR: every line of every host to DIR/host-<pid>.log (for looking into a run).
  const logDir = process.env.ORRERY_BENCH_HOST_LOGS;
  if (logDir) mkdirSync(logDir, { recursive: true });
  const logFile = logDir ? createWriteStream(join(logDir, `host-${child.pid}.log`)) : undefined;
  if (logFile) child.once('close', () => logFile.end());
  const onLine = (line: string): void => {
    logFile?.write(line + '\n');
    last.push(line);
    if (last.length > 60) last.shift();
    const e = parseLogLine(line);
    if (!e || !KEPT.has(e.msg)) return;
    events.push(e);
    if (e.msg === 'host started') onStarted?.();
  };
  createInterface({ input: child.stdout! }).on('line', onLine);
  createInterface({ input: child.stderr! }).on('line', (line) => {
    if (!line.startsWith('{')) {
      lastErr.push(line);
      if (lastErr.length > 20) lastErr.shift();
    }
    onLine(line);
  });
  // The IPC channel's errors (a host that died): the waits above report them; never an unhandled 'error'.
  child.on('error', (e) => { error ??= `executor host ${child.pid}: ${e.message}`; });
  const closedWaiters: Array<(names: string[]) => void> = [];
  child.on('message', (m: { closed?: string[] }) => {
    if (m.closed) for (const w of closedWaiters.splice(0)) w(m.closed);
  });
  return {
    pid: child.pid,
    names: settings.names,
    events,
    tail: () => [...last],
    failure,
    started,
    shutdown(names, how = 'graceful') {
      if (names.length === 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const gone = (): void => reject(new Error(failure() ?? `executor host ${child.pid} is gone`));
        if (child.exitCode !== null || child.signalCode !== null || !child.connected) return gone();
        closedWaiters.push(() => resolve());
        void exited.then(gone);
        // A host that died meanwhile: the send fails (its callback, not an 'error' event that would crash the bench).
        child.send({ close: names, ...(how === 'sessions' ? { sessions: true } : {}) }, (error) => { if (error) gone(); });
      });
    },
    async stop(graceMs = 20_000) {
      stopping = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A process's resident memory now and its peak (VmHWM), in MB; undefined once it is gone. */
export function processMemory(pid: number): { rssMb: number; peakMb: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string): number => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
    return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

/** Every live descendant of `pid` (children, their children, …), from /proc. */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const c of children.get(queue.shift()!) ?? []) {
      out.push(c);
      queue.push(c);
    }
  }
  return out;
}

/**
 * Gives `pid`, its descendants and every thread of them the niceness `nice` (Linux's niceness is
 * per thread; processes they start later inherit it). Returns how many threads it changed.
 */
export function renice(pid: number, nice: number): number {
  let changed = 0;
  for (const p of [pid, ...descendants(pid)]) {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      continue; // gone meanwhile
    }
    for (const tid of tasks) {
      try {
        setPriority(Number(tid), nice);
        changed += 1;
      } catch {
        // gone meanwhile
      }
    }
  }
  return changed;
}

/** The resident memory (MB) of `pid`'s descendants together, now. */
export function descendantsRssMb(pid: number): number {
  return descendants(pid).reduce((sum, p) => sum + (processMemory(p)?.rssMb ?? 0), 0);
}
