/** The executor's Prometheus metrics. */
import type { Metrics, NumberMetric, SummaryMetric } from '@orrery/core';

export interface ExecutorMetrics {
  runs: NumberMetric;
  duration: SummaryMetric;
  lateness: SummaryMetric;
  fires: NumberMetric;
  zkConnected: NumberMetric;
  jobs: NumberMetric;
  running: NumberMetric;
  alarms: NumberMetric;
  fenced: NumberMetric;
  refused: NumberMetric;
  shardsReset: NumberMetric;
}

export function createExecutorMetrics(m: Metrics): ExecutorMetrics {
  return {
    runs: m.counter('orrery_executor_runs_total', 'Runs finished, by outcome'),
    duration: m.summary('orrery_executor_run_duration_seconds', 'Run duration, by outcome'),
    lateness: m.summary('orrery_executor_fire_lateness_seconds', 'Run start minus scheduled fire time, by trigger'),
    fires: m.counter('orrery_executor_fires_not_run_total', 'Fires that did not run here, by reason'),
    zkConnected: m.gauge('orrery_executor_zookeeper_connected', '1 while connected to ZooKeeper'),
    jobs: m.gauge('orrery_executor_jobs', 'Jobs this executor is assigned'),
    running: m.gauge('orrery_executor_runs_in_progress', 'Runs in progress'),
    alarms: m.counter('orrery_executor_alarms_total', 'Run alarms sent, by kind'),
    fenced: m.counter('orrery_executor_fenced_total', 'Self-fencing events (every run stopped), by reason'),
    refused: m.counter('orrery_executor_assignments_refused_total', 'Assignments the job leader refused (an executor not online, invalid data), by reason'),
    shardsReset: m.counter('orrery_executor_shard_nodes_reset_total', 'Shard nodes holding invalid data that the job leader reset to idle'),
  };
}
