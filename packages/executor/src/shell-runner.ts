/**
 * Runs a shell job: `/bin/sh -c command` in its own process group, with the job contract's env vars
 * (parameters are never spliced into the command string). Timeout or stop: SIGTERM to the whole
 * group, SIGKILL after the grace — grandchildren die too. When the shell exits, whatever it left
 * running in its group is killed as well (a run ends with its process; use `setsid` to escape).
 * Exit 0 = succeeded. A script may write `{"message": "..."}` to `$ORRERY_RESULT_FILE`; without
 * one, a failed run's message is its exit code and the last line of its stderr (run-message.ts).
 *
 * Output: each stream goes to its log file, capped at `maxLogBytes` (lazy-file.ts: past the cap it
 * is discarded and counted, the result's `truncated` says how much), and to a 4 KB tail. While a
 * log file's buffer is full the child's pipe is paused (resumed on drain), so a job printing faster
 * than the disk takes blocks on its own writes instead of filling the executor's memory.
 *
 * The process is started by execa ({@link SHELL_EXECA_OPTIONS}), which keeps none of the run's
 * life: the outcome, the signals and the output stay this module's, as each option says.
 *
 * A run claimed ahead of its fire time (`startAt`) starts its process at once, held at a gate
 * ({@link SHELL_GATE}) that lets the command through at `startAt`; until then it can be withdrawn
 * (killed at the gate: the command never ran).
 */
import { execa, type Options as ExecaOptions } from 'execa';
import { stdioWithoutSockets, toError } from '@orrery/core';
import { readFileSync, rmSync } from 'node:fs';
import { createLazyFile, DEFAULT_MAX_LOG_BYTES, logTruncation } from './lazy-file.js';
import { jobEnvironment } from './job-env.js';
import { createOutputTail } from './output-tail.js';
import { failureMessage } from './run-message.js';
import type { RunHandle, RunIo, RunResult, StopReason } from './run-types.js';

/** What a shell run needs. */
export interface ShellRunSpec extends RunIo {
  command: string;
  /** The ORRERY_* variables of the job contract (added to `baseEnv`; they always win). */
  env: Record<string, string>;
  /**
   * The environment the job starts from: the executor's, without Orrery's secrets (job-env.ts).
   * Orrery's built-in secrets are dropped from it again here. Default: this process's environment
   * without them.
   */
  baseEnv?: Readonly<Record<string, string | undefined>>;
  /** Path of the result file (also given as ORRERY_RESULT_FILE). */
  resultFile: string;
  cwd?: string;
  /** Called with the process group id as soon as it exists (orphan records). */
  onSpawn?: (pgid: number) => void;
  /**
   * Start the command at this time (ms since the epoch) rather than now: the process is started at
   * once, held at a gate, and let through at `startAt` (see {@link SHELL_GATE}). The timeout counts
   * from then, and the result's `startedAt` is then.
   */
  startAt?: number;
  /** Told when the command starts (at once, or when the gate opens). */
  onStart?: (at: number) => void;
  /** Told when a log file cannot be written (its output is discarded from then on). */
  onLogError?: (error: Error) => void;
}

/**
 * What execa is told, and why — it starts the process and nothing more:
 * - `detached`: the shell leads a new process group, so a stop or timeout signals every process of
 *   the run (`kill(-pgid)`), and nothing else.
 * - `buffer: false`: execa keeps no copy of the output (up to 100 MB a stream by default); the
 *   pipes are read here, into capped log files with back-pressure and a 4 KB tail.
 * - `encoding: 'buffer'`, `stripFinalNewline: false`, `lines: false`: the bytes as the job wrote them.
 * - `reject: false`: a failed run is an outcome, not an exception (the promise is only read for a
 *   process that could not be started at all).
 * - `timeout: 0`, `forceKillAfterDelay: false`: no execa-level kill; the timeout and the grace
 *   before SIGKILL are this module's, and signal the whole group, not just the shell.
 * - `cleanup: false`: no execa exit hook killing the shell alone when the executor exits; the
 *   group is recorded (`onSpawn`) and the executor's fence guard and orphan records deal with it.
 * - `extendEnv: false`, `preferLocal: false`: the environment is exactly `jobEnvironment`'s — no
 *   Orrery secret added back from `process.env`, no `node_modules/.bin` put on the PATH.
 * - `stdio` from `stdioWithoutSockets`: no ZooKeeper socket of the executor is inherited.
 */
