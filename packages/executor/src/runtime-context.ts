import type { Emitter, Logger, ZkClient } from '@orrery/core';
import type { ClaimLead } from './claim-lead.js';
import type { ExecutorEvents } from './executor-events.js';
import type { ExecutorMetrics } from './executor-metrics.js';
import type { Clock } from './fire-scheduler.js';
import type { History } from './history.js';
import type { JobModules } from './job-modules.js';
import type { NodePool } from './node-pool.js';
import type { RunAlarms } from './run-alarms.js';

/** What a job runtime (and each of its parts) gets from its executor. */
export interface RuntimeContext {
  zk: ZkClient;
  namespace: string;
  executor: string;
  logger: Logger;
  emitter: Emitter<ExecutorEvents>;
  metrics: ExecutorMetrics;
  history: History;
  nodePool: NodePool;
  modules: JobModules;
  killGraceMs: number;
  tmpDir: string;
  alarms: RunAlarms;
  /** True when `executor` is online with ZooKeeper session `session`. */
  isAlive(executor: string, session: string): Promise<boolean>;
  /** Records a shell run's process group while it runs (fence guard, orphan records). */
  trackProcessGroup?(pgid: number, job: string, runId: string, done: Promise<unknown>): void;
  /** False while new runs must not start (no live session, or the fence is near). */
  canStart(): boolean;
  /** Sends a webhook alarm for an event of this job (failover). */
  eventAlarm?(kind: 'failover', job: string, body: Record<string, unknown>): void;
  /** How early to claim a cron fire's shards so that runs start on time (see claim-lead.ts). */
  claimLead: ClaimLead;
  /** Takes the executor's secret values out of a run's message before it goes to ZooKeeper (job-env.ts). */
  redact?(text: string): string;
  /** This job now has `items` Node shards to run here (0: none), so the pool can start workers ahead. */
  nodeDemand?(job: string, items: number): void;
  /** The environment shell jobs start from: the executor's without Orrery's secrets (job-env.ts). */
  jobEnv?: Readonly<Record<string, string>>;
  /** Runs a job leader's apply when its turn comes (the executor's limit: `LEADER_APPLIES_AT_ONCE` in job-leader.ts). */
  leaderApplies?(apply: () => Promise<void>): Promise<void>;
  /** The job's timer clock (default: the system clock). */
  clock?: Clock;
}
