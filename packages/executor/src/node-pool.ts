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
 * Starts come first: while a run whose `startAt` has come is still to start in its worker, the end
 * of any run is reported a moment later — once no such run is left, and at most
 * `startsFirstMaxMs` (50 ms) later. Reporting an end (the run's record, the shard's completion in
 * ZooKeeper) is most of what the executor does for a run: done as a burst's first runs end, it took
 * the two cores of the bench machine from the workers still starting the rest of the burst.
 *
 * A timeout or stop of a running run aborts its `ctx.signal`, then kills the worker's whole process
 * group after the grace — a hard stop even for code that ignores the signal; runs waiting in that
 * worker go back to the pool, and a fresh worker takes its place. The executor's own event loop
 * (which carries its ZooKeeper pings) never runs job code.
 *
 * Each run's life is one {@link NodeRunState} changed only by {@link stepNodeRun}
 * (node-run-state.ts); this module carries out the effects it returns.
 *
 * Ownership: {@link RunHandle.setOwner} reaches the run's `ctx.isOwner()` whether the run is
 * running or still waiting in a worker (the worker keeps it with the waiting run).
 *
 * Hot reload ({@link NodePool.reload}): a worker keeps every module it imported for its lifetime
 * (Node's ESM cache cannot drop one, and importing an edited module again under a new URL would grow
 * the cache with every edit). So a reload retires every worker that exists at that moment: it takes
 * no new run, the runs waiting in it are taken back (as for a run stuck behind a long one), it
 * exits once its running run ends (idle ones at once), and fresh workers — which import the
 * modules as they are now — take the next runs. A run already running finishes on the code it
 * started with. Retiring all workers, not only those that imported the edited file, also covers an
 * edited helper module that jobs import.
 *
 * The workers are started with execa; why each option:
 * - `detached: true` — its own process group: a stop or timeout kills the group, whatever the job started;
 * - `stdio` through `stdioWithoutSockets` — never the executor's ZooKeeper socket in a worker;
 * - `ipc: true`, `serialization: 'json'` — the channel for the typed messages of node-protocol.ts,
 *   plain data only, each one validated on arrival (a malformed one is logged and dropped). They are
 *   sent and received with Node's own `send` / `'message'` on that channel, not execa's
 *   `sendMessage` / `getEachMessage`: execa hands over at most one incoming message per event-loop
 *   turn in each process (it debounces them), and a burst of short runs is three messages per run.
 *   Measured on 2 workers, 2,000 trivial runs at once, on a loaded shared machine (noisy): about
 *   1,500–2,200 runs/s with execa's methods, 3,500–7,000 with Node's, 3,300–9,000 with the former
 *   hand-written spawn;
 * - `env` = `jobEnvironment(...)` with `extendEnv: false` — execa would otherwise merge this
 *   process's whole environment back in, secrets included;
 * - `buffer: false` — execa would otherwise keep all of a worker's stdout, stderr and IPC messages
 *   in memory for its result (a worker lives for many runs); stray output is streamed to the run;
 * - `reject: false` — a worker killed on purpose is not an error (and no unhandled rejection);
 * - `cleanup: false`, `forceKillAfterDelay: false`, no `timeout`/`cancelSignal` — execa kills
 *   nothing by itself: the pool kills whole process groups, on its own timers and grace; a worker
 *   whose executor is gone exits when its IPC channel closes, and the fence guard kills the rest;
 * - `verbose: 'none'` — not even `NODE_DEBUG=execa` prints the messages (a run's context) to stderr;
 * - `preferLocal` left false — no `node_modules/.bin` added to the jobs' PATH.
 *
 * A worker runs with the export condition {@link JOB_WORKER_CONDITION}: in it, `@orrery/executor`
 * resolves to its job entry (`@orrery/executor/job`: `defineJob` and the job types) rather than the
 * whole executor (ZooKeeper client, HTTP server, metrics), which a job module never needs at run
 * time. A worker that loads a module importing `@orrery/executor` is then ready in about a third of
 * the time (0.2 s rather than 0.7 s of CPU here), which is what an executor starting with many Node
 * jobs waits for.
 */
import { availableParallelism } from 'node:os';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { execa, type Options, type ResultPromise } from 'execa';
import { silentLogger, stdioWithoutSockets, toError, type Logger } from '@orrery/core';
import { jobEnvironment } from './job-env.js';
import { createOutputTail, type OutputTail } from './output-tail.js';
import { createLazyFile, DEFAULT_MAX_LOG_BYTES, logTruncation, type LazyFile } from './lazy-file.js';
import { MAX_PARENT_BATCH, parseParentMessage, parseWorkerMessages, type ParentMessage, type WorkerMessage } from './node-protocol.js';
import { stepNodeRun, type NodeRunEffect, type NodeRunEvent, type NodeRunState } from './node-run-state.js';
import type { RunHandle, RunIo, RunResult } from './run-types.js';
import { siblingModule } from './sibling-module.js';

const WORKER = fileURLToPath(siblingModule(import.meta.url, 'node-worker'));

/**
 * The export condition every worker runs with: `@orrery/executor`'s package exports map it to the
 * job entry (see the header).
 */
export const JOB_WORKER_CONDITION = 'orrery-job-worker';

/** How long (ms) after a worker's exit its channel and pipes may take to end before it is settled without them. */
export const WORKER_DRAIN_MS = 2000;

/** Workers started ahead of need, by default. */
export const DEFAULT_MIN_WORKERS = 1;
/** Worker processes at most, by default. */
export const DEFAULT_MAX_WORKERS = 8;
/** A busy worker takes waiting runs only while its run is younger than this (ms), by default. */
export const DEFAULT_PIPELINE_YOUNG_MS = 20;
/** At most this many runs wait inside one worker, by default. */
export const DEFAULT_PIPELINE_DEPTH = 256;
/** A run's end waits at most this long (ms) for the starts that are due, by default (see the header). */
export const DEFAULT_STARTS_FIRST_MAX_MS = 50;
/** Bytes of a log file read back for a run's tail when its worker sent none (it was killed). */
export const RESULT_TAIL_BYTES = 4096;

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
  /** Workers started ahead of need. Default {@link DEFAULT_MIN_WORKERS}. */
  min?: number;
  /** At most this many worker processes. Default {@link DEFAULT_MAX_WORKERS}. */
  max?: number;
  /** A busy worker takes waiting runs only while its run is younger than this, in ms. Default {@link DEFAULT_PIPELINE_YOUNG_MS}. */
  pipelineYoungMs?: number;
  /** At most this many runs wait inside one worker. Default {@link DEFAULT_PIPELINE_DEPTH}. */
  pipelineDepth?: number;
  /** A run's end waits at most this long for the starts that are due, in ms. Default {@link DEFAULT_STARTS_FIRST_MAX_MS}. */
  startsFirstMaxMs?: number;
  /** Each worker's process group, once started, and when it is gone (the fence guard tracks them). */
  onWorker?(pgid: number, exited: Promise<void>): void;
  /**
   * The environment of the worker processes — what a Node job sees in `process.env`: the
   * executor's, without Orrery's secrets (job-env.ts). Orrery's built-in secrets are dropped from
   * it again here. Default: this process's environment without them.
   */
  env?: Readonly<Record<string, string | undefined>>;
  /** Where malformed worker messages and workers that cannot start are logged. Default: nowhere. */
  logger?: Logger;
}

