/**
 * When to fire (pure): given a schedule, the last fire time handled and the clock, which fire time
 * (if any) runs now, and what was missed — the misfire rule (misfire-rule.ts) applied to a timer:
 * - a fire time reached within its misfire window runs (on time: within the tolerance; `fire-once`:
 *   within `thresholdSeconds`);
 * - of several fire times missed (the executor was busy or down, or its shard just arrived) only
 *   the **latest** may run; the rest are skipped.
 * - fire times the pause periods suppress are listed apart (`paused`), so they can be reported.
 */
import type { Schedule } from '@orrery/core';
import { mayStillRun, ON_TIME_TOLERANCE_MS, type MisfirePolicy } from './misfire-rule.js';

export { ON_TIME_TOLERANCE_MS, type MisfirePolicy } from './misfire-rule.js';

export interface FirePlan {
  /** The fire time to run now, if any. */
  fire: number | undefined;
  /** Fire times passed over as misfires (for metrics and logs). */
  skipped: number[];
  /** The new "handled up to" mark. */
  handledUntil: number;
  /** When to look again: the next fire time after `handledUntil` (undefined: none). */
  next: number | undefined;
}

/** At most this many missed fire times are listed by one plan (an every-second job down for a day). */
export const MAX_PLANNED_FIRES = 10_000;

export function planFire(schedule: Schedule, handledUntil: number, now: number, misfire: MisfirePolicy, onTimeToleranceMs = ON_TIME_TOLERANCE_MS): FirePlan {
  const due = schedule.between(handledUntil, now, MAX_PLANNED_FIRES);
  if (due.length === 0) return { fire: undefined, skipped: [], handledUntil, next: schedule.next(handledUntil) };
  const latest = due.at(-1)!;
  const fire = mayStillRun(latest, now, misfire, onTimeToleranceMs) ? latest : undefined;
  const skipped = due.filter((t) => t !== fire);
  return { fire, skipped, handledUntil: latest, next: schedule.next(latest) };
}

/** The fire times the pause periods suppressed in (`after`, `now`], at most `limit` (reported as `pause-period`). */
export function pausedFires(schedule: Schedule, after: number, now: number, limit = MAX_PLANNED_FIRES): number[] {
  return schedule.pausedBetween(after, now, limit);
}
