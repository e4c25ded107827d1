/**
 * A pool of child processes for Node jobs. Each worker runs one job at a time; the worker writes
 * each run's logs itself (node-worker.ts).
 *
 * Dispatch: a run goes to an idle worker that is ready (has started and preloaded the job modules);
 * when every ready worker is busy a new one is started (up to `max`), and meanwhile the run may wait
 * **inside** a worker whose current run began less than `pipelineYoungMs` ago (at most
 * `pipelineDepth` waiting there), so a burst of short runs costs no round trip between one run and
 * the next; otherwise it waits in the pool. A run waiting behind a run that turns out long is taken
 * back (the worker confirms it had not started it — a run never starts twice) and handed to the next
 * free worker.
 *
 * A run may carry a `startAt` (a cron fire claimed ahead, see claim-lead.ts): it is handed to a
 * worker at once and the **worker** starts it on the dot, so a burst of fires does not wait for
 * the executor's event loop at the fire time. Until it starts, it can be withdrawn (the job was
 * disabled, the item moved): the worker confirms it never started.
 *
 * A timeout or stop of a running run aborts its `ctx.signal`, then kills the worker's whole process
 * group after the grace — a hard stop even for code that ignores the signal; runs waiting in that
 * worker go back to the pool, and a fresh worker takes its place. The executor's own event loop
 * (which carries its ZooKeeper pings) never runs job code.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { stdioWithoutSockets } from '@orrery/core';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { jobEnvironment } from './job-env.js';
import { createOutputTail, type OutputTail } from './output-tail.js';
import { createLazyFile, DEFAULT_MAX_LOG_BYTES, logTruncation, type LazyFile } from './lazy-file.js';
import type { ParentMessage, WorkerMessage } from './node-protocol.js';
import type { RunHandle, RunIo, RunResult, StopReason } from './run-types.js';
import { siblingModule } from './sibling-module.js';

const WORKER = fileURLToPath(siblingModule(import.meta.url, 'node-worker'));

/** What a Node run needs. */
export interface NodeRunSpec extends RunIo {
  runId: string;
  /** Absolute path of the job module. */
  module: string;
  /** The JSON-safe part of the JobContext. */
  context: Record<string, unknown>;
  /** Not before this time (ms since the epoch); the worker starts it then. */
  startAt?: number;
  /** The worker started the run, at `at` (its clock, ms since the epoch). */
  onStart?(at: number): void;
}

/** Options of {@link createNodePool}. */
export interface NodePoolOptions {
  /** Workers started ahead of need. Default 1. */
  min?: number;
  /** At most this many worker processes. Default 8. */
  max?: number;
  /** A busy worker takes waiting runs only while its run is younger than this, in ms. Default 20. */
  pipelineYoungMs?: number;
  /** At most this many runs wait inside one worker. Default 256. */
  pipelineDepth?: number;
  /** Each worker's process group, once started, and when it is gone (the fence guard tracks them). */
  onWorker?(pgid: number, exited: Promise<void>): void;
  /**
   * The environment of the worker processes — what a Node job sees in `process.env`: the
   * executor's, without Orrery's secrets (job-env.ts). Orrery's built-in secrets are dropped from
   * it again here. Default: this process's environment without them.
   */
  env?: Readonly<Record<string, string | undefined>>;
}

/** The pool. */
export interface NodePool {
  run(spec: NodeRunSpec): RunHandle;
  /** Keeps at least `count` workers (at most `max`) started ahead of need. */
  warm(count: number): void;
  /** Has every worker, now and later, import `module` before its first run. */
  preload(module: string): void;
  /** Workers alive now. */
  readonly size: number;
  close(): Promise<void>;
}

interface Worker {
  child: ChildProcess;
  /** Runs handed to it and not finished, in order; the first one that `started` is running. */
  runs: Active[];
  exited: Promise<void>;
  /** Being killed: takes no more runs. */
  dying: boolean;
  /** Said `ready` (and was sent the preloads): takes runs. */
  ready: boolean;
}

interface Active {
  spec: NodeRunSpec;
  startedAt: number;
  started: boolean;
  /** A cancel was sent; waiting for the worker's `cancelled` (or `started`). */
  recalling: boolean;
  /** Being withdrawn: a `cancelled` ends it as never run, not back to the pool. */
  withdrawing: boolean;
  stdout: OutputTail;
  stderr: OutputTail;
  stdoutFile: LazyFile;
  stderrFile: LazyFile;
  ended?: 'timed-out' | StopReason;
  timers: NodeJS.Timeout[];
  workerTails?: { stdout: string; stderr: string; truncated?: { stdout?: number; stderr?: number } };
  worker?: Worker;
  done: boolean;
  resolve: (r: RunResult) => void;
}

