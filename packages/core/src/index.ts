/**
 * @orrery/core: the ZooKeeper client and recipes, the ZooKeeper layout, schemas and cron.
 */
export * from './errors.js';
export * from './events.js';
export * from './json.js';
export * from './layout.js';
export * from './zk/client.js';
export * from './zk/zk-auth.js';
export * from './recipes/versioned.js';
export * from './recipes/ephemeral-node.js';
export * from './recipes/leader-latch.js';
export * from './recipes/tree-cache.js';
export * from './cron/schedule.js';
export * from './cron/time-zone.js';
export * from './cron/pause-period.js';
export * from './schemas/index.js';
export { ORRERY_VERSION } from './version.js';
export * from './metrics.js';
export * from './alarm-sender.js';
export * from './logger.js';
export * from './http-endpoint.js';
export * from './protocol/shard-claim.js';
export * from './serial-task.js';
export * from './process-alive.js';
export * from './child-stdio.js';
export * from './process-signals.js';
export * from './zk-connect.js';
export * from './bin-args.js';
