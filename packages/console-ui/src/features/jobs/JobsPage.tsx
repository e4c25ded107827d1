/**
 * `/ns/$namespace/jobs`: search and filters (kept in the URL, fed to the API's list query), the
 * virtualised table, and the actions — each shown only to users whose role allows it:
 * enable / disable / run now / stop, one job or the selected ones (operators); new job, edit,
 * copy, delete and import (owners); export (everyone who reads the namespace).
 */
import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { Link, getRouteApi, useNavigate } from '@tanstack/react-router';
import type { RowSelectionState } from '@tanstack/react-table';
import { useCallback, useEffect, useId, useMemo, useState } from 'react';
import { JOB_STATE_FILTERS, type BatchAction, type BatchResult, type JobListItem, type JobStateFilter } from '../../api/types';
import { useSession } from '../../auth/session';
import { useI18n } from '../../i18n/I18nProvider';
import { Empty, ErrorState, Loading, Notice, useErrorMessage } from '../../ui/states';
import { CopyJobsDialog, DeleteJobsDialog, ExportMenu, ImportDialog, type ToolNotice } from './JobTools';
import { JobsTable, type JobTool } from './JobsTable';
import { BATCH_CHUNK, batchJobs, jobAction, jobKeys, jobListQuery, type JobAction, type JobFilters } from './queries';
import { nsKeys } from '../namespaces/queries';
import './jobs.css';

const route = getRouteApi('/_app/ns/$namespace/jobs');

export { BATCH_CHUNK };
/** How long the search box waits for typing to pause before it filters, in ms. */
export const SEARCH_DEBOUNCE_MS = 250;

/** The batch actions of the selection bar's operator part (delete is an owner's, with its confirmation). */
type PageAction = Exclude<BatchAction, 'delete'> | 'stop';
const ACTION_LABEL = { enable: 'jobs.enable', disable: 'jobs.disable', run: 'jobs.runNow', stop: 'jobs.stop' } as const satisfies Record<PageAction, string>;

/** The dialog open on the page, if any. */
type OpenDialog = { kind: 'copy'; names: string[] } | { kind: 'delete'; jobs: JobListItem[] } | { kind: 'import' };

export function JobsPage() {
  const { namespace } = route.useParams();
  const filters = route.useSearch();
  const navigate = route.useNavigate();
  const setFilters = useCallback((next: JobFilters) => void navigate({ search: next, replace: true }), [navigate]);
  return <JobsView namespace={namespace} filters={filters} onFiltersChange={setFilters} />;
}

