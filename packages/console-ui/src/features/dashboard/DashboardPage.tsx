/** `/ns/$namespace`: jobs and executors by state, runs and failures over 24 h, the most failing jobs. */
import { useQuery } from '@tanstack/react-query';
import { Link, getRouteApi } from '@tanstack/react-router';
import { DASHBOARD_JOB_STATES, EXECUTOR_STATES } from '../../api/types';
import { useI18n } from '../../i18n/I18nProvider';
import type { MessageKey } from '../../i18n';
import { Empty, ErrorState, Loading } from '../../ui/states';
import { statsQuery } from './queries';

const route = getRouteApi('/_app/ns/$namespace/');

const JOB_TONES: Record<string, string> = { healthy: 'ok', running: 'info', failing: 'bad', unassigned: 'warn', disabled: 'muted', broken: 'bad' };
const EXECUTOR_TONES: Record<string, string> = { online: 'ok', drained: 'warn', offline: 'muted' };

export function DashboardPage() {
  const { namespace } = route.useParams();
  const { t, formatTime } = useI18n();
  const stats = useQuery(statsQuery(namespace));
  if (stats.isPending) return <Loading />;
  if (stats.isError) return <ErrorState error={stats.error} onRetry={() => void stats.refetch()} />;
  const s = stats.data;
  const runs = s.runs.reduce((sum, r) => sum + r.runs, 0);
  const failures = s.runs.reduce((sum, r) => sum + r.failures, 0);
  return (
    <section aria-labelledby="dashboard-title">
      <div className="page-header">
        <h1 id="dashboard-title">
          {t('dashboard.title')} · {namespace}
        </h1>
      </div>
      <div className="cards">
        <StateCard title={t('dashboard.jobsByState')} total={s.jobs.total} states={DASHBOARD_JOB_STATES} counts={s.jobs.byState} tones={JOB_TONES} label={(k) => `jobState.${k}` as MessageKey} />
        <StateCard title={t('dashboard.executorsByState')} total={s.executors.total} states={EXECUTOR_STATES} counts={s.executors.byState} tones={EXECUTOR_TONES} label={(k) => `executorState.${k}` as MessageKey} />
        <div className="card stat">
          <h2>{t('dashboard.runs24h')}</h2>
          <p className="big">{runs}</p>
          <h2>{t('dashboard.failures24h')}</h2>
          <p className={`big${failures > 0 ? ' bad' : ''}`}>{failures}</p>
          <details>
            <summary>{t('dashboard.coverage')}</summary>
            <p className="muted">{s.coverage}</p>
          </details>
        </div>
      </div>
      <h2>{t('dashboard.mostFailing')}</h2>
      {s.mostFailing.length === 0 ? (
        <Empty>{t('dashboard.noFailures')}</Empty>
      ) : (
        <table className="data">
          <thead>
            <tr>
              <th scope="col">{t('dashboard.job')}</th>
              <th scope="col" className="num">{t('dashboard.failures')}</th>
              <th scope="col" className="num">{t('dashboard.runs')}</th>
              <th scope="col">{t('dashboard.lastFailure')}</th>
            </tr>
          </thead>
          <tbody>
            {s.mostFailing.map((f) => (
              <tr key={f.job}>
                <th scope="row">
                  <Link to="/ns/$namespace/jobs/$job" params={{ namespace, job: f.job }}>
                    {f.job}
                  </Link>
                </th>
                <td className="num bad">{f.failures}</td>
                <td className="num">{f.runs}</td>
                <td>{f.lastFailureAt === null ? '' : formatTime(f.lastFailureAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function StateCard(props: { title: string; total: number; states: readonly string[]; counts: Record<string, number>; tones: Record<string, string>; label: (state: string) => MessageKey }) {
  const { t } = useI18n();
  return (
    <div className="card stat">
      <h2>{props.title}</h2>
      <p className="big">{props.total}</p>
      <div className="bar" role="img" aria-label={props.states.map((k) => `${t(props.label(k))} ${props.counts[k] ?? 0}`).join(', ')}>
        {props.states.map((k) => ((props.counts[k] ?? 0) > 0 ? <span key={k} className={`seg seg-${props.tones[k]}`} style={{ flexGrow: props.counts[k] }} /> : null))}
      </div>
      <ul className="legend">
        {props.states.map((k) => (
          <li key={k}>
            <span className={`dot dot-${props.tones[k]}`} aria-hidden="true" /> {t(props.label(k))} <strong>{props.counts[k] ?? 0}</strong>
          </li>
        ))}
      </ul>
    </div>
  );
}
