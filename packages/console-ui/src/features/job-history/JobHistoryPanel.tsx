/**
 * A job's config history (the job page's "history" tab): the kept versions with author and time,
 * newest first; two of them picked (from / to) and compared field by field (`GET …/diff`); and,
 * for owners, "Roll back to this version" — confirmed in a dialog that shows what would change —
 * which puts an old config back as a new version (`POST …/rollback`, a compare-and-set from the
 * current version: a 409 when someone wrote the job meanwhile, said so, the history read again).
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { JobHistoryAnswer } from '@orrery/console/api-types';
import { useEffect, useId, useState } from 'react';
import { isApiError } from '../../api/client';
import { useSession } from '../../auth/session';
import { useI18n } from '../../i18n/I18nProvider';
import { Badge } from '../../ui/Badge';
import { Empty, ErrorState, Loading, Notice, useErrorMessage } from '../../ui/states';
import { nsKeys } from '../namespaces/queries';
import { Dialog } from '../../ui/Dialog';
import { DiffTable } from '../jobs/DiffTable';
import { jobKeys } from '../jobs/queries';
import { diffQuery, historyQuery, rollbackJob } from './queries';
import './job-history.css';

type Version = JobHistoryAnswer['versions'][number];

/** The versions compared by default: the one before the newest, and the newest (pure). */
export function defaultPair(versions: readonly Version[]): { from?: number; to?: number } {
  const readable = versions.filter((v) => v.problem === undefined);
  return { from: readable[1]?.version, to: readable[0]?.version };
}

