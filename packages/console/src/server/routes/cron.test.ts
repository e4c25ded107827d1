// The cron preview: fire times by core's schedule, notes for DST gaps and repeats (Europe/Berlin,
// 2025-03-30 and 2025-10-26), and 400s naming the field and the rule.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { startClusterConsole, type ClusterTestConsole } from './cluster-test-support.js';
import { cronPreview, cronRoutes } from './cron.js';

const BERLIN = 'Europe/Berlin';

describe('cronPreview (pure)', () => {
  it('lists the next fire times in the zone and UTC', () => {
    const p = cronPreview('0 9 * * 1-5', 'Asia/Tokyo', Date.UTC(2025, 0, 3, 0, 30), 3); // Friday 09:30 in Tokyo
    expect(p.fires.map((f) => f.local)).toEqual(['2025-01-06T09:00:00+09:00', '2025-01-07T09:00:00+09:00', '2025-01-08T09:00:00+09:00']);
    expect(p.fires[0]).toMatchObject({ at: Date.UTC(2025, 0, 6, 0), utc: '2025-01-06T00:00:00.000Z', timeZone: 'Asia/Tokyo' });
    expect(p.notes).toEqual([]);
  });

  it('notes a fire time skipped by the spring-forward gap: it fires once, right after the gap', () => {
    const p = cronPreview('30 2 * * *', BERLIN, Date.UTC(2025, 2, 28, 12), 3);
    expect(p.fires.map((f) => f.local)).toEqual(['2025-03-29T02:30:00+01:00', '2025-03-30T03:00:00+02:00', '2025-03-31T02:30:00+02:00']);
    expect(p.fires[1]!.dst).toBe('shifted');
    expect(p.notes).toEqual([expect.objectContaining({ kind: 'skipped', from: '2025-03-30 02:30:00', count: 1, firesAt: expect.objectContaining({ local: '2025-03-30T03:00:00+02:00' }) })]);
    expect(p.notes[0]!.message).toContain('does not exist in Europe/Berlin (the clocks go forward)');
  });

  it('collapses several gap times into one note and one fire', () => {
    const p = cronPreview('*/20 2 * * *', BERLIN, Date.UTC(2025, 2, 29, 23), 2);
    expect(p.fires.map((f) => f.local)).toEqual(['2025-03-30T03:00:00+02:00', '2025-03-31T02:00:00+02:00']);
    expect(p.notes).toEqual([expect.objectContaining({ kind: 'skipped', from: '2025-03-30 02:00:00', to: '2025-03-30 02:40:00', count: 3 })]);
  });

  it('notes a repeated fire time in the fall-back hour: it fires once, at the first', () => {
    const p = cronPreview('30 2 * * *', BERLIN, Date.UTC(2025, 9, 25, 12), 2);
    expect(p.fires.map((f) => f.local)).toEqual(['2025-10-26T02:30:00+02:00', '2025-10-27T02:30:00+01:00']);
    expect(p.fires[0]!.dst).toBe('first-of-repeat');
    expect(p.notes).toEqual([expect.objectContaining({ kind: 'repeated', from: '2025-10-26 02:30:00', count: 1 })]);
    expect(p.notes[0]!.message).toContain('happens twice');
  });
});

const zkConnect = inject('zkConnect');
let c: ClusterTestConsole;
beforeAll(async () => {
  c = await startClusterConsole(zkConnect, 'console-cron', [cronRoutes], { now: () => Date.UTC(2025, 2, 28, 12) });
});
afterAll(async () => {
  await c.close();
});

describe('GET /cron/preview', () => {
  it('answers any signed-in user, from now by default; 6 fields with seconds', async () => {
    const res = await c.as('eve', { method: 'GET', url: `/api/v1/cron/preview?expr=${encodeURIComponent('30 2 * * *')}&timeZone=${BERLIN}&count=2` });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ expr: '30 2 * * *', timeZone: BERLIN, fires: [{ local: '2025-03-29T02:30:00+01:00' }, { local: '2025-03-30T03:00:00+02:00', dst: 'shifted' }], notes: [{ kind: 'skipped' }] });
    const seconds = await c.as('eve', { method: 'GET', url: `/api/v1/cron/preview?expr=${encodeURIComponent('*/15 * * * * *')}&count=3` });
    expect(seconds.json().fires.map((f: { utc: string }) => f.utc)).toEqual(['2025-03-28T12:00:15.000Z', '2025-03-28T12:00:30.000Z', '2025-03-28T12:00:45.000Z']);
    expect((await c.as(undefined, { method: 'GET', url: '/api/v1/cron/preview?expr=*+*+*+*+*' })).statusCode).toBe(401);
  });

  it('refuses bad input with a 400 naming the field and the rule', async () => {
    const cases: Array<[string, string, string]> = [
      [`expr=${encodeURIComponent('61 * * * *')}`, 'expr', 'cron'],
      [`expr=${encodeURIComponent('* * *')}`, 'expr', 'cron'],
      [`expr=${encodeURIComponent('* * * * *')}&timeZone=Mars/Olympus`, 'timeZone', 'time-zone'],
      [`expr=${encodeURIComponent('* * * * *')}&count=101`, 'count', 'maximum'],
      [`expr=${encodeURIComponent('* * * * *')}&count=1e2`, 'count', 'type'],
      ['', 'expr', 'required'],
      [`expr=${encodeURIComponent('* * * * *')}&colour=red`, 'colour', 'unknown-field'],
    ];
    for (const [query, field, rule] of cases) {
      const res = await c.as('eve', { method: 'GET', url: `/api/v1/cron/preview?${query}` });
      expect(res.statusCode, query).toBe(400);
      expect(res.json().error.details.issues, query).toEqual(expect.arrayContaining([expect.objectContaining({ field, rule })]));
    }
  });
});
