/**
 * The runs tab: the newest runs (`GET …/jobs/:job/runs?limit=`, merged from the executors) as the
 * timeline (items × time), the durations chart on the same time axis, and the run history table.
 * Executors whose runs are missing are named above them. The list is read again when the event
 * stream says a shard changed, and every few seconds while a run is in progress.
 */
import type { RunAnswer, RunsAnswer } from '@orrery/console/api-types';
import { useQuery } from '@tanstack/react-query';
import { memo, useId, useMemo, useState } from 'react';
import { isApiError } from '../../api/client';
import type { MessageKey } from '../../i18n';
import { useI18n } from '../../i18n/I18nProvider';
import { Badge } from '../../ui/Badge';
import { Empty, ErrorState, Loading, Notice } from '../../ui/states';
import { DurationChart } from './DurationChart';
import { formatDuration, statusKey, toneOf } from './format';
import { useNow } from './hooks';
import { DEFAULT_RUN_LIMIT, RUN_LIMITS, runsQuery, someRunning, type RunLimit } from './queries';
import { RunsLegend, RunsTimeline } from './RunsTimeline';
import { timeDomain } from './timeline';

/** Jobs with at most this many items get a timeline row for each, runs or not. */
export const ALL_ROWS_UP_TO = 64;

type Unavailable = RunsAnswer['unavailable'][number];
const REASONS = ['offline', 'no-http-api', 'timeout', 'unreachable', 'refused', 'history-off', 'bad-answer'] as const;
const reasonKey = (reason: string): MessageKey =>
  (REASONS as readonly string[]).includes(reason) ? (`jobDetail.runs.reason.${reason as (typeof REASONS)[number]}` as const) : 'jobDetail.runs.reason.other';

export interface RunsPanelProps {
  namespace: string;
  job: string;
  /** The job's item count (null: unknown, a broken job). */
  itemCount: number | null;
  selectedRunId: string | undefined;
  onOpen: (run: RunAnswer) => void;
}

export function RunsPanel({ namespace, job, itemCount, selectedRunId, onOpen }: RunsPanelProps) {
  const { t } = useI18n();
  const limitId = useId();
  const [limit, setLimit] = useState<RunLimit>(DEFAULT_RUN_LIMIT);
  const runs = useQuery(runsQuery(namespace, job, limit));
  const running = someRunning(runs.data);
  const now = useNow(running);
  const list = useMemo(() => runs.data?.runs ?? [], [runs.data]);
  const domain = useMemo(() => timeDomain(list, now), [list, now]);
  const items = useMemo(() => (itemCount !== null && itemCount <= ALL_ROWS_UP_TO ? Array.from({ length: itemCount }, (_, i) => i) : []), [itemCount]);

  return (
    <div className="runs-panel">
      <div className="runs-tools">
        <label htmlFor={limitId}>{t('jobDetail.runs.limit')}</label>
        <select id={limitId} value={limit} onChange={(e) => setLimit(Number(e.target.value) as RunLimit)}>
          {RUN_LIMITS.map((n) => (
            <option key={n} value={n}>
              {t('jobDetail.runs.limitOption', { count: n })}
            </option>
          ))}
        </select>
        {runs.isFetching && !runs.isPending && <span className="muted">{t('jobDetail.runs.refreshing')}</span>}
      </div>
      {runs.isPending ? (
        <Loading />
      ) : runs.isError ? (
        isApiError(runs.error, 'unavailable') ? (
          <div className="state state-error" role="alert">
            <strong>{t('jobDetail.runs.noHistory')}</strong>
            <p>{runs.error.message}</p>
            <button type="button" onClick={() => void runs.refetch()}>
              {t('state.retry')}
            </button>
          </div>
        ) : (
          <ErrorState error={runs.error} onRetry={() => void runs.refetch()} />
        )
      ) : (
        <>
          {runs.data.unavailable.length > 0 && <UnavailableNotice unavailable={runs.data.unavailable} />}
          {list.length === 0 ? (
            <Empty>{runs.data.unavailable.length > 0 ? t('jobDetail.runs.emptyPartial') : t('jobDetail.runs.empty')}</Empty>
          ) : (
            <>
              <section aria-labelledby={`${limitId}-tl`} className="panel">
                <h2 id={`${limitId}-tl`}>{t('jobDetail.timeline.title', { count: list.length })}</h2>
                <RunsTimeline runs={list} items={items} now={now} domain={domain} selectedRunId={selectedRunId} onOpen={onOpen} />
                <RunsLegend />
              </section>
              <section aria-labelledby={`${limitId}-chart`} className="panel">
                <h2 id={`${limitId}-chart`}>{t('jobDetail.chart.title')}</h2>
                <DurationChart runs={list} now={now} domain={domain} selectedRunId={selectedRunId} onOpen={onOpen} />
              </section>
              <section aria-labelledby={`${limitId}-history`}>
                <h2 id={`${limitId}-history`}>{t('jobDetail.history.title')}</h2>
                <RunHistoryTable runs={list} selectedRunId={selectedRunId} onOpen={onOpen} />
                {runs.data.nextBefore !== null && <p className="muted">{t('jobDetail.runs.more', { count: list.length })}</p>}
              </section>
            </>
          )}
        </>
      )}
    </div>
  );
}

