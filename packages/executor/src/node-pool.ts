/**
 * A pool of child processes for Node jobs. Each worker runs one job at a time (one IPC message each
 * way; the worker writes the run's logs itself — see node-worker.ts); a timeout or stop
 * aborts `ctx.signal`, then kills the worker's whole process group after the grace — a hard stop
 * even for code that ignores the signal — and a fresh worker takes its place. The executor's own
 * event loop (which carries its ZooKeeper pings) never runs job code.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { createLazyFile, type LazyFile } from './lazy-file.js';
import { fileURLToPath } from 'node:url';
import { createOutputTail, type OutputTail } from './output-tail.js';
import type { ParentMessage, WorkerMessage } from './node-protocol.js';
import type { RunHandle, RunIo, RunResult, StopReason } from './run-types.js';

const WORKER = fileURLToPath(new URL('./node-worker.ts', import.meta.url));

/** What a Node run needs. */
export interface NodeRunSpec extends RunIo {
  runId: string;
  /** Absolute path of the job module. */
  module: string;
  /** The JSON-safe part of the JobContext. */
  context: Record<string, unknown>;
}

/** Options of {@link createNodePool}. */
export interface NodePoolOptions {
  /** Workers started ahead of need. Default 1. */
  min?: number;
  /** At most this many runs at once; more wait in line. Default 8. */
  max?: number;
}

/** The pool. */
export interface NodePool {
  /** Starts a run (queued while every worker is busy). */
  run(spec: NodeRunSpec): RunHandle;
  /** Workers alive now. */
  readonly size: number;
  close(): Promise<void>;
}

interface Worker {
  child: ChildProcess;
  ready: Promise<void>;
  busy: boolean;
  current?: Active;
  exited: Promise<void>;
}

interface Active {
  spec: NodeRunSpec;
  startedAt: number;
  stdout: OutputTail;
  stderr: OutputTail;
  stdoutFile: LazyFile;
  stderrFile: LazyFile;
  ended?: 'timed-out' | StopReason;
  timers: NodeJS.Timeout[];
  /** The tails the worker captured (absent when it was killed: then read from the log files). */
  workerTails?: { stdout: string; stderr: string };
  resolve: (r: RunResult) => void;
  worker?: Worker;
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
  const max = options.max ?? 8;
  const workers = new Set<Worker>();
  const queue: Array<{ active: Active; start: (w: Worker) => void }> = [];
  let closed = false;

