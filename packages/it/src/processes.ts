/**
 * Real Orrery processes for integration tests: spawn a bin, read its JSON log lines, signal it by
 * pid, and make sure none outlives the test (`stopAllProcesses` in afterEach/afterAll).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { OrreryError, stdioWithoutSockets } from '@orrery/core';

const BINS = {
  'orrery-sharding': fileURLToPath(new URL('../../sharding/bin/orrery-sharding.js', import.meta.url)),
  orrery: fileURLToPath(new URL('../../console/bin/orrery.js', import.meta.url)),
  // A shell script that execs Node with the console's heap bound (bin/orrery-console).
  'orrery-console': fileURLToPath(new URL('../../console/bin/orrery-console', import.meta.url)),
  'orrery-executor': fileURLToPath(new URL('../../executor/bin/orrery-executor.js', import.meta.url)),
} as const;

/** A running process. */
export interface RunningProcess {
  readonly name: string;
  readonly pid: number;
  /** Every stdout/stderr line so far. */
  readonly lines: readonly string[];
  readonly exited: Promise<number | null>;
  /** The signal that ended it (`SIGABRT`, `SIGKILL`, …), once it exited; null while it runs or after an exit code. */
  readonly signal: NodeJS.Signals | null;
  /** Resolves when its stdout and stderr have both ended: its last words (a fatal error's message) are in `lines`. */
  readonly drained: Promise<void>;
  /** Resolves with the first line (now or later) matching `pattern`. */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  kill(signal?: NodeJS.Signals): void;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when it exited. */
  stop(graceMs?: number): Promise<void>;
}

const all = new Set<RunningProcess>();

/** How {@link startProcess} starts a bin. */
export interface StartProcessOptions {
  /** Copy each line to this process's stdout, prefixed with the bin's name. */
  echo?: boolean;
  /**
   * Start it in a process group of its own (a new session, `setsid`), so that a signal a terminal
   * sends to this process's group (Ctrl-C) does not reach it: only this process signals it (`kill`,
   * `stop`). For a parent that stops its children itself on Ctrl-C (npm start), else every child
   * would get the terminal's SIGINT and then the parent's signal — two signals, which a bin takes
   * as "stop now". The IPC channel still stops it if this process dies.
   */
  ownProcessGroup?: boolean;
  /**
   * A command that runs the bin, given before it: `['ip', 'netns', 'exec', NS]` runs it in that
   * network namespace (`ip` execs the bin, which keeps the pid and the IPC channel).
   */
  prefix?: readonly string[];
  /** Flags for Node itself, before the bin's script (`--cpu-prof`, which NODE_OPTIONS does not allow); not for `orrery-console`. */
  nodeFlags?: readonly string[];
}

/** Starts a bin of this repository with node. */
export function startProcess(bin: keyof typeof BINS, args: readonly string[], env: Record<string, string> = {}, options: StartProcessOptions = {}): RunningProcess {
  // The IPC channel ties the process to this one: the bins stop when it closes (this process died).
  const script = BINS[bin];
  const [bare, bareArgv] = script.endsWith('.js') ? [process.execPath, [...(options.nodeFlags ?? []), script, ...args]] : [script, [...args]];
  const [command, argv] = options.prefix && options.prefix.length > 0 ? [options.prefix[0]!, [...options.prefix.slice(1), bare, ...bareArgv]] : [bare, bareArgv];
  const child: ChildProcess = spawn(command, argv, {
    stdio: stdioWithoutSockets(['ignore', 'pipe', 'pipe', 'ipc']), // not this process's ZooKeeper sockets
    env: { ...process.env, ORRERY_NODE: process.execPath, ...env }, // the same Node as this one
    detached: options.ownProcessGroup === true,
  });
  if (child.pid === undefined) throw new OrreryError('internal', `could not start ${bin}`);
  const lines: string[] = [];
  const waiters = new Set<{ pattern: RegExp; resolve: (line: string) => void }>();
  const onLine = (line: string): void => {
    if (!line) return;
    lines.push(line);
    if (options.echo) process.stdout.write(`[${bin}] ${line}\n`);
    for (const w of [...waiters]) if (w.pattern.test(line)) { waiters.delete(w); w.resolve(line); }
  };
  // Whole lines only: a pipe read can end inside a line (or a UTF-8 character), so each stream
  // keeps its unfinished tail until the rest arrives (or the stream ends).
  const follow = (stream: NodeJS.ReadableStream): Promise<void> => {
    let rest = '';
    stream.setEncoding('utf8');
    stream.on('data', (text: string) => {
      const parts = (rest + text).split('\n');
      rest = parts.pop()!;
      for (const line of parts) onLine(line);
    });
    return new Promise((resolve) => {
      stream.on('end', () => {
        onLine(rest);
        rest = '';
        resolve();
      });
      stream.on('close', () => resolve());
    });
  };
  const drained = Promise.all([follow(child.stdout!), follow(child.stderr!)]).then(() => undefined);
  let signal: NodeJS.Signals | null = null;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code, sig) => {
    signal = sig;
    resolve(code);
  }));
  const handle: RunningProcess = {
    name: bin,
    pid: child.pid,
    lines,
    exited,
    get signal() {
      return signal;
    },
    drained,
    waitForLine(pattern, timeoutMs = 20_000) {
      const found = lines.find((l) => pattern.test(l));
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const w = { pattern, resolve: (line: string) => { clearTimeout(timer); resolve(line); } };
        const timer = setTimeout(() => {
          waiters.delete(w);
          reject(new Error(`${bin} (pid ${child.pid}) printed no line matching ${pattern} within ${timeoutMs} ms; last lines:\n${lines.slice(-15).join('\n')}`));
        }, timeoutMs);
        waiters.add(w);
        void exited.then(() => {
          if (!waiters.has(w)) return;
          waiters.delete(w);
          clearTimeout(timer);
          reject(new Error(`${bin} exited before printing ${pattern}; last lines:\n${lines.slice(-15).join('\n')}`));
        });
      });
    },
    kill(signal = 'SIGKILL') {
      try {
        process.kill(child.pid!, signal);
      } catch {
        // already gone
      }
    },
    async stop(graceMs = 5000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      handle.kill('SIGTERM');
      const timer = setTimeout(() => handle.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
  all.add(handle);
  void exited.then(() => all.delete(handle));
  return handle;
}

/** Every process started by this test file that is still running. */
export function runningProcesses(): RunningProcess[] {
  return [...all];
}

/**
 * What a failed test prints of each process still running: its warnings and errors, its ZooKeeper
 * connection states and its leaderships (the last `max` such lines each). A CI log shows only what
 * the test printed: without these, a failure that does not reproduce at home leaves nothing to read.
 */
export function troubleLines(max = 25): string {
  const wanted = /"level":([4-6]\d)|"msg":"(zookeeper connection state|became [^"]*leader|no longer [^"]*leader|assignment applied|items changed)"/;
  return runningProcesses()
    .map((p) => `--- ${p.name} (pid ${p.pid})\n${p.lines.filter((l) => wanted.test(l)).slice(-max).join('\n')}`)
    .join('\n');
}

/** Stops every process started by this test file that is still running. */
export async function stopAllProcesses(): Promise<void> {
  await Promise.all([...all].map((p) => p.stop(2000)));
}
