import { commandName, encodeJson, hasErrorCode, paths, parseCommand, type Emitter, type ZkClient } from '@orrery/core';
import type { ExecutorEvents } from './executor-events.js';

/** Who announces, and where. */
export interface FailoverNoticeContext {
  zk: ZkClient;
  namespace: string;
  job: string;
  emitter: Emitter<ExecutorEvents>;
  /** Sends the namespace's `failover` webhook alarm. */
  eventAlarm?(kind: 'failover', job: string, body: Record<string, unknown>): void;
}

/**
 * Tells everyone of a failover mark just written on `item`: the `failover:marked` event, the
 * `failover` webhook, and a `failover-<item>-<fireTime>` command for the item's owner (created once:
 * a name that exists already was announced). Throws a ZooKeeper error other than `node-exists`.
 */
export async function announceFailover(ctx: FailoverNoticeContext, item: number, state: { executor: string; fireTime: number; runId: string }): Promise<void> {
  const { zk, namespace, job } = ctx;
  ctx.emitter.emit('failover:marked', { job, item, fireTime: state.fireTime, executor: state.executor, runId: state.runId });
  ctx.eventAlarm?.('failover', job, { item, fireTime: new Date(state.fireTime).toISOString(), crashedExecutor: state.executor, crashedRunId: state.runId });
  try {
    const command = parseCommand({ kind: 'failover', items: [item], fireTime: state.fireTime, requestedAt: Date.now() });
    await zk.create(paths.jobCommand(namespace, job, commandName.failover(item, state.fireTime)), encodeJson(command));
  } catch (error) {
    if (!hasErrorCode(error, 'node-exists')) throw error;
  }
}
