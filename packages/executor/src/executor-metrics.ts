/** The executor's Prometheus metrics (every one is listed in docs/metrics.md). */
import type { Counter, Gauge, Histogram, Metrics } from '@orrery/core';

/**
 * Buckets of `orrery_executor_fire_lateness_seconds` (run start − scheduled fire time), in seconds:
 * 1 ms to 30 s. A healthy executor starts runs within a few ms of their fire time (claims are made
 * ahead); tens to hundreds of ms mean a loaded host or a slow ZooKeeper; seconds mean misfires are near.
 */
export const FIRE_LATENESS_BUCKETS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/**
 * Buckets of `orrery_executor_run_duration_seconds`, in seconds: 10 ms to 6 h — from a quick
 * shell command to a long batch job.
 */
export const RUN_DURATION_BUCKETS: readonly number[] = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 1800, 3600, 10_800, 21_600];

/**
 * The executor's metrics. A metric whose samples carry labels must declare them at registration
 * (the third argument): prom-client throws on a label it was not told about.
 */
export interface ExecutorMetrics {
  runs: Counter<'outcome'>;
  duration: Histogram<'outcome'>;
  lateness: Histogram<'trigger'>;
  fires: Counter<'outcome'>;
  zkConnected: Gauge;
  jobs: Gauge;
  running: Gauge;
  alarms: Counter<'kind'>;
  fenced: Counter<'reason'>;
  refused: Counter<'reason'>;
  shardsReset: Counter;
  commandsSkipped: Counter<'reason'>;
}

export function createExecutorMetrics(m: Metrics): ExecutorMetrics {
  return {
    runs: m.counter('orrery_executor_runs_total', 'Runs finished, by outcome', ['outcome']),
    duration: m.histogram('orrery_executor_run_duration_seconds', 'Run duration, by outcome', RUN_DURATION_BUCKETS, ['outcome']),
    lateness: m.histogram('orrery_executor_fire_lateness_seconds', 'Run start minus scheduled fire time, by trigger', FIRE_LATENESS_BUCKETS, ['trigger']),
    fires: m.counter('orrery_executor_fires_not_run_total', 'Fires that did not run here, by reason', ['outcome']),
    zkConnected: m.gauge('orrery_executor_zookeeper_connected', '1 while connected to ZooKeeper'),
    jobs: m.gauge('orrery_executor_jobs', 'Jobs this executor is assigned'),
    running: m.gauge('orrery_executor_runs_in_progress', 'Runs in progress'),
    alarms: m.counter('orrery_executor_alarms_total', 'Run and failover alarms delivered, by kind', ['kind']),
    fenced: m.counter('orrery_executor_fenced_total', 'Self-fencing events (every run stopped), by reason', ['reason']),
    refused: m.counter('orrery_executor_assignments_refused_total', 'Assignments the job leader refused (an executor not online, invalid data), by reason', ['reason']),
    shardsReset: m.counter('orrery_executor_shard_nodes_reset_total', 'Shard nodes holding invalid data that the job leader reset to idle'),
    commandsSkipped: m.counter('orrery_executor_commands_skipped_total', 'Command nodes skipped as unparsable (a name of no known form, not JSON, invalid, unreadable), by reason', ['reason']),
  };
}
