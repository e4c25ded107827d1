/**
 * `/ns/$namespace/jobs/$job`: the job's header (state, schedule, the actions the user's role allows)
 * and four tabs (`?tab=`) — shards (each item's owner, state and last outcome), runs (the timeline
 * of items × time, the durations chart, the run history), config history, the current config. A run
 * opens in a drawer with its log (`?run=`, `&executor=`), from any tab. Everything is read through
 * queries under the job's key, so the namespace event stream keeps the page live with no reload.
 */
import type { RunAnswer } from '@orrery/console/api-types';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, getRouteApi } from '@tanstack/react-router';
import { useCallback, useId, useRef, useState, type KeyboardEvent, type ReactNode } from 'react';
import { isApiError } from '../../api/client';
import { useSession } from '../../auth/session';
import { useI18n } from '../../i18n/I18nProvider';
import { Empty, ErrorState, Loading, Notice, useErrorMessage } from '../../ui/states';
import { JobHistoryPanel } from '../job-history/JobHistoryPanel';
import { jobKeys } from '../jobs/queries';
import { nsKeys } from '../namespaces/queries';
import { ConfigPanel } from './ConfigPanel';
import { JobHeader } from './JobHeader';
import { jobDetailAction, jobQuery, type JobDetailAction } from './queries';
import { RunDrawer } from './RunDrawer';
import { RunsPanel } from './RunsPanel';
import { ShardsTable } from './ShardsTable';
import './job-detail.css';

const route = getRouteApi('/_app/ns/$namespace/jobs/$job');

/** The page's tabs, in order (the route's `?tab=` values). */
export const DETAIL_TABS = ['shards', 'runs', 'history', 'config'] as const;
export type DetailTab = (typeof DETAIL_TABS)[number];
/** The tab shown without `?tab=`. */
export const DEFAULT_TAB: DetailTab = 'shards';

/** What the page keeps in its URL. */
export interface DetailSearch {
  tab?: DetailTab | undefined;
  run?: string | undefined;
  executor?: string | undefined;
}

const ACTION_LABEL = { enable: 'jobDetail.enable', disable: 'jobDetail.disable', run: 'jobDetail.runNow', stop: 'jobDetail.stop' } as const satisfies Record<JobDetailAction, string>;

export function JobDetailPage() {
  const { namespace, job } = route.useParams();
  const search = route.useSearch();
  const navigate = route.useNavigate();
  const onSearch = useCallback((next: DetailSearch) => void navigate({ search: (prev) => ({ ...prev, ...next }) }), [navigate]);
  return <JobDetailView namespace={namespace} job={job} search={search} onSearch={onSearch} />;
}