/** Which executors' runs are missing, and why. */
function UnavailableNotice({ unavailable }: { unavailable: readonly Unavailable[] }) {
  const { t } = useI18n();
  return (
    <Notice>
      <strong>{t('jobDetail.runs.unavailable', { count: unavailable.length })}</strong>
      <ul className="unavailable-list">
        {unavailable.map((u) => (
          <li key={u.executor}>
            <code>{u.executor}</code>: {t(reasonKey(u.reason))}
            {u.message !== '' && <span className="muted"> — {u.message}</span>}
          </li>
        ))}
      </ul>
    </Notice>
  );
}

/** A run in progress's running time, ticking. */
function Elapsed({ since }: { since: number }) {
  const { t } = useI18n();
  const now = useNow(true);
  return <>{t('jobDetail.history.runningFor', { duration: formatDuration(Math.max(0, now - since), t) })}</>;
}

/** The runs as a table, newest first: time, item, executor, outcome, duration, message. */
export const RunHistoryTable = memo(function RunHistoryTable({ runs, selectedRunId, onOpen }: { runs: readonly RunAnswer[]; selectedRunId: string | undefined; onOpen: (run: RunAnswer) => void }) {
  const { t, formatTime } = useI18n();
  const sorted = useMemo(() => [...runs].sort((a, b) => b.startedAt - a.startedAt || (a.runId < b.runId ? 1 : -1)), [runs]);
  return (
    <div className="table-scroll runs-history">
      <table className="data">
        <thead>
          <tr>
            <th scope="col">{t('jobDetail.history.time')}</th>
            <th scope="col" className="num">{t('jobDetail.history.item')}</th>
            <th scope="col">{t('jobDetail.history.executor')}</th>
            <th scope="col">{t('jobDetail.history.outcome')}</th>
            <th scope="col" className="num">{t('jobDetail.history.duration')}</th>
            <th scope="col">{t('jobDetail.history.message')}</th>
          </tr>
        </thead>
        <tbody>
          {sorted.map((run) => {
            const selected = run.runId === selectedRunId;
            return (
              <tr key={run.runId} className={selected ? 'selected' : undefined} onClick={() => onOpen(run)}>
                <td>
                  <button
                    type="button"
                    className="link"
                    aria-current={selected ? 'true' : undefined}
                    aria-label={t('jobDetail.history.open', { item: run.item, time: formatTime(run.startedAt) })}
                    onClick={(event) => {
                      event.stopPropagation();
                      onOpen(run);
                    }}
                  >
                    <time dateTime={new Date(run.startedAt).toISOString()}>{formatTime(run.startedAt)}</time>
                  </button>
                </td>
                <td className="num">{run.item}</td>
                <td>{run.executor}</td>
                <td>
                  <Badge tone={toneOf(run.status)}>{t(statusKey(run.status))}</Badge>
                  {run.trigger === 'failover' && (
                    <>
                      {' '}
                      <Badge tone="warn">{t('jobDetail.failoverTag')}</Badge>
                    </>
                  )}
                  {run.trigger !== null && run.trigger !== 'failover' && run.trigger !== 'cron' && <span className="muted"> · {triggerLabel(run.trigger, t)}</span>}
                </td>
                <td className="num">{run.durationMs !== null ? formatDuration(run.durationMs, t) : run.status === 'running' ? <Elapsed since={run.startedAt} /> : '—'}</td>
                <td className="run-message" title={run.message || undefined}>
                  {run.message}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
});

const TRIGGERS = ['cron', 'run-now', 'retry', 'downstream', 'misfire', 'failover'] as const;

/** How a run was started, in words (an unknown trigger as sent). */
export function triggerLabel(trigger: string, t: (key: MessageKey) => string): string {
  return (TRIGGERS as readonly string[]).includes(trigger) ? t(`jobDetail.trigger.${trigger as (typeof TRIGGERS)[number]}`) : trigger;
}
