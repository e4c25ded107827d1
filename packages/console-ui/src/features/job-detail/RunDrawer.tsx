/**
 * The run open on the page (`?run=`, `&executor=`): a drawer at the right with the run's record and
 * its log — stdout and stderr tabs; a finished run's log read in ranges with "load more", a running
 * run's followed live (appended as it comes, kept scrolled to the end unless the user scrolled up,
 * and the way the stream ended said plainly). Escape or the close button closes it, and focus goes
 * back to where it was.
 */
import type { RunAnswer, RunsAnswer } from '@orrery/console/api-types';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useId, useLayoutEffect, useRef, useState, type KeyboardEvent } from 'react';
import { isApiError } from '../../api/client';
import { useI18n } from '../../i18n/I18nProvider';
import { Badge } from '../../ui/Badge';
import { ErrorState, Loading, Notice } from '../../ui/states';
import { formatBytes, formatDuration, statusKey, toneOf } from './format';
import { LOG_STREAMS, jobDetailKeys, logUrl, runQuery, type LogStream } from './queries';
import { triggerLabel } from './RunsPanel';
import { useLogStream, useStoredLog, type LogEnding } from './useLog';

export interface RunDrawerProps {
  namespace: string;
  job: string;
  runId: string;
  executor: string | undefined;
  /** The job's zone (times are shown in the browser's, the job's on hover). */
  timeZone: string | undefined;
  onClose: () => void;
}

/** The run as a runs list in the cache has it (shown while the run itself is read, or if that fails). */
function useListedRun(namespace: string, job: string, runId: string): RunAnswer | undefined {
  const queryClient = useQueryClient();
  for (const [, answer] of queryClient.getQueriesData<RunsAnswer>({ queryKey: jobDetailKeys.allRuns(namespace, job) })) {
    const run = answer?.runs.find((r) => r.runId === runId);
    if (run) return run;
  }
  return undefined;
}

export function RunDrawer({ namespace, job, runId, executor, timeZone, onClose }: RunDrawerProps) {
  const { t } = useI18n();
  const headingId = useId();
  const heading = useRef<HTMLHeadingElement>(null);
  const drawer = useRef<HTMLElement>(null);
  const opener = useRef<Element | null>(null);
  // The run read on its own (its key is under the job's: a shard event refreshes its outcome),
  // the listed one meanwhile.
  const fetched = useQuery(runQuery(namespace, job, runId, executor));
  const listed = useListedRun(namespace, job, runId);
  const run = fetched.data ?? listed;

  // Focus moves into the drawer for each run opened, and back to the opener when it closes.
  useEffect(() => {
    const focused = document.activeElement;
    if (focused && focused !== document.body && !drawer.current?.contains(focused)) opener.current = focused;
    heading.current?.focus();
  }, [runId]);
  useEffect(
    () => () => {
      const back = opener.current;
      if (back instanceof HTMLElement || back instanceof SVGElement) {
        if (back.isConnected) back.focus();
      }
    },
    [],
  );

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'Escape') {
      event.stopPropagation();
      onClose();
    }
  };

  return (
    <aside className="run-drawer" ref={drawer} aria-labelledby={headingId} onKeyDown={onKeyDown}>
      <div className="run-drawer-head">
        <h2 id={headingId} ref={heading} tabIndex={-1}>
          {run ? t('jobDetail.run.title', { item: run.item }) : t('jobDetail.run.titleUnknown')}
        </h2>
        <button type="button" className="dialog-close link" aria-label={t('jobDetail.run.close')} onClick={onClose}>
          ×
        </button>
      </div>
      <div className="run-drawer-body">
        {run ? (
          <>
            <RunSummary run={run} timeZone={timeZone} />
            <LogViewer namespace={namespace} job={job} run={run} />
          </>
        ) : fetched.isError ? (
          isApiError(fetched.error, 'not-found') ? (
            <Notice tone="error">{t('jobDetail.run.gone', { runId })}</Notice>
          ) : (
            <ErrorState error={fetched.error} onRetry={() => void fetched.refetch()} />
          )
        ) : (
          <Loading />
        )}
      </div>
    </aside>
  );
}

