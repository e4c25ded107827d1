/** `/`: the namespaces the user has a role in — job and executor counts, failing-job badges — and, for admins, create. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { useId, useState, type FormEvent } from 'react';
import { isApiError } from '../../api/client';
import { roleIn } from '../../auth/access';
import { useSession } from '../../auth/session';
import { useI18n } from '../../i18n/I18nProvider';
import { Badge } from '../../ui/Badge';
import { Empty, ErrorState, Loading, useErrorMessage } from '../../ui/states';
import { createNamespace, namespacesQuery, nsKeys } from './queries';

export function NamespacesPage() {
  const { t } = useI18n();
  const { principal, can } = useSession();
  const namespaces = useQuery(namespacesQuery());
  const [creating, setCreating] = useState(false);
  const isAdmin = can('administer');

  return (
    <section aria-labelledby="namespaces-title">
      <div className="page-header">
        <h1 id="namespaces-title">{t('namespaces.title')}</h1>
        {isAdmin && !creating && (
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            {t('namespaces.create')}
          </button>
        )}
      </div>
      {creating && <CreateNamespaceForm onDone={() => setCreating(false)} />}
      {namespaces.isPending ? (
        <Loading />
      ) : namespaces.isError ? (
        <ErrorState error={namespaces.error} onRetry={() => void namespaces.refetch()} />
      ) : namespaces.data.length === 0 ? (
        <Empty>{isAdmin ? t('namespaces.empty') : t('namespaces.emptyViewer')}</Empty>
      ) : (
        <table className="data">
          <thead>
            <tr>
              <th scope="col">{t('namespaces.name')}</th>
              <th scope="col">{t('namespaces.description')}</th>
              <th scope="col" className="num">{t('namespaces.jobs')}</th>
              <th scope="col" className="num">{t('namespaces.enabled')}</th>
              <th scope="col" className="num">{t('namespaces.executors')}</th>
              <th scope="col">{t('namespaces.yourRole')}</th>
            </tr>
          </thead>
          <tbody>
            {namespaces.data.map((ns) => {
              const role = roleIn(principal, ns.name);
              return (
                <tr key={ns.name}>
                  <th scope="row">
                    <Link to="/ns/$namespace" params={{ namespace: ns.name }}>
                      {ns.name}
                    </Link>{' '}
                    {ns.failingJobs > 0 && (
                      <Link to="/ns/$namespace/jobs" params={{ namespace: ns.name }} search={{ state: 'failing' }}>
                        <Badge tone="bad">{t('namespaces.failing', { count: ns.failingJobs })}</Badge>
                      </Link>
                    )}
                  </th>
                  <td className="muted">{ns.problem ? t('namespaces.problem', { problem: ns.problem }) : ns.settings?.description}</td>
                  <td className="num">
                    <Link to="/ns/$namespace/jobs" params={{ namespace: ns.name }}>
                      {ns.jobs}
                    </Link>
                  </td>
                  <td className="num">{ns.enabledJobs}</td>
                  <td className="num">
                    {ns.executors.online} / {ns.executors.total}
                  </td>
                  <td>{role ? t(`role.${role}`) : ''}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}

function CreateNamespaceForm({ onDone }: { onDone: () => void }) {
  const { t } = useI18n();
  const id = useId();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const message = useErrorMessage();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const create = useMutation({
    mutationFn: createNamespace,
    onSuccess: async (created) => {
      await queryClient.invalidateQueries({ queryKey: nsKeys.all });
      onDone();
      void navigate({ to: '/ns/$namespace', params: { namespace: created.name } });
    },
  });
  const nameIssues = isApiError(create.error) ? create.error.issuesFor('name') : [];
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate({ name: name.trim(), description: description.trim() });
  };
  return (
    <form className="card form" onSubmit={submit} aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{t('namespaces.createTitle')}</h2>
      <label htmlFor={`${id}-name`}>{t('namespaces.newName')}</label>
      <input
        id={`${id}-name`}
        required
        maxLength={128}
        pattern="[A-Za-z0-9_.\-]{1,128}"
        value={name}
        onChange={(e) => setName(e.target.value)}
        aria-describedby={`${id}-help`}
        aria-invalid={nameIssues.length > 0 || undefined}
        autoFocus
      />
      <small id={`${id}-help`}>{t('namespaces.newNameHelp')}</small>
      {nameIssues.map((issue) => (
        <small key={issue.rule} className="field-error">
          {issue.message}
        </small>
      ))}
      <label htmlFor={`${id}-description`}>{t('namespaces.newDescription')}</label>
      <input id={`${id}-description`} maxLength={2000} value={description} onChange={(e) => setDescription(e.target.value)} />
      {create.isError && nameIssues.length === 0 && (
        <p className="field-error" role="alert">
          {message(create.error)}
        </p>
      )}
      <div className="actions">
        <button type="submit" className="primary" disabled={create.isPending}>
          {create.isPending ? t('namespaces.creating') : t('namespaces.create')}
        </button>
        <button type="button" onClick={onDone}>
          {t('namespaces.cancel')}
        </button>
      </div>
    </form>
  );
}
