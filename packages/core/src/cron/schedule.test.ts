import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createSchedule, cronIssues } from './schedule.js';
import { isValidTimeZone, wallToInstant, zoneOffset } from './time-zone.js';

const iso = (ms: number | undefined): string | undefined => (ms === undefined ? undefined : new Date(ms).toISOString());
const at = (s: string): number => Date.parse(s);

describe('cron validation', () => {
  it.each([
    ['* * * * *', true],
    ['*/5 * * * * *', true],
    ['0 30 2 * * *', true],
    ['0 0 L * *', true],
    ['* * * *', false],
    ['* * * * * * *', false],
    ['61 * * * *', false],
    ['foo bar baz qux quux', false],
    ['', false],
    ['0 0 30 2 *', false],
  ])('%s valid=%s', (cron, valid) => {
    const issues = cronIssues(cron);
    expect(issues.length === 0).toBe(valid);
    if (!valid) expect(issues[0]).toMatchObject({ field: 'cron', rule: 'cron' });
  });

  it.each([
    ['UTC', true],
    ['Europe/Berlin', true],
    ['America/New_York', true],
    ['Mars/Olympus', false],
    ['', false],
  ])('time zone %s valid=%s', (tz, valid) => expect(isValidTimeZone(tz)).toBe(valid));
});