export const SHELL_EXECA_OPTIONS = Object.freeze({
  detached: true,
  buffer: false,
  encoding: 'buffer',
  stripFinalNewline: false,
  lines: false,
  reject: false,
  timeout: 0,
  forceKillAfterDelay: false,
  cleanup: false,
  extendEnv: false,
  preferLocal: false,
  shell: false,
  verbose: 'none',
} as const satisfies ExecaOptions);

/** How long (ms) a finished run waits for its pipes to end before it lets go of them. */
export const PIPE_LINGER_MS = 2000;

/**
 * The gate of a run started ahead of its time (`startAt`): `/bin/sh -c SHELL_GATE /bin/sh COMMAND`
 * waits for one line on descriptor 3 (a pipe from the executor), closes it, and replaces itself
 * with `/bin/sh -c COMMAND` — the same process, group, environment and argv[0] as a run started
 * directly, so the job cannot tell. Starting a process costs the executor milliseconds (more the
 * bigger it is), and a burst of fires starts its runs one after another: started during the claim
 * lead instead, a burst's commands all begin at the fire time. If the executor goes before the
 * gate opens, the pipe closes, `read` fails and the command never runs (exit 125).
 */
export const SHELL_GATE = 'read -r _ <&3 || exit 125; exec 3<&-; exec /bin/sh -c "$1"';
/** Exit status of a gate whose pipe closed before it opened (the command never ran). */
export const GATE_CLOSED_EXIT = 125;

const killGroup = (pgid: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(-pgid, signal);
  } catch {
    // the group is gone
  }
};

