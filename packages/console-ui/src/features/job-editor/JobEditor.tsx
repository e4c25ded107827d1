/**
 * The job editor's body (loaded on demand by JobEditorPage: it carries core's schema and cron
 * parser, which the other pages do without). Every JobConfig field in six sections, each checked as
 * it changes by core's `checkJobConfig` — the server's own checker — with the issues under their
 * fields (a new job's once touched or after a save attempt; an existing job's at once). Save creates
 * (`POST …/jobs`) or replaces from the version read (`PUT …/jobs/:job {version, config}`); the
 * server's 400 issues show like the checker's, and a 409 conflict shows both versions with reload
 * and reapply. After a save: the job queries are invalidated and the job's page opens.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import type { JobDetailAnswer, JobWriteAnswer } from '@orrery/console/api-types';
import type { JobConfig } from '@orrery/core/schemas';
import { useId, useMemo, useRef, useState, type FormEvent } from 'react';
import { api, isApiError, seg, type ApiIssue } from '../../api/client';
import { useI18n } from '../../i18n/I18nProvider';
import { ErrorState, Loading, Notice, useErrorMessage } from '../../ui/states';
import { nsKeys } from '../namespaces/queries';
import { jobDetailQuery, jobKeys } from '../jobs/queries';
import { ConflictPanel, type CurrentJob } from './ConflictPanel';
import { CronPreview } from './CronPreview';
import { Field, IssueList, ItemParametersField, controlId, useFieldLabel, useIssueText } from './Fields';
import {
  FIELDS,
  SECTIONS,
  checkForm,
  fieldOfIssue,
  formFromConfig,
  formIssue,
  inputFromForm,
  newJobForm,
  type BooleanPath,
  type FieldPath,
  type ItemParameterRow,
  type JobForm,
  type TextPath,
} from './form';
import '../jobs/jobs.css';
import './job-editor.css';

/** The IANA zones the browser knows, for the time zone's suggestions. */
function timeZones(): string[] {
  try {
    return ['UTC', ...Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC')];
  } catch {
    return ['UTC'];
  }
}

/** The current job of a 409's details (`{version, config, problem?}`), if they carry one (pure). */
export function currentFromDetails(details: Readonly<Record<string, unknown>>): CurrentJob | undefined {
  if (typeof details.version !== 'number') return undefined;
  const config = typeof details.config === 'object' && details.config !== null ? (details.config as JobConfig) : null;
  return { version: details.version, config, ...(typeof details.problem === 'string' ? { problem: details.problem } : {}) };
}

export default function JobEditor({ namespace, job }: { namespace: string; job?: string }) {
  if (job === undefined) return <EditorForm namespace={namespace} start={{ form: newJobForm() }} />;
  return <ExistingJob namespace={namespace} job={job} />;
}

function ExistingJob({ namespace, job }: { namespace: string; job: string }) {
  const detail = useQuery(jobDetailQuery(namespace, job));
  if (detail.isPending) return <Loading />;
  if (detail.isError) return <ErrorState error={detail.error} onRetry={() => void detail.refetch()} />;
  return <EditorForm namespace={namespace} job={job} start={startOf(detail.data, job)} latestVersion={detail.data.version} />;
}

/** Where an edit starts: the job's form, and the version and config it was read at. */
interface Start {
  form: JobForm;
  base?: { version: number; config: JobConfig | null; problem?: string };
}

function startOf(detail: JobDetailAnswer, job: string): Start {
  const config = detail.config as JobConfig | null;
  // A broken job is replaced by a PUT from its version: start from a new job's form under its name.
  const form = config ? formFromConfig(config) : { ...newJobForm(), text: { ...newJobForm().text, name: job } };
  return { form, base: { version: detail.version, config, ...(detail.problem ? { problem: detail.problem } : {}) } };
}

function EditorForm({ namespace, job, start, latestVersion }: { namespace: string; job?: string; start: Start; latestVersion?: number }) {
  const { t } = useI18n();
  const message = useErrorMessage();
  const label = useFieldLabel();
  const issueText = useIssueText();
  const formId = useId();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const editing = job !== undefined;
  const [form, setForm] = useState<JobForm>(start.form);
  const [base, setBase] = useState(start.base);
  const [touched, setTouched] = useState<ReadonlySet<FieldPath>>(new Set());
  const [submitted, setSubmitted] = useState(false);
  const [serverIssues, setServerIssues] = useState<ApiIssue[]>([]);
  const [conflict, setConflict] = useState<{ current: CurrentJob; mine: JobConfig }>();
  const [notice, setNotice] = useState<{ tone: 'info' | 'error'; text: string }>();
  const summaryRef = useRef<HTMLDivElement>(null);
  const zones = useMemo(timeZones, []);

  const check = useMemo(() => checkForm(form), [form]);
  const clientIssues = check.ok ? [] : check.issues;
  // An existing job starts valid: every issue is the user's doing, shown at once.
  const showAll = submitted || editing;
  const shownIssues = useMemo(() => {
    const byField = new Map<FieldPath | undefined, ApiIssue[]>();
    const add = (issue: ApiIssue) => {
      const field = fieldOfIssue(issue);
      byField.set(field, [...(byField.get(field) ?? []), issue]);
    };
    for (const issue of clientIssues) {
      const field = fieldOfIssue(issue);
      if (showAll || (field !== undefined && touched.has(field))) add(issue);
    }
    for (const issue of serverIssues) add(issue);
    return byField;
  }, [clientIssues, serverIssues, showAll, touched]);
  const issuesAt = (path: FieldPath) => shownIssues.get(path) ?? [];
  const wholeIssues = shownIssues.get(undefined) ?? [];

  const touch = (path: FieldPath) => setTouched((all) => (all.has(path) ? all : new Set(all).add(path)));
  const edited = (path: FieldPath) => {
    touch(path);
    // A server issue about a field goes once the field is edited (the next save asks again).
    setServerIssues((issues) => (issues.some((i) => fieldOfIssue(i) === path) ? issues.filter((i) => fieldOfIssue(i) !== path) : issues));
  };
  const onText = (path: TextPath, value: string) => {
    setForm((f) => ({ ...f, text: { ...f.text, [path]: value } }));
    edited(path);
  };
  const onFlag = (path: BooleanPath, value: boolean) => {
    setForm((f) => ({ ...f, flags: { ...f.flags, [path]: value } }));
    edited(path);
  };
  const onRows = (rows: ItemParameterRow[]) => {
    setForm((f) => ({ ...f, itemParameters: rows }));
    edited('shardingItemParameters');
  };

  const invalidate = () => Promise.all([queryClient.invalidateQueries({ queryKey: jobKeys.all(namespace) }), queryClient.invalidateQueries({ queryKey: nsKeys.list() })]);

  const save = useMutation({
    mutationFn: ({ version }: { version?: number; mine: JobConfig }) => {
      const input = inputFromForm(form);
      if (!editing) return api<JobWriteAnswer>(`/namespaces/${seg(namespace)}/jobs`, { method: 'POST', body: input });
      return api<JobWriteAnswer>(`/namespaces/${seg(namespace)}/jobs/${seg(job)}`, { method: 'PUT', body: { version, config: input } });
    },
    onMutate: () => {
      setNotice(undefined);
      setServerIssues([]);
    },
    onSuccess: (written) => {
      void invalidate();
      void navigate({ to: '/ns/$namespace/jobs/$job', params: { namespace, job: written.name } });
    },
    onError: (error, { mine }) => {
      const current = isApiError(error, 'conflict') && editing ? currentFromDetails(error.details) : undefined;
      if (current) setConflict({ current, mine });
      else if (isApiError(error, 'already-exists')) setServerIssues([{ field: 'name', rule: 'already-exists', message: t('jobEditor.exists', { name: form.text.name.trim() }) }]);
      else if (isApiError(error, 'validation') && error.issues.length > 0) setServerIssues(error.issues.map(formIssue));
      else setNotice({ tone: 'error', text: t('jobEditor.saveFailed', { message: message(error) }) });
    },
  });

  const reload = useMutation({
    mutationFn: () => queryClient.fetchQuery({ ...jobDetailQuery(namespace, job ?? ''), staleTime: 0 }),
    onSuccess: (fresh) => {
      const next = startOf(fresh, job ?? '');
      setForm(next.form);
      setBase(next.base);
      setConflict(undefined);
      setServerIssues([]);
      setTouched(new Set());
      setSubmitted(false);
      setNotice({ tone: 'info', text: t('jobEditor.conflict.reloaded', { version: fresh.version }) });
    },
    onError: (error) => setNotice({ tone: 'error', text: message(error) }),
  });

  const reapply = () => {
    if (!conflict) return;
    if (!check.ok) {
      // Edited into something invalid while the conflict was shown: the issues first.
      setSubmitted(true);
      return;
    }
    // The edit now stands on their version: a later save starts from it too.
    setBase({ version: conflict.current.version, config: conflict.current.config });
    setConflict(undefined);
    save.mutate({ version: conflict.current.version, mine: check.value });
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSubmitted(true);
    if (!check.ok) {
      // Rendered with the summary on this update; focus it once it is there.
      setTimeout(() => summaryRef.current?.focus(), 0);
      return;
    }
    save.mutate({ version: base?.version, mine: check.value });
  };

  const focusField = (path: FieldPath | undefined) => {
    if (!path) return;
    document.getElementById(controlId(formId, path))?.focus();
  };

  const allShown = [...shownIssues.values()].flat();
  const fieldProps = { formId, form, onText, onFlag, onBlur: touch };
  const title = editing ? t('jobEditor.titleEdit', { name: job }) : t('jobEditor.titleNew');
  const busy = save.isPending || reload.isPending;

  return (
    <section aria-labelledby={`${formId}-title`} className="job-editor">
      <div className="page-header">
        <h1 id={`${formId}-title`}>{title}</h1>
        {base && <span className="muted">{t('jobEditor.version', { version: base.version })}</span>}
        <span className="page-tools">
          {editing ? (
            <Link to="/ns/$namespace/jobs/$job" params={{ namespace, job }}>
              {t('jobEditor.backToJob', { name: job })}
            </Link>
          ) : (
            <Link to="/ns/$namespace/jobs" params={{ namespace }}>
              {t('jobEditor.back')}
            </Link>
          )}
        </span>
      </div>
      {base?.config === null && <Notice tone="error">{t('jobEditor.broken', { problem: base.problem ?? '' })}</Notice>}
      {base && latestVersion !== undefined && latestVersion !== base.version && !conflict && <Notice>{t('jobEditor.changedMeanwhile', { version: latestVersion })}</Notice>}
      {notice && <Notice tone={notice.tone}>{notice.text}</Notice>}
      {conflict && base && (
        <ConflictPanel
          mine={check.ok ? check.value : conflict.mine}
          base={base.config}
          baseVersion={base.version}
          current={conflict.current}
          busy={busy}
          reloading={reload.isPending}
          onReload={() => reload.mutate()}
          onReapply={reapply}
        />
      )}
      <form className="editor-layout" onSubmit={submit} noValidate aria-labelledby={`${formId}-title`}>
        <nav className="editor-nav" aria-label={t('jobEditor.sections')}>
          <ul>
            {SECTIONS.map((section) => (
              <li key={section}>
                <a href={`#${formId}-${section}`}>{t(`jobEditor.section.${section}`)}</a>
              </li>
            ))}
          </ul>
        </nav>
        <div className="editor-sections">
          {SECTIONS.map((section) => (
            <section key={section} id={`${formId}-${section}`} className="card editor-section" aria-labelledby={`${formId}-${section}-title`}>
              <h2 id={`${formId}-${section}-title`}>{t(`jobEditor.section.${section}`)}</h2>
              <p className="muted section-help">{t(`jobEditor.sectionHelp.${section}`)}</p>
              <div className="field-grid">
                {FIELDS.filter((f) => f.section === section).map((f) => {
                  if (f.path === 'command' && form.text.type !== 'shell') return null;
                  if (f.path === 'handler' && form.text.type === 'shell') return null;
                  if (f.kind === 'itemParameters') return <ItemParametersField key={f.path} formId={formId} form={form} issues={issuesAt(f.path)} onChange={onRows} />;
                  return (
                    <Field
                      key={f.path}
                      {...fieldProps}
                      path={f.path}
                      issues={issuesAt(f.path)}
                      readOnly={editing && f.path === 'name'}
                      help={editing && f.path === 'name' ? t('jobEditor.nameFixed') : undefined}
                      suggestions={f.path === 'timeZone' ? zones : undefined}
                    />
                  );
                })}
                {section === 'schedule' && (
                  <CronPreview cron={form.text.cron} timeZone={form.text.timeZone} blocked={clientIssues.some((i) => fieldOfIssue(i) === 'cron' || fieldOfIssue(i) === 'timeZone')} />
                )}
              </div>
            </section>
          ))}
          {wholeIssues.length > 0 && <IssueList id={`${formId}-whole`} issues={wholeIssues} />}
          {submitted && allShown.length > 0 && (
            <div ref={summaryRef} className="error-summary" role="alert" tabIndex={-1}>
              <p>{t('jobEditor.summary', { count: allShown.length })}</p>
              <ul>
                {allShown.map((issue, i) => {
                  const field = fieldOfIssue(issue);
                  return (
                    <li key={`${issue.field}:${issue.rule}:${i}`}>
                      <button type="button" className="link" onClick={() => focusField(field)}>
                        {t('jobEditor.summaryItem', { field: field ? label(field) : t('jobEditor.whole'), message: issueText(issue) })}
                      </button>
                    </li>
                  );
                })}
              </ul>
            </div>
          )}
          <div className="editor-actions">
            <button type="submit" className="primary" disabled={busy || conflict !== undefined}>
              {save.isPending ? t('jobEditor.saving') : editing ? t('jobEditor.save') : t('jobEditor.create')}
            </button>
            {editing ? (
              <Link to="/ns/$namespace/jobs/$job" params={{ namespace, job }} className="button">
                {t('jobEditor.cancel')}
              </Link>
            ) : (
              <Link to="/ns/$namespace/jobs" params={{ namespace }} className="button">
                {t('jobEditor.cancel')}
              </Link>
            )}
          </div>
        </div>
      </form>
    </section>
  );
}
