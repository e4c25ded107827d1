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
  /** A fire that did not run here, and why. */
  'fire:skipped': { job: string; item: number | undefined; fireTime: number; reason: 'misfire' | 'overlap' | 'already-ran' | 'raced' | 'not-connected' | 'failover-pending' | 'job-deleted' | 'bad-shard' };
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
