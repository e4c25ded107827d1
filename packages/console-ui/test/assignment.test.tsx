// The assignment page through the whole app against a fake API: the executors × jobs matrix shows
// each job's shard count per executor and each executor's load; unassigned items are highlighted
// with their reason; the name filter; many jobs are virtualised.
import type { AssignmentAnswer, ExecutorSummaryAnswer } from '@orrery/console/api-types';
import { createMemoryHistory } from '@tanstack/react-router';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { App } from '../src/app/App';
import type { Principal } from '../src/api/types';
import { fakeApi, type Call } from './fake-api';

const VIEWER: Principal = { user: 'vic', admin: false, roles: { shop: 'viewer' }, via: 'session' };

type AssignedJob = AssignmentAnswer['jobs'][number];
const job = (name: string, items: Record<string, number[]>, extra: Partial<AssignedJob> = {}): AssignedJob => ({ job: name, enabled: true, loadLevel: 1, epoch: 3, items, unassigned: [], ...extra });

const ASSIGNMENT: AssignmentAnswer = {
  members: ['exec-a', 'exec-b'],
  round: 17,
  writtenAt: Date.UTC(2026, 0, 1, 12),
  jobs: [
    job('billing', { 'exec-a': [0, 1, 2], 'exec-b': [3] }, { loadLevel: 2 }),
    job('orders', { 'exec-b': [0, 1] }, {
      unassigned: [
        { item: 2, reason: 'all-drained', advice: 'every eligible executor is drained: undrain one' },
        { item: 3, reason: 'all-drained', advice: 'every eligible executor is drained: undrain one' },
      ],
    }),
    job('reports', {}, { enabled: false, epoch: null }),
  ],
  loads: [
    { executor: 'exec-a', load: 6, shards: 3 },
    { executor: 'exec-b', load: 4, shards: 3 },
  ],
};

const exec = (name: string, state: ExecutorSummaryAnswer['state']): ExecutorSummaryAnswer => ({
  name, state, drained: state === 'drained', leaving: false, load: 0, shards: 0, host: null, pid: null, version: null, startedAt: null, tags: [], handlers: [],
});

function renderApp(assignment: AssignmentAnswer, handlers: Record<string, (call: Call) => unknown> = {}) {
  const api = fakeApi({
    'GET /api/v1/auth/me': () => VIEWER,
    'GET /api/v1/namespaces': () => ({ namespaces: [] }),
    'GET /api/v1/namespaces/shop/assignment': () => assignment,
    'GET /api/v1/namespaces/shop/executors': () => ({ executors: [exec('exec-a', 'online'), exec('exec-b', 'online'), exec('exec-c', 'drained')] }),
    ...handlers,
  });
  render(<App history={createMemoryHistory({ initialEntries: ['/ns/shop/assignment'] })} locale="en" />);
  return api;
}

/** The texts of a row's cells (after its header cell). */
const cells = (row: HTMLElement) => [...row.querySelectorAll('td')].map((td) => td.textContent);
const matrix = () => screen.getByRole('region', { name: 'Shards per job and executor' });
const rowOf = async (job: string) => {
  await screen.findByRole('region', { name: 'Shards per job and executor' });
  return (await within(matrix()).findByRole('link', { name: job })).closest('tr')!;
};

describe('the assignment page', () => {
  it('shows the shard counts per job and executor, and the load per executor', async () => {
    renderApp(ASSIGNMENT);
    const table = within(await screen.findByRole('region', { name: 'Shards per job and executor' })).getByRole('table');
    // Columns: the job, its shards, unassigned, each executor (the drained one too, marked).
    await waitFor(() => expect(within(table).getAllByRole('columnheader').map((th) => th.textContent)).toEqual(['Job', 'Shards', 'Unassigned', 'exec-a', 'exec-b', 'exec-cDrained']));
    const loadRow = within(table).getByRole('rowheader', { name: 'Load (shards)' }).closest('tr')!;
    expect(cells(loadRow)).toEqual(['6', '2', '63 shards', '43 shards', '00 shards']);
    expect(within(loadRow).getByLabelText('exec-a: load 6, 3 shard(s)')).toBeTruthy();

    expect(cells(await rowOf('billing'))).toEqual(['4', '', '3', '1', '']);
    const orders = await rowOf('orders');
    expect(cells(orders)).toEqual(['4', '2 All eligible executors drained', '', '2', '']);
    // The unassigned cell is highlighted, with the items and the advice on hover.
    const unassigned = orders.querySelector('td.unassigned')!;
    expect(unassigned.getAttribute('title')).toContain('items 2, 3');
    expect(unassigned.getAttribute('title')).toContain('undrain one');
    expect(within(await rowOf('reports')).getByText('Disabled')).toBeTruthy();

    expect(screen.getByText('2 shard item(s) of 1 job(s) have no executor.')).toBeTruthy();
    expect(screen.getByText('Round 17', { exact: false })).toBeTruthy();
  });

  it('filters the jobs by name and to those with unassigned items', async () => {
    renderApp(ASSIGNMENT);
    await rowOf('billing');
    fireEvent.change(screen.getByLabelText('Filter jobs by name'), { target: { value: 'ORD' } });
    await waitFor(() => expect(within(matrix()).queryByRole('link', { name: 'billing' })).toBeNull());
    expect(within(matrix()).getByRole('link', { name: 'orders' })).toBeTruthy();
    expect(screen.getByText('1 of 3 jobs')).toBeTruthy();

    fireEvent.change(screen.getByLabelText('Filter jobs by name'), { target: { value: '' } });
    fireEvent.click(screen.getByLabelText('Only jobs with unassigned items'));
    await waitFor(() => expect(within(matrix()).queryByRole('link', { name: 'billing' })).toBeNull());
    expect(screen.getByText('1 of 3 jobs')).toBeTruthy();

    fireEvent.change(screen.getByLabelText('Filter jobs by name'), { target: { value: 'nothing-like-it' } });
    expect(await screen.findByText('No job matches this filter.')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Clear filter' }));
    expect(await screen.findByRole('link', { name: 'billing' })).toBeTruthy();
  });

  it('renders a window of many jobs, not every row', async () => {
    const many: AssignmentAnswer = {
      ...ASSIGNMENT,
      jobs: Array.from({ length: 3000 }, (_, i) => job(`job-${String(i).padStart(4, '0')}`, { 'exec-a': [0], 'exec-b': [1] })),
      loads: [
        { executor: 'exec-a', load: 3000, shards: 3000 },
        { executor: 'exec-b', load: 3000, shards: 3000 },
      ],
    };
    renderApp(many);
    await screen.findByRole('link', { name: 'job-0000' });
    expect(screen.getByText('3000 of 3000 jobs')).toBeTruthy();
    const rendered = screen.getAllByRole('row').length;
    expect(rendered).toBeGreaterThan(5);
    expect(rendered).toBeLessThan(100);
    expect(screen.queryByRole('link', { name: 'job-2999' })).toBeNull();
    // The filter still reaches every job, rendered or not.
    fireEvent.change(screen.getByLabelText('Filter jobs by name'), { target: { value: 'job-2999' } });
    expect(await screen.findByRole('link', { name: 'job-2999' })).toBeTruthy();
  });

  it('shows the empty state for a namespace without jobs', async () => {
    renderApp({ members: [], round: null, writtenAt: null, jobs: [], loads: [] });
    expect(await screen.findByText('No jobs in this namespace yet.')).toBeTruthy();
    expect(screen.getByText(/The allocator has not written an assignment yet/)).toBeTruthy();
  });
});
