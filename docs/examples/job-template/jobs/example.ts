import { setTimeout as sleep } from 'node:timers/promises';
import { defineJob } from '@orrery/executor';

// A job: the default export of a top-level file of the jobs folder. Its name is the `handler` of
// the job configs that run it.
export default defineJob({
  name: 'example',
  async run(ctx) {
    ctx.log(`item ${ctx.shardItem} of ${ctx.shardTotal}, parameter '${ctx.shardParam}', attempt ${ctx.attempt}, trigger ${ctx.trigger}`);
    // Pass ctx.signal to anything that waits, so a timeout or stop ends the run at once.
    await sleep(100, undefined, { signal: ctx.signal });
    // Check ownership right before an effect that must happen once (and pass ctx.fencingToken along).
    if (!ctx.isOwner()) return { message: 'no longer the owner of this item: wrote nothing' };
    return { message: `item ${ctx.shardItem} done` };
  },
});
