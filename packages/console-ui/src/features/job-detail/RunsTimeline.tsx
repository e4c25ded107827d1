/**
 * The runs timeline: items × time, hand-drawn SVG from {@link layoutTimeline}. Each run is a cell
 * coloured by outcome; a triangle above a cell marks a change of executor from the item's previous
 * run, a diamond under it (and a dashed outline) a failover re-run. Cells are buttons: one is in the
 * tab order at a time (arrow keys move between runs, Home/End along a row), Enter or a click opens
 * the run. Also the legend shared with the durations chart, and the time axis both draw.
 */
import type { RunAnswer } from '@orrery/console/api-types';
import { useEffect, useId, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { useI18n } from '../../i18n/I18nProvider';
import { formatDuration, statusKey } from './format';
import { useTickLabels, useWidth } from './hooks';
import { ROW_PX, durationOf, layoutTimeline, neighbourCell, type TimeDomain, type TimeTick, type TimelineCell } from './timeline';

export interface RunsTimelineProps {
  runs: readonly RunAnswer[];
  /** The job's items: each gets a row even without runs. */
  items: readonly number[];
  now: number;
  domain: TimeDomain;
  selectedRunId: string | undefined;
  onOpen: (run: RunAnswer) => void;
}

/** The words a cell is announced with: item, start, outcome, duration, executor, and its marks. */
export function useCellLabel(): (cell: Pick<TimelineCell, 'run' | 'previousExecutor' | 'failover'>, now: number) => string {
  const { t, formatTime } = useI18n();
  return (cell, now) => {
    const { run } = cell;
    const parts = [
      t('jobDetail.timeline.cell', {
        item: run.item,
        time: formatTime(run.startedAt),
        status: t(statusKey(run.status)),
        duration: formatDuration(durationOf(run, now), t),
        executor: run.executor,
      }),
    ];
    if (cell.previousExecutor !== null) parts.push(t('jobDetail.timeline.executorChanged', { from: cell.previousExecutor, to: run.executor }));
    if (cell.failover) parts.push(t('jobDetail.timeline.failover'));
    return parts.join('; ');
  };
}

export function RunsTimeline({ runs, items, now, domain, selectedRunId, onOpen }: RunsTimelineProps) {
  const { t } = useI18n();
  const hintId = useId();
  const box = useRef<HTMLDivElement>(null);
  const width = useWidth(box);
  const layout = useMemo(() => layoutTimeline(runs, { width, now, items, domain }), [runs, width, now, items, domain]);
  const label = useCellLabel();
  const cellRefs = useRef(new Map<string, SVGGElement>());
  const [active, setActive] = useState<string | undefined>(selectedRunId);
  useEffect(() => {
    if (selectedRunId) setActive(selectedRunId);
  }, [selectedRunId]);

  // The one cell in the tab order: the active one if still shown, else the newest run.
  const { shown, newest } = useMemo(() => {
    const ids = new Set<string>();
    let latest: RunAnswer | undefined;
    for (const row of layout.rows) {
      for (const cell of row.cells) {
        ids.add(cell.run.runId);
        if (!latest || cell.run.startedAt > latest.startedAt) latest = cell.run;
      }
    }
    return { shown: ids, newest: latest };
  }, [layout]);
  const tabStop = active !== undefined && shown.has(active) ? active : newest?.runId;

  const onKeyDown = (event: KeyboardEvent<SVGGElement>, cell: TimelineCell) => {
    if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      onOpen(cell.run);
      return;
    }
    const next = neighbourCell(layout, { row: cell.row, index: cell.index }, event.key);
    if (!next) return;
    event.preventDefault();
    const target = layout.rows[next.row]!.cells[next.index]!;
    setActive(target.run.runId);
    cellRefs.current.get(target.run.runId)?.focus();
  };

  const { plot } = layout;
  return (
    <div className="timeline" ref={box}>
      <p id={hintId} className="visually-hidden">
        {t('jobDetail.timeline.keys')}
      </p>
      <svg className="timeline-svg" width={layout.width} height={layout.height} role="group" aria-label={t('jobDetail.timeline.label')} aria-describedby={hintId}>
        <TimeGrid ticks={layout.ticks} top={plot.top - 4} bottom={plot.bottom} />
        {layout.rows.map((row) => (
          <g key={row.item} role="group" aria-label={t('jobDetail.timeline.row', { item: row.item })} className="tl-row">
            <line className="tl-row-line" x1={plot.left} x2={plot.right} y1={row.y + ROW_PX} y2={row.y + ROW_PX} aria-hidden="true" />
            <text className="tl-label" x={plot.left - 10} y={row.middle} textAnchor="end" dominantBaseline="middle" aria-hidden="true">
              {t('jobDetail.timeline.rowShort', { item: row.item })}
            </text>
            {row.cells.map((cell) => {
              const { run } = cell;
              const selected = run.runId === selectedRunId;
              return (
                <g
                  key={run.runId}
                  ref={(el) => {
                    if (el) cellRefs.current.set(run.runId, el);
                    else cellRefs.current.delete(run.runId);
                  }}
                  role="button"
                  tabIndex={run.runId === tabStop ? 0 : -1}
                  aria-label={label(cell, now)}
                  aria-current={selected ? 'true' : undefined}
                  className={`tl-cell tl-${run.status}${cell.failover ? ' tl-failover' : ''}${selected ? ' tl-selected' : ''}`}
                  data-run-id={run.runId}
                  onClick={() => {
                    setActive(run.runId);
                    onOpen(run);
                  }}
                  onFocus={() => setActive(run.runId)}
                  onKeyDown={(event) => onKeyDown(event, cell)}
                >
                  <title>{label(cell, now)}</title>
                  {/* A taller, invisible target around thin cells. */}
                  <rect className="tl-hit" x={cell.x - 2} y={cell.y - 5} width={cell.width + 4} height={cell.height + 10} />
                  <rect className="tl-rect" x={cell.x} y={cell.y} width={cell.width} height={cell.height} rx={2} />
                  {cell.previousExecutor !== null && <path className="tl-mark-executor" data-mark="executor" d={`M${cell.x - 4},${cell.y - 7} h8 l-4,6 z`} />}
                  {cell.failover && <path className="tl-mark-failover" data-mark="failover" d={`M${cell.x},${cell.y + cell.height + 1} l4,3.5 l-4,3.5 l-4,-3.5 z`} />}
                </g>
              );
            })}
          </g>
        ))}
        {layout.nowX !== undefined && <line className="tl-now" x1={layout.nowX} x2={layout.nowX} y1={plot.top - 6} y2={plot.bottom} aria-hidden="true" />}
        <TimeAxis ticks={layout.ticks} y={plot.bottom} left={plot.left} right={plot.right} />
      </svg>
    </div>
  );
}

