/**
 * The misfire rule (pure): how late a fire may still start, and how far back a schedule looks for
 * fires it missed. Every place that decides whether a late fire may still run asks here — the
 * timer's plan (`planFire` in fire-plan.ts), the first look back of a job that starts or changes,
 * the catch-up of an item this executor gains, and a fire waiting for the session fence to open.
 *
 * The rule:
 * - a fire started at most {@link ON_TIME_TOLERANCE_MS} after its time is on time, whatever the
 *   policy (that is lateness, not a misfire);
 * - with `fire-once` a fire may start up to `thresholdSeconds` late (never less than the
 *   tolerance); with `skip`, only on time;
 * - a run someone asked for (run-now, downstream) and a failover re-run are late by nature: they
 *   wait up to {@link REQUESTED_RUN_WAIT_MS} from the moment they were asked for, then are dropped;
 * - a retry never waits (its backoff already made it late; the next fire comes anyway).
 *
 * Guarantees: no fire starts later than its window; pure (every instant is an argument).
 * Not guaranteed: that a fire inside its window runs — the claim, the overlap policy and the
 * session fence still decide.
 */
import type { RunRecord } from './history.js';

/** A job's misfire settings (its config's `misfire`). */
export interface MisfirePolicy {
  policy: 'skip' | 'fire-once';
  thresholdSeconds: number;
}

/** What made a run (as run records name it). */
export type Trigger = RunRecord['trigger'];

/** Default: a fire reached within 1 s of its time is on time. */
export const ON_TIME_TOLERANCE_MS = 1000;

/** How long a requested run (run-now, downstream) or a failover re-run waits for a start, in ms. */
export const REQUESTED_RUN_WAIT_MS = 60_000;

/** How late (ms after its fire time) a scheduled fire may still start under `misfire`. */
export function misfireWindowMs(misfire: MisfirePolicy, onTimeToleranceMs = ON_TIME_TOLERANCE_MS): number {
  return misfire.policy === 'fire-once' ? Math.max(misfire.thresholdSeconds * 1000, onTimeToleranceMs) : onTimeToleranceMs;
}

/** True when a scheduled fire at `fireTime` may still start at `now`. */
export function mayStillRun(fireTime: number, now: number, misfire: MisfirePolicy, onTimeToleranceMs = ON_TIME_TOLERANCE_MS): boolean {
  return now - fireTime <= misfireWindowMs(misfire, onTimeToleranceMs);
}

/** True for runs someone asked for (a command), which wait for a start rather than misfire. */
export function isRequested(trigger: Trigger): boolean {
  return trigger === 'run-now' || trigger === 'downstream';
}

/**
 * The latest instant a run of `trigger` for `fireTime` may start, asked at `now` (a fire waiting
 * for the session fence or for ZooKeeper waits until then); `undefined`: it may not wait at all.
 */
export function startDeadline(trigger: Trigger, fireTime: number, now: number, misfire: MisfirePolicy): number | undefined {
  if (trigger === 'retry') return undefined;
  if (trigger === 'failover' || isRequested(trigger)) return now + REQUESTED_RUN_WAIT_MS;
  return fireTime + misfireWindowMs(misfire);
}

/**
 * Where a schedule's first look for missed fires starts (fires at or before it are never caught up):
 * - on a change of a running schedule (cron, zone, pauses, enabling): now — nothing before the
 *   change was missed;
 * - on a first start (executor restart, a job newly given here): back by the misfire window
 *   (`fire-once` only), but never before the config was written (`changedAt`, the node's mtime) —
 *   a fire from before the job was enabled is not a missed one.
 */
export function lookBackFrom(options: { now: number; changedAt: number; firstStart: boolean; misfire: MisfirePolicy }): number {
  const { now, changedAt, firstStart, misfire } = options;
  if (!firstStart) return now;
  return Math.min(now, Math.max(changedAt, now - (misfire.policy === 'fire-once' ? misfire.thresholdSeconds * 1000 : 0)));
}

/**
 * The fire an item this executor just gained catches up, if any: the latest fire due in the misfire
 * window, if the schedule had handled it here already (it was another executor's to run; the claim
 * refuses it if that one ran it) and it is after the look-back start. Only `fire-once` catches up.
 *
 * @param due the schedule's fire times in (now − threshold, now], oldest first
 */
export function catchUpFire(due: readonly number[], now: number, misfire: MisfirePolicy, window: { lookBackFrom: number; handledUntil: number }): number | undefined {
  if (misfire.policy !== 'fire-once') return undefined;
  const recent = due.at(-1);
  if (recent === undefined || recent > now || now - recent > misfire.thresholdSeconds * 1000) return undefined;
  return recent > window.lookBackFrom && recent <= window.handledUntil ? recent : undefined;
}
