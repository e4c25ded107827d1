// croner in one process: `node croner-child.mjs <jobs>` creates <jobs> `new Cron('* * * * * *', fn)`
// and records each fire; see protocol.mjs for how the bench drives it.
//
// The scheduled time of a fire: croner does not pass it to the callback (currentRun() is the time
// its timer actually fired). It plans each fire as the pattern's next time after the previous
// fire's actual time (the job's creation time for the first), so the scheduled time of fire k is
// nextRun(actual time of fire k-1), worked out after the run with a separate Cron of the same
// pattern. A fire late by more than a second is therefore still attributed to the second it was
// planned for, and the seconds croner skipped show as missed.
import { Cron } from 'croner';
import { serve } from './protocol.mjs';

const PATTERN = '* * * * * *';
const jobs = Number(process.argv[2]);
if (!Number.isInteger(jobs) || jobs < 1) throw new Error('usage: croner-child.mjs <jobs>');

// Per fire, in order: the job, croner's own fire time (currentRun) and the callback's start.
const firedJob = [];
const firedAt = [];
const startedAt = [];
const created = new Array(jobs);
const lastFire = new Array(jobs).fill(undefined);
const crons = [];
const planner = new Cron(PATTERN);
const nextAfter = (ms) => planner.nextRun(new Date(ms)).getTime();

const child = serve({
  jobs,
  progress(lastInWindow) {
    let done = 0;
    for (let j = 0; j < jobs; j += 1) if (nextAfter(lastFire[j] ?? created[j]) > lastInWindow) done += 1;
    return done;
  },
  async stop() {
    for (const c of crons) c.stop();
    const previous = [...created];
    const lines = [];
    for (let k = 0; k < firedJob.length; k += 1) {
      const j = firedJob[k];
      lines.push(`${j} ${nextAfter(previous[j])} ${startedAt[k]}`);
      previous[j] = firedAt[k];
    }
    return { lines, notes: [] };
  },
});

child.ready();
for (let j = 0; j < jobs; j += 1) {
  created[j] = Date.now();
  const cron = new Cron(PATTERN, () => {
    const now = Date.now();
    const at = cron.currentRun().getTime();
    firedJob.push(j);
    firedAt.push(at);
    startedAt.push(now);
    lastFire[j] = at;
    child.fired(j);
  });
  crons.push(cron);
}