  function spawnWorker(): Worker {
    const child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
      detached: true, // its own process group: a kill takes whatever the job started, too
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      env: process.env,
    });
    const worker: Worker = {
      child,
      busy: false,
      ready: new Promise<void>((resolve) => {
        const onMessage = (m: WorkerMessage): void => {
          if (m.type === 'ready') {
            child.off('message', onMessage);
            resolve();
          }
        };
        child.on('message', onMessage);
      }),
      exited: new Promise<void>((resolve) => child.once('exit', () => resolve())),
    };
    // The worker writes the run's logs itself; what reaches the pipes is stray output (from a
    // process the job started, say): it goes to the current run's files too, best effort.
    child.stdout!.on('data', (c: Buffer) => { worker.current?.stdout.push(c); worker.current?.stdoutFile.write(c); });
    child.stderr!.on('data', (c: Buffer) => { worker.current?.stderr.push(c); worker.current?.stderrFile.write(c); });
    child.on('message', (m: WorkerMessage) => {
      const a = worker.current;
      if (m.type !== 'done' || !a || a.spec.runId !== m.runId) return;
      a.workerTails = { stdout: m.stdoutTail, stderr: m.stderrTail };
      finish(worker, m.ok ? 'succeeded' : 'failed', m.ok ? 0 : 1, null, m.message);
    });
    child.once('exit', (code, signal) => {
      workers.delete(worker);
      if (worker.current) {
        const a = worker.current;
        const status = a.ended === 'timed-out' ? 'timed-out' : a.ended ? 'aborted' : 'failed';
        finish(worker, status, code, signal, a.ended ? '' : `the job's process exited (${signal ?? `code ${code}`})`);
      }
      if (!closed) {
        while (workers.size < min) workers.add(spawnWorker());
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

  function finish(worker: Worker, status: RunResult['status'], exitCode: number | null, signal: string | null, message: string): void {
    const a = worker.current;
    if (!a) return;
    worker.current = undefined;
    // A run stopped from outside ends as such, even if the job returned in time to say otherwise.
    if (a.ended) status = a.ended === 'timed-out' ? 'timed-out' : 'aborted';
    for (const t of a.timers) clearTimeout(t);
    if (!message && status === 'timed-out') message = `timed out after ${a.spec.timeoutMs / 1000} s`;
    if (!message && status === 'aborted') message = `stopped (${a.ended})`;
    const endedAt = Date.now();
    // The log files are complete before the run is reported done; a killed worker sent no tails,
    // so they come from the files it wrote.
    void Promise.all([a.stdoutFile.end(), a.stderrFile.end()]).then(() => {
      const stdoutTail = (a.workerTails?.stdout ?? fileTail(a.spec.stdoutPath)) + a.stdout.text();
      const stderrTail = (a.workerTails?.stderr ?? fileTail(a.spec.stderrPath)) + a.stderr.text();
      a.resolve({ status, exitCode, signal, message, stdoutTail: stdoutTail.slice(-4096), stderrTail: stderrTail.slice(-4096), startedAt: a.startedAt, endedAt });
    });
    // A worker whose run was cut short may be in any state: it does not run another job.
    if (a.ended) kill(worker, 'SIGKILL');
    else {
      worker.busy = false;
      pump();
    }
  }

  function pump(): void {
    while (queue.length > 0) {
      let worker = [...workers].find((w) => !w.busy);
      if (!worker && workers.size < max) {
        worker = spawnWorker();
        workers.add(worker);
      }
      if (!worker) return;
      worker.busy = true;
      queue.shift()!.start(worker);
    }
  }

  for (let i = 0; i < min; i += 1) workers.add(spawnWorker());

  return {
    get size() {
      return workers.size;
    },
    run(spec) {
      let handle!: RunHandle;
      const active: Active = {
        spec,
        startedAt: Date.now(),
        stdout: createOutputTail(),
        stderr: createOutputTail(),
        stdoutFile: createLazyFile(spec.stdoutPath),
        stderrFile: createLazyFile(spec.stderrPath),
        timers: [],
        resolve: () => undefined,
      };
      const done = new Promise<RunResult>((resolve) => { active.resolve = resolve; });
      const terminate = (why: 'timed-out' | StopReason): void => {
        if (active.ended) return;
        active.ended = why;
        const worker = active.worker;
        if (!worker) {
          // Still queued: it never started.
          const i = queue.findIndex((q) => q.active === active);
          if (i >= 0) queue.splice(i, 1);
          void active.stdoutFile.end();
          void active.stderrFile.end();
          active.resolve({ status: why === 'timed-out' ? 'timed-out' : 'aborted', exitCode: null, signal: null, message: `stopped before it started (${why})`, stdoutTail: '', stderrTail: '', startedAt: active.startedAt, endedAt: Date.now() });
          return;
        }
        const message: ParentMessage = { type: 'abort', reason: why };
        worker.child.send(message, () => undefined);
        kill(worker, 'SIGTERM');
        active.timers.push(setTimeout(() => kill(worker, 'SIGKILL'), spec.killGraceMs));
      };
      queue.push({
        active,
        start: (worker) => {
          active.worker = worker;
          worker.current = active;
          active.startedAt = Date.now();
          if (spec.timeoutMs > 0) active.timers.push(setTimeout(() => terminate('timed-out'), spec.timeoutMs));
          void worker.ready.then(() => {
            if (worker.current !== active) return;
            const message: ParentMessage = { type: 'run', runId: spec.runId, module: spec.module, context: spec.context, stdoutPath: spec.stdoutPath, stderrPath: spec.stderrPath };
            worker.child.send(message, () => undefined);
          });
        },
      });
      pump();
      handle = {
        get pid() {
          return active.worker?.child.pid ?? 0;
        },
        done,
        stop: (reason) => terminate(reason),
        setOwner: (owner) => {
          const message: ParentMessage = { type: 'ownership', owner };
          active.worker?.child.send(message, () => undefined);
        },
      };
      return handle;
    },
    async close() {
      closed = true;
      for (const q of queue.splice(0)) q.active.resolve({ status: 'aborted', exitCode: null, signal: null, message: 'the executor stopped', stdoutTail: '', stderrTail: '', startedAt: q.active.startedAt, endedAt: Date.now() });
      const all = [...workers];
      for (const w of all) {
        w.child.disconnect?.();
        kill(w, 'SIGKILL');
      }
      await Promise.all(all.map((w) => w.exited));
    },
  };
}
