/**
 * The child process that runs Node jobs for the executor's pool, one run at a time in order of
 * `startAt`, then of arrival (the next may already be waiting here; a run claimed ahead of its fire
 * time waits here and starts on the dot), speaking a small typed protocol over the IPC channel
 * (node-protocol.ts).
 *
 * The worker captures the run's own output itself — `ctx.log`, `console.*`, `process.stdout/stderr
 * .write` — into the run's log files (opened on the first output) and its 4 KB tails, so a run costs
 * one message each way (a run's `done` goes out with the next run's `started`, as one message, when
 * that run follows at once: a burst of runs costs one write a run, not two). Output written
 * straight to the worker's file descriptors (by a child process the job starts, say) still reaches
 * the executor through the pipes, best effort.
 *
 * The logs are written synchronously (`writeSync`, file mode 0600) and capped at the run's
 * `maxLogBytes` per stream: a job's `console.log` waits for the disk instead of queueing in memory
 * (a synchronous call cannot be told to wait for a drain, and the worker runs one job at a time, so
 * the wait falls on that job alone); past the cap the output is counted and dropped, and the log
 * ends with a marker line. The discarded bytes go back in `done`.
 *
 * Each `ctx.log` line starts with its time, ISO 8601 in UTC, and the level:
 * `2026-11-23T22:31:06.123Z info message` (a message of several lines gets the prefix on each).
 * `console.*` and `process.stdout.write` are written as they are.
 *
 * The executor sends the runs it hands over in one turn of its event loop as one message (an array;
 * node-protocol-limits.ts). Every message from the executor, each element of such an array on its
 * own, is validated (node-protocol-check.ts: the schema's compiled check,
 * standalone, so that the worker does not load TypeBox); a malformed one is reported on
 * the worker's stderr (which reaches the executor's log of the running run, if any) and ignored.
 * The worker exits when its IPC channel closes (the executor is gone).
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { format } from 'node:util';
import { formatLogLine } from './job-log-line.js';
import { createLogCap, DEFAULT_MAX_LOG_BYTES, logTruncation, logTruncationMarker, PRIVATE_FILE_MODE, type LogCap } from './lazy-file.js';
import { isParentMessage } from './node-protocol-check.js';
import { MAX_TEXT_LENGTH, splitParentBatch } from './node-protocol-limits.js';
import type { RunMessage, WorkerMessage } from './node-protocol.js';
import { createOutputTail, type OutputTail } from './output-tail.js';

interface Capture {
  path: string;
  /** Opened on the first output; -1 once it could not be opened or written. */
  fd: number | undefined;
  cap: LogCap;
  maxBytes: number;
  tail: OutputTail;
}

let controller: AbortController | undefined;
type JobModule = { run?: (ctx: unknown) => unknown };
const modules = new Map<string, JobModule>();
let owner = true;
let current: { stdout: Capture; stderr: Capture } | undefined;

const send = (message: WorkerMessage | WorkerMessage[], then: () => void = () => undefined): void => {
  // (Fails only once the executor is gone; the worker then exits on 'disconnect'.)
  if (process.send) process.send(message, then);
  else then();
};

/**
 * The `done` of the run that just ended, when the next run may follow at once: it goes out with
 * that run's `started` (one message), or alone as soon as none follows ({@link flushDone}).
 */
let pendingDone: WorkerMessage | undefined;

function flushDone(): void {
  if (!pendingDone) return;
  const done = pendingDone;
  pendingDone = undefined;
  send(done);
}

/**
 * SIGTERM — a stop, a timeout or a fence: the executor aborts the run's signal and SIGTERMs the
 * worker's group at once, then SIGKILLs it after its kill grace. Node's default would end the
 * worker on the spot, leaving a job no time to clean up; instead the run's signal is aborted (if
 * the executor's message has not done it first) and the worker exits once the run has ended and
 * its `done` is sent — or at the SIGKILL, for a job that ignores its signal. With no run, at once.
 */
const SIGTERM_EXIT = 143; // 128 + 15, as if it had been killed by it
let terminating = false;
process.on('SIGTERM', () => {
  terminating = true;
  if (runningId === undefined) process.exit(SIGTERM_EXIT);
  controller?.abort(new Error('terminated'));
});


/** Writes all of `buffer` to the capture's file; on an error the file is given up (never a throw). */
function writeAll(c: Capture, buffer: Buffer): void {
  try {
    c.fd ??= openSync(c.path, 'a', PRIVATE_FILE_MODE);
    if (c.fd < 0) return;
    let offset = 0;
    while (offset < buffer.length) offset += writeSync(c.fd, buffer, offset, buffer.length - offset);
  } catch {
    // Disk full, folder gone: the rest of this run's output is dropped (and counted).
    if (c.fd !== undefined && c.fd >= 0) closeSync(c.fd);
    c.fd = -1;
  }
}

function capture(which: 'stdout' | 'stderr', chunk: unknown): boolean {
  const c = current?.[which];
  if (!c) return false;
  const buffer = Buffer.isBuffer(chunk) ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk) : Buffer.from(String(chunk));
  c.tail.push(buffer);
  if (c.fd === -1) c.cap.drop(buffer);
  else {
    const part = c.cap.take(buffer);
    if (part.length > 0) writeAll(c, part);
  }
  return true;
}

/** Ends a capture's file with the marker if output was dropped; the bytes dropped. */
function endCapture(c: Capture): number {
  if (c.cap.discarded > 0 && c.fd !== -1) writeAll(c, Buffer.from(logTruncationMarker(c.maxBytes, c.cap.discarded)));
  if (c.fd !== undefined && c.fd >= 0) {
    try {
      closeSync(c.fd);
    } catch {
      // closed already
    }
  }
  c.fd = -1;
  return c.cap.discarded;
}

