/** The signed-in frame: header (namespace switcher, navigation, user menu) and the page. */
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, Outlet, useNavigate, useParams, useRouterState } from '@tanstack/react-router';
import { useId } from 'react';
import { logout } from '../auth/session';
import { useSession } from '../auth/session';
import { namespacesQuery } from '../features/namespaces/queries';
import { useI18n } from '../i18n/I18nProvider';
import { LanguageSelect } from './LanguageSelect';

/** Sections of a namespace the switcher keeps when it changes namespace. */
const SECTIONS = ['jobs', 'executors', 'assignment'] as const;
type Section = (typeof SECTIONS)[number];

function sectionOf(pathname: string): Section | undefined {
  const part = pathname.split('/')[3];
  return (SECTIONS as readonly string[]).includes(part ?? '') ? (part as Section) : undefined;
}

export function Shell() {
  const { t } = useI18n();
  const { principal, can } = useSession();
  const { namespace } = useParams({ strict: false });
  const ownsAny = principal.admin || Object.values(principal.roles).includes('owner');
  return (
    <div className="app">
      <a href="#main" className="skip-link">
        {t('app.skipToContent')}
      </a>
      <header className="topbar">
        <Link to="/" className="brand" aria-label={t('nav.namespaces')}>
          <span aria-hidden="true">◎</span> {t('app.name')}
        </Link>
        <NamespaceSwitcher current={namespace} />
        <nav aria-label={t('nav.main')} className="nav">
          {namespace !== undefined && (
            <>
              <Link to="/ns/$namespace" params={{ namespace }} activeOptions={{ exact: true }}>
                {t('nav.dashboard')}
              </Link>
              <Link to="/ns/$namespace/jobs" params={{ namespace }}>
                {t('nav.jobs')}
              </Link>
              <Link to="/ns/$namespace/executors" params={{ namespace }}>
                {t('nav.executors')}
              </Link>
              <Link to="/ns/$namespace/assignment" params={{ namespace }}>
                {t('nav.assignment')}
              </Link>
            </>
          )}
          {namespace === undefined && (
            <Link to="/" activeOptions={{ exact: true }}>
              {t('nav.namespaces')}
            </Link>
          )}
          {ownsAny && <Link to="/audit">{t('nav.audit')}</Link>}
          {can('administer') && <Link to="/users">{t('nav.users')}</Link>}
        </nav>
        <UserMenu />
      </header>
      <main id="main" tabIndex={-1}>
        <Outlet />
      </main>
    </div>
  );
}

function NamespaceSwitcher({ current }: { current: string | undefined }) {
  const { t } = useI18n();
  const id = useId();
  const navigate = useNavigate();
  const pathname = useRouterState({ select: (s) => s.location.pathname });
  const namespaces = useQuery(namespacesQuery());
  const names = namespaces.data?.map((n) => n.name) ?? [];
  if (current !== undefined && !names.includes(current)) names.unshift(current);
  return (
    <span className="switcher">
      <label htmlFor={id} className="visually-hidden">
        {t('switcher.label')}
      </label>
      <select
        id={id}
        value={current ?? ''}
        onChange={(e) => {
          const namespace = e.target.value;
          if (!namespace) return;
          const section = sectionOf(pathname);
          if (section) void navigate({ to: `/ns/$namespace/${section}`, params: { namespace } });
          else void navigate({ to: '/ns/$namespace', params: { namespace } });
        }}
      >
        {current === undefined && <option value="">{t('switcher.none')}</option>}
        {names.map((n) => (
          <option key={n} value={n}>
            {n}
          </option>
        ))}
      </select>
    </span>
  );
}

function UserMenu() {
  const { t } = useI18n();
  const { principal } = useSession();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const signOut = async (everywhere: boolean) => {
    try {
      await logout(everywhere);
    } finally {
      queryClient.clear();
      void navigate({ to: '/login', search: {} });
    }
  };
  return (
    <details className="user-menu">
      <summary aria-label={t('menu.label', { user: principal.user })}>
        <span className="avatar" aria-hidden="true">{principal.user.slice(0, 1).toUpperCase()}</span> {principal.user}
      </summary>
      <div className="menu">
        <p>
          {t('menu.signedInAs', { user: principal.user })}
          {principal.admin && <> · {t('menu.admin')}</>}
        </p>
        <LanguageSelect />
        <Link to="/tokens">{t('menu.tokens')}</Link>
        <button type="button" onClick={() => void signOut(false)}>
          {t('menu.logout')}
        </button>
        {principal.via === 'session' && (
          <button type="button" className="link" onClick={() => void signOut(true)}>
            {t('menu.logoutEverywhere')}
          </button>
        )}
      </div>
    </details>
  );
}

export function NotFound() {
  const { t } = useI18n();
  return (
    <div className="state state-empty">
      <p>{t('state.notFoundPage')}</p>
      <Link to="/">{t('state.backHome')}</Link>
    </div>
  );
}
