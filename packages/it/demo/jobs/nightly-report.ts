import { defineJob } from '@orrery/executor';

// The demo's Node job (packages/it/demo/jobs.yaml): runs after every fire of `hello`.
export default defineJob({
  name: 'nightly-report',
  async run(ctx) {
    ctx.log(`report for fire ${new Date(ctx.fireTime).toISOString()}, shard ${ctx.shardItem}/${ctx.shardTotal}`);
    return { message: `report ${ctx.runId} written` };
  },
});
