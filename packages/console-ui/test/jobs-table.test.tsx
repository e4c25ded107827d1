// The jobs page through the whole app (router, queries, the API client) against a fake API:
// batch selection, filters feeding the list query, role checks, virtualised rows, 401 → login.
import { createMemoryHistory } from '@tanstack/react-router';
import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { App } from '../src/app/App';
import type { JobListItem, JobListPage, Principal } from '../src/api/types';
import { answer, fakeApi, type Call } from './fake-api';

const OPERATOR: Principal = { user: 'olga', admin: false, roles: { shop: 'operator' }, via: 'session' };
const VIEWER: Principal = { user: 'vic', admin: false, roles: { shop: 'viewer' }, via: 'session' };

function job(name: string, extra: Partial<Extract<JobListItem, { broken: false }>> = {}): JobListItem {
  return {
    name, broken: false, version: 1, type: 'shell', description: '', cron: '0 * * * * *', timeZone: 'Asia/Shanghai',
    nextFireTime: Date.UTC(2026, 0, 1, 12), enabled: true, groups: ['billing'], shardCount: 2, localMode: false,
    summary: { running: 0, failing: 0, succeeded: 2, unreadable: 0 },
    lastOutcomes: [{ item: 0, status: 'succeeded', endedAt: Date.UTC(2026, 0, 1, 11), durationMs: 12, executor: 'e1', message: '' }],
    ...extra,
  };
}

/** The list's answer: `all` filtered by the call's name/state, paged by cursor. */
function listJobs(all: JobListItem[]) {
  return (call: Call): JobListPage => {
    const name = call.query.get('name');
    const state = call.query.get('state');
    const limit = Number(call.query.get('limit') ?? 50);
    const cursor = call.query.get('cursor');
    const matching = all.filter((j) => (!name || j.name.includes(name)) && (!state || (state === 'disabled' ? !j.broken && !j.enabled : state === 'failing' ? !j.broken && j.summary.failing > 0 : true)));
    const start = cursor ? matching.findIndex((j) => j.name === cursor) + 1 : 0;
    const items = matching.slice(start, start + limit);
    return { total: matching.length, limit, offset: start, cursor, nextCursor: start + limit < matching.length ? items.at(-1)!.name : null, filter: { name, group: null, state: null } as JobListPage['filter'], items };
  };
}

function renderApp(url: string, me: Principal, jobs: JobListItem[], extra: Record<string, (call: Call) => unknown> = {}) {
  const api = fakeApi({
    'GET /api/v1/auth/me': () => me,
    'GET /api/v1/namespaces': () => ({ namespaces: [{ name: 'shop', version: 0, settings: null, jobs: jobs.length, enabledJobs: 0, failingJobs: 0, executors: { online: 1, total: 1 } }] }),
    'GET /api/v1/namespaces/shop/jobs': listJobs(jobs),
    ...extra,
  });
  const history = createMemoryHistory({ initialEntries: [url] });
  render(<App history={history} locale="en" />);
  return { api, history };
}

const JOBS = [job('alpha'), job('beta', { enabled: false }), job('gamma', { summary: { running: 0, failing: 1, succeeded: 1, unreadable: 0 } })];

