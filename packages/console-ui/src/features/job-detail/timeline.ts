/**
 * The runs timeline and the durations chart, laid out as plain data (pure: no React, no DOM, so
 * test/job-detail-layout.test.tsx checks it directly). The SVG components only draw what these
 * return. Both share one time axis ({@link timeDomain}, {@link timeTicks}) and the same left gutter,
 * so a run's cell in the timeline and its point in the chart line up.
 *
 * Times are epoch ms; ticks fall on round wall-clock times of a zone given as an offset function
 * (the browser's zone by default), so a test can pin the zone.
 */
import type { RunAnswer } from '@orrery/console/api-types';

/** A run's status as drawn: an outcome, or `running`. */
export type RunOutcome = RunAnswer['status'];

/** The zone's offset east of UTC at an instant, in ms (the browser's by default). */
export type ZoneOffset = (epochMs: number) => number;
export const browserZoneOffset: ZoneOffset = (epochMs) => -new Date(epochMs).getTimezoneOffset() * 60_000;

/** Width of the left gutter (row labels, the chart's duration axis), in px. */
export const GUTTER_PX = 84;
/** Room right of the plot, in px. */
export const RIGHT_PAD_PX = 16;
/** One timeline row's height, and its cells' height, in px. */
export const ROW_PX = 26;
export const CELL_PX = 14;
/** Room above the first row for the change and failover marks, in px. */
export const TOP_PAD_PX = 10;
/** The time axis under the plot, in px. */
export const AXIS_PX = 34;
/** The narrowest a cell is drawn, in px (a run of a few ms stays visible and clickable). */
export const MIN_CELL_PX = 5;
/** The shortest span the axis shows, in ms. */
export const MIN_SPAN_MS = 60_000;
/** About how far apart time ticks are, in px. */
export const TICK_SPACING_PX = 110;

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The steps a time axis may tick by, smallest first. */
export const TIME_STEPS_MS = [
  SECOND, 2 * SECOND, 5 * SECOND, 10 * SECOND, 15 * SECOND, 30 * SECOND,
  MINUTE, 2 * MINUTE, 5 * MINUTE, 10 * MINUTE, 15 * MINUTE, 30 * MINUTE,
  HOUR, 2 * HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR,
  DAY, 2 * DAY, 7 * DAY, 14 * DAY, 30 * DAY,
] as const;

/** The instant range an axis covers. */
export interface TimeDomain {
  start: number;
  end: number;
}

/** One tick of a time axis. */
export interface TimeTick {
  at: number;
  x: number;
  /** The step the axis ticks by, in ms (the label's precision follows it). */
  step: number;
  /** The first tick, or the first of a new day in the zone (its label shows the date). */
  showDate: boolean;
}

/** When a run ends, as drawn: its end, or `now` while it runs. */
export const endOf = (run: Pick<RunAnswer, 'startedAt' | 'endedAt'>, now: number): number => Math.max(run.startedAt, run.endedAt ?? now);

/** How long a run took, or has been running, in ms. */
export const durationOf = (run: Pick<RunAnswer, 'startedAt' | 'endedAt' | 'durationMs'>, now: number): number =>
  run.durationMs ?? Math.max(0, endOf(run, now) - run.startedAt);

/** The span covering every run (each from its start to its end, or `now`), padded a little each side. */
export function timeDomain(runs: readonly Pick<RunAnswer, 'startedAt' | 'endedAt'>[], now: number): TimeDomain {
  if (runs.length === 0) return { start: now - MIN_SPAN_MS, end: now };
  let start = Infinity;
  let end = -Infinity;
  for (const run of runs) {
    start = Math.min(start, run.startedAt);
    end = Math.max(end, endOf(run, now));
  }
  if (end - start < MIN_SPAN_MS) {
    const middle = (start + end) / 2;
    start = middle - MIN_SPAN_MS / 2;
    end = middle + MIN_SPAN_MS / 2;
  }
  const pad = (end - start) * 0.02;
  return { start: Math.floor(start - pad), end: Math.ceil(end + pad) };
}

/** A linear scale from `domain` to the pixels `[left, right]`. */
export function timeScale(domain: TimeDomain, left: number, right: number): (at: number) => number {
  const span = Math.max(1, domain.end - domain.start);
  return (at) => left + ((at - domain.start) / span) * (right - left);
}

/** The smallest step giving at most `maxTicks` ticks over `span` ms. */
export function timeStep(span: number, maxTicks: number): number {
  const limit = Math.max(1, maxTicks);
  return TIME_STEPS_MS.find((step) => span / step <= limit) ?? TIME_STEPS_MS.at(-1)!;
}

/**
 * Ticks on round wall-clock times of the zone (whole minutes, hours, local midnights …) over
 * `domain`, about {@link TICK_SPACING_PX} apart across `left..right`.
 */