/** The page's body, given its job and URL state (the route passes them). */
export function JobDetailView({ namespace, job, search, onSearch }: { namespace: string; job: string; search: DetailSearch; onSearch: (next: DetailSearch) => void }) {
  const { t } = useI18n();
  const message = useErrorMessage();
  const { can } = useSession();
  const queryClient = useQueryClient();
  const detail = useQuery(jobQuery(namespace, job));
  const [notice, setNotice] = useState<{ tone: 'info' | 'error'; text: string }>();
  const action = useMutation({
    mutationFn: (a: JobDetailAction) => jobDetailAction(namespace, job, a),
    onSettled: (_data, error, a) => {
      setNotice(error ? { tone: 'error', text: message(error) } : { tone: 'info', text: t('jobDetail.actionDone', { action: t(ACTION_LABEL[a]), name: job }) });
      void queryClient.invalidateQueries({ queryKey: jobKeys.all(namespace) });
      void queryClient.invalidateQueries({ queryKey: nsKeys.list() });
    },
  });
  const tab = search.tab ?? DEFAULT_TAB;
  const openRun = useCallback((runId: string, executor: string | undefined) => onSearch({ run: runId, executor }), [onSearch]);
  const onOpen = useCallback((run: RunAnswer) => openRun(run.runId, run.executor), [openRun]);
  const closeRun = useCallback(() => onSearch({ run: undefined, executor: undefined }), [onSearch]);

  if (detail.isPending) return <Loading />;
  if (detail.isError) {
    if (isApiError(detail.error, 'not-found')) {
      return (
        <Empty
          action={
            <Link to="/ns/$namespace/jobs" params={{ namespace }}>
              {t('jobDetail.backToJobs')}
            </Link>
          }
        >
          {t('jobDetail.notFound', { name: job, namespace })}
        </Empty>
      );
    }
    return <ErrorState error={detail.error} onRetry={() => void detail.refetch()} />;
  }
  const answer = detail.data;
  return (
    <section aria-labelledby="job-detail-title" className={`job-detail${search.run ? ' with-drawer' : ''}`}>
      <JobHeader namespace={namespace} detail={answer} canOperate={can('operate', namespace)} canOwn={can('own', namespace)} busy={action.isPending} onAction={(a) => action.mutate(a)} />
      {notice && <Notice tone={notice.tone}>{notice.text}</Notice>}
      {answer.config === null && <Notice tone="error">{t('jobDetail.broken', { problem: answer.problem ?? '' })}</Notice>}
      {answer.assignmentProblem !== undefined && <Notice tone="error">{t('jobDetail.assignmentProblem', { problem: answer.assignmentProblem })}</Notice>}
      <Tabs current={tab} onSelect={(next) => onSearch({ tab: next })}>
        {tab === 'shards' && <ShardsTable namespace={namespace} job={job} onOpenRun={openRun} />}
        {tab === 'runs' && <RunsPanel namespace={namespace} job={job} itemCount={answer.config?.shardingTotalCount ?? null} selectedRunId={search.run} onOpen={onOpen} />}
        {tab === 'history' && <JobHistoryPanel namespace={namespace} job={job} />}
        {tab === 'config' && <ConfigPanel detail={answer} />}
      </Tabs>
      {search.run !== undefined && (
        <RunDrawer key={`${search.run}:${search.executor ?? ''}`} namespace={namespace} job={job} runId={search.run} executor={search.executor} timeZone={answer.config?.timeZone} onClose={closeRun} />
      )}
    </section>
  );
}

const TAB_LABEL = { shards: 'jobDetail.tab.shards', runs: 'jobDetail.tab.runs', history: 'jobDetail.tab.history', config: 'jobDetail.tab.config' } as const satisfies Record<DetailTab, string>;

/** The tab list (arrow keys, Home and End move between tabs) and the current tab's panel. */
function Tabs({ current, onSelect, children }: { current: DetailTab; onSelect: (tab: DetailTab) => void; children: ReactNode }) {
  const { t } = useI18n();
  const id = useId();
  const buttons = useRef(new Map<DetailTab, HTMLButtonElement>());
  const onKeyDown = (event: KeyboardEvent) => {
    const index = DETAIL_TABS.indexOf(current);
    const next =
      event.key === 'ArrowRight' ? DETAIL_TABS[(index + 1) % DETAIL_TABS.length] : event.key === 'ArrowLeft' ? DETAIL_TABS[(index + DETAIL_TABS.length - 1) % DETAIL_TABS.length] : event.key === 'Home' ? DETAIL_TABS[0] : event.key === 'End' ? DETAIL_TABS.at(-1) : undefined;
    if (!next) return;
    event.preventDefault();
    onSelect(next);
    buttons.current.get(next)?.focus();
  };
  return (
    <>
      <div role="tablist" aria-label={t('jobDetail.tabs')} className="tabs" onKeyDown={onKeyDown}>
        {DETAIL_TABS.map((tab) => (
          <button
            key={tab}
            ref={(el) => {
              if (el) buttons.current.set(tab, el);
            }}
            type="button"
            role="tab"
            id={`${id}-${tab}`}
            aria-selected={tab === current}
            aria-controls={`${id}-panel`}
            tabIndex={tab === current ? 0 : -1}
            onClick={() => onSelect(tab)}
          >
            {t(TAB_LABEL[tab])}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`${id}-panel`} aria-labelledby={`${id}-${current}`} className="tab-panel">
        {children}
      </div>
    </>
  );
}
