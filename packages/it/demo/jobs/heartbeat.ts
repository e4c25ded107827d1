import { defineJob } from '@orrery/executor';

// The demo's every-few-seconds Node job (packages/it/demo/jobs.yaml): says which shard it is, how
// late it started, and whether its claim is still its own before it "writes" anything.
export default defineJob({
  name: 'heartbeat',
  async run(ctx) {
    const lateMs = Date.now() - ctx.fireTime;
    ctx.log(`shard ${ctx.shardItem}/${ctx.shardTotal} (${ctx.shardParam || 'no parameter'}), fencing token ${ctx.fencingToken}, started ${lateMs} ms after its fire time`);
    // A real job would check ownership right before an external write, and pass the fencing token
    // along so the other side can refuse a stale writer (docs/executor.md, "Node jobs").
    if (!ctx.isOwner()) return { message: 'no longer the owner of this shard: wrote nothing' };
    return { message: `shard ${ctx.shardItem} alive` };
  },
});