/** The run's record: outcome, where and when it ran, how it started, its message. */
export function RunSummary({ run, timeZone }: { run: RunAnswer; timeZone: string | undefined }) {
  const { t, formatTime } = useI18n();
  const zoned = (at: number) => (timeZone ? t('jobDetail.inZone', { time: formatTime(at, timeZone), zone: timeZone }) : undefined);
  return (
    <>
      <dl className="run-summary">
        <dt>{t('jobDetail.run.status')}</dt>
        <dd>
          <Badge tone={toneOf(run.status)}>{t(statusKey(run.status))}</Badge>
          {run.trigger === 'failover' && (
            <>
              {' '}
              <Badge tone="warn">{t('jobDetail.failoverTag')}</Badge>
            </>
          )}
        </dd>
        <dt>{t('jobDetail.run.executor')}</dt>
        <dd>
          <code>{run.executor}</code>
        </dd>
        <dt>{t('jobDetail.run.started')}</dt>
        <dd>
          <time dateTime={new Date(run.startedAt).toISOString()} title={zoned(run.startedAt)}>
            {formatTime(run.startedAt)}
          </time>
        </dd>
        <dt>{t('jobDetail.run.ended')}</dt>
        <dd>
          {run.endedAt !== null ? (
            <time dateTime={new Date(run.endedAt).toISOString()} title={zoned(run.endedAt)}>
              {formatTime(run.endedAt)}
            </time>
          ) : (
            <span className="muted">{t('jobDetail.run.stillRunning')}</span>
          )}
        </dd>
        <dt>{t('jobDetail.run.duration')}</dt>
        <dd>{run.durationMs !== null ? formatDuration(run.durationMs, t) : '—'}</dd>
        <dt>{t('jobDetail.run.exitCode')}</dt>
        <dd>{run.exitCode ?? '—'}</dd>
        <dt>{t('jobDetail.run.trigger')}</dt>
        <dd>
          {run.trigger !== null ? triggerLabel(run.trigger, t) : '—'}
          {run.attempt > 1 ? ` · ${t('jobDetail.attempt', { attempt: run.attempt })}` : ''}
        </dd>
        <dt>{t('jobDetail.run.fireTime')}</dt>
        <dd>
          <time dateTime={new Date(run.fireTime).toISOString()} title={zoned(run.fireTime)}>
            {formatTime(run.fireTime)}
          </time>
        </dd>
        <dt>{t('jobDetail.run.id')}</dt>
        <dd>
          <code>{run.runId}</code>
        </dd>
      </dl>
      {run.message !== '' && <p className="run-message-full">{run.message}</p>}
      {run.recorded === false && <Notice tone="error">{t('jobDetail.run.notRecorded')}</Notice>}
    </>
  );
}