/** The page's body, given its namespace and filters (the route passes them from the URL). */
export function JobsView({ namespace, filters, onFiltersChange }: { namespace: string; filters: JobFilters; onFiltersChange: (filters: JobFilters) => void }) {
  const { t } = useI18n();
  const message = useErrorMessage();
  const { can } = useSession();
  const canOperate = can('operate', namespace);
  const canOwn = can('own', namespace);
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const list = useInfiniteQuery(jobListQuery(namespace, filters));
  const jobs = useMemo(() => list.data?.pages.flatMap((p) => p.items) ?? [], [list.data]);
  const total = list.data?.pages[0]?.total ?? 0;
  const [rowSelection, setRowSelection] = useState<RowSelectionState>({});
  const [busy, setBusy] = useState<ReadonlySet<string>>(new Set());
  const [notice, setNotice] = useState<ToolNotice>();
  const [dialog, setDialog] = useState<OpenDialog>();
  const filterKey = JSON.stringify(jobKeys.list(namespace, filters));
  useEffect(() => setRowSelection({}), [filterKey]);

  const invalidate = useCallback(() => Promise.all([queryClient.invalidateQueries({ queryKey: jobKeys.all(namespace) }), queryClient.invalidateQueries({ queryKey: nsKeys.list() })]), [queryClient, namespace]);

  const single = useMutation({
    mutationFn: ({ job, action }: { job: string; action: JobAction }) => jobAction(namespace, job, action),
    onMutate: ({ job }) => setBusy((b) => new Set(b).add(job)),
    onSettled: (_data, error, { job, action }) => {
      setBusy((b) => {
        const next = new Set(b);
        next.delete(job);
        return next;
      });
      setNotice(error ? { tone: 'error', text: message(error) } : { tone: 'info', text: t('jobs.actionDone', { action: t(ACTION_LABEL[action]), name: job }) });
      void invalidate();
    },
  });
  const onAction = useCallback((job: string, action: JobAction) => single.mutate({ job, action }), [single]);

  const batch = useMutation({
    mutationFn: async ({ action, names }: { action: PageAction; names: string[] }) => {
      const results: BatchResult['results'] = [];
      if (action === 'stop') {
        // The batch route has no stop: one stop request per job, each outcome counted.
        for (const name of names) {
          try {
            await jobAction(namespace, name, 'stop');
            results.push({ name, outcome: 'done' });
          } catch (error) {
            results.push({ name, outcome: 'failed', error: { code: 'failed', message: message(error) } });
          }
        }
        return { action, results };
      }
      for (let i = 0; i < names.length; i += BATCH_CHUNK) results.push(...(await batchJobs(namespace, action, names.slice(i, i + BATCH_CHUNK))).results);
      return { action, results };
    },
    onSettled: (answer, error, { action }) => {
      if (error) setNotice({ tone: 'error', text: message(error) });
      else if (answer) {
        const count = (outcome: string) => answer.results.filter((r) => r.outcome === outcome).length;
        const failed = count('failed');
        setNotice({ tone: failed > 0 ? 'error' : 'info', text: t('jobs.batchDone', { action: t(ACTION_LABEL[action]), done: count('done'), unchanged: count('unchanged'), failed }) });
        setRowSelection({});
      }
      void invalidate();
    },
  });
  const selected = Object.keys(rowSelection).filter((name) => rowSelection[name]);
  const byName = useMemo(() => new Map(jobs.map((j) => [j.name, j])), [jobs]);
  // A broken job has nothing to copy.
  const copyable = selected.filter((n) => byName.get(n)?.broken === false);
  const onTool = useCallback(
    (job: string, tool: JobTool) => {
      if (tool === 'edit') void navigate({ to: '/ns/$namespace/jobs/$job/edit', params: { namespace, job } });
      else if (tool === 'copy') setDialog({ kind: 'copy', names: [job] });
      else {
        const item = byName.get(job);
        if (item) setDialog({ kind: 'delete', jobs: [item] });
      }
    },
    [navigate, namespace, byName],
  );
  const onToolDone = useCallback(
    (done: ToolNotice) => {
      setNotice(done);
      setRowSelection({});
      void invalidate();
    },
    [invalidate],
  );
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = list;
  const onNeedMore = useCallback(() => {
    if (!isFetchingNextPage) void fetchNextPage();
  }, [isFetchingNextPage, fetchNextPage]);
  const filtered = Boolean(filters.q || filters.group || filters.state);

  return (
    <section aria-labelledby="jobs-title" className="jobs-page">
      <div className="page-header">
        <h1 id="jobs-title">{t('jobs.title')}</h1>
        {list.isSuccess && <span className="muted">{t('jobs.count', { shown: jobs.length, total })}</span>}
        <div className="page-tools">
          <ExportMenu namespace={namespace} onDone={setNotice} />
          {canOwn && (
            <button type="button" onClick={() => setDialog({ kind: 'import' })}>
              {t('jobs.import')}
            </button>
          )}
          {/* An empty namespace offers "New job" once, in the middle of the page (not twice). */}
          {canOwn && !(list.isSuccess && jobs.length === 0 && !filtered) && (
            <Link to="/ns/$namespace/jobs/new" params={{ namespace }} className="button primary">
              {t('jobs.new')}
            </Link>
          )}
        </div>
      </div>
      <JobFiltersBar filters={filters} onChange={onFiltersChange} groups={useMemo(() => groupsOf(jobs), [jobs])} />
      {canOperate && selected.length > 0 && (
        <div className="batch-bar" role="toolbar" aria-label={t('jobs.batchLabel')}>
          <span>{t('jobs.selected', { count: selected.length })}</span>
          {(['enable', 'disable', 'run', 'stop'] as const).map((action) => (
            <button key={action} type="button" disabled={batch.isPending} onClick={() => batch.mutate({ action, names: selected })}>
              {t(ACTION_LABEL[action])}
            </button>
          ))}
          {canOwn && (
            <>
              <button type="button" disabled={batch.isPending || copyable.length === 0} onClick={() => setDialog({ kind: 'copy', names: copyable })}>
                {t('jobs.copy')}
              </button>
              <button type="button" className="danger" disabled={batch.isPending} onClick={() => setDialog({ kind: 'delete', jobs: selected.flatMap((n) => byName.get(n) ?? []) })}>
                {t('jobs.delete')}
              </button>
            </>
          )}
          <button type="button" className="link" onClick={() => setRowSelection({})}>
            {t('jobs.clearSelection')}
          </button>
        </div>
      )}
      {notice && <Notice tone={notice.tone}>{notice.text}</Notice>}
      {list.isPending ? (
        <Loading />
      ) : list.isError ? (
        <ErrorState error={list.error} onRetry={() => void list.refetch()} />
      ) : jobs.length === 0 ? (
        <Empty
          action={
            filtered ? (
              <button type="button" onClick={() => onFiltersChange({})}>
                {t('jobs.clearFilters')}
              </button>
            ) : canOwn ? (
              <Link to="/ns/$namespace/jobs/new" params={{ namespace }} className="button primary">
                {t('jobs.new')}
              </Link>
            ) : undefined
          }
        >
          {filtered ? t('jobs.emptyFiltered') : canOwn ? t('jobs.emptyOwner') : t('jobs.empty')}
        </Empty>
      ) : (
        <>
          <JobsTable
            namespace={namespace}
            jobs={jobs}
            canOperate={canOperate}
            canOwn={canOwn}
            onTool={onTool}
            rowSelection={rowSelection}
            onRowSelectionChange={setRowSelection}
            onAction={onAction}
            busy={busy}
            hasMore={hasNextPage}
            onNeedMore={onNeedMore}
          />
          {isFetchingNextPage && <Loading label={t('jobs.loadingMore')} />}
        </>
      )}
      {dialog?.kind === 'copy' && <CopyJobsDialog namespace={namespace} names={dialog.names} onClose={() => setDialog(undefined)} onDone={onToolDone} />}
      {dialog?.kind === 'delete' && <DeleteJobsDialog namespace={namespace} jobs={dialog.jobs} onClose={() => setDialog(undefined)} onDone={onToolDone} />}
      {dialog?.kind === 'import' && <ImportDialog namespace={namespace} onClose={() => setDialog(undefined)} onDone={onToolDone} />}
    </section>
  );
}

