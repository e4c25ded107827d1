/**
 * The timer of one job on one executor: one timer per job (not per shard), on an injected clock.
 *
 * - Plans each wake-up with `planFire` (fire-plan.ts) and the misfire rule (misfire-rule.ts): a fire
 *   due now runs (`cron`, or `misfire` when it runs late within its window); missed ones are
 *   reported as skipped (`misfire`).
 * - Fast path: when the planned fire is at hand (within the claim lead ahead, or on time) it fires
 *   first and plans after. A fire just ahead fires **early** (`onFireEarly`): its claims go out up to
 *   the claim lead (claim-lead.ts) before the fire time, never more than 60 % of the job's period.
 * - Long waits are re-planned at least every {@link REPLAN_INTERVAL_MS} (a timer cannot wait more
 *   than ~24 days, and a clock step is caught).
 * - Fire times the pause periods suppress are reported as skipped (`pause-period`): the first one
 *   when it comes, later ones at most every {@link PAUSE_REPORT_INTERVAL_MS}, so an every-second job
 *   in a long pause does not wake every second.
 *
 * Guarantees: each fire time is handed out at most once (fired, fired early, or skipped) per
 * {@link FireScheduler.update} that resets the schedule; nothing fires while disabled or stopped.
 * Not guaranteed: that a fire handed out runs (claims, overlap and the fence decide).
 */
import type { Schedule } from '@orrery/core';
import type { ClaimLead } from './claim-lead.js';
import { pausedFires, planFire } from './fire-plan.js';
import { catchUpFire, lookBackFrom, ON_TIME_TOLERANCE_MS, type MisfirePolicy } from './misfire-rule.js';

/** Time and timers, injected (tests drive a fake clock). */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The process's clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** Waits longer than this (ms) are re-planned on the way. */
export const REPLAN_INTERVAL_MS = 3_600_000;
/** A job claims at most this fraction of its period ahead of a fire. */
export const MAX_LEAD_PERIOD_FRACTION = 0.6;
/** Slack (ms) past the maximum claim lead within which a wake-up still takes the fast path. */
export const FAST_PATH_SLACK_MS = 50;
/** Fire times suppressed by a pause period are reported at least this often (ms) while it lasts. */
export const PAUSE_REPORT_INTERVAL_MS = 60_000;

/** What the scheduler plans from (the job's config, compiled). */
export interface SchedulerInput {
  schedule: Schedule | undefined;
  misfire: MisfirePolicy;
  enabled: boolean;
}

export interface FireSchedulerOptions {
  clock?: Clock;
  claimLead: ClaimLead;
  /** Fire every item now (`cron`, or `misfire` for a late fire within the misfire window). */
  onFire(fireTime: number, trigger: 'cron' | 'misfire'): void;
  /** Fire every item at `fireTime`, which is just ahead: claim now, start on the dot. */
  onFireEarly(fireTime: number): void;
  /** A fire time that does not run. */
  onSkip(fireTime: number, reason: 'misfire' | 'pause-period'): void;
}

export interface FireScheduler {
  /**
   * Takes the job's schedule. With `reset` (a new or changed schedule) the fires handled so far are
   * forgotten and the look back for missed fires starts as the misfire rule says (`lookBackFrom`).
   * Then looks at once whether anything is due.
   */
  update(input: SchedulerInput, reset?: { firstStart: boolean; changedAt: number }): void;
  /** The fire an item just gained here may catch up (see misfire-rule.ts `catchUpFire`). */
  catchUp(): number | undefined;
  /** Stops the timer (until the next `update`). */
  stop(): void;
}

export function createFireScheduler(options: FireSchedulerOptions): FireScheduler {
  const clock = options.clock ?? systemClock;
  const { claimLead } = options;
  let input: SchedulerInput | undefined;
  let handledUntil = 0;
  /** Fires at or before this are never caught up as missed. */
  let lookBack = 0;
  /** Paused fire times up to this were reported. */
  let pausedUntil = 0;
  let pauseReportedAt = Number.NEGATIVE_INFINITY;
  /** The next fire time as planned at the last tick (the common case needs no re-planning). */
  let planned: number | undefined;
  let timer: unknown;

  function stop(): void {
    if (timer !== undefined) clock.clearTimeout(timer);
    timer = undefined;
  }

  function reportPaused(schedule: Schedule, now: number): void {
    if (now <= pausedUntil) return;
    const paused = pausedFires(schedule, pausedUntil, now);
    pausedUntil = now;
    if (paused.length > 0) pauseReportedAt = now;
    for (const t of paused) options.onSkip(t, 'pause-period');
  }

  /** Wakes up a claim lead before the planned fire (claims go out early; runs start on time). */
  function arm(schedule: Schedule, now: number): void {
    let wakeAt = now + REPLAN_INTERVAL_MS;
    if (planned !== undefined) {
      const period = Math.max(0, planned - handledUntil);
      const lead = Math.min(claimLead.leadMs(), Math.floor(period * MAX_LEAD_PERIOD_FRACTION));
      wakeAt = Math.min(wakeAt, planned - lead);
    }
    const paused = pausedFires(schedule, pausedUntil, wakeAt, 1).at(0);
    if (paused !== undefined) wakeAt = Math.min(wakeAt, Math.max(paused, pauseReportedAt + PAUSE_REPORT_INTERVAL_MS));
    timer = clock.setTimeout(tick, Math.max(0, wakeAt - now));
  }

  function tick(): void {
    stop();
    const current = input;
    if (!current?.enabled || !current.schedule) return;
    const { schedule, misfire } = current;
    const now = clock.now();
    reportPaused(schedule, now);
    if (planned !== undefined && planned > handledUntil && now - planned <= ON_TIME_TOLERANCE_MS && planned - now <= claimLead.maxLeadMs + FAST_PATH_SLACK_MS) {
      const fireTime = planned;
      handledUntil = fireTime;
      if (fireTime > now) options.onFireEarly(fireTime);
      else options.onFire(fireTime, 'cron');
      planned = schedule.next(handledUntil);
      arm(schedule, now);
      return;
    }
    const plan = planFire(schedule, handledUntil, now, misfire);
    handledUntil = plan.handledUntil;
    for (const t of plan.skipped) options.onSkip(t, 'misfire');
    if (plan.fire !== undefined) options.onFire(plan.fire, now - plan.fire > ON_TIME_TOLERANCE_MS ? 'misfire' : 'cron');
    planned = plan.next;
    arm(schedule, now);
  }

  return {
    update(next, reset) {
      input = next;
      if (reset) {
        const now = clock.now();
        planned = undefined;
        lookBack = lookBackFrom({ now, changedAt: reset.changedAt, firstStart: reset.firstStart, misfire: next.misfire });
        handledUntil = lookBack;
        // Only pauses from now on are reported: a restart does not report its downtime's pauses.
        pausedUntil = now;
        pauseReportedAt = Number.NEGATIVE_INFINITY;
      }
      tick();
    },
    catchUp() {
      const current = input;
      if (!current?.enabled || !current.schedule || current.misfire.policy !== 'fire-once') return undefined;
      const now = clock.now();
      const due = current.schedule.between(now - current.misfire.thresholdSeconds * 1000, now, 1000);
      return catchUpFire(due, now, current.misfire, { lookBackFrom: lookBack, handledUntil });
    },
    stop,
  };
}
