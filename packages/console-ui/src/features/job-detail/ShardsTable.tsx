/**
 * The shards tab: each item of the job (`GET …/jobs/:job/shards`) — owner, state, the run in
 * progress, the last outcome with its message, the next fire — and, under an unassigned item, why
 * in plain words with the allocator's advice. The run in progress and the last run open in the log
 * viewer. A job of thousands of items shows {@link ITEMS_SHOWN} at first.
 */
import type { ShardsAnswer } from '@orrery/console/api-types';
import { useQuery } from '@tanstack/react-query';
import { Fragment, useState } from 'react';
import { useI18n } from '../../i18n/I18nProvider';
import type { MessageKey } from '../../i18n';
import { Badge } from '../../ui/Badge';
import { Empty, ErrorState, Loading, Notice } from '../../ui/states';
import { formatDuration, statusKey, toneOf } from './format';
import { shardsQuery } from './queries';

/** Items shown before "show all". */
export const ITEMS_SHOWN = 500;

type ShardItem = ShardsAnswer['items'][number];
type Reason = NonNullable<ShardItem['unassigned']>['reason'];

const REASON_KEY: Record<Reason, MessageKey> = {
  'no-eligible-executor': 'jobDetail.unassigned.no-eligible-executor',
  'no-preferred-executor-online': 'jobDetail.unassigned.no-preferred-executor-online',
  'no-executor-has-handler': 'jobDetail.unassigned.no-executor-has-handler',
  'all-drained': 'jobDetail.unassigned.all-drained',
  'not-allocated-yet': 'jobDetail.unassigned.not-allocated-yet',
};

export function ShardsTable({ namespace, job, onOpenRun }: { namespace: string; job: string; onOpenRun: (runId: string, executor: string) => void }) {
  const { t, formatTime } = useI18n();
  const shards = useQuery(shardsQuery(namespace, job));
  const [showAll, setShowAll] = useState(false);
  if (shards.isPending) return <Loading />;
  if (shards.isError) return <ErrorState error={shards.error} onRetry={() => void shards.refetch()} />;
  const answer = shards.data;
  if (answer.items.length === 0) return <Empty>{t('jobDetail.shards.empty')}</Empty>;
  const items = showAll ? answer.items : answer.items.slice(0, ITEMS_SHOWN);
  const zoned = (at: number) => t('jobDetail.inZone', { time: formatTime(at, answer.timeZone), zone: answer.timeZone });
  return (
    <div className="shards">
      {answer.assignmentProblem !== undefined && <Notice tone="error">{t('jobDetail.shards.assignmentProblem', { problem: answer.assignmentProblem })}</Notice>}
      {!answer.enabled && <Notice>{t('jobDetail.shards.disabled')}</Notice>}
      <div className="table-scroll">
        <table className="data shards-table">
          <caption className="visually-hidden">{t('jobDetail.shards.caption', { job })}</caption>
          <thead>
            <tr>
              <th scope="col" className="num">{t('jobDetail.shards.item')}</th>
              <th scope="col">{t('jobDetail.shards.owner')}</th>
              <th scope="col">{t('jobDetail.shards.state')}</th>
              <th scope="col">{t('jobDetail.shards.runningSince')}</th>
              <th scope="col">{t('jobDetail.shards.last')}</th>
              <th scope="col">{t('jobDetail.shards.nextFire')}</th>
            </tr>
          </thead>
          <tbody>
            {items.map((item) => (
              <Fragment key={item.item}>
                <tr className={item.unassigned || item.problem ? 'has-note' : undefined}>
                  <th scope="row" className="num">{item.item}</th>
                  <td className="nowrap">{item.owner ?? <span className="muted">{t('jobDetail.shards.noOwner')}</span>}</td>
                  <td>
                    <Badge tone={toneOf(item.state)}>{t(statusKey(item.state))}</Badge>
                  </td>
                  <td>
                    {item.running ? (
                      <>
                        <button type="button" className="link nowrap" onClick={() => onOpenRun(item.running!.runId, item.running!.executor)} aria-label={t('jobDetail.shards.openRunning', { item: item.item })}>
                          <time dateTime={new Date(item.running.since).toISOString()} title={zoned(item.running.since)}>
                            {formatTime(item.running.since)}
                          </time>
                        </button>
                        <span className="muted shard-last-meta">
                          {t('jobDetail.shards.on', { executor: item.running.executor })}
                          {item.running.attempt > 1 ? ` · ${t('jobDetail.attempt', { attempt: item.running.attempt })}` : ''}
                        </span>
                      </>
                    ) : item.failoverPending ? (
                      <span className="warn-text">{t('jobDetail.shards.failoverPending', { executor: item.failoverPending.executor, time: formatTime(item.failoverPending.markedAt) })}</span>
                    ) : (
                      <span className="muted">—</span>
                    )}
                  </td>
                  <td className="shard-last">
                    {item.last ? (
                      <>
                        <span className="shard-last-head">
                          <Badge tone={toneOf(item.last.status)}>{t(statusKey(item.last.status))}</Badge>
                          <button type="button" className="link" onClick={() => onOpenRun(item.last!.runId, item.last!.executor)} aria-label={t('jobDetail.shards.openLast', { item: item.item })}>
                            <time dateTime={new Date(item.last.endedAt).toISOString()} title={zoned(item.last.endedAt)}>
                              {formatTime(item.last.endedAt)}
                            </time>
                          </button>
                        </span>
                        <span className="muted shard-last-meta">
                          {formatDuration(item.last.durationMs, t)} · {item.last.executor}
                        </span>
                        {item.last.message !== '' && (
                          <span className="shard-message" title={item.last.message}>
                            {item.last.message}
                          </span>
                        )}
                      </>
                    ) : (
                      <span className="muted">{t('jobDetail.shards.noRunYet')}</span>
                    )}
                  </td>
                  <td>
                    {item.nextFire ? (
                      <time dateTime={item.nextFire.utc} title={zoned(item.nextFire.at)}>
                        {formatTime(item.nextFire.at)}
                      </time>
                    ) : (
                      <span className="muted">—</span>
                    )}
                  </td>
                </tr>
                {item.unassigned && (
                  <tr className="shard-note">
                    <td />
                    <td colSpan={5}>
                      <p className="unassigned-why">
                        <strong>{t(REASON_KEY[item.unassigned.reason] ?? 'jobDetail.unassigned.other')}</strong> {t('jobDetail.unassigned.advice', { advice: item.unassigned.advice })}
                      </p>
                    </td>
                  </tr>
                )}
                {item.problem !== undefined && (
                  <tr className="shard-note">
                    <td />
                    <td colSpan={5} className="bad">
                      {t('jobDetail.shards.problem', { problem: item.problem })}
                    </td>
                  </tr>
                )}
              </Fragment>
            ))}
          </tbody>
        </table>
      </div>
      {items.length < answer.items.length && (
        <p>
          <button type="button" onClick={() => setShowAll(true)}>
            {t('jobDetail.shards.showAll', { shown: items.length, total: answer.items.length })}
          </button>
        </p>
      )}
    </div>
  );
}
