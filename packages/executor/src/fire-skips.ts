/**
 * Fires that do not run: every one is counted by reason (`orrery_executor_fires_not_run_total`),
 * emitted as `fire:skipped` with its reason, and logged — without flooding.
 *
 * Logging (a pure rule, {@link noteSkip}, with a small shell): per job and run of identical
 * reasons, the first {@link SKIP_LOG_BURST} skipped fires of each {@link SKIP_SUMMARY_INTERVAL_MS}
 * are logged one line each (`fire skipped`, fields job/item/fireTime/reason); further ones are only
 * counted, and summarised in one line (`fires skipped`, with the reason, how many, and the first and
 * last fire time) when the interval ends, when the reason changes, when a fire of the job runs, and
 * when the job stops here. An every-second job in a day-long pause period thus writes ten lines and
 * then one a minute, not 86 400; the metric and the events still see every fire.
 */
import type { Emitter, Logger } from '@orrery/core';
import type { ExecutorEvents } from './executor-events.js';
import type { ExecutorMetrics } from './executor-metrics.js';

/** Why a fire did not run here. */
export type SkipReason = ExecutorEvents['fire:skipped']['reason'];

/** Skips of one reason are logged one line each at most this many times per interval… */
export const SKIP_LOG_BURST = 10;
/** …of this long (ms); the rest are summarised once the interval ends. */
export const SKIP_SUMMARY_INTERVAL_MS = 60_000;

/**
 * The metric label (`outcome`) of each reason. `overlap` keeps its historical label
 * `overlap-skipped`; every other reason is its own label.
 */
export function skipOutcome(reason: SkipReason): string {
  return reason === 'overlap' ? 'overlap-skipped' : reason;
}

/** Skips of one reason in a row. */
export interface SkipStreak {
  reason: SkipReason;
  /** When the current interval began (ms). */
  since: number;
  /** Skips logged on their own line in this interval. */
  logged: number;
  /** Skips not logged (yet) in this interval, and their first and last fire times. */
  suppressed: number;
  firstSuppressed: number | undefined;
  lastSuppressed: number | undefined;
}

/** What to log for one more skip. */
export interface SkipLog {
  /** The streak to keep. */
  streak: SkipStreak;
  /** Log this skip on its own line. */
  logThis: boolean;
  /** Log this summary (of the suppressed skips of a streak or interval) first. */
  summary: SkipStreak | undefined;
}

/** Pure: given the current streak (if any), a new skip of `reason` for `fireTime` at `now`. */
export function noteSkip(streak: SkipStreak | undefined, reason: SkipReason, fireTime: number, now: number, limits = { burst: SKIP_LOG_BURST, intervalMs: SKIP_SUMMARY_INTERVAL_MS }): SkipLog {
  const fresh: SkipStreak = { reason, since: now, logged: 1, suppressed: 0, firstSuppressed: undefined, lastSuppressed: undefined };
  const pending = streak && streak.suppressed > 0 ? streak : undefined;
  if (!streak || streak.reason !== reason || now - streak.since >= limits.intervalMs) return { streak: fresh, logThis: true, summary: pending };
  if (streak.logged < limits.burst) return { streak: { ...streak, logged: streak.logged + 1 }, logThis: true, summary: undefined };
  return {
    streak: { ...streak, suppressed: streak.suppressed + 1, firstSuppressed: streak.firstSuppressed ?? fireTime, lastSuppressed: fireTime },
    logThis: false,
    summary: undefined,
  };
}

/** The skips of one job: count, emit, log (see the module comment). */
export interface FireSkips {
  /** A fire of `item` (undefined: the whole fire, every item) for `fireTime` did not run, for `reason`. */
  skip(item: number | undefined, fireTime: number, reason: SkipReason): void;
  /** A fire of the job ran: the current streak (if any) is summarised and ended. */
  ran(): void;
  /** The job stops here: the current streak is summarised. */
  flush(): void;
}

/** `logger` is the job's own (its lines carry the job already: the job runtime's child logger). */
export function createFireSkips(options: { job: string; logger: Logger; emitter: Emitter<ExecutorEvents>; metrics: ExecutorMetrics; now?: () => number }): FireSkips {
  const { job, logger, emitter, metrics } = options;
  const now = options.now ?? Date.now;
  let streak: SkipStreak | undefined;
  const summarise = (s: SkipStreak): void => {
    logger.info({ reason: s.reason, count: s.suppressed, firstFireTime: s.firstSuppressed, lastFireTime: s.lastSuppressed }, 'fires skipped');
  };
  return {
    skip(item, fireTime, reason) {
      metrics.fires.inc({ outcome: skipOutcome(reason) });
      emitter.emit('fire:skipped', { job, item, fireTime, reason });
      const next = noteSkip(streak, reason, fireTime, now());
      if (next.summary) summarise(next.summary);
      if (next.logThis) logger.info({ item, fireTime, reason }, 'fire skipped');
      streak = next.streak;
    },
    ran() {
      if (streak && streak.suppressed > 0) summarise(streak);
      streak = undefined;
    },
    flush() {
      if (streak && streak.suppressed > 0) summarise(streak);
      streak = undefined;
    },
  };
}
