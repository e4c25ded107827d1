/**
 * The job's header: name, type, state, enabled or disabled, the cron with its next fire time (in the
 * browser's zone; the job's on hover), and the actions the user's role allows — enable or disable,
 * run now, stop (operators), edit (owners).
 */
import type { JobDetailAnswer } from '@orrery/console/api-types';
import { Link } from '@tanstack/react-router';
import { useI18n } from '../../i18n/I18nProvider';
import type { MessageKey } from '../../i18n';
import { Badge, type Tone } from '../../ui/Badge';
import type { JobDetailAction } from './queries';

/** The job's health as one badge (pure): broken, or — for an enabled job — running, failing, unassigned, healthy. */
export function jobHealth(detail: JobDetailAnswer): { key: MessageKey; tone: Tone } | undefined {
  if (!detail.config) return { key: 'jobState.broken', tone: 'bad' };
  if (!detail.config.enabled) return undefined;
  if ((detail.summary?.running ?? 0) > 0) return { key: 'jobState.running', tone: 'info' };
  if ((detail.summary?.failing ?? 0) > 0) return { key: 'jobState.failing', tone: 'bad' };
  if ((detail.assignment?.unassigned.length ?? 0) > 0) return { key: 'jobState.unassigned', tone: 'warn' };
  return { key: 'jobState.healthy', tone: 'ok' };
}

export interface JobHeaderProps {
  namespace: string;
  detail: JobDetailAnswer;
  canOperate: boolean;
  canOwn: boolean;
  busy: boolean;
  onAction: (action: JobDetailAction) => void;
}

export function JobHeader({ namespace, detail, canOperate, canOwn, busy, onAction }: JobHeaderProps) {
  const { t, formatTime } = useI18n();
  const { config } = detail;
  const health = jobHealth(detail);
  const running = detail.summary?.running ?? 0;
  return (
    <header className="job-header">
      <div className="job-title">
        <p className="crumbs">
          <Link to="/ns/$namespace/jobs" params={{ namespace }}>
            {t('jobDetail.backToJobs')}
          </Link>
        </p>
        <h1 id="job-detail-title">{detail.name}</h1>
        <div className="job-meta">
          {config && (
            <Badge tone="muted" title={t('jobDetail.type')}>
              {config.type}
            </Badge>
          )}
          {config && <Badge tone={config.enabled ? 'ok' : 'muted'}>{config.enabled ? t('jobState.enabled') : t('jobState.disabled')}</Badge>}
          {health && <Badge tone={health.tone}>{t(health.key)}</Badge>}
          {config && config.groups.length > 0 && <span className="muted">{t('jobDetail.groups', { groups: config.groups.join(', ') })}</span>}
        </div>
        {config && (
          <p className="job-schedule">
            {config.cron ? (
              <>
                {t('jobDetail.cron')} <code>{config.cron}</code>{' '}
                <span className="muted">({config.timeZone})</span>
                {' · '}
                {t('jobDetail.nextFire')}{' '}
                {detail.nextFireTime !== null ? (
                  <time dateTime={new Date(detail.nextFireTime).toISOString()} title={t('jobDetail.inZone', { time: formatTime(detail.nextFireTime, config.timeZone), zone: config.timeZone })}>
                    {formatTime(detail.nextFireTime)}
                  </time>
                ) : (
                  <span className="muted">{config.enabled ? t('jobDetail.noNextFire') : t('jobDetail.noNextFireDisabled')}</span>
                )}
              </>
            ) : (
              <span className="muted">{t('jobDetail.passive')}</span>
            )}
          </p>
        )}
        {config && config.description !== '' && <p className="job-description">{config.description}</p>}
      </div>
      {(canOperate || canOwn) && (
        <div className="page-tools" role="group" aria-label={t('jobDetail.actions', { name: detail.name })}>
          {canOperate && config && (
            <>
              {config.enabled ? (
                <button type="button" disabled={busy} onClick={() => onAction('disable')}>
                  {t('jobDetail.disable')}
                </button>
              ) : (
                <button type="button" disabled={busy} onClick={() => onAction('enable')}>
                  {t('jobDetail.enable')}
                </button>
              )}
              <button type="button" disabled={busy || !config.enabled} title={config.enabled ? undefined : t('jobDetail.runNeedsEnabled')} onClick={() => onAction('run')}>
                {t('jobDetail.runNow')}
              </button>
              <button type="button" disabled={busy || running === 0} title={running === 0 ? t('jobDetail.stopNothing') : undefined} onClick={() => onAction('stop')}>
                {t('jobDetail.stop')}
              </button>
            </>
          )}
          {canOwn && (
            <Link to="/ns/$namespace/jobs/$job/edit" params={{ namespace, job: detail.name }} className="button">
              {t('jobDetail.edit')}
            </Link>
          )}
        </div>
      )}
    </header>
  );
}