export function timeTicks(domain: TimeDomain, left: number, right: number, zoneOffset: ZoneOffset = browserZoneOffset): TimeTick[] {
  const span = domain.end - domain.start;
  const step = timeStep(span, Math.floor((right - left) / TICK_SPACING_PX));
  const x = timeScale(domain, left, right);
  const ticks: TimeTick[] = [];
  const offset = zoneOffset(domain.start);
  // Round in wall-clock time (the instant plus the zone's offset), then back to an instant.
  let wall = Math.ceil((domain.start + offset) / step) * step;
  let previousDay: number | undefined;
  for (let guard = 0; guard < 500; guard += 1) {
    const guess = wall - offset;
    // Across a change of offset (daylight saving) the same wall time maps through the new offset.
    const at = wall - zoneOffset(guess);
    if (at > domain.end) break;
    if (at >= domain.start) {
      const day = Math.floor(wall / DAY);
      ticks.push({ at, x: x(at), step, showDate: previousDay === undefined || day !== previousDay || step >= DAY });
      previousDay = day;
    }
    wall += step;
  }
  return ticks;
}

// ---------------------------------------------------------------------------------------------
// The timeline: one row per item, one cell per run.

/** One run's cell. */
export interface TimelineCell {
  run: RunAnswer;
  /** Index of its row. */
  row: number;
  x: number;
  y: number;
  width: number;
  height: number;
  /** Its position in its row, oldest first. */
  index: number;
  /** The run before it of the same item ran on another executor (that executor; null: no change). */
  previousExecutor: string | null;
  /** The run is a failover re-run (its record's `trigger` is `failover`). */
  failover: boolean;
}

/** One item's row. */
export interface TimelineRow {
  item: number;
  /** The row's top, and the middle its label sits on. */
  y: number;
  middle: number;
  cells: TimelineCell[];
}

/** What {@link layoutTimeline} returns. */
export interface TimelineLayout {
  width: number;
  height: number;
  plot: { left: number; right: number; top: number; bottom: number };
  domain: TimeDomain;
  rows: TimelineRow[];
  ticks: TimeTick[];
  /** Where `now` falls (undefined: outside the domain). */
  nowX: number | undefined;
}

/** Options of {@link layoutTimeline}. */
export interface TimelineOptions {
  /** The drawing's width, in px. */
  width: number;
  now: number;
  /** Items with a row even when they have no run listed (the job's items). */
  items?: readonly number[];
  /** The time axis (default {@link timeDomain} of the runs). */
  domain?: TimeDomain;
  zoneOffset?: ZoneOffset;
}

/** Oldest first; ties by run id. */
const chronological = (a: RunAnswer, b: RunAnswer) => a.startedAt - b.startedAt || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0);

/**
 * Lays out the timeline: a row per item (ascending: the listed `items` and every item a run names),
 * each run a cell at its start, as wide as its duration (at least {@link MIN_CELL_PX}), its row's
 * runs oldest first. A cell says whether its executor differs from the previous run of the same item,
 * and whether it was a failover re-run.
 */
export function layoutTimeline(runs: readonly RunAnswer[], options: TimelineOptions): TimelineLayout {
  const { now } = options;
  const domain = options.domain ?? timeDomain(runs, now);
  const width = Math.max(GUTTER_PX + RIGHT_PAD_PX + 100, Math.floor(options.width));
  const left = GUTTER_PX;
  const right = width - RIGHT_PAD_PX;
  const x = timeScale(domain, left, right);
  const byItem = new Map<number, RunAnswer[]>();
  for (const item of options.items ?? []) byItem.set(item, []);
  for (const run of runs) {
    const list = byItem.get(run.item);
    if (list) list.push(run);
    else byItem.set(run.item, [run]);
  }
  const items = [...byItem.keys()].sort((a, b) => a - b);
  const top = TOP_PAD_PX;
  const rows = items.map((item, row): TimelineRow => {
    const y = top + row * ROW_PX;
    const cellY = y + (ROW_PX - CELL_PX) / 2;
    let previous: RunAnswer | undefined;
    const cells = [...byItem.get(item)!].sort(chronological).map((run, index): TimelineCell => {
      const x0 = Math.max(left, x(run.startedAt));
      const x1 = Math.min(right, x(endOf(run, now)));
      const cellWidth = Math.max(MIN_CELL_PX, x1 - x0);
      const cell: TimelineCell = {
        run,
        row,
        index,
        x: Math.min(x0, right - MIN_CELL_PX),
        y: cellY,
        width: cellWidth,
        height: CELL_PX,
        previousExecutor: previous && previous.executor !== run.executor ? previous.executor : null,
        failover: run.trigger === 'failover',
      };
      previous = run;
      return cell;
    });
    return { item, y, middle: y + ROW_PX / 2, cells };
  });
  const bottom = top + Math.max(1, rows.length) * ROW_PX;
  return {
    width,
    height: bottom + AXIS_PX,
    plot: { left, right, top, bottom },
    domain,
    rows,
    ticks: timeTicks(domain, left, right, options.zoneOffset),
    nowX: now >= domain.start && now <= domain.end ? x(now) : undefined,
  };
}

