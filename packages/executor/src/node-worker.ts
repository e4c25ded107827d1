/**
 * The child process that runs Node jobs for the executor's pool, one run at a time. It speaks a
 * small typed protocol over the IPC channel (see node-protocol.ts); its stdout and stderr are the
 * current run's log.
 */
import { pathToFileURL } from 'node:url';
import { format } from 'node:util';
import { END_MARK, type ParentMessage, type WorkerMessage } from './node-protocol.js';

let controller: AbortController | undefined;
const modules = new Map<string, { run?: (ctx: unknown) => unknown }>();
let owner = true;

const send = (message: WorkerMessage): void => {
  process.send?.(message);
};

const flush = (stream: NodeJS.WriteStream, text: string): Promise<void> =>
  new Promise((resolve) => stream.write(text, () => resolve()));

/** Marks the end of the run's output on both streams, then reports: the parent waits for all three. */
async function finish(message: WorkerMessage): Promise<void> {
  await flush(process.stdout, END_MARK);
  await flush(process.stderr, END_MARK);
  send(message);
}

process.on('message', (raw: ParentMessage) => {
  if (raw.type === 'abort') {
    controller?.abort(new Error(raw.reason));
    return;
  }
  if (raw.type === 'ownership') {
    owner = raw.owner;
    return;
  }
  if (raw.type !== 'run') return;
  controller = new AbortController();
  owner = true;
  const signal = controller.signal;
  void (async () => {
    try {
      // Imported once per worker: a repeated import() still costs a trip through the loader hooks.
      let job = modules.get(raw.module);
      if (!job) {
        const mod = (await import(pathToFileURL(raw.module).href)) as { default?: { run?: (ctx: unknown) => unknown } };
        job = mod.default;
        if (job) modules.set(raw.module, job);
      }
      if (!job || typeof job.run !== 'function') throw new Error(`${raw.module} has no default export made by defineJob`);
      const ctx = {
        ...raw.context,
        signal,
        log: (...args: unknown[]) => { process.stdout.write(format(...args) + '\n'); },
        isOwner: () => owner,
      };
      const result = (await job.run(ctx)) as { message?: unknown } | undefined;
      const message = result && typeof result.message === 'string' ? result.message : '';
      await finish({ type: 'done', runId: raw.runId, ok: true, message });
    } catch (error) {
      const e = error instanceof Error ? error : new Error(String(error));
      process.stderr.write(`${e.stack ?? e.message}\n`);
      await finish({ type: 'done', runId: raw.runId, ok: false, message: e.message });
    }
  })();
});

send({ type: 'ready' });
// The IPC channel keeps this process alive; when the executor goes, so does it.
process.on('disconnect', () => process.exit(0));
