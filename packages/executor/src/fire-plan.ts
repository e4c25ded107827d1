/**
 * When to fire (pure): given a schedule, the last fire time handled and the clock, which fire time
 * (if any) runs now, and what was missed — the misfire policy made precise:
 * - a fire time reached at most `onTimeToleranceMs` late runs (that is lateness, not a misfire);
 * - fire times missed for longer (the executor was busy or down, or its shard just arrived): with
 *   `fire-once`, the **latest** of them runs once if it is at most `thresholdSeconds` late, the rest
 *   are skipped; with `skip`, all are skipped.
 */
import type { Schedule } from '@orrery/core';

export interface MisfirePolicy {
  policy: 'skip' | 'fire-once';
  thresholdSeconds: number;
}

export interface FirePlan {
  /** The fire time to run now, if any. */
  fire: number | undefined;
  /** Fire times passed over (for metrics and logs). */
  skipped: number[];
  /** The new "handled up to" mark. */
  handledUntil: number;
  /** When to look again: the next fire time after `handledUntil` (undefined: none). */
  next: number | undefined;
}

/** Default: a fire reached within 1 s of its time is on time. */
export const ON_TIME_TOLERANCE_MS = 1000;

export function planFire(schedule: Schedule, handledUntil: number, now: number, misfire: MisfirePolicy, onTimeToleranceMs = ON_TIME_TOLERANCE_MS): FirePlan {
  const due = schedule.between(handledUntil, now, 10_000);
  if (due.length === 0) return { fire: undefined, skipped: [], handledUntil, next: schedule.next(handledUntil) };
  const latest = due.at(-1)!;
  const lateMs = now - latest;
  let fire: number | undefined;
  if (due.length === 1 && lateMs <= onTimeToleranceMs) fire = latest;
  else if (misfire.policy === 'fire-once' && lateMs <= misfire.thresholdSeconds * 1000) fire = latest;
  else if (misfire.policy === 'skip' && lateMs <= onTimeToleranceMs) fire = latest;
  const skipped = due.filter((t) => t !== fire);
  return { fire, skipped, handledUntil: latest, next: schedule.next(latest) };
}
