// The runs timeline's and the durations chart's layout (src/features/job-detail/timeline.ts): plain
// functions, no DOM — rows and order, widths, the executor-change and failover marks, ticks on round
// wall-clock times of a pinned zone, keyboard neighbours, duration ticks. (A .tsx file only because
// this package's vitest project collects test/*.test.tsx.)
import type { RunAnswer } from '@orrery/console/api-types';
import { describe, expect, it } from 'vitest';
import {
  GUTTER_PX,
  MIN_CELL_PX,
  RIGHT_PAD_PX,
  durationTicks,
  layoutDurationChart,
  layoutTimeline,
  neighbourCell,
  timeDomain,
  timeTicks,
} from '../src/features/job-detail/timeline';
import { formatDuration } from '../src/features/job-detail/format';
import { translate } from '../src/i18n';

const T0 = Date.UTC(2026, 10, 23, 8, 0, 0);
const MIN = 60_000;

function run(runId: string, item: number, startMin: number, durationMin: number | null, extra: Partial<RunAnswer> = {}): RunAnswer {
  const startedAt = T0 + startMin * MIN;
  const running = durationMin === null;
  return {
    runId, job: 'report', item, executor: 'e1', status: running ? 'running' : 'succeeded', startedAt,
    endedAt: running ? null : startedAt + durationMin * MIN, durationMs: running ? null : durationMin * MIN,
    exitCode: running ? null : 0, fireTime: startedAt, attempt: 1, trigger: running ? null : 'cron', message: '', recorded: running ? null : true,
    ...extra,
  };
}

const UTC = () => 0;
const SHANGHAI = () => 8 * 3_600_000;

describe('the timeline layout', () => {
  it('puts each run in its item’s row, rows ascending, each row oldest first, positioned by start and sized by duration', () => {
    const runs = [
      run('c', 1, 40, 5),
      run('a', 0, 0, 10),
      run('d', 2, 20, 1),
      run('b', 1, 10, 20),
      run('e', 0, 30, 30),
    ];
    const layout = layoutTimeline(runs, { width: 1000, now: T0 + 60 * MIN, domain: { start: T0, end: T0 + 60 * MIN }, zoneOffset: UTC });
    expect(layout.rows.map((r) => r.item)).toEqual([0, 1, 2]);
    expect(layout.rows.map((r) => r.cells.map((c) => c.run.runId))).toEqual([['a', 'e'], ['b', 'c'], ['d']]);
    const plotWidth = 1000 - GUTTER_PX - RIGHT_PAD_PX;
    const [a, e] = layout.rows[0]!.cells;
    expect(a!.x).toBeCloseTo(GUTTER_PX);
    expect(a!.width).toBeCloseTo(plotWidth / 6);
    expect(e!.x).toBeCloseTo(GUTTER_PX + plotWidth / 2);
    expect(e!.width).toBeCloseTo(plotWidth / 2);
    // Rows stack downwards; cells sit inside their row.
    expect(layout.rows[1]!.y).toBeGreaterThan(layout.rows[0]!.y);
    expect(layout.rows[1]!.cells[0]!.y).toBeGreaterThan(layout.rows[0]!.cells[0]!.y);
    expect(layout.height).toBeGreaterThan(layout.rows[2]!.y);
  });

  it('gives a very short run the minimum width, and a running run a cell up to now', () => {
    const now = T0 + 60 * MIN;
    const layout = layoutTimeline([run('quick', 0, 5, 0.001), run('long', 1, 30, null)], { width: 1000, now, domain: { start: T0, end: now }, zoneOffset: UTC });
    expect(layout.rows[0]!.cells[0]!.width).toBe(MIN_CELL_PX);
    const long = layout.rows[1]!.cells[0]!;
    expect(long.x + long.width).toBeCloseTo(1000 - RIGHT_PAD_PX);
    expect(layout.nowX).toBeCloseTo(1000 - RIGHT_PAD_PX);
  });

  it('marks a run whose executor differs from the previous run of the same item, and a failover re-run', () => {
    const runs = [
      run('r1', 0, 0, 1, { executor: 'e1' }),
      run('r2', 0, 10, 1, { executor: 'e1' }),
      run('r3', 0, 20, 1, { executor: 'e2', trigger: 'failover', status: 'failed' }),
      run('r4', 0, 30, 1, { executor: 'e2' }),
      // Another item's executor does not count as a change for item 0.
      run('s1', 1, 5, 1, { executor: 'e2' }),
      run('s2', 1, 25, 1, { executor: 'e1' }),
    ];
    const layout = layoutTimeline(runs, { width: 900, now: T0 + 40 * MIN, zoneOffset: UTC });
    const marks = layout.rows.map((r) => r.cells.map((c) => [c.run.runId, c.previousExecutor, c.failover]));
    expect(marks).toEqual([
      [['r1', null, false], ['r2', null, false], ['r3', 'e1', true], ['r4', null, false]],
      [['s1', null, false], ['s2', 'e2', false]],
    ]);
  });

  it('gives every listed item a row, runs or not', () => {
    const layout = layoutTimeline([run('a', 2, 0, 1)], { width: 800, now: T0 + 5 * MIN, items: [0, 1, 2, 3] });
    expect(layout.rows.map((r) => [r.item, r.cells.length])).toEqual([[0, 0], [1, 0], [2, 1], [3, 0]]);
  });

  it('moves the keyboard to the next run along a row, and to the nearest run of the next row with runs', () => {
    const runs = [run('a', 0, 0, 1), run('b', 0, 30, 1), run('c', 2, 28, 1), run('d', 2, 2, 1)];
    const layout = layoutTimeline(runs, { width: 1000, now: T0 + 40 * MIN, items: [0, 1, 2], zoneOffset: UTC });
    const id = (p: { row: number; index: number } | undefined) => (p ? layout.rows[p.row]!.cells[p.index]!.run.runId : undefined);
    expect(id(neighbourCell(layout, { row: 0, index: 0 }, 'ArrowRight'))).toBe('b');
    expect(id(neighbourCell(layout, { row: 0, index: 1 }, 'ArrowRight'))).toBeUndefined();
    // Row 1 has no runs: down from b skips it to c (nearest in time), from a to d.
    expect(id(neighbourCell(layout, { row: 0, index: 1 }, 'ArrowDown'))).toBe('c');
    expect(id(neighbourCell(layout, { row: 0, index: 0 }, 'ArrowDown'))).toBe('d');
    expect(id(neighbourCell(layout, { row: 2, index: 0 }, 'ArrowUp'))).toBe('a');
    expect(id(neighbourCell(layout, { row: 2, index: 0 }, 'End'))).toBe('c');
    expect(neighbourCell(layout, { row: 0, index: 0 }, 'ArrowUp')).toBeUndefined();
  });
});

