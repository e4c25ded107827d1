// The executors page through the whole app against a fake API: drain shows the allocator's preview
// (the moves and the loads after) and posts the drain only once confirmed; undrain; remove of an
// offline executor after a confirmation; each role sees only the buttons it may use.
import type { AssignmentPreviewAnswer, ExecutorSummaryAnswer } from '@orrery/console/api-types';
import { createMemoryHistory } from '@tanstack/react-router';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { App } from '../src/app/App';
import type { Principal } from '../src/api/types';
import { answer, fakeApi, type Call } from './fake-api';

const OWNER: Principal = { user: 'oona', admin: false, roles: { shop: 'owner' }, via: 'session' };
const OPERATOR: Principal = { user: 'olga', admin: false, roles: { shop: 'operator' }, via: 'session' };
const VIEWER: Principal = { user: 'vic', admin: false, roles: { shop: 'viewer' }, via: 'session' };

function executor(name: string, extra: Partial<ExecutorSummaryAnswer> = {}): ExecutorSummaryAnswer {
  return {
    name, state: 'online', drained: false, leaving: false, load: 0, shards: 0, host: `${name}.example`, pid: 4242, version: '0.1.0',
    startedAt: Date.UTC(2026, 0, 1, 8), tags: ['ssd'], handlers: ['report'], ...extra,
  };
}

const EXECUTORS = [
  executor('exec-a', { load: 6, shards: 3 }),
  executor('exec-b', { load: 2, shards: 2 }),
  executor('exec-c', { state: 'drained', drained: true }),
  executor('exec-d', { state: 'offline', host: null, pid: null, version: null, startedAt: null, tags: [], handlers: [] }),
];

const PREVIEW: AssignmentPreviewAnswer = {
  moves: [
    { job: 'orders', item: 0, from: 'exec-a', to: 'exec-b' },
    { job: 'orders', item: 2, from: 'exec-a', to: 'exec-b' },
    { job: 'billing', item: 7, from: 'exec-a', to: null, why: 'no-preferred-executor-online' },
  ],
  loads: [
    { executor: 'exec-a', before: 6, after: 0, shardsBefore: 3, shardsAfter: 0 },
    { executor: 'exec-b', before: 2, after: 6, shardsBefore: 2, shardsAfter: 4 },
    { executor: 'exec-e', before: 1, after: 1, shardsBefore: 1, shardsAfter: 1 },
  ],
  assignment: {},
  members: ['exec-b', 'exec-e'],
  notes: ["job 'legacy': its config is unreadable: the allocator ignores it"],
};

function renderApp(me: Principal, handlers: Record<string, (call: Call) => unknown> = {}) {
  let executors = EXECUTORS;
  const api = fakeApi({
    'GET /api/v1/auth/me': () => me,
    'GET /api/v1/namespaces': () => ({ namespaces: [] }),
    'GET /api/v1/namespaces/shop/executors': () => ({ executors }),
    'POST /api/v1/namespaces/shop/assignment/preview': () => PREVIEW,
    'POST /api/v1/namespaces/shop/executors/exec-a/drain': () => {
      executors = executors.map((e) => (e.name === 'exec-a' ? { ...e, state: 'drained', drained: true } : e));
      return { executor: 'exec-a', drained: true, changed: true };
    },
    ...handlers,
  });
  render(<App history={createMemoryHistory({ initialEntries: ['/ns/shop/executors'] })} locale="en" />);
  return api;
}

const actionsOf = (name: string) => screen.getByRole('group', { name: `Actions on ${name}` });