// Route the run's JavaScript output into its capture (the real streams stay for stray output).
for (const which of ['stdout', 'stderr'] as const) {
  const stream = process[which];
  const original = stream.write.bind(stream) as (...args: unknown[]) => boolean;
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (capture(which, chunk)) {
      const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      callback?.();
      return true;
    }
    return original(chunk, ...rest);
  }) as typeof stream.write;
}

function finish(runId: string, ok: boolean, message: string): void {
  const c = current;
  current = undefined;
  const truncated = c ? logTruncation(endCapture(c.stdout), endCapture(c.stderr)) : undefined;
  // (Within the protocol's bound: a longer message would be refused, and the run never end.)
  const done: WorkerMessage = { type: 'done', runId, ok, message: message.slice(0, MAX_TEXT_LENGTH), stdoutTail: c?.stdout.tail.text() ?? '', stderrTail: c?.stderr.tail.text() ?? '', ...(truncated ? { truncated } : {}) };
  if (terminating) send(done, () => process.exit(SIGTERM_EXIT));
  else pendingDone = done;
}

// Runs wait here (the executor may send the next before this one ends: no round trip between two
// runs), ordered by `startAt` then arrival, and run one at a time, none before its `startAt`. A
// waiting run can be taken back (`cancel`).
const queue: RunMessage[] = [];
let runningId: string | undefined;
let looping = false;
/** Ends the wait for the head's `startAt` early (the head changed). */
let wake: (() => void) | undefined;

const dueAt = (r: RunMessage): number => r.startAt ?? 0;

/** Imported once per worker: a repeated import() still costs a trip through the loader hooks. */
async function load(module: string): Promise<JobModule | undefined> {
  let job = modules.get(module);
  if (!job) {
    const mod = (await import(pathToFileURL(module).href)) as { default?: JobModule };
    job = mod.default;
    if (job) modules.set(module, job);
  }
  return job;
}

/** What arrives from the executor: one message, or several as an array (node-protocol-limits.ts). */
function onMessages(input: unknown): void {
  const { messages, problem } = splitParentBatch(input);
  if (problem) process.stderr.write(`orrery node worker: ignored a malformed message (${problem})\n`);
  for (const message of messages) onMessage(message);
}

function onMessage(input: unknown): void {
  if (!isParentMessage(input)) {
    const type = typeof input === 'object' && input !== null ? String((input as { type?: unknown }).type).slice(0, 64) : typeof input;
    process.stderr.write(`orrery node worker: ignored a malformed message (type ${type})\n`);
    return;
  }
  const raw = input;
  switch (raw.type) {
    case 'run': {
      let i = queue.length;
      while (i > 0 && dueAt(queue[i - 1]!) > dueAt(raw)) i -= 1;
      queue.splice(i, 0, raw);
      if (i === 0) wake?.();
      if (!looping) void runNext();
      return;
    }
    case 'preload':
      // A module that fails to load says so at its first run.
      void load(raw.module).catch(() => undefined);
      return;
    case 'cancel': {
      const i = queue.findIndex((r) => r.runId === raw.runId);
      if (i >= 0) {
        queue.splice(i, 1);
        if (i === 0) wake?.();
        send({ type: 'cancelled', runId: raw.runId });
      }
      return;
    }
    case 'abort':
      if (raw.runId === runningId) controller?.abort(new Error(raw.reason));
      return;
    case 'ownership': {
      if (raw.runId === runningId) owner = raw.owner;
      else {
        const waiting = queue.find((r) => r.runId === raw.runId);
        if (waiting) waiting.owner = raw.owner;
      }
      return;
    }
  }
}

async function runNext(): Promise<void> {
  looping = true;
  while (queue.length > 0) {
    const wait = dueAt(queue[0]!) - Date.now();
    if (wait > 0) {
      flushDone();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        wake = () => { clearTimeout(timer); resolve(); };
      });
      wake = undefined;
      continue;
    }
    const raw = queue.shift()!;
    runningId = raw.runId;
    await runOne(raw);
    runningId = undefined;
  }
  flushDone();
  looping = false;
}

async function runOne(raw: RunMessage): Promise<void> {
  controller = new AbortController();
  owner = raw.owner ?? true;
  const maxBytes = Math.max(1, raw.maxLogBytes ?? DEFAULT_MAX_LOG_BYTES);
  const open = (path: string): Capture => ({ path, fd: undefined, cap: createLogCap(maxBytes), maxBytes, tail: createOutputTail() });
  current = { stdout: open(raw.stdoutPath), stderr: open(raw.stderrPath) };
  const started: WorkerMessage = { type: 'started', runId: raw.runId, at: Date.now() };
  send(pendingDone ? [pendingDone, started] : started);
  pendingDone = undefined;
  const signal = controller.signal;
  try {
    const job = await load(raw.module);
    if (!job || typeof job.run !== 'function') throw new Error(`${raw.module} has no default export made by defineJob`);
    const ctx = {
      ...raw.context,
      signal,
      log: (...args: unknown[]) => { process.stdout.write(formatLogLine(new Date(), args)); },
      isOwner: () => owner,
    };
    const result = (await job.run(ctx)) as { message?: unknown } | undefined;
    finish(raw.runId, true, result && typeof result.message === 'string' ? result.message : '');
  } catch (error) {
    const e = error instanceof Error ? error : new Error(String(error));
    process.stderr.write(`${e.stack ?? e.message}\n`);
    finish(raw.runId, false, e.message);
  }
}

send({ type: 'ready' });
// The IPC channel keeps this process alive; when the executor goes, so does it.
process.on('message', onMessages);
process.on('disconnect', () => process.exit(0));
