/** The executor's typed events (tests await them; metrics count them; logs are separate). */
import type { RunStatus } from '@orrery/core';
import type { RunRecord } from './history.js';

export interface ExecutorEvents {
  'executor:registered': { name: string; sessionId: string };
  'job:started': { job: string };
  'job:stopped': { job: string };
  /** The items this executor runs for a job changed. */
  'items:changed': { job: string; items: number[] };
  'run:started': { job: string; item: number; fireTime: number; runId: string; attempt: number; lateMs: number; trigger: RunRecord['trigger']; fencingToken: number };
  'run:finished': { job: string; item: number; fireTime: number; runId: string; status: RunStatus; recorded: boolean; attempt: number };
  /**
   * A fire that did not run here, and why (`item` undefined: the whole fire, every item). Reasons:
   * `pause-period` (the job's pause periods), `misfire` (too late for the misfire policy), `overlap`
   * (the item was still running, or a waiting fire was replaced by a newer one), `disabled` (a queued,
   * early, retried or requested run dropped because the job was disabled), `not-connected` (no live
   * ZooKeeper session in time), `failover-pending` (a crashed run of the item is re-run first),
   * `job-deleted`, `bad-shard` (the shard node holds invalid data), `already-ran` / `raced` (the claim
   * found the fire run, or taken, by another executor).
   */
  'fire:skipped': { job: string; item: number | undefined; fireTime: number; reason: 'pause-period' | 'misfire' | 'overlap' | 'disabled' | 'already-ran' | 'raced' | 'not-connected' | 'failover-pending' | 'job-deleted' | 'bad-shard' };
  /**
   * A cron fire just ahead (within the claim lead): `claimed` items are claimed now and start on the
   * dot; `deferred` items are still running here and meet the overlap policy at the fire time.
   */
  'fire:early': { job: string; fireTime: number; claimed: number[]; deferred: number[] };
  /** As job leader: a run of a dead session was marked for a failover re-run. */
  'failover:marked': { job: string; item: number; fireTime: number; executor: string; runId: string };
  /** Self-fencing stopped every run (the ZooKeeper session may expire, or did). */
  fenced: { reason: 'deadline' | 'session-lost'; runs: number };
  'applied:written': { job: string; epoch: number };
  'downstream:triggered': { job: string; fireTime: number; downstream: string[] };
  /** Command nodes of a job not read before, listed and about to be read, in this order. */
  'commands:listed': { job: string; names: string[] };
  /** A command node that cannot be parsed: logged once, counted, skipped. */
  'command:skipped': { job: string; name: string; reason: 'name' | 'json' | 'invalid' | 'unreadable'; problem: string };
  'alarm:sent': { job: string; kind: string };
  error: Error;
}
