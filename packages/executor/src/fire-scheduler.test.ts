import { createSchedule } from '@orrery/core';
import { describe, expect, it } from 'vitest';
import { createClaimLead } from './claim-lead.js';
import { createFireScheduler, PAUSE_REPORT_INTERVAL_MS, REPLAN_INTERVAL_MS, type Clock } from './fire-scheduler.js';

const T = Date.parse('2026-01-01T00:00:00Z');

/** A clock that moves only when told; timers run in time order as it passes them. */
function fakeClock(start: number): Clock & { advance(ms: number): void; jump(ms: number): void; pending(): number } {
  let now = start;
  let seq = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  return {
    now: () => now,
    setTimeout(fn, ms) {
      seq += 1;
      timers.set(seq, { at: now + Math.max(0, ms), fn });
      return seq;
    },
    clearTimeout(handle) {
      timers.delete(handle as number);
    },
    advance(ms) {
      const until = now + ms;
      for (;;) {
        const due = [...timers.entries()].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        timers.delete(due[0]);
        now = Math.max(now, due[1].at);
        due[1].fn();
      }
      now = until;
    },
    /** The process stalls: time passes and no timer runs (until the next `advance`). */
    jump(ms) {
      now += ms;
    },
    pending: () => timers.size,
  };
}

function setup(cron: string, options: { misfire?: { policy: 'skip' | 'fire-once'; thresholdSeconds: number }; pausePeriodTime?: string; leadMs?: number } = {}) {
  const clock = fakeClock(T);
  const events: string[] = [];
  const scheduler = createFireScheduler({
    clock,
    claimLead: createClaimLead({ initialMs: options.leadMs ?? 0, minLeadMs: options.leadMs ?? 0 }),
    onFire: (t, trigger) => events.push(`${trigger} ${(t - T) / 1000}`),
    onFireEarly: (t) => events.push(`early ${(t - T) / 1000} at ${(clock.now() - T) / 1000}`),
    onSkip: (t, reason) => events.push(`skipped:${reason} ${(t - T) / 1000}`),
  });
  const schedule = createSchedule({ cron, ...(options.pausePeriodTime ? { pausePeriodTime: options.pausePeriodTime } : {}) });
  const misfire = options.misfire ?? { policy: 'fire-once' as const, thresholdSeconds: 5 };
  return { clock, events, scheduler, start: () => scheduler.update({ schedule, misfire, enabled: true }, { firstStart: false, changedAt: 0 }), schedule, misfire };
}