/** The last `limit` bytes of a file ('' when there is none). */
function fileTail(path: string, limit = 4096): string {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const size = fstatSync(fd).size;
    const length = Math.min(limit, size);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    return buffer.toString('utf8').replace(/^\uFFFD+/, '');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export function createNodePool(options: NodePoolOptions = {}): NodePool {
  const min = options.min ?? 1;
  const max = Math.max(1, options.max ?? 8);
  const youngMs = options.pipelineYoungMs ?? 20;
  const depth = options.pipelineDepth ?? 256;
  let floor = min;
  const bootParallel = Math.max(1, availableParallelism());
  const preloads = new Set<string>();
  const workers = new Set<Worker>();
  /** Runs waiting for a worker, oldest first. */
  const backlog: Active[] = [];
  let closed = false;
  let recallTimer: NodeJS.Timeout | undefined;

  const send = (worker: Worker, message: ParentMessage): void => {
    if (worker.child.connected) worker.child.send(message, () => undefined);
  };
  const current = (w: Worker): Active | undefined => (w.runs[0]?.started ? w.runs[0] : undefined);

  function spawnWorker(): Worker {
    const child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
      detached: true, // its own process group: a kill takes whatever the job started, too
      stdio: stdioWithoutSockets(['ignore', 'pipe', 'pipe', 'ipc']), // never the executor's ZooKeeper socket
      env: jobEnvironment(options.env ?? process.env),
    });
    const worker: Worker = { child, runs: [], dying: false, ready: false, exited: new Promise<void>((resolve) => child.once('close', () => resolve())) };
    if (child.pid) options.onWorker?.(child.pid, worker.exited);
    // Stray output (from a process the job started, say) goes to the running run, best effort.
    // (Capped like the worker's own capture; the pipe waits while the run's log file is full.)
    for (const which of ['stdout', 'stderr'] as const) {
      const pipe = child[which]!;
      pipe.on('data', (c: Buffer) => {
        const a = current(worker);
        if (!a) return;
        a[which].push(c);
        const file = which === 'stdout' ? a.stdoutFile : a.stderrFile;
        if (!file.write(c)) {
          pipe.pause();
          file.onDrain(() => pipe.resume());
        }
      });
    }
    child.on('message', (m: WorkerMessage) => {
      if (m.type === 'ready') {
        for (const module of preloads) send(worker, { type: 'preload', module });
        worker.ready = true;
        grow(floor);
        pump();
        return;
      }
      const a = worker.runs.find((r) => r.spec.runId === m.runId);
      if (!a) return;
      if (m.type === 'started') {
        a.started = true;
        a.recalling = false;
        a.withdrawing = false;
        a.startedAt = m.at;
        a.spec.onStart?.(m.at);
        // Stopped while it was being taken back, and it started anyway: stop it the hard way.
        if (a.ended) stopRunning(worker, a);
        else if (a.spec.timeoutMs > 0) a.timers.push(setTimeout(() => terminate(a, 'timed-out'), Math.max(0, m.at + a.spec.timeoutMs - Date.now())));
        return;
      }
      if (m.type === 'cancelled') {
        worker.runs = worker.runs.filter((r) => r !== a);
        a.worker = undefined;
        a.recalling = false;
        if (a.ended) finish(a, 'aborted', null, null, '');
        else if (a.withdrawing) finish(a, 'aborted', null, null, 'withdrawn before it started', true);
        else {
          backlog.unshift(a);
          pump();
        }
        return;
      }
      a.workerTails = { stdout: m.stdoutTail, stderr: m.stderrTail, ...(m.truncated ? { truncated: m.truncated } : {}) };
      finish(a, m.ok ? 'succeeded' : 'failed', m.ok ? 0 : 1, null, m.message);
    });
    // After the process exits, kill what it left in its group so that its pipes close; then, on
    // 'close' — once every IPC message it sent has been read — settle its runs. (Settling on 'exit'
    // could miss a 'started' still in the channel and hand a run that did start to another worker.)
    child.once('exit', () => kill(worker, 'SIGKILL'));
    child.once('close', (code, signal) => {
      workers.delete(worker);
      const runs = worker.runs;
      worker.runs = [];
      for (const a of runs) {
        if (a.done) continue;
        if (a.started) {
          const status = a.ended === 'timed-out' ? 'timed-out' : a.ended ? 'aborted' : 'failed';
          finish(a, status, code, signal, a.ended ? '' : `the job's process exited (${signal ?? `code ${code}`})`);
        } else if (a.ended) finish(a, 'aborted', null, null, '');
        else if (a.withdrawing) finish(a, 'aborted', null, null, 'withdrawn before it started', true);
        else {
          // Never started there: it goes to another worker.
          a.worker = undefined;
          a.recalling = false;
          backlog.push(a);
        }
      }
      if (!closed) {
        grow(floor);
        pump();
      }
    });
    child.unref();
    return worker;
  }

  function kill(worker: Worker, signal: NodeJS.Signals): void {
    try {
      process.kill(-worker.child.pid!, signal);
    } catch {
      // gone
    }
  }

  /** The signal first, then the whole process group after the grace; the worker is not reused. */
  function stopRunning(worker: Worker, a: Active, graceMs = a.spec.killGraceMs): void {
    worker.dying = true;
    send(worker, { type: 'abort', runId: a.spec.runId, reason: a.ended ?? 'stop' });
    kill(worker, graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
    a.timers.push(setTimeout(() => kill(worker, 'SIGKILL'), graceMs));
  }

  function finish(a: Active, status: RunResult['status'], exitCode: number | null, signal: string | null, message: string, withdrawn = false): void {
    if (a.done) return;
    a.done = true;
    const worker = a.worker;
    if (worker) worker.runs = worker.runs.filter((r) => r !== a);
    // A run stopped from outside ends as such, even if the job returned in time to say otherwise.
    if (a.ended) status = a.ended === 'timed-out' ? 'timed-out' : 'aborted';
    for (const t of a.timers) clearTimeout(t);
    if (!message && status === 'timed-out') message = `timed out after ${a.spec.timeoutMs / 1000} s`;
    if (!message && status === 'aborted') message = a.started ? `stopped (${a.ended})` : `stopped before it started (${a.ended})`;
    const endedAt = Date.now();
    // The log files are complete before the run is reported done; a killed worker sent no tails,
    // so they come from the files it wrote.
    void Promise.all([a.stdoutFile.end(), a.stderrFile.end()]).then(([strayOut, strayErr]) => {
      const truncated = logTruncation((a.workerTails?.truncated?.stdout ?? 0) + strayOut, (a.workerTails?.truncated?.stderr ?? 0) + strayErr);
      const stdoutTail = (a.workerTails?.stdout ?? (a.started ? fileTail(a.spec.stdoutPath) : '')) + a.stdout.text();
      const stderrTail = (a.workerTails?.stderr ?? (a.started ? fileTail(a.spec.stderrPath) : '')) + a.stderr.text();
      a.resolve({ status, exitCode, signal, message, stdoutTail: stdoutTail.slice(-4096), stderrTail: stderrTail.slice(-4096), startedAt: a.startedAt, endedAt, ...(truncated ? { truncated } : {}), ...(withdrawn ? { withdrawn } : {}) });
    });
    pump();
  }

  function terminate(a: Active, why: 'timed-out' | StopReason, graceMs?: number): void {
    if (a.done) return;
    if (a.ended) {
      // Already stopping: a shorter grace (a fence) still takes effect.
      if (graceMs !== undefined && graceMs < a.spec.killGraceMs && a.started && a.worker) a.timers.push(setTimeout(() => kill(a.worker!, 'SIGKILL'), graceMs));
      return;
    }
    a.ended = why;
    const worker = a.worker;
    if (!worker) {
      backlog.splice(backlog.indexOf(a), 1);
      finish(a, why === 'timed-out' ? 'timed-out' : 'aborted', null, null, '');
      return;
    }
    if (a.started) {
      stopRunning(worker, a, graceMs);
      return;
    }
    // Waiting inside a worker: take it back; if it starts first, 'started' stops it.
    if (!a.recalling) {
      a.recalling = true;
      send(worker, { type: 'cancel', runId: a.spec.runId });
    }
  }

  /** Runs waiting behind a run that is no longer young are taken back, to go to a free worker. */
  function recallStuck(): void {
    recallTimer = undefined;
    if (closed) return;
    let waiting = false;
    const now = Date.now();
    for (const w of workers) {
      const running = current(w);
      for (const a of w.runs) {
        if (a.started || a.recalling || a.done) continue;
        waiting = true;
        if (running && now - running.startedAt > youngMs) {
          a.recalling = true;
          send(w, { type: 'cancel', runId: a.spec.runId });
        }
      }
    }
    if (waiting) recallTimer = setTimeout(recallStuck, youngMs);
  }

  function pump(): void {
    while (backlog.length > 0 && !closed) {
      const ready = [...workers].filter((w) => w.ready && !w.dying);
      let target = ready.find((w) => w.runs.length === 0);
      // No idle worker: one more is started (it takes runs once ready); meanwhile the run may wait
      // inside a worker whose current run is young.
      if (!target) grow(workers.size + 1);
      if (!target) {
        const now = Date.now();
        for (const w of ready) {
          const running = current(w);
          const young = !running || now - running.startedAt <= youngMs;
          if (young && w.runs.length <= depth && (!target || w.runs.length < target.runs.length)) target = w;
        }
      }
      if (!target) return;
      const a = backlog.shift()!;
      a.worker = target;
      target.runs.push(a);
      const { runId, module, context, stdoutPath, stderrPath, startAt, maxLogBytes } = a.spec;
      send(target, { type: 'run', runId, module, context, stdoutPath, stderrPath, ...(startAt !== undefined ? { startAt } : {}), ...(maxLogBytes !== undefined ? { maxLogBytes } : {}) });
      if (target.runs.length > 1 && !recallTimer) recallTimer = setTimeout(recallStuck, youngMs);
    }
  }

  /**
   * Starts workers up to `count` (and `max`), no more at once than this machine has cores: a start
   * is CPU-bound, so starting more at once only makes every one of them ready later.
   */
  function grow(count: number): void {
    let starting = 0;
    for (const w of workers) if (!w.ready && !w.dying) starting += 1;
    while (!closed && workers.size < Math.min(max, count) && starting < bootParallel) {
      workers.add(spawnWorker());
      starting += 1;
    }
  }

  /** Takes back a run that has not started; `done` then says `withdrawn`. */
  function withdraw(a: Active): void {
    if (a.done || a.started || a.ended) return;
    if (!a.worker) {
      backlog.splice(backlog.indexOf(a), 1);
      finish(a, 'aborted', null, null, 'withdrawn before it started', true);
      return;
    }
    a.withdrawing = true;
    if (!a.recalling) {
      a.recalling = true;
      send(a.worker, { type: 'cancel', runId: a.spec.runId });
    }
  }

  grow(min);

  return {
    get size() {
      return workers.size;
    },
    run(spec) {
      const active: Active = {
        spec,
        startedAt: Date.now(),
        started: false,
        recalling: false,
        withdrawing: false,
        stdout: createOutputTail(),
        stderr: createOutputTail(),
        stdoutFile: createLazyFile(spec.stdoutPath, { maxBytes: spec.maxLogBytes ?? DEFAULT_MAX_LOG_BYTES }),
        stderrFile: createLazyFile(spec.stderrPath, { maxBytes: spec.maxLogBytes ?? DEFAULT_MAX_LOG_BYTES }),
        timers: [],
        done: false,
        resolve: () => undefined,
      };
      const done = new Promise<RunResult>((resolve) => { active.resolve = resolve; });
      backlog.push(active);
      pump();
      return {
        get pid() {
          return active.started ? active.worker?.child.pid ?? 0 : 0;
        },
        done,
        stop: (reason, graceMs) => terminate(active, reason, graceMs),
        setOwner: (owner) => {
          if (active.worker) send(active.worker, { type: 'ownership', runId: spec.runId, owner });
        },
        withdraw: () => withdraw(active),
      };
    },
    warm(count) {
      floor = Math.max(floor, Math.min(max, count));
      grow(floor);
    },
    preload(module) {
      if (preloads.has(module)) return;
      preloads.add(module);
      for (const w of workers) if (w.ready) send(w, { type: 'preload', module });
    },
    async close() {
      closed = true;
      if (recallTimer) clearTimeout(recallTimer);
      for (const a of backlog.splice(0)) finish(a, 'aborted', null, null, 'the executor stopped');
      const all = [...workers];
      for (const w of all) {
        for (const a of [...w.runs]) if (!a.started) finish(a, 'aborted', null, null, 'the executor stopped');
        // (No disconnect() first: Node then never emits 'close' for the child.)
        kill(w, 'SIGKILL');
      }
      await Promise.all(all.map((w) => w.exited));
    },
  };
}