/** The pool. */
export interface NodePool {
  run(spec: NodeRunSpec): RunHandle;
  /** Keeps at least `count` workers (at most `max`) started ahead of need. */
  warm(count: number): void;
  /** Has every worker, now and later, import `module` before its first run. */
  preload(module: string): void;
  /**
   * The job modules changed on disk: every worker alive now is retired (no new run; the runs
   * waiting in it go to fresh workers; it exits once its running run, if any, ends), so the next run
   * of any module imports its code as it is now. `modules`, when given, are the job modules that
   * exist now: preloads of others are forgotten.
   */
  reload(modules?: Iterable<string>): void;
  /** Workers alive now. */
  readonly size: number;
  close(): Promise<void>;
}

/** The execa options every worker is started with, but its `stdio` and `env` (see the header for why). */
const WORKER_OPTIONS = {
  detached: true,
  ipc: true,
  serialization: 'json',
  extendEnv: false,
  buffer: false,
  reject: false,
  cleanup: false,
  forceKillAfterDelay: false,
  verbose: 'none',
} as const satisfies Options;

interface Worker {
  child: ResultPromise<typeof WORKER_OPTIONS>;
  /** Runs handed to it and not finished, in order; the first one, when running, is its current run. */
  runs: Run[];
  exited: Promise<void>;
  /** Being killed: takes no more runs. */
  dying: boolean;
  /** Said `ready` (and was sent the preloads): takes runs. */
  ready: boolean;
  /** Started before the last reload: takes no more runs, exits once idle. */
  retired: boolean;
  /**
   * Its runs handed over in this turn of the event loop, not sent yet: they go out together, at most
   * {@link MAX_PARENT_BATCH} to a message, once the turn's other work is done ({@link sendRun}).
   */
  outbox: ParentMessage[];
}