/**
 * The cell keyboard navigation moves to from `from` (pure): left/right the previous or next run of
 * the row, up/down the run of the row above or below whose middle is nearest, home/end the row's
 * first or last. Undefined when there is none.
 */
export function neighbourCell(layout: Pick<TimelineLayout, 'rows'>, from: { row: number; index: number }, key: string): { row: number; index: number } | undefined {
  const row = layout.rows[from.row];
  if (!row) return undefined;
  switch (key) {
    case 'ArrowLeft':
      return from.index > 0 ? { row: from.row, index: from.index - 1 } : undefined;
    case 'ArrowRight':
      return from.index < row.cells.length - 1 ? { row: from.row, index: from.index + 1 } : undefined;
    case 'Home':
      return row.cells.length > 0 ? { row: from.row, index: 0 } : undefined;
    case 'End':
      return row.cells.length > 0 ? { row: from.row, index: row.cells.length - 1 } : undefined;
    case 'ArrowUp':
    case 'ArrowDown': {
      const cell = row.cells[from.index];
      if (!cell) return undefined;
      const middle = cell.x + cell.width / 2;
      const direction = key === 'ArrowUp' ? -1 : 1;
      // The nearest row that way with a run in it (empty rows are skipped).
      for (let r = from.row + direction; r >= 0 && r < layout.rows.length; r += direction) {
        const cells = layout.rows[r]!.cells;
        if (cells.length === 0) continue;
        let best = 0;
        for (let i = 1; i < cells.length; i += 1) {
          if (Math.abs(cells[i]!.x + cells[i]!.width / 2 - middle) < Math.abs(cells[best]!.x + cells[best]!.width / 2 - middle)) best = i;
        }
        return { row: r, index: best };
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// The durations chart: x = start time, y = duration.

/** The steps a duration axis may tick by, in ms. */
export const DURATION_STEPS_MS = [
  1, 2, 5, 10, 20, 50, 100, 200, 500,
  SECOND, 2 * SECOND, 5 * SECOND, 10 * SECOND, 15 * SECOND, 30 * SECOND,
  MINUTE, 2 * MINUTE, 5 * MINUTE, 10 * MINUTE, 15 * MINUTE, 30 * MINUTE,
  HOUR, 2 * HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY,
] as const;

/** Duration ticks from 0 to a round top at or above `max` (at most `maxTicks` steps). */
export function durationTicks(max: number, maxTicks = 4): number[] {
  const top = Math.max(1, max);
  const step = DURATION_STEPS_MS.find((s) => top / s <= maxTicks) ?? Math.ceil(top / maxTicks);
  const ticks: number[] = [];
  for (let v = 0; v <= Math.ceil(top / step) * step; v += step) ticks.push(v);
  return ticks;
}

/** One run's point. */
export interface ChartPoint {
  run: RunAnswer;
  x: number;
  y: number;
  /** Its duration (so far, for a run in progress), in ms. */
  duration: number;
}

/** What {@link layoutDurationChart} returns. */
export interface ChartLayout {
  width: number;
  height: number;
  plot: { left: number; right: number; top: number; bottom: number };
  points: ChartPoint[];
  xTicks: TimeTick[];
  yTicks: { value: number; y: number }[];
}

/** Options of {@link layoutDurationChart}. */
export interface ChartOptions {
  width: number;
  height: number;
  now: number;
  domain?: TimeDomain;
  zoneOffset?: ZoneOffset;
}

/** Lays out the chart: each run a point at (start, duration), oldest first (newer ones drawn on top). */
export function layoutDurationChart(runs: readonly RunAnswer[], options: ChartOptions): ChartLayout {
  const { now } = options;
  const domain = options.domain ?? timeDomain(runs, now);
  const width = Math.max(GUTTER_PX + RIGHT_PAD_PX + 100, Math.floor(options.width));
  const plot = { left: GUTTER_PX, right: width - RIGHT_PAD_PX, top: 8, bottom: Math.max(60, options.height - AXIS_PX) };
  const x = timeScale(domain, plot.left, plot.right);
  const durations = runs.map((run) => durationOf(run, now));
  const yTickValues = durationTicks(Math.max(0, ...durations));
  const yMax = yTickValues.at(-1)!;
  const y = (value: number) => plot.bottom - (value / yMax) * (plot.bottom - plot.top);
  const points = runs
    .map((run, i): ChartPoint => ({ run, x: x(run.startedAt), y: y(durations[i]!), duration: durations[i]! }))
    .sort((a, b) => chronological(a.run, b.run));
  return {
    width,
    height: plot.bottom + AXIS_PX,
    plot,
    points,
    xTicks: timeTicks(domain, plot.left, plot.right, options.zoneOffset),
    yTicks: yTickValues.map((value) => ({ value, y: y(value) })),
  };
}
