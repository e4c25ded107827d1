/**
 * The child process that runs Node jobs for the executor's pool, one run at a time in order of
 * `startAt`, then of arrival (the next may already be waiting here; a run claimed ahead of its fire
 * time waits here and starts on the dot), speaking a small typed protocol over the IPC channel
 * (node-protocol.ts).
 *
 * The worker captures the run's own output itself — `ctx.log`, `console.*`, `process.stdout/stderr
 * .write` — into the run's log files (opened on the first output) and its 4 KB tails, so a run costs
 * one message each way. Output written straight to the worker's file descriptors (by a child
 * process the job starts, say) still reaches the executor through the pipes, best effort.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { format } from 'node:util';
import type { ParentMessage, WorkerMessage } from './node-protocol.js';
import { createOutputTail, type OutputTail } from './output-tail.js';

interface Capture {
  path: string;
  file: WriteStream | undefined;
  tail: OutputTail;
}

let controller: AbortController | undefined;
type JobModule = { run?: (ctx: unknown) => unknown };
const modules = new Map<string, JobModule>();
let owner = true;
let current: { stdout: Capture; stderr: Capture } | undefined;

const send = (message: WorkerMessage): void => {
  process.send?.(message);
};

function capture(which: 'stdout' | 'stderr', chunk: unknown): boolean {
  const c = current?.[which];
  if (!c) return false;
  const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
  c.tail.push(buffer);
  c.file ??= createWriteStream(c.path, { flags: 'a' });
  c.file.write(buffer);
  return true;
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

const endFile = (c: Capture): Promise<void> => new Promise((resolve) => (c.file ? c.file.end(() => resolve()) : resolve()));

async function finish(runId: string, ok: boolean, message: string): Promise<void> {
  const c = current;
  current = undefined;
  if (c) await Promise.all([endFile(c.stdout), endFile(c.stderr)]);
  send({ type: 'done', runId, ok, message, stdoutTail: c?.stdout.tail.text() ?? '', stderrTail: c?.stderr.tail.text() ?? '' });
}

type RunMessage = Extract<ParentMessage, { type: 'run' }>;

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

process.on('message', (raw: ParentMessage) => {
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
    case 'ownership':
      if (raw.runId === runningId) owner = raw.owner;
      return;
  }
});

async function runNext(): Promise<void> {
  looping = true;
  while (queue.length > 0) {
    const wait = dueAt(queue[0]!) - Date.now();
    if (wait > 0) {
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
  looping = false;
}

async function runOne(raw: RunMessage): Promise<void> {
  controller = new AbortController();
  owner = true;
  current = {
    stdout: { path: raw.stdoutPath, file: undefined, tail: createOutputTail() },
    stderr: { path: raw.stderrPath, file: undefined, tail: createOutputTail() },
  };
  send({ type: 'started', runId: raw.runId, at: Date.now() });
  const signal = controller.signal;
  try {
    const job = await load(raw.module);
    if (!job || typeof job.run !== 'function') throw new Error(`${raw.module} has no default export made by defineJob`);
    const ctx = {
      ...raw.context,
      signal,
      log: (...args: unknown[]) => { process.stdout.write(format(...args) + '\n'); },
      isOwner: () => owner,
    };
    const result = (await job.run(ctx)) as { message?: unknown } | undefined;
    await finish(raw.runId, true, result && typeof result.message === 'string' ? result.message : '');
  } catch (error) {
    const e = error instanceof Error ? error : new Error(String(error));
    process.stderr.write(`${e.stack ?? e.message}\n`);
    await finish(raw.runId, false, e.message);
  }
}

send({ type: 'ready' });
// The IPC channel keeps this process alive; when the executor goes, so does it.
process.on('disconnect', () => process.exit(0));