describe('the fire scheduler (fake clock)', () => {
  it('fires each fire time once, on time', () => {
    const s = setup('*/10 * * * * *');
    s.start();
    s.clock.advance(35_000);
    expect(s.events).toEqual(['cron 10', 'cron 20', 'cron 30']);
  });

  it('claims early by the claim lead, never more than 60 % of the period', () => {
    const s = setup('*/10 * * * * *', { leadMs: 300 });
    s.start();
    s.clock.advance(21_000);
    expect(s.events).toEqual(['early 10 at 9.7', 'early 20 at 19.7']);
    const every = setup('* * * * * *', { leadMs: 800 });
    every.start();
    every.clock.advance(2_100);
    // 60 % of a 1 s period: 600 ms ahead at most.
    expect(every.events).toEqual(['early 1 at 0.4', 'early 2 at 1.4']);
  });

  it('fires nothing while disabled or stopped, and again once enabled', () => {
    const s = setup('*/10 * * * * *');
    s.scheduler.update({ schedule: s.schedule, misfire: s.misfire, enabled: false }, { firstStart: false, changedAt: 0 });
    s.clock.advance(25_000);
    expect(s.events).toEqual([]);
    expect(s.clock.pending()).toBe(0);
    s.scheduler.update({ schedule: s.schedule, misfire: s.misfire, enabled: true }, { firstStart: false, changedAt: 0 });
    s.clock.advance(10_000);
    expect(s.events).toEqual(['cron 30']);
    s.scheduler.stop();
    s.clock.advance(60_000);
    expect(s.events).toEqual(['cron 30']);
  });

  it.each([
    // policy, how late the timer wakes (ms), events
    ['fire-once', 800, ['cron 10']],
    ['fire-once', 3000, ['misfire 10']],
    ['fire-once', 7000, ['skipped:misfire 10']],
    ['skip', 800, ['cron 10']],
    ['skip', 3000, ['skipped:misfire 10']],
  ] as const)('a timer woken late (%s, %i ms): %o', (policy, lateMs, expected) => {
    const s = setup('*/10 * * * * *', { misfire: { policy, thresholdSeconds: 5 } });
    s.start();
    s.clock.advance(9_000);
    s.clock.jump(1000 + lateMs);
    s.clock.advance(0);
    expect(s.events).toEqual(expected);
  });

  it('re-plans a long wait at least hourly', () => {
    const s = setup('0 0 12 * * *');
    s.start();
    s.clock.advance(REPLAN_INTERVAL_MS - 1);
    expect(s.clock.pending()).toBe(1);
    s.clock.advance(12 * REPLAN_INTERVAL_MS);
    expect(s.events).toEqual(['cron 43200']);
  });

  it('reports fires a pause period suppresses: the first when it comes, then at most every minute', () => {
    // Paused 00:01–00:02 (two minutes of an every-second job: 120 fires).
    const s = setup('* * * * * *', { pausePeriodTime: '00:01-00:02' });
    s.start();
    s.clock.advance(59_999);
    expect(s.events.filter((e) => e.startsWith('skipped:pause')).length).toBe(0);
    s.clock.advance(1);
    // The first paused fire (00:01:00) is reported when it comes.
    expect(s.events.filter((e) => e.startsWith('skipped:pause'))).toEqual(['skipped:pause-period 60']);
    s.clock.advance(PAUSE_REPORT_INTERVAL_MS);
    const paused = s.events.filter((e) => e.startsWith('skipped:pause')).length;
    expect(paused).toBeGreaterThan(50);
    s.clock.advance(2 * PAUSE_REPORT_INTERVAL_MS);
    const all = s.events.filter((e) => e.startsWith('skipped:pause')).map((e) => Number(e.split(' ')[1]));
    // Every paused second reported once; every other second fired.
    expect(all).toEqual(Array.from({ length: 120 }, (_, i) => 60 + i));
    const fired = s.events.filter((e) => e.startsWith('cron')).map((e) => Number(e.split(' ')[1]));
    expect(fired.filter((t) => t >= 60 && t < 180)).toEqual([]);
    expect(fired).toContain(180);
    expect(fired).toContain(59);
  });

  it('a first start runs the latest fire in the look back (fire-once) and reports the older ones', () => {
    const s = setup('* * * * * *');
    // Started 3.5 s into the day, the config written 10 s before: it looks back 5 s (to -1.5 s).
    s.clock.advance(3500);
    s.scheduler.update({ schedule: s.schedule, misfire: s.misfire, enabled: true }, { firstStart: true, changedAt: T - 10_000 });
    expect(s.events).toEqual(['skipped:misfire -1', 'skipped:misfire 0', 'skipped:misfire 1', 'skipped:misfire 2', 'cron 3']);
    // A config written 1 s ago: nothing from before it.
    const fresh = setup('* * * * * *');
    fresh.clock.advance(3500);
    fresh.scheduler.update({ schedule: fresh.schedule, misfire: fresh.misfire, enabled: true }, { firstStart: true, changedAt: T + 2500 });
    expect(fresh.events).toEqual(['cron 3']);
  });

  it('gives a gained item the catch-up fire only when it was handled here', () => {
    const s = setup('*/10 * * * * *');
    s.start();
    s.clock.advance(12_000);
    expect(s.events).toEqual(['cron 10']);
    expect(s.scheduler.catchUp()).toBe(T + 10_000);
    s.clock.advance(5_000);
    expect(s.scheduler.catchUp()).toBeUndefined();
  });
});