describe('the time axis', () => {
  it('covers every run, padded, and at least a minute', () => {
    const d = timeDomain([run('a', 0, 0, 10), run('b', 1, 50, null)], T0 + 70 * MIN);
    expect(d.start).toBeLessThan(T0);
    expect(d.end).toBeGreaterThan(T0 + 70 * MIN);
    const tiny = timeDomain([run('a', 0, 0, 0)], T0);
    expect(tiny.end - tiny.start).toBeGreaterThanOrEqual(MIN);
  });

  it('ticks on round wall-clock times of the zone, not of UTC, and dates the first tick of each day', () => {
    // 22:00 to 02:00 UTC: in Shanghai (UTC+8) that is 06:00 to 10:00 the next day.
    const domain = { start: Date.UTC(2026, 0, 1, 22, 10), end: Date.UTC(2026, 0, 2, 2, 10) };
    const shanghai = timeTicks(domain, 0, 600, SHANGHAI);
    expect(shanghai.length).toBeGreaterThan(1);
    for (const tick of shanghai) expect((tick.at + SHANGHAI()) % tick.step).toBe(0);
    expect(shanghai[0]!.step).toBe(3_600_000);
    expect(shanghai[0]!.showDate).toBe(true);
    expect(shanghai.slice(1).some((t) => t.showDate)).toBe(false);
    // In UTC the same span crosses midnight: the tick at 00:00 shows its date.
    const utc = timeTicks(domain, 0, 600, UTC);
    const midnight = utc.find((t) => t.at === Date.UTC(2026, 0, 2));
    expect(midnight?.showDate).toBe(true);
    // Ticks are placed along the axis in order.
    expect(utc.map((t) => t.x)).toEqual([...utc.map((t) => t.x)].sort((a, b) => a - b));
  });

  it('keeps to whole hours in a zone half an hour off UTC', () => {
    const india = () => 5.5 * 3_600_000;
    const ticks = timeTicks({ start: T0, end: T0 + 6 * 3_600_000 }, 0, 500, india);
    expect(ticks.length).toBeGreaterThan(1);
    for (const tick of ticks) expect((tick.at + india()) % 3_600_000).toBe(0);
  });
});

describe('the durations chart layout', () => {
  it('places each run at its start and duration, on round duration ticks from 0', () => {
    const runs = [run('a', 0, 0, 2), run('b', 0, 30, 7), run('c', 1, 45, null)];
    const now = T0 + 50 * MIN;
    const chart = layoutDurationChart(runs, { width: 800, height: 200, now, domain: { start: T0, end: now }, zoneOffset: UTC });
    expect(chart.yTicks.map((t) => t.value)).toEqual([0, 2 * MIN, 4 * MIN, 6 * MIN, 8 * MIN]);
    const [a, b, c] = chart.points;
    expect(chart.points.map((p) => p.run.runId)).toEqual(['a', 'b', 'c']);
    expect(a!.x).toBeCloseTo(GUTTER_PX);
    expect(b!.y).toBeLessThan(a!.y);
    // A run in progress is at its duration so far (5 min).
    expect(c!.duration).toBe(5 * MIN);
    expect(chart.yTicks[0]!.y).toBe(chart.plot.bottom);
  });

  it('picks duration ticks for milliseconds and for hours', () => {
    expect(durationTicks(0)).toEqual([0, 1]);
    expect(durationTicks(180)).toEqual([0, 50, 100, 150, 200]);
    expect(durationTicks(3.2 * 3_600_000).at(-1)).toBe(4 * 3_600_000);
  });

  it('words durations for people', () => {
    const t = (key: Parameters<typeof translate>[1], params?: Parameters<typeof translate>[2]) => translate('en', key, params);
    expect(formatDuration(850, t)).toBe('850 ms');
    expect(formatDuration(1500, t)).toBe('1.5 s');
    expect(formatDuration(184_000, t)).toBe('3 min 04 s');
    expect(formatDuration(2 * 3_600_000 + 5 * MIN, t)).toBe('2 h 05 min');
    expect(formatDuration(850, (key, params) => translate('zh-CN', key, params))).toBe('850 毫秒');
  });
});
