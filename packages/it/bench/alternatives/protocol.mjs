// The alternatives bench's child side: how a child (croner-child.mjs, bullmq-worker.mjs) talks to
// the bench process that started it, over stdout lines and the IPC channel.
//
// stdout:  `ready <ms>` (Date.now()) once it is set up — for croner, as it starts creating the jobs; `warm <ms>` (Date.now()) once every job has fired at least once.
// IPC in:  { type: 'progress', lastInWindow }  → { type: 'progress', done }: how many jobs are past
//          the window (their fire for `lastInWindow`, or a later one, has started: no fire of the
//          window can still come for them);
//          { type: 'stop', file }  → the child stops scheduling, writes its records to `file`, one
//          line per fire `job scheduledMs startMs`, answers { type: 'stopped', records, notes } and exits.
// A child whose parent is gone (the IPC channel closed) exits at once.
import { writeFileSync } from 'node:fs';

/**
 * Tracks each job's first fire, prints `warm` when all have fired, and serves the IPC requests:
 * `progress(lastInWindow)` returns the number of jobs past the window; `stop()` ends the
 * scheduling and resolves with `{ lines, notes }`.
 */
export function serve({ jobs, progress, stop }) {
  const seen = new Uint8Array(jobs);
  let seenCount = 0;
  process.on('disconnect', () => process.exit(1));
  process.on('message', async (message) => {
    if (message?.type === 'progress') {
      process.send({ type: 'progress', done: progress(message.lastInWindow) });
    } else if (message?.type === 'stop') {
      const { lines, notes } = await stop();
      writeFileSync(message.file, lines.join('\n') + (lines.length > 0 ? '\n' : ''));
      process.send({ type: 'stopped', records: lines.length, notes }, () => process.exit(0));
    }
  });
  return {
    ready() {
      process.stdout.write(`ready ${Date.now()}\n`);
    },
    /** Call at each fire of job `j` (cheap: a typed-array read in the common case). */
    fired(j) {
      if (seen[j] === 1) return;
      seen[j] = 1;
      seenCount += 1;
      if (seenCount === jobs) process.stdout.write(`warm ${Date.now()}\n`);
    },
  };
}
