/**
 * The route tree (code-based, typed): `/login` outside the signed-in part; everything else under
 * the `_app` layout, which loads the principal first (a 401 sends to /login with `redirect` back).
 */
import type { QueryClient } from '@tanstack/react-query';
import { Outlet, createRootRouteWithContext, createRoute, createRouter, redirect, type RouterHistory } from '@tanstack/react-router';
import { isApiError } from '../api/client';
import { JOB_STATE_FILTERS, type JobStateFilter } from '../api/types';
import { meQuery } from '../auth/session';
import { DashboardPage } from '../features/dashboard/DashboardPage';
import { JobsPage } from '../features/jobs/JobsPage';
import type { JobFilters } from '../features/jobs/queries';
import { LoginPage } from '../features/login/LoginPage';
import { NamespacesPage } from '../features/namespaces/NamespacesPage';
import { AssignmentPage } from '../features/assignment/AssignmentPage';
import { AuditPage } from '../features/audit/AuditPage';
import { ExecutorsPage } from '../features/executors/ExecutorsPage';
import { JobDetailPage } from '../features/job-detail/JobDetailPage';
import { JobEditorPage } from '../features/job-editor/JobEditorPage';
import { TokensPage } from '../features/tokens/TokensPage';
import { UsersPage } from '../features/users/UsersPage';
import { useNamespaceEvents } from '../live/events';
import { ErrorState, Loading } from '../ui/states';
import { NotFound, Shell } from './Shell';

/** What every route's loaders see. */
export interface RouterContext {
  queryClient: QueryClient;
}

const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

const rootRoute = createRootRouteWithContext<RouterContext>()({
  component: Outlet,
  notFoundComponent: NotFound,
});

const loginRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: 'login',
  validateSearch: (search: Record<string, unknown>): { redirect?: string; expired?: boolean } => ({
    redirect: str(search.redirect),
    expired: search.expired === true || search.expired === 'true' ? true : undefined,
  }),
  component: function LoginRoute() {
    const { redirect: target, expired } = loginRoute.useSearch();
    return <LoginPage redirect={target} expired={expired} />;
  },
});

const appRoute = createRoute({
  getParentRoute: () => rootRoute,
  id: '_app',
  beforeLoad: async ({ context, location }) => {
    try {
      return { principal: await context.queryClient.ensureQueryData(meQuery()) };
    } catch (error) {
      if (isApiError(error, 'no-auth')) throw redirect({ to: '/login', search: { redirect: location.href } });
      throw error;
    }
  },
  component: Shell,
  pendingComponent: () => <Loading />,
  errorComponent: ({ error, reset }) => <ErrorState error={error} onRetry={reset} />,
});

const namespacesRoute = createRoute({ getParentRoute: () => appRoute, path: '/', component: NamespacesPage });

const namespaceRoute = createRoute({
  getParentRoute: () => appRoute,
  path: 'ns/$namespace',
  component: function NamespaceLayout() {
    const { namespace } = namespaceRoute.useParams();
    // One live event stream per open namespace, feeding the query cache.
    useNamespaceEvents(namespace);
    return <Outlet />;
  },
});

const dashboardRoute = createRoute({ getParentRoute: () => namespaceRoute, path: '/', component: DashboardPage });

const jobsRoute = createRoute({
  getParentRoute: () => namespaceRoute,
  path: 'jobs',
  validateSearch: (search: Record<string, unknown>): JobFilters => ({
    q: str(search.q),
    group: str(search.group),
    state: (JOB_STATE_FILTERS as readonly unknown[]).includes(search.state) ? (search.state as JobStateFilter) : undefined,
  }),
  component: JobsPage,
});

/** The job detail page's parts (`?tab=`), and the run it shows (`?run=`, with `executor` when known). */
export const JOB_TABS = ['shards', 'runs', 'history', 'config'] as const;
export type JobTab = (typeof JOB_TABS)[number];
export interface JobDetailSearch {
  tab?: JobTab;
  run?: string;
  executor?: string;
}

const newJobRoute = createRoute({ getParentRoute: () => namespaceRoute, path: 'jobs/new', component: JobEditorPage });
const jobRoute = createRoute({
  getParentRoute: () => namespaceRoute,
  path: 'jobs/$job',
  validateSearch: (search: Record<string, unknown>): JobDetailSearch => ({
    tab: (JOB_TABS as readonly unknown[]).includes(search.tab) ? (search.tab as JobTab) : undefined,
    run: str(search.run),
    executor: str(search.executor),
  }),
  component: JobDetailPage,
});
const editJobRoute = createRoute({ getParentRoute: () => namespaceRoute, path: 'jobs/$job/edit', component: JobEditorPage });
const executorsRoute = createRoute({ getParentRoute: () => namespaceRoute, path: 'executors', component: ExecutorsPage });
const assignmentRoute = createRoute({ getParentRoute: () => namespaceRoute, path: 'assignment', component: AssignmentPage });
/** The audit log's filters, kept in the URL. */
export interface AuditSearch {
  namespace?: string;
  job?: string;
  user?: string;
}
const auditRoute = createRoute({
  getParentRoute: () => appRoute,
  path: 'audit',
  validateSearch: (search: Record<string, unknown>): AuditSearch => ({ namespace: str(search.namespace), job: str(search.job), user: str(search.user) }),
  component: AuditPage,
});
const usersRoute = createRoute({ getParentRoute: () => appRoute, path: 'users', component: UsersPage });
const tokensRoute = createRoute({ getParentRoute: () => appRoute, path: 'tokens', component: TokensPage });

export const routeTree = rootRoute.addChildren([
  loginRoute,
  appRoute.addChildren([
    namespacesRoute,
    namespaceRoute.addChildren([dashboardRoute, jobsRoute, newJobRoute, jobRoute, editJobRoute, executorsRoute, assignmentRoute]),
    auditRoute,
    usersRoute,
    tokensRoute,
  ]),
]);

/** Creates the app's router (`history`: a memory history in tests). */
export function createAppRouter(queryClient: QueryClient, history?: RouterHistory) {
  return createRouter({
    routeTree,
    context: { queryClient },
    ...(history ? { history } : {}),
    defaultPreload: 'intent',
    // Queries own the data: the router does not cache loader results of its own.
    defaultPreloadStaleTime: 0,
    scrollRestoration: true,
  });
}

export type AppRouter = ReturnType<typeof createAppRouter>;

declare module '@tanstack/react-router' {
  interface Register {
    router: AppRouter;
  }
}