function groupsOf(jobs: readonly { broken: boolean; groups?: string[] }[]): string[] {
  const groups = new Set<string>();
  for (const job of jobs) for (const g of job.groups ?? []) groups.add(g);
  return [...groups].sort();
}

/** Search (debounced), group and state. */
function JobFiltersBar({ filters, onChange, groups }: { filters: JobFilters; onChange: (filters: JobFilters) => void; groups: string[] }) {
  const { t } = useI18n();
  const id = useId();
  const [q, setQ] = useState(filters.q ?? '');
  useEffect(() => setQ(filters.q ?? ''), [filters.q]);
  useEffect(() => {
    if (q === (filters.q ?? '')) return undefined;
    const timer = setTimeout(() => onChange({ ...filters, q: q || undefined }), SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [q, filters, onChange]);
  return (
    <div className="filters" role="search">
      <label htmlFor={`${id}-q`} className="visually-hidden">
        {t('jobs.search')}
      </label>
      <input id={`${id}-q`} type="search" placeholder={t('jobs.searchPlaceholder')} value={q} onChange={(e) => setQ(e.target.value)} />
      <label htmlFor={`${id}-group`}>{t('jobs.group')}</label>
      <input id={`${id}-group`} list={`${id}-groups`} value={filters.group ?? ''} onChange={(e) => onChange({ ...filters, group: e.target.value || undefined })} size={12} />
      <datalist id={`${id}-groups`}>
        {groups.map((g) => (
          <option key={g} value={g} />
        ))}
      </datalist>
      <label htmlFor={`${id}-state`}>{t('jobs.state')}</label>
      <select id={`${id}-state`} value={filters.state ?? ''} onChange={(e) => onChange({ ...filters, state: (e.target.value || undefined) as JobStateFilter | undefined })}>
        <option value="">{t('jobs.any')}</option>
        {JOB_STATE_FILTERS.map((s) => (
          <option key={s} value={s}>
            {t(`jobState.${s}`)}
          </option>
        ))}
      </select>
    </div>
  );
}