describe('the executors page', () => {
  it('lists executors with state, load, shards, version and host', async () => {
    renderApp(VIEWER);
    const row = (await screen.findByRole('rowheader', { name: 'exec-a' })).closest('tr')!;
    expect(within(row).getByText('Online')).toBeTruthy();
    expect(within(row).getByText('6')).toBeTruthy();
    expect(within(row).getByText('3')).toBeTruthy();
    expect(within(row).getByText('0.1.0')).toBeTruthy();
    expect(within(row).getByText('exec-a.example')).toBeTruthy();
    expect(within(row).getByRole('list', { name: 'Tags of exec-a' }).textContent).toBe('ssd');
    const offline = screen.getByRole('rowheader', { name: 'exec-d' }).closest('tr')!;
    expect(within(offline).getByText('Offline')).toBeTruthy();
  });

  it('shows the preview’s moves before confirming, and posts the drain only on Confirm drain', async () => {
    const api = renderApp(OPERATOR);
    await screen.findByRole('rowheader', { name: 'exec-a' });
    fireEvent.click(within(actionsOf('exec-a')).getByRole('button', { name: 'Drain…' }));

    const dialog = await screen.findByRole('dialog', { name: 'Drain exec-a?' });
    // The preview asked for exactly this drain; nothing is drained yet.
    await waitFor(() => expect(api.callsTo('POST', '/api/v1/namespaces/shop/assignment/preview')).toHaveLength(1));
    expect(api.callsTo('POST', '/api/v1/namespaces/shop/assignment/preview')[0]!.body).toEqual({ drain: ['exec-a'] });
    expect(await within(dialog).findByRole('heading', { name: 'Shards that move (3)' })).toBeTruthy();
    expect(api.callsTo('POST', '/api/v1/namespaces/shop/executors/exec-a/drain')).toHaveLength(0);

    // The moves: which job's items go from exec-a to which executor (or to none, and why).
    const moves = within(dialog).getByRole('table', { name: 'Shards that move when exec-a is drained' });
    const orders = within(moves).getByRole('rowheader', { name: 'orders' }).closest('tr')!;
    expect(orders.textContent).toContain('0, 2');
    expect(within(orders).getByText('exec-a')).toBeTruthy();
    expect(within(orders).getByText('exec-b')).toBeTruthy();
    const billing = within(moves).getByRole('rowheader', { name: 'billing' }).closest('tr')!;
    expect(within(billing).getByText('No executor: No preferred executor online')).toBeTruthy();
    expect(within(dialog).getByText(/1 shard\(s\) would have no executor afterwards/)).toBeTruthy();

    // The loads after: the executors whose load changes, the others counted.
    const loads = within(dialog).getByRole('table', { name: 'Load and shards per executor, before and after the drain' });
    const b = within(loads).getByRole('rowheader', { name: 'exec-b' }).closest('tr')!;
    expect([...b.querySelectorAll('td')].map((td) => td.textContent)).toEqual(['2', '6', '2', '4']);
    expect(within(loads).queryByRole('rowheader', { name: 'exec-e' })).toBeNull();
    expect(within(dialog).getByText('1 other executor(s) keep their load.')).toBeTruthy();
    expect(within(dialog).getByText(/its config is unreadable/)).toBeTruthy();

    fireEvent.click(within(dialog).getByRole('button', { name: 'Confirm drain' }));
    await waitFor(() => expect(api.callsTo('POST', '/api/v1/namespaces/shop/executors/exec-a/drain')).toHaveLength(1));
    expect(await screen.findByText(/exec-a is drained: the allocator moves its shards away/)).toBeTruthy();
    expect(screen.queryByRole('dialog')).toBeNull();
    // The list is read again: exec-a now offers undrain.
    expect(await within(actionsOf('exec-a')).findByRole('button', { name: 'Undrain' })).toBeTruthy();
  });

  it('drains nothing when the preview is cancelled', async () => {
    const api = renderApp(OPERATOR);
    await screen.findByRole('rowheader', { name: 'exec-a' });
    fireEvent.click(within(actionsOf('exec-a')).getByRole('button', { name: 'Drain…' }));
    const dialog = await screen.findByRole('dialog', { name: 'Drain exec-a?' });
    await within(dialog).findByRole('heading', { name: 'Shards that move (3)' });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(api.callsTo('POST', '/api/v1/namespaces/shop/executors/exec-a/drain')).toHaveLength(0);
  });

  it('says so when the preview fails, and still lets the operator drain', async () => {
    const api = renderApp(OPERATOR, {
      'POST /api/v1/namespaces/shop/assignment/preview': () => answer(429, { error: { code: 'rate-limited', message: 'too many previews' } }),
    });
    await screen.findByRole('rowheader', { name: 'exec-a' });
    fireEvent.click(within(actionsOf('exec-a')).getByRole('button', { name: 'Drain…' }));
    const dialog = await screen.findByRole('dialog', { name: 'Drain exec-a?' });
    expect(await within(dialog).findByText(/The preview failed: too many previews/)).toBeTruthy();
    fireEvent.click(within(dialog).getByRole('button', { name: 'Confirm drain' }));
    await waitFor(() => expect(api.callsTo('POST', '/api/v1/namespaces/shop/executors/exec-a/drain')).toHaveLength(1));
  });

  it('undrains a drained executor at once', async () => {
    const api = renderApp(OPERATOR, { 'POST /api/v1/namespaces/shop/executors/exec-c/undrain': () => ({ executor: 'exec-c', drained: false, changed: true }) });
    await screen.findByRole('rowheader', { name: 'exec-c' });
    fireEvent.click(within(actionsOf('exec-c')).getByRole('button', { name: 'Undrain' }));
    expect(await screen.findByText('exec-c takes shards again from the allocator’s next round.')).toBeTruthy();
    expect(api.callsTo('POST', '/api/v1/namespaces/shop/executors/exec-c/undrain')).toHaveLength(1);
  });

  it('shows a viewer no drain, undrain or remove buttons', async () => {
    renderApp(VIEWER);
    await screen.findByRole('rowheader', { name: 'exec-a' });
    expect(screen.queryByRole('button', { name: 'Drain…' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Undrain' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Remove…' })).toBeNull();
    expect(screen.queryByRole('columnheader', { name: 'Actions' })).toBeNull();
  });

  it('offers an operator drain and undrain but not remove', async () => {
    renderApp(OPERATOR);
    await screen.findByRole('rowheader', { name: 'exec-a' });
    expect(screen.getAllByRole('button', { name: 'Drain…' })).toHaveLength(3);
    expect(screen.queryByRole('button', { name: 'Remove…' })).toBeNull();
  });

  it('lets an owner remove an offline executor, after a confirmation', async () => {
    const api = renderApp(OWNER, { 'DELETE /api/v1/namespaces/shop/executors/exec-d': () => answer(204, null) });
    await screen.findByRole('rowheader', { name: 'exec-d' });
    // Only the offline executor can be removed.
    expect(screen.getAllByRole('button', { name: 'Remove…' })).toHaveLength(1);
    fireEvent.click(within(actionsOf('exec-d')).getByRole('button', { name: 'Remove…' }));
    const dialog = await screen.findByRole('alertdialog', { name: 'Remove executor exec-d?' });
    expect(api.callsTo('DELETE', '/api/v1/namespaces/shop/executors/exec-d')).toHaveLength(0);
    fireEvent.click(within(dialog).getByRole('button', { name: 'Remove' }));
    expect(await screen.findByText('Executor exec-d removed.')).toBeTruthy();
    expect(api.callsTo('DELETE', '/api/v1/namespaces/shop/executors/exec-d')).toHaveLength(1);
  });

  it('shows the empty state when no executor has joined', async () => {
    renderApp(VIEWER, { 'GET /api/v1/namespaces/shop/executors': () => ({ executors: [] }) });
    expect(await screen.findByText(/No executor has joined namespace shop yet/)).toBeTruthy();
  });
});
