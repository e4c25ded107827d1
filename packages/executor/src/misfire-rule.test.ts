import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { catchUpFire, lookBackFrom, mayStillRun, misfireWindowMs, REQUESTED_RUN_WAIT_MS, startDeadline, type MisfirePolicy, type Trigger } from './misfire-rule.js';

const T = Date.parse('2026-01-01T00:00:00Z');
const fireOnce: MisfirePolicy = { policy: 'fire-once', thresholdSeconds: 5 };
const skip: MisfirePolicy = { policy: 'skip', thresholdSeconds: 5 };

describe('the misfire rule', () => {
  it.each([
    // policy, late by (ms), may still run
    [fireOnce, 0, true],
    [fireOnce, 1000, true],
    [fireOnce, 5000, true],
    [fireOnce, 5001, false],
    [skip, 0, true],
    [skip, 1000, true],
    [skip, 1001, false],
    [skip, 5000, false],
    // A threshold under the on-time tolerance still lets an on-time fire run.
    [{ policy: 'fire-once', thresholdSeconds: 0 } as const, 900, true],
    [{ policy: 'fire-once', thresholdSeconds: 0 } as const, 1100, false],
  ] as const)('%o, %i ms late: may run %s', (misfire, late, expected) => {
    expect(mayStillRun(T, T + late, misfire)).toBe(expected);
  });

  it.each([
    // trigger, policy, deadline (relative to T, asked at T + 2000)
    ['cron', fireOnce, 5000],
    ['cron', skip, 1000],
    ['misfire', fireOnce, 5000],
    ['misfire', skip, 1000],
    ['run-now', fireOnce, 2000 + REQUESTED_RUN_WAIT_MS],
    ['run-now', skip, 2000 + REQUESTED_RUN_WAIT_MS],
    ['downstream', skip, 2000 + REQUESTED_RUN_WAIT_MS],
    ['failover', skip, 2000 + REQUESTED_RUN_WAIT_MS],
    ['retry', fireOnce, undefined],
    ['retry', skip, undefined],
  ] as const)('a %s fire under %o may wait until T+%s', (trigger, misfire, deadline) => {
    expect(startDeadline(trigger as Trigger, T, T + 2000, misfire)).toBe(deadline === undefined ? undefined : T + deadline);
  });

  it.each([
    // first start?, changedAt, policy, look back from (relative to now = T + 60 000)
    [false, T, fireOnce, 60_000],
    [true, 0, fireOnce, 55_000],
    [true, 0, skip, 60_000],
    // The config was written 2 s ago: nothing before it was missed.
    [true, T + 58_000, fireOnce, 58_000],
    // A clock behind the node's mtime: never in the future.
    [true, T + 70_000, fireOnce, 60_000],
  ] as const)('first start %s, config written at %i, %o: looks back from T+%i', (firstStart, changedAt, misfire, from) => {
    expect(lookBackFrom({ now: T + 60_000, changedAt, firstStart, misfire })).toBe(T + from);
  });

  it.each([
    // due fires, policy, window, expected
    [[T + 1000, T + 2000], fireOnce, { lookBackFrom: T, handledUntil: T + 2000 }, T + 2000],
    [[T + 1000, T + 2000], skip, { lookBackFrom: T, handledUntil: T + 2000 }, undefined],
    // Not handled here yet: the timer fires it, not the catch-up.
    [[T + 1000, T + 2000], fireOnce, { lookBackFrom: T, handledUntil: T + 1000 }, undefined],
    // From before the look back: not a missed fire.
    [[T + 1000, T + 2000], fireOnce, { lookBackFrom: T + 2000, handledUntil: T + 2000 }, undefined],
    [[], fireOnce, { lookBackFrom: T, handledUntil: T + 2000 }, undefined],
  ] as const)('catch-up of %o under %o within %o: %s', (due, misfire, window, expected) => {
    expect(catchUpFire(due, T + 3000, misfire, window)).toBe(expected);
  });

  it('never lets a fire start outside its window (property)', () => {
    fc.assert(fc.property(fc.constantFrom<'skip' | 'fire-once'>('skip', 'fire-once'), fc.nat(3600), fc.integer({ min: -1000, max: 10_000_000 }), (policy, thresholdSeconds, late) => {
      const misfire = { policy, thresholdSeconds };
      const window = misfireWindowMs(misfire);
      expect(mayStillRun(T, T + late, misfire)).toBe(late <= window);
      expect(window).toBeGreaterThanOrEqual(1000);
      if (policy === 'skip') expect(window).toBe(1000);
      const deadline = startDeadline('cron', T, T + late, misfire)!;
      expect(deadline - T).toBe(window);
    }));
  });
});