interface Run {
  spec: NodeRunSpec;
  state: NodeRunState<Worker>;
  /** When it started (its worker's clock); until then when it was submitted. */
  startedAt: number;
  /** What `ctx.isOwner()` says. */
  owner: boolean;
  stdout: OutputTail;
  stderr: OutputTail;
  stdoutFile: LazyFile;
  stderrFile: LazyFile;
  timers: NodeJS.Timeout[];
  workerTails?: { stdout: string; stderr: string; truncated?: { stdout?: number; stderr?: number } };
  resolve: (r: RunResult) => void;
}

const workerOf = (state: NodeRunState<Worker>): Worker | undefined => ('worker' in state ? state.worker : undefined);
const hasStarted = (run: Run): boolean => run.state.kind === 'running' || run.state.kind === 'stopping';

/** The last `limit` bytes of a file ('' when there is none). */
function fileTail(path: string, limit = RESULT_TAIL_BYTES): string {
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

/** Starts the pool (`min` workers at once). */
export function createNodePool(options: NodePoolOptions = {}): NodePool {
  const min = options.min ?? DEFAULT_MIN_WORKERS;
  const max = Math.max(1, options.max ?? DEFAULT_MAX_WORKERS);
  const youngMs = options.pipelineYoungMs ?? DEFAULT_PIPELINE_YOUNG_MS;
  const depth = options.pipelineDepth ?? DEFAULT_PIPELINE_DEPTH;
  const startsFirstMaxMs = options.startsFirstMaxMs ?? DEFAULT_STARTS_FIRST_MAX_MS;
  const logger = options.logger ?? silentLogger();
  let floor = min;
  const bootParallel = Math.max(1, availableParallelism());
  const preloads = new Set<string>();
  const workers = new Set<Worker>();
  /** Runs waiting for a worker, oldest first. */
  const backlog: Run[] = [];
  let closed = false;
  let recallTimer: NodeJS.Timeout | undefined;

  /** Sends what `worker`'s outbox holds, in order. */
  const flush = (worker: Worker): void => {
    const out = worker.outbox;
    if (out.length === 0) return;
    worker.outbox = [];
    if (!worker.child.connected) return;
    // (`context` is JSON-safe by contract; the worker validates what arrives. The callback takes
    // the error of a worker gone meanwhile: its exit settles its runs.)
    for (let i = 0; i < out.length; i += MAX_PARENT_BATCH) {
      const part = out.slice(i, i + MAX_PARENT_BATCH);
      worker.child.send(part.length === 1 ? part[0]! : part, () => undefined);
    }
  };
  const outboxes = new Set<Worker>();
  let flushing: NodeJS.Immediate | undefined;
  const flushAll = (): void => {
    flushing = undefined;
    for (const w of outboxes) flush(w);
    outboxes.clear();
  };
  /**
   * Hands a run to `worker` at the end of this turn of the event loop, with the other runs handed to
   * it meanwhile: a burst of fires (each claim's answer arrives in the same turn) costs the executor
   * one write a worker, not one a run, and each run is in its worker's queue a turn later.
   */
  const sendRun = (worker: Worker, message: ParentMessage): void => {
    worker.outbox.push(message);
    outboxes.add(worker);
    flushing ??= setImmediate(flushAll);
  };
  /** Sends at once, after any runs still in the worker's outbox (the worker sees them in order). */
  const send = (worker: Worker, message: ParentMessage): void => {
    flush(worker);
    if (!worker.child.connected) return;
    worker.child.send(message, () => undefined);
  };
  const current = (w: Worker): Run | undefined => (w.runs[0] && hasStarted(w.runs[0]) ? w.runs[0] : undefined);
  const takesRuns = (w: Worker): boolean => w.ready && !w.dying && !w.retired;

  // Starts come first (see the header): the runs in workers with a `startAt`, not started yet —
  // counted by `startAt`, a handful of distinct times — and the ends held meanwhile.
  const gated = new Set<Run>();
  const gatedAt = new Map<number, number>();
  const heldEnds: Array<() => void> = [];
  let heldTimer: NodeJS.Timeout | undefined;

  const startsDue = (): boolean => {
    const now = Date.now();
    for (const at of gatedAt.keys()) if (at <= now) return true;
    return false;
  };

  function gate(run: Run): void {
    const at = run.spec.startAt;
    if (at === undefined || gated.has(run)) return;
    gated.add(run);
    gatedAt.set(at, (gatedAt.get(at) ?? 0) + 1);
  }

  /** `run` started, left its worker or ended: its start is no longer awaited. */
  function ungate(run: Run): void {
    if (!gated.delete(run)) return;
    const at = run.spec.startAt!;
    const left = gatedAt.get(at)! - 1;
    if (left > 0) gatedAt.set(at, left);
    else gatedAt.delete(at);
    if (heldEnds.length > 0 && !startsDue()) releaseEnds();
  }

  function releaseEnds(): void {
    if (heldTimer) clearTimeout(heldTimer);
    heldTimer = undefined;
    for (const end of heldEnds.splice(0)) end();
  }

  function reportEnd(run: Run, f: Extract<NodeRunEffect, { do: 'finish' }>): void {
    if (closed || !startsDue()) {
      report(run, f);
      return;
    }
    heldEnds.push(() => report(run, f));
    heldTimer ??= setTimeout(releaseEnds, startsFirstMaxMs);
  }

  /** Feeds an event to a run and carries out what the transition says. */
  function apply(run: Run, event: NodeRunEvent<Worker>): void {
    const before = workerOf(run.state);
    const step = stepNodeRun(run.state, event);
    run.state = step.state;
    const worker = workerOf(step.state) ?? before;
    for (const effect of step.effects) {
      switch (effect.do) {
        case 'send-run': {
          const w = worker!;
          w.runs.push(run);
          gate(run);
          sendRun(w, runMessage(run));
          if (w.runs.length > 1 && !recallTimer) recallTimer = setTimeout(recallStuck, youngMs);
          break;
        }
        case 'send-cancel':
          send(worker!, { type: 'cancel', runId: run.spec.runId });
          break;
        case 'requeue':
          ungate(run);
          if (before) leaveWorker(before, run);
          if (effect.front) backlog.unshift(run);
          else backlog.push(run);
          break;
        case 'leave-backlog': {
          const i = backlog.indexOf(run);
          if (i >= 0) backlog.splice(i, 1);
          break;
        }
        case 'announce-start':
          ungate(run);
          run.startedAt = effect.at;
          run.spec.onStart?.(effect.at);
          if (run.state.kind === 'running' && run.spec.timeoutMs > 0) {
            run.timers.push(setTimeout(() => apply(run, { type: 'stop', reason: 'timed-out' }), Math.max(0, effect.at + run.spec.timeoutMs - Date.now())));
          }
          break;
        case 'kill': {
          const w = worker!;
          const graceMs = effect.graceMs ?? run.spec.killGraceMs;
          w.dying = true;
          send(w, { type: 'abort', runId: run.spec.runId, reason: run.state.kind === 'stopping' ? run.state.reason : 'stop' });
          kill(w, graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
          run.timers.push(setTimeout(() => kill(w, 'SIGKILL'), graceMs));
          // A job that catches SIGTERM keeps its worker alive through the grace: the runs waiting
          // there are taken back now rather than started in a worker about to be killed.
          for (const other of [...w.runs]) if (other !== run && other.state.kind === 'handed') apply(other, { type: 'recall' });
          break;
        }
        case 'shorten-grace':
          if (effect.graceMs < run.spec.killGraceMs && worker) run.timers.push(setTimeout(() => kill(worker, 'SIGKILL'), effect.graceMs));
          break;
        case 'finish':
          ungate(run);
          if (before) leaveWorker(before, run);
          reportEnd(run, effect);
          break;
      }
    }
    pump();
  }

  function runMessage(run: Run): Extract<ParentMessage, { type: 'run' }> {
    const { runId, module, context, stdoutPath, stderrPath, startAt, maxLogBytes } = run.spec;
    return { type: 'run', runId, module, context, stdoutPath, stderrPath, ...(startAt !== undefined ? { startAt } : {}), ...(maxLogBytes !== undefined ? { maxLogBytes } : {}), ...(run.owner ? {} : { owner: false }) };
  }

  /** A run left `worker`: a retired worker with nothing left in it goes. */
  function leaveWorker(worker: Worker, run: Run): void {
    worker.runs = worker.runs.filter((r) => r !== run);
    if (worker.retired && worker.runs.length === 0) retire(worker);
  }

  function retire(worker: Worker): void {
    if (worker.dying) return;
    worker.dying = true;
    // Idle: nothing of a run is lost; whatever a job left running in its group goes with it.
    kill(worker, 'SIGKILL');
  }

  function report(run: Run, f: Extract<NodeRunEffect, { do: 'finish' }>): void {
    for (const t of run.timers) clearTimeout(t);
    let message = f.message;
    if (!message && f.status === 'timed-out') message = `timed out after ${run.spec.timeoutMs / 1000} s`;
    if (!message && f.status === 'aborted') {
      const reason = f.reason ?? 'stop';
      message = f.started ? `stopped (${reason})` : `stopped before it started (${reason})`;
    }
    const endedAt = Date.now();
    // The log files are complete before the run is reported done; a killed worker sent no tails,
    // so they come from the files it wrote.
    void Promise.all([run.stdoutFile.end(), run.stderrFile.end()]).then(([strayOut, strayErr]) => {
      const tails = run.workerTails;
      const truncated = logTruncation((tails?.truncated?.stdout ?? 0) + strayOut, (tails?.truncated?.stderr ?? 0) + strayErr);
      const stdoutTail = (tails?.stdout ?? (f.started ? fileTail(run.spec.stdoutPath) : '')) + run.stdout.text();
      const stderrTail = (tails?.stderr ?? (f.started ? fileTail(run.spec.stderrPath) : '')) + run.stderr.text();
      run.resolve({
        status: f.status, exitCode: f.exitCode, signal: f.signal, message,
        stdoutTail: stdoutTail.slice(-RESULT_TAIL_BYTES), stderrTail: stderrTail.slice(-RESULT_TAIL_BYTES),
        startedAt: run.startedAt, endedAt, ...(truncated ? { truncated } : {}), ...(f.withdrawn ? { withdrawn: true } : {}),
      });
    });
  }

  /** One message or a batch of them (node-protocol.ts), each on its own: one that fails does not stop the next. */
  function onMessages(worker: Worker, raw: unknown): void {
    for (const parsed of parseWorkerMessages(raw)) {
      if (!parsed.ok) {
        logger.warn({ pid: worker.child.pid, problem: parsed.problem }, 'ignored a malformed message from a node job worker');
        continue;
      }
      try {
        onMessage(worker, parsed.message);
      } catch (error) {
        logger.error({ err: toError(error), pid: worker.child.pid }, 'could not handle a message from a node job worker');
      }
    }
  }

  function onMessage(worker: Worker, m: WorkerMessage): void {
    if (m.type === 'ready') {
      if (worker.ready) return;
      for (const module of preloads) send(worker, { type: 'preload', module });
      worker.ready = true;
      grow(floor);
      pump();
      return;
    }
    const run = worker.runs.find((r) => r.spec.runId === m.runId);
    if (!run) return;
    if (m.type === 'started') apply(run, { type: 'started', at: m.at });
    else if (m.type === 'cancelled') apply(run, { type: 'cancelled' });
    else {
      if (!hasStarted(run)) return; // a worker cannot end what it never started
      run.workerTails = { stdout: m.stdoutTail, stderr: m.stderrTail, ...(m.truncated ? { truncated: m.truncated } : {}) };
      apply(run, { type: 'finished', ok: m.ok, message: m.message });
    }
  }

  function spawnWorker(): Worker {
    const child = execa(process.execPath, [`--conditions=${JOB_WORKER_CONDITION}`, '--import', 'tsx', WORKER], {
      ...WORKER_OPTIONS,
      stdio: stdioWithoutSockets(['ignore', 'pipe', 'pipe', 'ipc']) as Options['stdio'],
      env: jobEnvironment(options.env ?? process.env),
    }) as ResultPromise<typeof WORKER_OPTIONS>;
    const worker: Worker = {
      child, runs: [], dying: false, ready: false, retired: false, outbox: [],
      exited: workerGone(child),
    };
    if (child.pid) options.onWorker?.(child.pid, worker.exited);
    // Stray output (from a process the job started, say) goes to the running run, best effort.
    // (Capped like the worker's own capture; the pipe waits while the run's log file is full.)
    for (const which of ['stdout', 'stderr'] as const) {
      const pipe = child[which];
      if (!pipe) continue;
      pipe.on('error', () => undefined);
      pipe.on('data', (c: Buffer | string) => {
        const run = current(worker);
        if (!run) return;
        const chunk = typeof c === 'string' ? Buffer.from(c) : c;
        run[which].push(chunk);
        const file = which === 'stdout' ? run.stdoutFile : run.stderrFile;
        if (!file.write(chunk)) {
          pipe.pause();
          file.onDrain(() => pipe.resume());
        }
      });
    }
    child.on('message', (raw: unknown) => onMessages(worker, raw));
    // After the process exits, kill what it left in its group so that its pipes close; then — once
    // every IPC message it sent has been read — settle its runs. (Settling on 'exit' could miss a
    // 'started' still in the channel and hand a run that did start to another worker.)
    child.once('exit', () => kill(worker, 'SIGKILL'));
    // A process that could not be started at all (execa catches spawn's throw): said once.
    void child.then((result) => {
      if (result.failed && !result.isTerminated && result.exitCode === undefined) logger.error({ err: result.message }, 'could not start a node job worker');
    }, () => undefined);
    void worker.exited.then(() => {
      workers.delete(worker);
      const runs = worker.runs;
      const exitCode = child.exitCode;
      const signal = child.signalCode;
      for (const run of [...runs]) apply(run, { type: 'worker-gone', exitCode, signal });
      worker.runs = [];
      if (!closed) {
        grow(floor);
        pump();
      }
    });
    child.unref();
    return worker;
  }

  /**
   * Resolves once a worker process is gone: after its `exit`, once its IPC channel has ended (Node
   * emits every `message` the worker sent before that, so a `started` still in the channel is never
   * missed) and its pipes have ended (all its stray output read) — but waiting for those at most
   * {@link WORKER_DRAIN_MS}. Not waiting for ever matters: the `zookeeper` package's poll handle can
   * drop the event-loop registration of a descriptor number the ZooKeeper C client closed and Node
   * reused (after a reconnect), and a pipe or channel that lost it never reports its end. (Execa's
   * result, which waits for them all, then never settles: a pool close hung on it.) A worker that was
   * never started resolves at once.
   */
  function workerGone(child: ResultPromise<typeof WORKER_OPTIONS>): Promise<void> {
    return new Promise<void>((resolve) => {
      if (child.pid === undefined) {
        resolve();
        return;
      }
      child.once('exit', () => {
        const ends: Array<Promise<unknown>> = [];
        if (child.connected) ends.push(new Promise((r) => child.once('disconnect', r)));
        for (const pipe of [child.stdout, child.stderr]) {
          if (pipe && !pipe.readableEnded && !pipe.destroyed) ends.push(new Promise((r) => { pipe.once('end', r); pipe.once('close', r); }));
        }
        const timer = setTimeout(() => {
          logger.warn({ pid: child.pid }, 'a node job worker exited but its pipes or channel did not end: going on without them');
          child.stdout?.destroy();
          child.stderr?.destroy();
          if (child.connected) child.disconnect();
          resolve();
        }, WORKER_DRAIN_MS);
        void Promise.all(ends).then(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    });
  }

  function kill(worker: Worker, signal: NodeJS.Signals): void {
    if (!worker.child.pid) return;
    try {
      process.kill(-worker.child.pid, signal);
    } catch {
      // gone
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
      for (const run of [...w.runs]) {
        if (run.state.kind !== 'handed' || run.state.recall) continue;
        waiting = true;
        if (running && now - running.startedAt > youngMs) apply(run, { type: 'recall' });
      }
    }
    if (waiting) recallTimer = setTimeout(recallStuck, youngMs);
  }

  let pumping = false;
  function pump(): void {
    if (pumping) return; // apply() pumps again; the outer loop sees its changes
    pumping = true;
    try {
      while (backlog.length > 0 && !closed) {
        const ready = [...workers].filter(takesRuns);
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
        const run = backlog.shift()!;
        apply(run, { type: 'hand', worker: target });
      }
    } finally {
      pumping = false;
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

  grow(min);

  return {
    get size() {
      return workers.size;
    },
    run(spec) {
      const run: Run = {
        spec,
        state: { kind: 'waiting' },
        startedAt: Date.now(),
        owner: true,
        stdout: createOutputTail(),
        stderr: createOutputTail(),
        stdoutFile: createLazyFile(spec.stdoutPath, { maxBytes: spec.maxLogBytes ?? DEFAULT_MAX_LOG_BYTES }),
        stderrFile: createLazyFile(spec.stderrPath, { maxBytes: spec.maxLogBytes ?? DEFAULT_MAX_LOG_BYTES }),
        timers: [],
        resolve: () => undefined,
      };
      const done = new Promise<RunResult>((resolve) => { run.resolve = resolve; });
      // A run the worker would refuse (a path or id past the protocol's bounds) would wait forever.
      const checked = parseParentMessage(runMessage(run));
      if (!checked.ok) {
        run.state = { kind: 'done' };
        report(run, { do: 'finish', status: 'failed', exitCode: null, signal: null, message: `cannot be handed to a worker (${checked.problem})`, started: false });
      } else {
        backlog.push(run);
        pump();
      }
      return {
        get pid() {
          return hasStarted(run) ? workerOf(run.state)?.child.pid ?? 0 : 0;
        },
        done,
        stop: (reason, graceMs) => apply(run, { type: 'stop', reason, ...(graceMs !== undefined ? { graceMs } : {}) }),
        setOwner: (owner) => {
          run.owner = owner;
          const worker = workerOf(run.state);
          if (worker) send(worker, { type: 'ownership', runId: spec.runId, owner });
        },
        withdraw: () => apply(run, { type: 'withdraw' }),
      };
    },
    warm(count) {
      floor = Math.max(floor, Math.min(max, count));
      grow(floor);
    },
    preload(module) {
      if (preloads.has(module)) return;
      preloads.add(module);
      for (const w of workers) if (w.ready && !w.retired) send(w, { type: 'preload', module });
    },
    reload(modules) {
      if (closed) return;
      if (modules) {
        const now = new Set(modules);
        for (const m of preloads) if (!now.has(m)) preloads.delete(m);
      }
      for (const w of [...workers]) {
        w.retired = true;
        for (const run of [...w.runs]) if (run.state.kind === 'handed') apply(run, { type: 'recall' });
        if (w.runs.length === 0) retire(w);
      }
      grow(floor);
      pump();
    },
    async close() {
      closed = true;
      if (recallTimer) clearTimeout(recallTimer);
      for (const run of [...backlog]) apply(run, { type: 'close' });
      releaseEnds();
      const all = [...workers];
      for (const w of all) {
        // Referenced again: this process waits for its workers' exits even if nothing else keeps it alive.
        w.child.ref();
        for (const run of [...w.runs]) if (run.state.kind === 'handed') apply(run, { type: 'close' });
        kill(w, 'SIGKILL');
      }
      await Promise.all(all.map((w) => w.exited));
    },
  };
}