/** Vertical lines at the ticks. */
export function TimeGrid({ ticks, top, bottom }: { ticks: readonly TimeTick[]; top: number; bottom: number }) {
  return (
    <g className="tl-grid" aria-hidden="true">
      {ticks.map((tick) => (
        <line key={tick.at} x1={tick.x} x2={tick.x} y1={top} y2={bottom} />
      ))}
    </g>
  );
}

/** The time axis under a plot: a base line and tick labels (browser's zone; the date where it changes). */
export function TimeAxis({ ticks, y, left, right }: { ticks: readonly TimeTick[]; y: number; left: number; right: number }) {
  const labels = useTickLabels();
  return (
    <g className="tl-axis" aria-hidden="true">
      <line x1={left} x2={right} y1={y} y2={y} />
      {ticks.map((tick) => {
        const { time, date } = labels(tick);
        return (
          <g key={tick.at}>
            <line x1={tick.x} x2={tick.x} y1={y} y2={y + 4} />
            <text x={tick.x} y={y + 15} textAnchor="middle">
              {time}
            </text>
            {date !== undefined && (
              <text x={tick.x} y={y + 28} textAnchor="middle" className="tl-axis-date">
                {date}
              </text>
            )}
          </g>
        );
      })}
    </g>
  );
}

const LEGEND_STATUSES = ['succeeded', 'failed', 'timed-out', 'aborted', 'running'] as const;

/** What the colours and marks of the timeline and the chart mean. */
export function RunsLegend() {
  const { t } = useI18n();
  return (
    <ul className="runs-legend" aria-label={t('jobDetail.legend.label')}>
      {LEGEND_STATUSES.map((status) => (
        <li key={status}>
          <svg width="14" height="10" aria-hidden="true" className={`tl-cell tl-${status}`}>
            <rect className="tl-rect" x="0.5" y="0.5" width="13" height="9" rx="2" />
          </svg>
          {t(statusKey(status))}
        </li>
      ))}
      <li>
        <svg width="12" height="10" aria-hidden="true">
          <path className="tl-mark-executor" d="M2,2 h8 l-4,6 z" />
        </svg>
        {t('jobDetail.legend.executorChanged')}
      </li>
      <li>
        <svg width="12" height="10" aria-hidden="true">
          <path className="tl-mark-failover" d="M6,1 l4,4 l-4,4 l-4,-4 z" />
        </svg>
        {t('jobDetail.legend.failover')}
      </li>
    </ul>
  );
}
