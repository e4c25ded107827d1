// The producer side of the BullMQ run, one short process per step:
//   node bullmq-admin.mjs <redisPort> <queue> upsert <jobs>   N job schedulers on '* * * * * *'
//   node bullmq-admin.mjs <redisPort> <queue> cleanup         counts, then removes them and the queue
// Prints one JSON line with what it did.
import { Queue } from 'bullmq';
import IORedis from 'ioredis';

const [port, name, step, jobsArg] = process.argv.slice(2);
const connection = new IORedis({ host: '127.0.0.1', port: Number(port), maxRetriesPerRequest: null });
const queue = new Queue(name, { connection });
const schedulerId = (i) => `job-${String(i).padStart(5, '0')}`;

try {
  if (step === 'upsert') {
    const jobs = Number(jobsArg);
    await Promise.all(Array.from({ length: jobs }, (_, i) => queue.upsertJobScheduler(
      schedulerId(i),
      { pattern: '* * * * * *' },
      { name: 'noop', data: { i }, opts: { removeOnComplete: true, removeOnFail: true } },
    )));
    process.stdout.write(`${JSON.stringify({ upserted: jobs, schedulers: await queue.getJobSchedulersCount() })}\n`);
  } else if (step === 'cleanup') {
    const counts = await queue.getJobCounts();
    const schedulers = await queue.getJobSchedulers(0, -1);
    await Promise.all(schedulers.map((s) => queue.removeJobScheduler(s.key)));
    await queue.obliterate({ force: true });
    process.stdout.write(`${JSON.stringify({ counts, removed: schedulers.length, left: await queue.getJobSchedulersCount() })}\n`);
  } else {
    throw new Error(`unknown step ${step}`);
  }
} finally {
  await queue.close();
  await connection.quit();
}
