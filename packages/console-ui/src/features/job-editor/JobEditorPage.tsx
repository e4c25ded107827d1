/**
 * The job editor's page: create (`/ns/$namespace/jobs/new`) and edit (`/ns/$namespace/jobs/$job/edit`).
 * Only owners of the namespace may use it (others are told so). The editor itself is loaded on
 * demand (JobEditor.tsx): it brings core's schema, checker and cron parser, which no other page needs.
 */
import { Link, getRouteApi } from '@tanstack/react-router';
import { Suspense, lazy } from 'react';
import { useSession } from '../../auth/session';
import { useI18n } from '../../i18n/I18nProvider';
import { Loading, Notice } from '../../ui/states';

const newRoute = getRouteApi('/_app/ns/$namespace/jobs/new');
const editRoute = getRouteApi('/_app/ns/$namespace/jobs/$job/edit');

const JobEditor = lazy(() => import('./JobEditor'));

export function JobEditorPage() {
  const { t } = useI18n();
  const { can } = useSession();
  // One component for both routes: whichever matched gives the parameters.
  const editing = editRoute.useMatch({ shouldThrow: false });
  const creating = newRoute.useMatch({ shouldThrow: false });
  const namespace = editing?.params.namespace ?? creating?.params.namespace ?? '';
  const job = editing?.params.job;

  if (!can('own', namespace)) {
    return (
      <section aria-labelledby="job-editor-title">
        <div className="page-header">
          <h1 id="job-editor-title">{job === undefined ? t('jobEditor.titleNew') : t('jobEditor.titleEdit', { name: job })}</h1>
        </div>
        <Notice tone="error">{t('jobEditor.noAccess', { namespace })}</Notice>
        {job === undefined ? (
          <Link to="/ns/$namespace/jobs" params={{ namespace }}>
            {t('jobEditor.back')}
          </Link>
        ) : (
          <Link to="/ns/$namespace/jobs/$job" params={{ namespace, job }}>
            {t('jobEditor.backToJob', { name: job })}
          </Link>
        )}
      </section>
    );
  }
  return (
    <Suspense fallback={<Loading />}>
      <JobEditor key={`${namespace}/${job ?? ''}`} namespace={namespace} job={job} />
    </Suspense>
  );
}
