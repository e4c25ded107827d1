// One BullMQ Worker process: `node bullmq-worker.mjs <redisPort> <queue> <jobs> <concurrency>`, a
// no-op processor that records each job's start; see protocol.mjs for how the bench drives it.
//
// The scheduled time of a fire: a job scheduler's iteration has the id `repeat:<schedulerId>:<ms>`,
// where <ms> is the time the pattern gave for it (job-scheduler.js getSchedulerNextJobId), also kept
// as job.opts.prevMillis; the record takes it from the id and counts any job where the two differ.
// The worker is also BullMQ's scheduler: it adds a scheduler's next iteration when it takes the
// current one (Worker.nextJobFromJobData → upsertJobScheduler), computed from the pattern's next time
// after *now*, so an iteration taken late by more than a second skips the seconds in between (they
// show as missed, not as a backlog).
import { Worker } from 'bullmq';
import IORedis from 'ioredis';
import { serve } from './protocol.mjs';

const [port, queue, jobsArg, concurrencyArg] = process.argv.slice(2);
const jobs = Number(jobsArg);
const concurrency = Number(concurrencyArg);
if (!port || !queue || !Number.isInteger(jobs) || !Number.isInteger(concurrency)) throw new Error('usage: bullmq-worker.mjs <redisPort> <queue> <jobs> <concurrency>');

// Per fire, in order: the job (data.i), the job id, opts.prevMillis and the processor's start.
const firedJob = [];
const firedId = [];
const firedPrev = [];
const startedAt = [];
const lastScheduled = new Array(jobs).fill(-Infinity);
const scheduledOf = (id) => Number(id.slice(id.lastIndexOf(':') + 1));

// BullMQ 6 with ESM: the connection must be a client instance (it cannot `require` ioredis itself).
const connection = new IORedis({ host: '127.0.0.1', port: Number(port), maxRetriesPerRequest: null });
const errors = [];
const worker = new Worker(queue, async (job) => {
  const now = Date.now();
  const i = job.data.i;
  firedJob.push(i);
  firedId.push(job.id);
  firedPrev.push(job.opts.prevMillis);
  startedAt.push(now);
  const scheduled = scheduledOf(job.id);
  if (scheduled > lastScheduled[i]) lastScheduled[i] = scheduled;
  child.fired(i);
}, { connection, concurrency, autorun: false });
worker.on('error', (error) => {
  if (errors.length < 5) errors.push(String(error?.message ?? error));
});

const child = serve({
  jobs,
  progress(lastInWindow) {
    let done = 0;
    for (let j = 0; j < jobs; j += 1) if (lastScheduled[j] >= lastInWindow) done += 1;
    return done;
  },
  async stop() {
    await worker.close();
    await connection.quit();
    const lines = [];
    let mismatched = 0;
    for (let k = 0; k < firedJob.length; k += 1) {
      const scheduled = scheduledOf(firedId[k]);
      if (scheduled !== firedPrev[k]) mismatched += 1;
      lines.push(`${firedJob[k]} ${scheduled} ${startedAt[k]}`);
    }
    const notes = [];
    if (mismatched > 0) notes.push(`${mismatched} jobs whose id's time differs from opts.prevMillis`);
    if (errors.length > 0) notes.push(`worker errors: ${errors.join('; ')}`);
    return { lines, notes };
  },
});

void worker.run();
await worker.waitUntilReady();
child.ready();
