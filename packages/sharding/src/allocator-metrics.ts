/** The allocator's Prometheus metrics. */
import type { Metrics, NumberMetric, SummaryMetric } from '@orrery/core';

export interface AllocatorMetrics {
  leader: NumberMetric;
  zkState: NumberMetric;
  rounds: NumberMetric;
  errors: NumberMetric;
  jobsWritten: NumberMetric;
  executorsWritten: NumberMetric;
  moved: NumberMetric;
  unassigned: NumberMetric;
  alarms: NumberMetric;
  roundSeconds: SummaryMetric;
  badNodes: NumberMetric;
}

export function createAllocatorMetrics(m: Metrics): AllocatorMetrics {
  return {
    leader: m.gauge('orrery_sharding_leader', '1 while this allocator is the leader'),
    zkState: m.gauge('orrery_sharding_zookeeper_connected', '1 while connected to ZooKeeper'),
    rounds: m.counter('orrery_sharding_rounds_total', 'Allocation rounds computed, per namespace'),
    errors: m.counter('orrery_sharding_round_errors_total', 'Allocation rounds that failed and will be retried'),
    jobsWritten: m.counter('orrery_sharding_job_assignments_written_total', 'Job assignment nodes written'),
    executorsWritten: m.counter('orrery_sharding_executor_summaries_written_total', 'Executor assignment summaries written'),
    moved: m.counter('orrery_sharding_shards_moved_total', 'Shards moved from one executor to another'),
    unassigned: m.gauge('orrery_sharding_unassigned_shards', 'Shards of enabled jobs with no executor, per namespace'),
    alarms: m.counter('orrery_sharding_alarms_total', 'Unassigned-shard alarms sent'),
    roundSeconds: m.summary('orrery_sharding_round_seconds', 'Duration of rounds that wrote something'),
    badNodes: m.counter('orrery_sharding_bad_nodes_total', 'Job, presence and meta nodes ignored because their data is invalid (each bad write counted once)'),
  };
}
