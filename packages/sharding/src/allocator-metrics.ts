/** The allocator's Prometheus metrics (every one is listed in docs/metrics.md). */
import type { Counter, Gauge, Histogram, Metrics } from '@orrery/core';

/**
 * Buckets of `orrery_sharding_round_seconds` (a round that wrote something), in seconds: 1 ms to
 * 30 s. A round is a few compare-and-set writes, so ms to tens of ms; seconds mean a slow ZooKeeper
 * or a very large namespace.
 */
export const ROUND_SECONDS_BUCKETS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export interface AllocatorMetrics {
  leader: Gauge;
  zkState: Gauge;
  rounds: Counter<'namespace'>;
  errors: Counter;
  jobsWritten: Counter<'namespace'>;
  executorsWritten: Counter<'namespace'>;
  moved: Counter<'namespace'>;
  unassigned: Gauge<'namespace'>;
  alarms: Counter<'namespace'>;
  roundSeconds: Histogram<'namespace'>;
  badNodes: Counter;
}

export function createAllocatorMetrics(m: Metrics): AllocatorMetrics {
  return {
    leader: m.gauge('orrery_sharding_leader', '1 while this allocator is the leader'),
    zkState: m.gauge('orrery_sharding_zookeeper_connected', '1 while connected to ZooKeeper'),
    rounds: m.counter('orrery_sharding_rounds_total', 'Allocation rounds computed, per namespace', ['namespace']),
    errors: m.counter('orrery_sharding_round_errors_total', 'Allocation rounds that failed and will be retried'),
    jobsWritten: m.counter('orrery_sharding_job_assignments_written_total', 'Job assignment nodes written', ['namespace']),
    executorsWritten: m.counter('orrery_sharding_executor_summaries_written_total', 'Executor assignment summaries written', ['namespace']),
    moved: m.counter('orrery_sharding_shards_moved_total', 'Shards moved from one executor to another', ['namespace']),
    unassigned: m.gauge('orrery_sharding_unassigned_shards', 'Shards of enabled jobs with no executor, per namespace', ['namespace']),
    alarms: m.counter('orrery_sharding_alarms_total', 'Unassigned-shard and executor-lost alarms delivered, per namespace', ['namespace']),
    roundSeconds: m.histogram('orrery_sharding_round_seconds', 'Duration of rounds that wrote something', ROUND_SECONDS_BUCKETS, ['namespace']),
    badNodes: m.counter('orrery_sharding_bad_nodes_total', 'Job, presence and meta nodes ignored because their data is invalid (each bad write counted once)'),
  };
}
