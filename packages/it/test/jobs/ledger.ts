import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { defineJob } from '@orrery/executor';

// Appends `START`/`END` lines to the file named by jobParameter ("path[,sleepMs]").
export default defineJob({
  name: 'ledger',
  async run(ctx) {
    const [path, ms] = ctx.jobParam.split(',');
    appendFileSync(path!, `START ${ctx.job} ${ctx.shardItem} ${ctx.fireTime} ${ctx.runId} ${ctx.fencingToken}\n`);
    await sleep(Number(ms ?? 0), undefined, { signal: ctx.signal });
    appendFileSync(path!, `END ${ctx.job} ${ctx.shardItem} ${ctx.fireTime} ${ctx.runId} ${ctx.fencingToken}\n`);
    return { message: 'ok' };
  },
});
