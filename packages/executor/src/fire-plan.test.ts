import { describe, expect, it } from 'vitest';
import { createSchedule } from '@orrery/core';
import { planFire } from './fire-plan.js';

const everySecond = createSchedule({ cron: '* * * * * *' });
const every10s = createSchedule({ cron: '*/10 * * * * *' });
const T = Date.parse('2026-01-01T00:00:00Z');

describe('planFire', () => {
  it.each([
    // label, schedule, handledUntil, now, policy, fire, skipped count
    ['nothing due yet', every10s, T, T + 5000, 'fire-once', undefined, 0],
    ['due now', every10s, T, T + 10_000, 'fire-once', T + 10_000, 0],
    ['due, 300 ms late: on time', every10s, T, T + 10_300, 'skip', T + 10_000, 0],
    ['3 s late, fire-once within 5 s', every10s, T, T + 13_000, 'fire-once', T + 10_000, 0],
    ['3 s late, skip', every10s, T, T + 13_000, 'skip', undefined, 1],
    ['7 s late, beyond the threshold', every10s, T, T + 17_000, 'fire-once', undefined, 1],
    ['several missed: the latest once', everySecond, T, T + 4_200, 'fire-once', T + 4000, 3],
    ['several missed, skip: the latest is on time, the rest skipped', everySecond, T, T + 4_200, 'skip', T + 4000, 3],
    ['several missed, skip, the latest late too', every10s, T, T + 21_500, 'skip', undefined, 2],
  ] as const)('%s', (_label, schedule, handled, now, policy, fire, skipped) => {
    const plan = planFire(schedule, handled, now, { policy, thresholdSeconds: 5 });
    expect(plan.fire).toBe(fire);
    expect(plan.skipped).toHaveLength(skipped);
    if (fire !== undefined || skipped > 0) expect(plan.handledUntil).toBeLessThanOrEqual(now);
    expect(plan.next).toBeGreaterThan(plan.handledUntil);
  });
});