/** stdout and stderr tabs over the run's log. */
export function LogViewer({ namespace, job, run }: { namespace: string; job: string; run: RunAnswer }) {
  const { t } = useI18n();
  const id = useId();
  const [stream, setStream] = useState<LogStream>('stdout');
  const tabs = useRef(new Map<LogStream, HTMLButtonElement>());
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key !== 'ArrowLeft' && event.key !== 'ArrowRight') return;
    event.preventDefault();
    const next = LOG_STREAMS[(LOG_STREAMS.indexOf(stream) + 1) % LOG_STREAMS.length]!;
    setStream(next);
    tabs.current.get(next)?.focus();
  };
  return (
    <section className="log-viewer" aria-label={t('jobDetail.log.label')}>
      <div role="tablist" aria-label={t('jobDetail.log.streams')} className="tabs tabs-small" onKeyDown={onKeyDown}>
        {LOG_STREAMS.map((s) => (
          <button
            key={s}
            ref={(el) => {
              if (el) tabs.current.set(s, el);
            }}
            type="button"
            role="tab"
            id={`${id}-${s}`}
            aria-selected={s === stream}
            aria-controls={`${id}-panel`}
            tabIndex={s === stream ? 0 : -1}
            onClick={() => setStream(s)}
          >
            {t(`jobDetail.log.${s}`)}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`${id}-panel`} aria-labelledby={`${id}-${stream}`}>
        {run.truncated?.[stream] !== undefined && <Notice>{t('jobDetail.log.truncated', { size: formatBytes(run.truncated[stream]) })}</Notice>}
        <LogBody key={`${run.runId}:${stream}`} namespace={namespace} job={job} run={run} stream={stream} />
      </div>
    </section>
  );
}

/** One stream's log: followed live when the run was running as it opened, else read as stored. */
function LogBody({ namespace, job, run, stream }: { namespace: string; job: string; run: RunAnswer; stream: LogStream }) {
  // Fixed when opened: a run that ends while followed keeps its followed text (and says it ended).
  const [live, setLive] = useState(run.status === 'running');
  const queryClient = useQueryClient();
  // The stream's last event carries the run's record: the drawer's details (outcome, end, exit
  // code) show it at once, and the job's run list is read again.
  const onEnded = useCallback(
    (ending: LogEnding) => {
      // Every key of this run (read with or without the executor hint).
      const runKey = [...jobDetailKeys.job(namespace, job), 'run', run.runId];
      if (ending.kind === 'end' && ending.run) queryClient.setQueriesData({ queryKey: runKey }, ending.run);
      else void queryClient.invalidateQueries({ queryKey: runKey });
      void queryClient.invalidateQueries({ queryKey: jobDetailKeys.allRuns(namespace, job) });
    },
    [queryClient, namespace, job, run.runId],
  );
  return live ? (
    <LiveLog url={logUrl(namespace, job, run.runId, { stream, executor: run.executor, live: true })} stream={stream} onReadStored={() => setLive(false)} onEnded={onEnded} />
  ) : (
    <StoredLogView url={logUrl(namespace, job, run.runId, { stream, executor: run.executor })} stream={stream} />
  );
}

function StoredLogView({ url, stream }: { url: string; stream: LogStream }) {
  const { t } = useI18n();
  const log = useStoredLog(url);
  if (log.error !== undefined && log.text === '') {
    if (isApiError(log.error, 'not-found')) return <Notice tone="error">{t('jobDetail.log.gone')}</Notice>;
    return <ErrorState error={log.error} onRetry={log.loadMore} />;
  }
  if (log.loading && log.text === '') return <Loading label={t('jobDetail.log.loading')} />;
  return (
    <>
      {log.text === '' && log.done ? (
        <p className="muted log-empty">{t('jobDetail.log.empty', { stream: t(`jobDetail.log.${stream}`) })}</p>
      ) : (
        <pre className="log" tabIndex={0} aria-label={t('jobDetail.log.of', { stream: t(`jobDetail.log.${stream}`) })}>
          {log.text}
        </pre>
      )}
      <div className="log-tools">
        {log.size !== null && log.size > 0 && <span className="muted">{t('jobDetail.log.shown', { shown: formatBytes(Math.min(log.next, log.size)), total: formatBytes(log.size) })}</span>}
        {!log.done && (
          <button type="button" onClick={log.loadMore} disabled={log.loading}>
            {log.loading ? t('jobDetail.log.loading') : t('jobDetail.log.loadMore')}
          </button>
        )}
        {log.error !== undefined && <span className="bad">{t('jobDetail.log.moreFailed')}</span>}
        <a href={url} target="_blank" rel="noreferrer">
          {t('jobDetail.log.raw')}
        </a>
      </div>
    </>
  );
}

/** Auto-scrolls to the end unless the user scrolled up. */
function LiveLog({ url, stream, onReadStored, onEnded }: { url: string; stream: LogStream; onReadStored: () => void; onEnded: (ending: LogEnding) => void }) {
  const { t } = useI18n();
  const log = useLogStream(url);
  useEffect(() => {
    if (log.ending) onEnded(log.ending);
  }, [log.ending, onEnded]);
  const pre = useRef<HTMLPreElement>(null);
  const stick = useRef(true);
  const [away, setAway] = useState(false);
  useLayoutEffect(() => {
    const element = pre.current;
    if (element && stick.current) element.scrollTop = element.scrollHeight;
  }, [log.text]);
  const onScroll = () => {
    const element = pre.current;
    if (!element) return;
    stick.current = element.scrollHeight - element.scrollTop - element.clientHeight < 24;
    setAway(!stick.current);
  };
  const jump = () => {
    stick.current = true;
    setAway(false);
    if (pre.current) pre.current.scrollTop = pre.current.scrollHeight;
  };
  const streamName = t(`jobDetail.log.${stream}`);
  return (
    <>
      {log.ending === undefined && (
        <p className="log-live" role="status">
          <span className="live-dot" aria-hidden="true" /> {log.reconnecting ? t('jobDetail.log.reconnecting') : t('jobDetail.log.following')}
        </p>
      )}
      {log.dropped > 0 && <p className="muted">{t('jobDetail.log.dropped', { count: log.dropped })}</p>}
      {log.text === '' ? (
        log.ending === undefined ? <p className="muted log-empty">{t('jobDetail.log.waiting', { stream: streamName })}</p> : <p className="muted log-empty">{t('jobDetail.log.empty', { stream: streamName })}</p>
      ) : (
        // role=log, but not read aloud chunk by chunk: the ending is announced on its own.
        <pre className="log" ref={pre} onScroll={onScroll} tabIndex={0} role="log" aria-live="off" aria-label={t('jobDetail.log.of', { stream: streamName })}>
          {log.text}
        </pre>
      )}
      <div className="log-tools">
        {away && log.ending === undefined && (
          <button type="button" onClick={jump}>
            {t('jobDetail.log.jump')}
          </button>
        )}
        {log.ending?.kind === 'end' && (
          <button type="button" onClick={onReadStored}>
            {t('jobDetail.log.readStored')}
          </button>
        )}
      </div>
      {log.ending && <StreamEnding ending={log.ending} />}
    </>
  );
}

/** How the followed log ended, in plain words. */
function StreamEnding({ ending }: { ending: LogEnding }) {
  const { t } = useI18n();
  switch (ending.kind) {
    case 'end': {
      const run = ending.run;
      return (
        <Notice tone={run && (run.status === 'failed' || run.status === 'timed-out') ? 'error' : 'info'}>
          <strong>{run ? t('jobDetail.log.ended', { status: t(statusKey(run.status)) }) : t('jobDetail.log.endedUnknown')}</strong>
          {run && run.exitCode !== null && ` ${t('jobDetail.log.exitCode', { code: run.exitCode })}`}
          {run && run.message !== '' && <span className="muted"> — {run.message}</span>}
        </Notice>
      );
    }
    case 'expired':
      return (
        <Notice tone="error">
          <strong>{t('jobDetail.log.expired')}</strong>
          {ending.message !== '' && <span className="muted"> — {ending.message}</span>}
        </Notice>
      );
    case 'executor-offline':
      return (
        <Notice tone="error">
          <strong>{t('jobDetail.log.offline', { executor: ending.executor })}</strong>
          {ending.message !== '' && <span className="muted"> — {ending.message}</span>}
        </Notice>
      );
    case 'closed':
      return <Notice tone="error">{t('jobDetail.log.accessEnded')}</Notice>;
    case 'error':
      return <Notice tone="error">{t('jobDetail.log.streamFailed', { message: ending.message })}</Notice>;
    case 'lost':
      return <Notice tone="error">{t('jobDetail.log.lost')}</Notice>;
    case 'unsupported':
      return <Notice tone="error">{t('jobDetail.log.unsupported')}</Notice>;
  }
}
