/**
 * Durations and outcomes over time: one point per run (x = start, y = duration, colour = outcome; a
 * run in progress hollow, at its duration so far), hand-drawn SVG from {@link layoutDurationChart}
 * on the same time axis as the timeline. A click on a point opens the run; keyboard users open runs
 * from the timeline or the history table (the chart is one image with a summary for screen readers).
 */
import type { RunAnswer } from '@orrery/console/api-types';
import { useMemo, useRef } from 'react';
import { useI18n } from '../../i18n/I18nProvider';
import { formatDuration, formatDurationTick, statusKey } from './format';
import { useWidth } from './hooks';
import { TimeAxis, TimeGrid } from './RunsTimeline';
import { layoutDurationChart, type ChartPoint, type TimeDomain } from './timeline';

/** The chart's height, in px. */
export const CHART_HEIGHT_PX = 200;

export interface DurationChartProps {
  runs: readonly RunAnswer[];
  now: number;
  domain: TimeDomain;
  selectedRunId: string | undefined;
  onOpen: (run: RunAnswer) => void;
}

/** The middle value of `values` (0 for none). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function DurationChart({ runs, now, domain, selectedRunId, onOpen }: DurationChartProps) {
  const { t, formatTime } = useI18n();
  const box = useRef<HTMLDivElement>(null);
  const width = useWidth(box);
  const layout = useMemo(() => layoutDurationChart(runs, { width, height: CHART_HEIGHT_PX, now, domain }), [runs, width, now, domain]);
  const { plot } = layout;
  const durations = layout.points.map((p) => p.duration);
  const failures = runs.filter((r) => r.status === 'failed' || r.status === 'timed-out').length;
  const summary = t('jobDetail.chart.summary', {
    count: runs.length,
    median: formatDuration(median(durations), t),
    max: formatDuration(Math.max(0, ...durations), t),
    failures,
  });
  const tip = (p: ChartPoint) => `${formatTime(p.run.startedAt)} · ${t('jobDetail.timeline.rowShort', { item: p.run.item })} · ${t(statusKey(p.run.status))} · ${formatDuration(p.duration, t)}`;
  return (
    <div className="duration-chart" ref={box}>
      <svg width={layout.width} height={layout.height} role="img" aria-label={summary}>
        <g className="chart-y" aria-hidden="true">
          {layout.yTicks.map((tick) => (
            <g key={tick.value}>
              <line className="chart-gridline" x1={plot.left} x2={plot.right} y1={tick.y} y2={tick.y} />
              <text x={plot.left - 8} y={tick.y} textAnchor="end" dominantBaseline="middle">
                {formatDurationTick(tick.value, t)}
              </text>
            </g>
          ))}
        </g>
        <TimeGrid ticks={layout.xTicks} top={plot.top} bottom={plot.bottom} />
        <g className="chart-points">
          {layout.points.map((p) => (
            <circle
              key={p.run.runId}
              className={`chart-point tl-${p.run.status}${p.run.runId === selectedRunId ? ' tl-selected' : ''}`}
              cx={p.x}
              cy={p.y}
              r={p.run.runId === selectedRunId ? 6 : 4}
              data-run-id={p.run.runId}
              onClick={() => onOpen(p.run)}
            >
              <title>{tip(p)}</title>
            </circle>
          ))}
        </g>
        <TimeAxis ticks={layout.xTicks} y={plot.bottom} left={plot.left} right={plot.right} />
      </svg>
    </div>
  );
}