describe('the jobs table', () => {
  it('selects jobs and runs a batch action on exactly the selected ones', async () => {
    const { api } = renderApp('/ns/shop/jobs', OPERATOR, JOBS, {
      'POST /api/v1/namespaces/shop/jobs/batch': (call) => ({ action: 'enable', results: (call.body as { names: string[] }).names.map((name) => ({ name, outcome: name === 'alpha' ? 'unchanged' : 'done' })) }),
    });
    expect(await screen.findByRole('link', { name: 'alpha' })).toBeTruthy();
    expect(screen.getByText('3 of 3 jobs')).toBeTruthy();
    expect(screen.queryByRole('toolbar')).toBeNull();

    fireEvent.click(screen.getByRole('checkbox', { name: 'Select alpha' }));
    fireEvent.click(screen.getByRole('checkbox', { name: 'Select beta' }));
    const toolbar = screen.getByRole('toolbar', { name: 'Actions on the selected jobs' });
    expect(within(toolbar).getByText('2 selected')).toBeTruthy();
    fireEvent.click(within(toolbar).getByRole('button', { name: 'Enable' }));

    await waitFor(() => expect(api.callsTo('POST', '/api/v1/namespaces/shop/jobs/batch')).toHaveLength(1));
    expect(api.callsTo('POST', '/api/v1/namespaces/shop/jobs/batch')[0]!.body).toEqual({ action: 'enable', names: ['alpha', 'beta'] });
    expect(await screen.findByText('Enable: 1 done, 1 unchanged, 0 failed.')).toBeTruthy();
    // The selection is cleared after the batch, and the list read again.
    expect(screen.queryByRole('toolbar')).toBeNull();
    await waitFor(() => expect(api.callsTo('GET', '/api/v1/namespaces/shop/jobs').length).toBeGreaterThan(1));
  });

  it('selects every loaded job from the header, and clears the selection', async () => {
    renderApp('/ns/shop/jobs', OPERATOR, JOBS);
    await screen.findByRole('link', { name: 'alpha' });
    fireEvent.click(screen.getByRole('checkbox', { name: 'Select all loaded jobs' }));
    expect(screen.getByText('3 selected')).toBeTruthy();
    expect((screen.getByRole('checkbox', { name: 'Select gamma' }) as HTMLInputElement).checked).toBe(true);
    fireEvent.click(screen.getByRole('button', { name: 'Clear selection' }));
    expect(screen.queryByText('3 selected')).toBeNull();
  });

  it('runs one job from its row', async () => {
    const { api } = renderApp('/ns/shop/jobs', OPERATOR, JOBS, { 'POST /api/v1/namespaces/shop/jobs/alpha/run': () => answer(202, { executors: ['e1'] }) });
    await screen.findByRole('link', { name: 'alpha' });
    const row = screen.getByRole('group', { name: 'Actions on alpha' });
    fireEvent.click(within(row).getByRole('button', { name: 'Run now' }));
    expect(await screen.findByText('Run now: alpha.')).toBeTruthy();
    expect(api.callsTo('POST', '/api/v1/namespaces/shop/jobs/alpha/run')).toHaveLength(1);
    // A disabled job offers enable, not run.
    const beta = screen.getByRole('group', { name: 'Actions on beta' });
    expect(within(beta).queryByRole('button', { name: 'Run now' })).toBeNull();
    expect(within(beta).getByRole('button', { name: 'Enable' })).toBeTruthy();
  });

  it('feeds the state filter and the search to the API list query and keeps them in the URL', async () => {
    const { api, history } = renderApp('/ns/shop/jobs', OPERATOR, JOBS);
    await screen.findByRole('link', { name: 'alpha' });
    fireEvent.change(screen.getByLabelText('State'), { target: { value: 'failing' } });
    expect(await screen.findByRole('link', { name: 'gamma' })).toBeTruthy();
    expect(screen.queryByRole('link', { name: 'alpha' })).toBeNull();
    expect(api.callsTo('GET', '/api/v1/namespaces/shop/jobs').at(-1)!.query.get('state')).toBe('failing');
    expect(history.location.search).toContain('state=failing');

    fireEvent.change(screen.getByLabelText('State'), { target: { value: '' } });
    fireEvent.change(screen.getByLabelText('Search jobs by name'), { target: { value: 'bet' } });
    await waitFor(() => expect(api.callsTo('GET', '/api/v1/namespaces/shop/jobs').at(-1)!.query.get('name')).toBe('bet'));
    expect(await screen.findByRole('link', { name: 'beta' })).toBeTruthy();
    expect(screen.queryByRole('link', { name: 'alpha' })).toBeNull();

    fireEvent.change(screen.getByLabelText('Search jobs by name'), { target: { value: 'nothing-like-it' } });
    expect(await screen.findByText('No job matches these filters.')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Clear filters' }));
    expect(await screen.findByRole('link', { name: 'alpha' })).toBeTruthy();
  });

  it('shows a viewer no selection and no action buttons', async () => {
    renderApp('/ns/shop/jobs', VIEWER, JOBS);
    await screen.findByRole('link', { name: 'alpha' });
    expect(screen.queryAllByRole('checkbox')).toHaveLength(0);
    expect(screen.queryByRole('button', { name: 'Run now' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Enable' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Disable' })).toBeNull();
  });

  it('renders a window of 10,000 jobs, not every row, and pages the list by cursor', async () => {
    const many = Array.from({ length: 10_000 }, (_, i) => job(`job-${String(i).padStart(5, '0')}`));
    const { api } = renderApp('/ns/shop/jobs', OPERATOR, many);
    await screen.findByRole('link', { name: 'job-00000' });
    expect(screen.getByText('500 of 10000 jobs')).toBeTruthy();
    expect(api.callsTo('GET', '/api/v1/namespaces/shop/jobs')[0]!.query.get('limit')).toBe('500');
    const rendered = screen.getAllByRole('row').length;
    expect(rendered).toBeGreaterThan(5);
    expect(rendered).toBeLessThan(80);
  });

  it('sends the user to the login page on a 401, with the way back', async () => {
    const { history } = renderApp('/ns/shop/jobs?state=failing', OPERATOR, JOBS, {
      'GET /api/v1/auth/me': () => answer(401, { error: { code: 'no-auth', message: 'sign in first' } }),
    });
    expect(await screen.findByRole('heading', { name: 'Sign in to Orrery' })).toBeTruthy();
    expect(history.location.pathname).toBe('/login');
    expect(new URLSearchParams(history.location.search).get('redirect')).toBe('/ns/shop/jobs?state=failing');
  });

  it('speaks Chinese when asked', async () => {
    fakeApi({ 'GET /api/v1/auth/me': () => OPERATOR, 'GET /api/v1/namespaces': () => ({ namespaces: [] }), 'GET /api/v1/namespaces/shop/jobs': listJobs(JOBS) });
    await act(async () => {
      render(<App history={createMemoryHistory({ initialEntries: ['/ns/shop/jobs'] })} locale="zh-CN" />);
    });
    expect(await screen.findByRole('heading', { name: '作业' })).toBeTruthy();
    expect(screen.getAllByRole('button', { name: '立即执行' }).length).toBeGreaterThan(0);
  });
});
