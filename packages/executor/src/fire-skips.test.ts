import { describe, expect, it } from 'vitest';
import { noteSkip, skipOutcome, type SkipReason, type SkipStreak } from './fire-skips.js';

const limits = { burst: 3, intervalMs: 60_000 };

/** Feeds skips (reason, fire time, now) through the rule: the lines it would log. */
function lines(skips: Array<[SkipReason, number, number]>): string[] {
  let streak: SkipStreak | undefined;
  const out: string[] = [];
  for (const [reason, fireTime, now] of skips) {
    const next = noteSkip(streak, reason, fireTime, now, limits);
    if (next.summary) out.push(`summary ${next.summary.reason} ${next.summary.suppressed} ${next.summary.firstSuppressed}-${next.summary.lastSuppressed}`);
    if (next.logThis) out.push(`${reason} ${fireTime}`);
    streak = next.streak;
  }
  return out;
}

describe('skip logging', () => {
  it.each([
    ['one skip: one line', [['misfire', 1, 1]], ['misfire 1']],
    ['a burst within the limit: a line each', [['overlap', 1, 1], ['overlap', 2, 2], ['overlap', 3, 3]], ['overlap 1', 'overlap 2', 'overlap 3']],
    ['past the burst: summarised when the reason changes', [['overlap', 1, 1], ['overlap', 2, 2], ['overlap', 3, 3], ['overlap', 4, 4], ['overlap', 5, 5], ['misfire', 6, 6]],
      ['overlap 1', 'overlap 2', 'overlap 3', 'summary overlap 2 4-5', 'misfire 6']],
    ['past the burst: summarised when the interval ends', [['pause-period', 1, 1], ['pause-period', 2, 2], ['pause-period', 3, 3], ['pause-period', 4, 4], ['pause-period', 60_001, 60_001]],
      ['pause-period 1', 'pause-period 2', 'pause-period 3', 'summary pause-period 1 4-4', 'pause-period 60001']],
    ['a new reason starts a new streak', [['overlap', 1, 1], ['misfire', 2, 2], ['overlap', 3, 3]], ['overlap 1', 'misfire 2', 'overlap 3']],
  ] as const)('%s', (_label, skips, expected) => {
    expect(lines(skips.map((s) => [...s]))).toEqual(expected);
  });

  it('logs an every-second pause of a day in a few lines a minute, counting every skip', () => {
    let streak: SkipStreak | undefined;
    let logged = 0;
    let summarised = 0;
    for (let t = 0; t < 86_400; t += 1) {
      const next = noteSkip(streak, 'pause-period', t * 1000, t * 1000, limits);
      if (next.logThis) logged += 1;
      if (next.summary) summarised += next.summary.suppressed;
      streak = next.streak;
    }
    expect(logged).toBeLessThanOrEqual((86_400 / 60 + 1) * limits.burst);
    expect(logged + summarised + (streak?.suppressed ?? 0)).toBe(86_400);
  });

  it('keeps the historical metric label of overlap', () => {
    expect(skipOutcome('overlap')).toBe('overlap-skipped');
    expect(skipOutcome('pause-period')).toBe('pause-period');
    expect(skipOutcome('disabled')).toBe('disabled');
  });
});
