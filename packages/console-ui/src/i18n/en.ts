/**
 * The message catalogue's source: every user-visible string of the console, in English. Keys are
 * `area.what`; `{name}` is a placeholder filled by `t(key, {name})`. `zh-CN.ts` must have exactly
 * these keys and placeholders (a type error, and catalogue.test.ts).
 */
import { jobEditorMessages } from '../features/job-editor/messages';
import { jobHistoryMessages } from '../features/job-history/messages';
import { jobDetailMessages } from '../features/job-detail/messages';
import { executorsMessages } from '../features/executors/messages';
import { assignmentMessages } from '../features/assignment/messages';
import { auditMessages } from '../features/audit/messages';
import { usersMessages } from '../features/users/messages';
import { tokensMessages } from '../features/tokens/messages';

const base = {
  'app.name': 'Orrery',
  'app.tagline': 'Distributed cron console',
  'app.skipToContent': 'Skip to content',

  'nav.main': 'Main navigation',
  'nav.namespaces': 'Namespaces',
  'nav.dashboard': 'Dashboard',
  'nav.jobs': 'Jobs',
  'nav.executors': 'Executors',
  'nav.assignment': 'Assignment',
  'nav.audit': 'Audit log',
  'nav.users': 'Users',
  'nav.tokens': 'API tokens',

  'switcher.label': 'Namespace',
  'switcher.none': 'Choose a namespace',

  'menu.label': 'User menu for {user}',
  'menu.signedInAs': 'Signed in as {user}',
  'menu.admin': 'Administrator',
  'menu.language': 'Language',
  'menu.tokens': 'API tokens',
  'menu.logout': 'Sign out',
  'menu.logoutEverywhere': 'Sign out everywhere',

  'lang.en': 'English',
  'lang.zh-CN': '简体中文',

  'role.admin': 'admin',
  'role.owner': 'owner',
  'role.operator': 'operator',
  'role.viewer': 'viewer',

  'state.loading': 'Loading…',
  'state.error': 'Something went wrong',
  'state.retry': 'Try again',
  'state.network': 'The console cannot be reached. Check your connection, then try again.',
  'state.forbidden': 'You do not have access to this. Ask an administrator for a role.',
  'state.notFound': 'Not found.',
  'state.unavailable': 'The console cannot reach ZooKeeper right now. Try again in a moment.',
  'state.notFoundPage': 'There is no page at this address.',
  'state.backHome': 'Back to namespaces',

  'placeholder.title': '{page} is coming',
  'placeholder.body': 'This page is not built yet. The API already serves it: see the API documentation.',
  'placeholder.apiDocs': 'API documentation',

  'login.title': 'Sign in to Orrery',
  'login.user': 'User name',
  'login.password': 'Password',
  'login.submit': 'Sign in',
  'login.submitting': 'Signing in…',
  'login.wrong': 'Wrong user name or password.',
  'login.rateLimited': 'Too many attempts. Try again in {seconds} s.',
  'login.required': 'Enter your user name and password.',
  'login.expired': 'Your session ended. Sign in again to continue.',

  'namespaces.title': 'Namespaces',
  'namespaces.empty': 'No namespaces yet.',
  'namespaces.emptyViewer': 'You have no role in any namespace yet. Ask an administrator to give you one.',
  'namespaces.name': 'Name',
  'namespaces.description': 'Description',
  'namespaces.jobs': 'Jobs',
  'namespaces.enabled': 'Enabled',
  'namespaces.executors': 'Executors online',
  'namespaces.failing': '{count} failing',
  'namespaces.problem': 'Unreadable settings: {problem}',
  'namespaces.yourRole': 'Your role',
  'namespaces.create': 'Create namespace',
  'namespaces.createTitle': 'New namespace',
  'namespaces.newName': 'Namespace name',
  'namespaces.newNameHelp': "Letters, digits, '.', '_' and '-', 1 to 128.",
  'namespaces.newDescription': 'Description (optional)',
  'namespaces.creating': 'Creating…',
  'namespaces.created': 'Namespace {name} created.',
  'namespaces.cancel': 'Cancel',

  'dashboard.title': 'Dashboard',
  'dashboard.jobsByState': 'Jobs by state',
  'dashboard.executorsByState': 'Executors by state',
  'dashboard.failures24h': 'Failures in the last 24 h',
  'dashboard.runs24h': 'Runs in the last 24 h',
  'dashboard.mostFailing': 'Most failing jobs',
  'dashboard.noFailures': 'No failures in the last 24 hours.',
  'dashboard.job': 'Job',
  'dashboard.failures': 'Failures',
  'dashboard.runs': 'Runs',
  'dashboard.lastFailure': 'Last failure',
  'dashboard.total': 'Total',
  'dashboard.coverage': 'About these numbers',

  'jobState.healthy': 'Healthy',
  'jobState.running': 'Running',
  'jobState.failing': 'Failing',
  'jobState.unassigned': 'Unassigned',
  'jobState.disabled': 'Disabled',
  'jobState.enabled': 'Enabled',
  'jobState.broken': 'Broken',
  'executorState.online': 'Online',
  'executorState.drained': 'Drained',
  'executorState.offline': 'Offline',

  'outcome.succeeded': 'Succeeded',
  'outcome.failed': 'Failed',
  'outcome.timed-out': 'Timed out',
  'outcome.aborted': 'Aborted',
  'outcome.item': 'Shard {item}: {status} — {message}',

  'jobs.title': 'Jobs',
  'jobs.search': 'Search jobs by name',
  'jobs.searchPlaceholder': 'Search by name…',
  'jobs.group': 'Group',
  'jobs.state': 'State',
  'jobs.any': 'Any',
  'jobs.count': '{shown} of {total} jobs',
  'jobs.empty': 'No jobs in this namespace yet.',
  'jobs.emptyFiltered': 'No job matches these filters.',
  'jobs.clearFilters': 'Clear filters',
  'jobs.col.name': 'Name',
  'jobs.col.type': 'Type',
  'jobs.col.cron': 'Cron',
  'jobs.col.nextFire': 'Next fire',
  'jobs.col.state': 'State',
  'jobs.col.outcomes': 'Last outcomes',
  'jobs.col.actions': 'Actions',
  'jobs.passive': 'passive',
  'jobs.noNextFire': '—',
  'jobs.nextFireZone': '{time} in {zone}',
  'jobs.selectAll': 'Select all loaded jobs',
  'jobs.selectRow': 'Select {name}',
  'jobs.selected': '{count} selected',
  'jobs.clearSelection': 'Clear selection',
  'jobs.enable': 'Enable',
  'jobs.disable': 'Disable',
  'jobs.runNow': 'Run now',
  'jobs.stop': 'Stop',
  'jobs.batchLabel': 'Actions on the selected jobs',
  'jobs.rowActions': 'Actions on {name}',
  'jobs.batchDone': '{action}: {done} done, {unchanged} unchanged, {failed} failed.',
  'jobs.actionDone': '{action}: {name}.',
  'jobs.broken': 'Unreadable config: {problem}',
  'jobs.loadingMore': 'Loading more jobs…',
  'jobs.shards': '{count} shards',
} as const;

/** The catalogue: the shell's and the older pages' messages, then each feature's own (`features/<name>/messages.ts`). */
export const en = {
  ...base,
  ...jobEditorMessages.en,
  ...jobHistoryMessages.en,
  ...jobDetailMessages.en,
  ...executorsMessages.en,
  ...assignmentMessages.en,
  ...auditMessages.en,
  ...usersMessages.en,
  ...tokensMessages.en,
};

/** A message's key. */
export type MessageKey = keyof typeof en;
/** A whole catalogue: every key of {@link en}, each a string. */
export type Messages = { readonly [K in MessageKey]: string };