/** Starts a shell run. */
export function runShell(spec: ShellRunSpec): RunHandle {
  let startedAt = Date.now();
  const gated = spec.startAt !== undefined && spec.startAt > startedAt;
  const child = execa('/bin/sh', gated ? ['-c', SHELL_GATE, '/bin/sh', spec.command] : ['-c', spec.command], {
    ...SHELL_EXECA_OPTIONS,
    ...(spec.cwd !== undefined ? { cwd: spec.cwd } : {}),
    env: jobEnvironment(spec.baseEnv ?? process.env, [], { ...spec.env, ORRERY_RESULT_FILE: spec.resultFile }),
    // never the executor's ZooKeeper socket
    stdio: stdioWithoutSockets(gated ? ['ignore', 'pipe', 'pipe', 'pipe'] : ['ignore', 'pipe', 'pipe']) as ExecaOptions['stdio'],
  });
  const pgid = child.pid ?? 0;
  if (pgid) spec.onSpawn?.(pgid);
  const gate = gated ? (child.stdio[3] as NodeJS.WritableStream & { destroy(): void; on(e: 'error', f: () => void): unknown }) : undefined;
  gate?.on('error', () => undefined); // the gate died first: its exit settles the run
  /** Whether the command was let through (always, for a run not started ahead). */
  let started = !gated;
  let withdrawn = false;
  const stdoutTail = createOutputTail();
  const stderrTail = createOutputTail();
  const logOptions = { maxBytes: spec.maxLogBytes ?? DEFAULT_MAX_LOG_BYTES, onError: spec.onLogError };
  const stdoutFile = createLazyFile(spec.stdoutPath, logOptions);
  const stderrFile = createLazyFile(spec.stderrPath, logOptions);
  let outEnded = false;
  let errEnded = false;
  child.stdout!.once('end', () => { outEnded = true; });
  child.stderr!.once('end', () => { errEnded = true; });
  // Back-pressure: while a log file's buffer is full the pipe is paused (the job blocks on its
  // write), so a job printing faster than the disk takes costs no memory here.
  const pipeTo = (pipe: NodeJS.ReadableStream, tail: typeof stdoutTail, file: typeof stdoutFile): void => {
    pipe.on('data', (c: Buffer) => {
      tail.push(c);
      if (!file.write(c)) {
        pipe.pause();
        file.onDrain(() => pipe.resume());
      }
    });
  };
  pipeTo(child.stdout!, stdoutTail, stdoutFile);
  pipeTo(child.stderr!, stderrTail, stderrFile);

  let ended: 'timed-out' | StopReason | undefined;
  let killTimer: NodeJS.Timeout | undefined;
  const terminate = (why: 'timed-out' | StopReason, graceMs = spec.killGraceMs): void => {
    if (!pgid) return;
    if (ended) {
      // Already stopping: a shorter grace (a fence) still takes effect.
      if (graceMs < spec.killGraceMs && killTimer) {
        clearTimeout(killTimer);
        killTimer = setTimeout(() => killGroup(pgid, 'SIGKILL'), graceMs);
      }
      return;
    }
    ended = why;
    killGroup(pgid, graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
    killTimer = setTimeout(() => killGroup(pgid, 'SIGKILL'), graceMs);
  };
  let timeout: NodeJS.Timeout | undefined;
  const start = (): void => {
    started = true;
    startedAt = Date.now();
    if (spec.timeoutMs > 0) timeout = setTimeout(() => terminate('timed-out'), spec.timeoutMs);
    spec.onStart?.(startedAt);
  };
  let gateTimer: NodeJS.Timeout | undefined;
  if (!gated) start();
  else if (pgid) {
    const open = (): void => {
      gateTimer = undefined;
      if (ended || withdrawn) return;
      // A timer may wake a millisecond before the wall clock reads its time: never open early.
      const wait = spec.startAt! - Date.now();
      if (wait > 0) {
        gateTimer = setTimeout(open, wait);
        return;
      }
      gate!.end('go\n');
      start();
    };
    gateTimer = setTimeout(open, spec.startAt! - Date.now());
  }

  const done = new Promise<RunResult>((resolve) => {
    let finished = false;
    const finish = (exitCode: number | null, signal: string | null, spawnError?: Error): void => {
      if (finished) return;
      finished = true;
      if (gateTimer) clearTimeout(gateTimer);
      if (timeout) clearTimeout(timeout);
      if (killTimer) clearTimeout(killTimer);
      // Whatever the run left in its group dies with it.
      if (pgid) killGroup(pgid, 'SIGKILL');
      // Background processes may hold the pipes open: give the output a moment, then let go.
      let closedOnce = false;
      const close = (): void => {
        if (closedOnce) return;
        closedOnce = true;
        child.stdout?.destroy();
        child.stderr?.destroy();
        gate?.destroy();
        // The log files are complete before the run is reported done.
        const flushed = Promise.all([stdoutFile.end(), stderrFile.end()]);
        let message = '';
        try {
          const parsed = JSON.parse(readFileSync(spec.resultFile, 'utf8')) as { message?: unknown };
          if (typeof parsed.message === 'string') message = parsed.message.slice(0, 4096);
        } catch {
          // no result file, or not JSON: no message
        }
        rmSync(spec.resultFile, { force: true });
        if (spawnError) message = `could not start /bin/sh: ${spawnError.message}`;
        const status = ended === 'timed-out' ? 'timed-out' : ended ? 'aborted' : exitCode === 0 ? 'succeeded' : 'failed';
        if (!message && status === 'timed-out') message = `timed out after ${spec.timeoutMs / 1000} s`;
        if (!message && status === 'aborted') message = `stopped (${ended})`;
        if (!message && status === 'failed') message = failureMessage(stderrTail.text(), exitCode, signal);
        const result: RunResult = {
          status, exitCode, signal, message, stdoutTail: stdoutTail.text(), stderrTail: stderrTail.text(), startedAt, endedAt: Date.now(),
          // Killed at its gate: the command never ran.
          ...(withdrawn ? { withdrawn: true } : {}),
        };
        void flushed.then(([outLost, errLost]) => {
          const truncated = logTruncation(outLost, errLost);
          resolve(truncated ? { ...result, truncated } : result);
        });
      };
      // The group was just killed, so the pipes end promptly; wait for them (all the output), but
      // not forever should something outside the group hold them.
      if (outEnded && errEnded) close();
      else {
        const t = setTimeout(close, PIPE_LINGER_MS);
        const check = (): void => { if (outEnded && errEnded) { clearTimeout(t); close(); } };
        child.stdout?.once('end', check);
        child.stderr?.once('end', check);
      }
    };
    child.once('error', (error) => finish(null, null, error));
    child.once('exit', (code, signal) => finish(code, signal));
    // A process that could not be started at all (execa catches spawn's throw) has no events.
    void child.then(
      (r) => { if (!pgid && r.failed) finish(null, null, r.cause instanceof Error ? r.cause : new Error(r.shortMessage)); },
      (error: unknown) => { if (!pgid) finish(null, null, toError(error)); },
    );
  });

  return {
    pid: pgid,
    done,
    stop: (reason, graceMs) => terminate(reason, graceMs),
    setOwner: () => undefined,
    withdraw: () => {
      if (started || ended || withdrawn || !pgid) return;
      withdrawn = true;
      killGroup(pgid, 'SIGKILL');
    },
  };
}
