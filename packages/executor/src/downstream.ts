/**
 * Downstream jobs: when every shard of a fire of a job has succeeded, each job its config names in
 * `downstream` is triggered once — a `downstream-<job>-<fireTime>` command in the downstream job's
 * commands, created by whichever executor sees the fire complete (a name that exists already was
 * created by another: nothing more to do). A downstream job that does not exist is logged and left
 * alone (never created).
 *
 * ZooKeeper cost: a sync and one read per shard of the fire, then one create per downstream job.
 * Not guaranteed: a trigger when the last shard's executor dies between its completion and this check
 * (the fire is complete, but nobody looks).
 */
import { commandName, encodeJson, ensureNode, hasErrorCode, parseCommand, paths, readShard, toError, type Emitter, type JobConfig, type Logger, type ZkClient } from '@orrery/core';
import type { ExecutorEvents } from './executor-events.js';

export interface DownstreamContext {
  zk: ZkClient;
  namespace: string;
  job: string;
  logger: Logger;
  emitter: Emitter<ExecutorEvents>;
}

/** Triggers `config.downstream` once if every shard of the fire at `fireTime` succeeded. Never throws. */
export async function maybeTriggerDownstream(ctx: DownstreamContext, config: JobConfig, fireTime: number): Promise<void> {
  const { zk, namespace, job, logger, emitter } = ctx;
  try {
    await zk.sync(paths.jobShards(namespace, job));
    for (let i = 0; i < config.shardingTotalCount; i += 1) {
      const shard = await readShard(zk, paths.jobShard(namespace, job, i));
      const last = shard?.state.last;
      if (!shard || shard.state.state !== 'idle' || !last || last.fireTime !== fireTime || last.status !== 'succeeded') return;
    }
    const triggered: string[] = [];
    for (const d of config.downstream) {
      // A name made of this job and fire time: whoever sees the fire complete creates it, once.
      const path = paths.jobCommand(namespace, d, commandName.downstream(job, fireTime));
      try {
        if (!(await ensureNode(zk, paths.jobCommands(namespace, d)))) {
          logger.warn({ fireTime, downstream: d }, 'downstream job does not exist; not triggered');
          continue;
        }
        await zk.create(path, encodeJson(parseCommand({ kind: 'run', fireTime, requestedAt: Date.now(), triggeredBy: job })));
        triggered.push(d);
      } catch (error) {
        if (!hasErrorCode(error, 'node-exists')) throw error;
      }
    }
    if (triggered.length > 0) {
      logger.info({ fireTime, downstream: triggered }, 'downstream jobs triggered');
      emitter.emit('downstream:triggered', { job, fireTime, downstream: triggered });
    }
  } catch (error) {
    logger.error({ err: toError(error), fireTime }, 'could not trigger downstream jobs');
  }
}