describe('next fire time', () => {
  it.each([
    // cron, zone, after, expected next fires
    ['*/15 * * * *', 'UTC', '2026-01-01T00:00:00Z', ['2026-01-01T00:15:00.000Z', '2026-01-01T00:30:00.000Z']],
    ['*/20 * * * * *', 'UTC', '2026-01-01T00:00:05Z', ['2026-01-01T00:00:20.000Z', '2026-01-01T00:00:40.000Z', '2026-01-01T00:01:00.000Z']],
    ['0 9 * * 1-5', 'Europe/Berlin', '2026-01-02T12:00:00Z', ['2026-01-05T08:00:00.000Z', '2026-01-06T08:00:00.000Z']],
    ['0 0 * * *', 'America/New_York', '2026-07-01T00:00:00Z', ['2026-07-01T04:00:00.000Z', '2026-07-02T04:00:00.000Z']],
    // 5-field expressions fire at second 0 even when `after` is mid-minute.
    ['* * * * *', 'UTC', '2026-01-01T00:00:30.500Z', ['2026-01-01T00:01:00.000Z']],
  ])('%s in %s after %s', (cron, timeZone, after, expected) => {
    const s = createSchedule({ cron, timeZone });
    expect(s.between(at(after), at(after) + 10 * 86_400_000, expected.length).map(iso)).toEqual(expected);
  });

  describe('daylight saving', () => {
    it.each([
      // Spring forward: Berlin 2026-03-29 02:00 CET → 03:00 CEST; 02:30 does not exist: fires once at 03:00 CEST (01:00Z).
      ['30 2 * * *', 'Europe/Berlin', '2026-03-28T12:00:00Z', ['2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z']],
      // Every 15 minutes through the gap: 02:00…02:45 collapse into one fire at 03:00 CEST; 03:00 itself is that fire.
      ['*/15 * * * *', 'Europe/Berlin', '2026-03-29T00:30:00Z', ['2026-03-29T00:45:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-29T01:15:00.000Z']],
      // Fall back: Berlin 2026-10-25 03:00 CEST → 02:00 CET; 02:30 happens twice: fires at the first only (00:30Z).
      ['30 2 * * *', 'Europe/Berlin', '2026-10-24T12:00:00Z', ['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z']],
      // Hourly through the repeated hour: 02:00 fires once (00:00Z); the repeat 02:00 CET (01:00Z) does not fire.
      ['0 * * * *', 'Europe/Berlin', '2026-10-24T23:30:00Z', ['2026-10-25T00:00:00.000Z', '2026-10-25T02:00:00.000Z']],
      // New York spring forward 2026-03-08 02:00 EST → 03:00 EDT.
      ['30 2 * * *', 'America/New_York', '2026-03-07T12:00:00Z', ['2026-03-08T07:00:00.000Z', '2026-03-09T06:30:00.000Z']],
      // New York fall back 2026-11-01 02:00 EDT → 01:00 EST; 01:30 happens twice: first (05:30Z) only.
      ['30 1 * * *', 'America/New_York', '2026-10-31T12:00:00Z', ['2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z']],
      ['*/30 * * * *', 'America/New_York', '2026-11-01T04:45:00Z', ['2026-11-01T05:00:00.000Z', '2026-11-01T05:30:00.000Z', '2026-11-01T07:00:00.000Z']],
    ])('%s in %s after %s', (cron, timeZone, after, expected) => {
      const s = createSchedule({ cron, timeZone });
      expect(s.between(at(after), at(after) + 3 * 86_400_000, expected.length).map(iso)).toEqual(expected);
    });

    it('fires each wall-clock time at most once across a whole year in both zones (property)', () => {
      for (const timeZone of ['Europe/Berlin', 'America/New_York']) {
        const s = createSchedule({ cron: '*/20 * * * *', timeZone });
        const fires = s.between(at('2026-01-01T00:00:00Z'), at('2027-01-01T00:00:00Z'), 100_000);
        expect(fires.length).toBeGreaterThan(26_000);
        const walls = fires.map((t) => new Date(t + zoneOffset(t, timeZone)).toISOString());
        expect(new Set(walls).size).toBe(walls.length);
        expect(new Set(fires).size).toBe(fires.length);
        // Strictly increasing.
        for (let i = 1; i < fires.length; i += 1) expect(fires[i]!).toBeGreaterThan(fires[i - 1]!);
      }
    });

    it('the next fire is always after `after` and fires are never skipped outside DST days (property)', () => {
      const s = createSchedule({ cron: '0 */7 * * * *', timeZone: 'Europe/Berlin' });
      fc.assert(
        fc.property(fc.integer({ min: at('2026-01-01T00:00:00Z'), max: at('2027-01-01T00:00:00Z') }), (after) => {
          const next = s.next(after)!;
          expect(next).toBeGreaterThan(after);
          expect(next - after).toBeLessThanOrEqual(2 * 3_600_000);
        }),
        { numRuns: 300 },
      );
    });

    it('maps wall times to instants: first of a repeat, end of a gap', () => {
      expect(iso(wallToInstant(Date.UTC(2026, 9, 25, 2, 30), 'Europe/Berlin'))).toBe('2026-10-25T00:30:00.000Z');
      expect(iso(wallToInstant(Date.UTC(2026, 2, 29, 2, 30), 'Europe/Berlin'))).toBe('2026-03-29T01:00:00.000Z');
      expect(iso(wallToInstant(Date.UTC(2026, 0, 1, 12, 0), 'America/New_York'))).toBe('2026-01-01T17:00:00.000Z');
    });
  });

  describe('pause periods', () => {
    it.each([
      // Paused every night 23:00–01:59 (wraps midnight): hourly fires skip 23:00, 00:00 and 01:00.
      [{ cron: '0 * * * *', pausePeriodTime: '23:00-01:59' }, '2026-01-01T21:30:00Z', ['2026-01-01T22:00:00.000Z', '2026-01-02T02:00:00.000Z']],
      // Paused over Christmas (dates inclusive): a daily job skips 12/24–12/26.
      [{ cron: '0 12 * * *', pausePeriodDate: '12/24-12/26' }, '2026-12-23T00:00:00Z', ['2026-12-23T12:00:00.000Z', '2026-12-27T12:00:00.000Z']],
      // Both: paused only on the dates AND in the hours.
      [{ cron: '0 */6 * * *', pausePeriodDate: '01/01-01/01', pausePeriodTime: '00:00-11:59' }, '2025-12-31T19:00:00Z', ['2026-01-01T12:00:00.000Z', '2026-01-01T18:00:00.000Z', '2026-01-02T00:00:00.000Z']],
      // Year wrap of a date range.
      [{ cron: '0 0 * * *', pausePeriodDate: '12/31-01/02' }, '2026-12-30T12:00:00Z', ['2027-01-03T00:00:00.000Z']],
      // In the job's zone: 09:00–09:59 Berlin is 08:00–08:59Z in winter.
      [{ cron: '0 */30 * * * *', timeZone: 'Europe/Berlin', pausePeriodTime: '09:00-09:59' }, '2026-01-05T07:45:00Z', ['2026-01-05T09:00:00.000Z', '2026-01-05T09:30:00.000Z']],
    ])('%o after %s', (spec, after, expected) => {
      const s = createSchedule(spec);
      expect(s.between(at(after), at(after) + 10 * 86_400_000, expected.length).map(iso)).toEqual(expected);
    });

    it('skips a long pause quickly', () => {
      const s = createSchedule({ cron: '* * * * * *', pausePeriodDate: '01/01-06/30' });
      const t0 = performance.now();
      expect(iso(s.next(at('2026-01-01T00:00:00Z')))).toBe('2026-07-01T00:00:00.000Z');
      expect(performance.now() - t0).toBeLessThan(2000);
      expect(s.isPaused(at('2026-03-03T03:03:03Z'))).toBe(true);
    });

    it.each([
      // The nightly pause: the hourly fires it suppresses, and only those.
      [{ cron: '0 * * * *', pausePeriodTime: '23:00-01:59' }, '2026-01-01T21:30:00Z', '2026-01-02T03:00:00Z', ['2026-01-01T23:00:00.000Z', '2026-01-02T00:00:00.000Z', '2026-01-02T01:00:00.000Z']],
      // No pause period: nothing is paused.
      [{ cron: '0 * * * *' }, '2026-01-01T21:30:00Z', '2026-01-02T03:00:00Z', []],
      // In the job's zone (Berlin 09:00–09:59 is 08:00–08:59Z in winter).
      [{ cron: '0 */30 * * * *', timeZone: 'Europe/Berlin', pausePeriodTime: '09:00-09:59' }, '2026-01-05T07:45:00Z', '2026-01-05T09:00:00Z', ['2026-01-05T08:00:00.000Z', '2026-01-05T08:30:00.000Z']],
    ])('pausedBetween %o (%s, %s]', (spec, after, until, expected) => {
      const s = createSchedule(spec);
      expect(s.pausedBetween(at(after), at(until)).map(iso)).toEqual(expected);
    });

    it('pausedBetween and between together are every match, each once (property)', () => {
      const s = createSchedule({ cron: '*/10 * * * * *', pausePeriodTime: '00:01-00:02' });
      const plain = createSchedule({ cron: '*/10 * * * * *' });
      fc.assert(fc.property(fc.integer({ min: 0, max: 600_000 }), fc.integer({ min: 0, max: 400_000 }), (offset, span) => {
        const from = at('2026-01-01T00:00:00Z') + offset;
        const all = [...s.between(from, from + span), ...s.pausedBetween(from, from + span)].sort((a, b) => a - b);
        expect(all).toEqual(plain.between(from, from + span));
      }));
    });

    it('pausedBetween stops at its limit', () => {
      const s = createSchedule({ cron: '* * * * * *', pausePeriodDate: '01/01-06/30' });
      expect(s.pausedBetween(at('2026-01-01T00:00:00Z'), at('2026-01-02T00:00:00Z'), 5)).toHaveLength(5);
    });
  });
});