export function JobHistoryPanel({ namespace, job }: { namespace: string; job: string }) {
  const { t, formatTime } = useI18n();
  const { can } = useSession();
  const id = useId();
  const history = useQuery(historyQuery(namespace, job));
  const [pair, setPair] = useState<{ from?: number; to?: number }>({});
  const [confirming, setConfirming] = useState<Version>();
  const [notice, setNotice] = useState<{ tone: 'info' | 'error'; text: string }>();
  const versions = history.data?.versions ?? [];
  const kept = new Set(versions.map((v) => v.version));

  // Pick the default pair once the history is there, and again when a picked version is pruned.
  useEffect(() => {
    if (!history.data) return;
    const known = new Set(history.data.versions.map((v) => v.version));
    setPair((p) => (p.from !== undefined && p.to !== undefined && known.has(p.from) && known.has(p.to) ? p : defaultPair(history.data.versions)));
  }, [history.data]);

  if (history.isPending) return <Loading />;
  if (history.isError) return <ErrorState error={history.error} onRetry={() => void history.refetch()} />;
  const { currentVersion, limit } = history.data;
  const canRollback = can('own', namespace) && currentVersion !== null;

  return (
    <section aria-labelledby={`${id}-title`} className="job-history">
      <h2 id={`${id}-title`}>{t('jobHistory.title')}</h2>
      <p className="muted">{t('jobHistory.kept', { limit })}</p>
      {currentVersion === null && <Notice tone="error">{t('jobHistory.gone')}</Notice>}
      {notice && <Notice tone={notice.tone}>{notice.text}</Notice>}
      {versions.length === 0 ? (
        <Empty>{t('jobHistory.empty')}</Empty>
      ) : (
        <div className="history-layout">
          <table className="data history-table">
            <caption className="visually-hidden">{t('jobHistory.caption', { job })}</caption>
            <thead>
              <tr>
                <th scope="col" className="pick">{t('jobHistory.col.from')}</th>
                <th scope="col" className="pick">{t('jobHistory.col.to')}</th>
                <th scope="col">{t('jobHistory.col.version')}</th>
                <th scope="col">{t('jobHistory.col.author')}</th>
                <th scope="col">{t('jobHistory.col.time')}</th>
                {canRollback && (
                  <th scope="col">
                    <span className="visually-hidden">{t('jobHistory.col.actions')}</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {versions.map((v) => {
                const readable = v.problem === undefined;
                const current = v.version === currentVersion;
                return (
                  <tr key={v.version} className={pair.from === v.version || pair.to === v.version ? 'picked' : undefined}>
                    <td className="pick">
                      <input type="radio" name={`${id}-from`} aria-label={t('jobHistory.compareFrom', { version: v.version })} checked={pair.from === v.version} disabled={!readable} onChange={() => setPair((p) => ({ ...p, from: v.version }))} />
                    </td>
                    <td className="pick">
                      <input type="radio" name={`${id}-to`} aria-label={t('jobHistory.compareTo', { version: v.version })} checked={pair.to === v.version} disabled={!readable} onChange={() => setPair((p) => ({ ...p, to: v.version }))} />
                    </td>
                    <th scope="row">
                      {t('jobHistory.versionN', { version: v.version })}
                      {current && (
                        <>
                          {' '}
                          <Badge tone="info">{t('jobHistory.current')}</Badge>
                        </>
                      )}
                    </th>
                    <td>{readable ? v.author : <span className="bad">{t('jobHistory.unreadable', { problem: v.problem ?? '' })}</span>}</td>
                    <td>{v.at === undefined ? '' : <time dateTime={new Date(v.at).toISOString()}>{formatTime(v.at)}</time>}</td>
                    {canRollback && (
                      <td>
                        {readable && !current && (
                          <button type="button" aria-label={t('jobHistory.rollbackLabel', { version: v.version })} onClick={() => setConfirming(v)}>
                            {t('jobHistory.rollback')}
                          </button>
                        )}
                      </td>
                    )}
                  </tr>
                );
              })}
            </tbody>
          </table>
          <VersionDiff namespace={namespace} job={job} from={pair.from} to={pair.to} count={versions.length} kept={kept} />
        </div>
      )}
      {confirming && currentVersion !== null && (
        <RollbackDialog
          namespace={namespace}
          job={job}
          target={confirming}
          currentVersion={currentVersion}
          onClose={() => setConfirming(undefined)}
          onDone={(text) => {
            setConfirming(undefined);
            setNotice({ tone: 'info', text });
          }}
        />
      )}
    </section>
  );
}

function VersionDiff({ namespace, job, from, to, count, kept }: { namespace: string; job: string; from?: number; to?: number; count: number; kept: ReadonlySet<number> }) {
  const { t } = useI18n();
  const ready = from !== undefined && to !== undefined && from !== to && kept.has(from) && kept.has(to);
  const diff = useQuery({ ...diffQuery(namespace, job, from ?? 0, to ?? 0), enabled: ready });
  let body;
  if (count < 2) body = <p className="muted">{t('jobHistory.diffOne')}</p>;
  else if (!ready) body = <p className="muted">{t('jobHistory.diffPickTwo')}</p>;
  else if (diff.isPending) body = <Loading />;
  else if (diff.isError) body = <ErrorState error={diff.error} onRetry={() => void diff.refetch()} />;
  else if (diff.data.changes.length === 0) body = <p className="muted">{t('jobHistory.diffSame', { from: diff.data.from, to: diff.data.to })}</p>;
  else
    body = (
      <DiffTable
        changes={diff.data.changes}
        beforeLabel={t('jobHistory.versionN', { version: diff.data.from })}
        afterLabel={t('jobHistory.versionN', { version: diff.data.to })}
        caption={t('jobHistory.diffTitle', { from: diff.data.from, to: diff.data.to })}
      />
    );
  return (
    <section className="history-diff" aria-live="polite" aria-label={ready ? t('jobHistory.diffTitle', { from: from!, to: to! }) : t('jobHistory.diffHeading')}>
      <h3>{ready ? t('jobHistory.diffTitle', { from: from!, to: to! }) : t('jobHistory.diffHeading')}</h3>
      {body}
    </section>
  );
}

function RollbackDialog({
  namespace,
  job,
  target,
  currentVersion,
  onClose,
  onDone,
}: {
  namespace: string;
  job: string;
  target: Version;
  currentVersion: number;
  onClose: () => void;
  onDone: (text: string) => void;
}) {
  const { t, formatTime } = useI18n();
  const message = useErrorMessage();
  const queryClient = useQueryClient();
  // What the rollback changes: from the current version to the target's.
  const changes = useQuery(diffQuery(namespace, job, currentVersion, target.version));
  const rollback = useMutation({
    mutationFn: () => rollbackJob(namespace, job, target.version, currentVersion),
    onSuccess: (answer) => {
      onDone(answer.changed ? t('jobHistory.done', { version: target.version, now: answer.version }) : t('jobHistory.unchanged', { version: target.version }));
    },
    onSettled: () => Promise.all([queryClient.invalidateQueries({ queryKey: jobKeys.all(namespace) }), queryClient.invalidateQueries({ queryKey: nsKeys.list() })]),
  });
  const error = rollback.error;
  const conflictVersion = isApiError(error, 'conflict') && typeof error.details.version === 'number' ? error.details.version : undefined;
  // After a conflict the history is read again; confirming waits until it shows the version the job is at.
  const waitingForHistory = conflictVersion !== undefined && conflictVersion !== currentVersion;
  return (
    <Dialog
      title={t('jobHistory.confirmTitle', { version: target.version })}
      size="wide"
      onClose={onClose}
      busy={rollback.isPending}
      actions={
        <>
          <button type="button" className="primary" disabled={rollback.isPending || waitingForHistory} onClick={() => rollback.mutate()}>
            {rollback.isPending ? t('jobHistory.rollingBack') : t('jobHistory.confirm')}
          </button>
          <button type="button" onClick={onClose} disabled={rollback.isPending}>
            {t('jobHistory.cancel')}
          </button>
        </>
      }
    >
      <p>
        {t('jobHistory.confirmIntro', {
          version: target.version,
          author: target.author ?? t('jobHistory.unknownAuthor'),
          time: target.at === undefined ? '' : formatTime(target.at),
          current: currentVersion,
        })}
      </p>
      {changes.isPending ? (
        <Loading />
      ) : changes.isError ? (
        <ErrorState error={changes.error} onRetry={() => void changes.refetch()} />
      ) : changes.data.changes.length === 0 ? (
        <p className="muted">{t('jobHistory.confirmNoChange', { version: target.version })}</p>
      ) : (
        <>
          <p>{t('jobHistory.confirmChanges')}</p>
          <DiffTable
            changes={changes.data.changes}
            beforeLabel={t('jobHistory.nowLabel', { version: currentVersion })}
            afterLabel={t('jobHistory.afterLabel', { version: target.version })}
            caption={t('jobHistory.confirmChanges')}
          />
        </>
      )}
      {error && (
        <p role="alert" className="field-error">
          {conflictVersion !== undefined ? t('jobHistory.conflict', { version: conflictVersion }) : t('jobHistory.failed', { message: message(error) })}
        </p>
      )}
    </Dialog>
  );
}
