// The audit log through the whole app against a fake API: the filters change the request and stay
// in the URL; an entry expands to its before/after field by field; older pages with `before`; the
// time window filters what is loaded; a user without the role is told so.
import type { AuditEntryAnswer } from '@orrery/console/api-types';
import { createMemoryHistory } from '@tanstack/react-router';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { App } from '../src/app/App';
import type { Principal } from '../src/api/types';
import { answer, fakeApi, type Call } from './fake-api';

const ADMIN: Principal = { user: 'ada', admin: true, roles: {}, via: 'session' };
const VIEWER: Principal = { user: 'vic', admin: false, roles: { shop: 'viewer' }, via: 'session' };

const NOW = Date.now();
const entry = (id: number, extra: Partial<AuditEntryAnswer> = {}): AuditEntryAnswer => ({ id, at: NOW - (1000 - id) * 60_000, user: 'ada', via: 'session', ip: '10.0.0.7', action: 'job.update', namespace: 'shop', job: 'orders', ...extra });

const ENTRIES: AuditEntryAnswer[] = [
  entry(1000, { before: { cron: '0 * * * *', shardingTotalCount: 2, description: 'orders' }, after: { cron: '*/5 * * * *', shardingTotalCount: 4, description: 'orders' } }),
  entry(999, { user: 'bob', via: 'token', tokenId: '0123456789abcdef', action: 'executor.drain', job: undefined, target: 'exec-a', before: { noTraffic: false }, after: { noTraffic: true } }),
  // Two days old: outside "the last 24 hours".
  entry(998, { at: NOW - 2 * 86_400_000, action: 'auth.login', namespace: undefined, job: undefined, details: { how: 'password' } }),
];

/** Answers like the server: filtered by the query, newest first, `limit` per page, `before` for older ones. */
function listAudit(all: AuditEntryAnswer[]) {
  return (call: Call) => {
    const q = call.query;
    const before = q.get('before');
    const limit = Number(q.get('limit') ?? 100);
    const matching = all.filter(
      (e) => (!q.get('user') || e.user === q.get('user')) && (!q.get('namespace') || e.namespace === q.get('namespace')) && (!q.get('job') || e.job === q.get('job')) && (!before || e.id < Number(before)),
    );
    const entries = matching.slice(0, limit);
    return matching.length > limit ? { entries, next: entries.at(-1)!.id } : { entries };
  };
}

function renderApp(url: string, me: Principal, handlers: Record<string, (call: Call) => unknown> = {}) {
  const api = fakeApi({
    'GET /api/v1/auth/me': () => me,
    'GET /api/v1/namespaces': () => ({ namespaces: [] }),
    'GET /api/v1/audit': listAudit(ENTRIES),
    ...handlers,
  });
  const history = createMemoryHistory({ initialEntries: [url] });
  render(<App history={history} locale="en" />);
  return { api, history };
}

const auditCalls = (api: ReturnType<typeof fakeApi>) => api.callsTo('GET', '/api/v1/audit');

describe('the audit log', () => {
  it('lists who, when, from where, what and where', async () => {
    renderApp('/audit', ADMIN);
    await screen.findByText('executor.drain');
    const first = screen.getAllByRole('row')[1]!;
    expect(within(first).getByText('10.0.0.7')).toBeTruthy();
    expect(within(first).getByRole('link', { name: 'ada' })).toBeTruthy();
    expect(within(first).getByText('job.update')).toBeTruthy();
    expect(within(first).getByRole('link', { name: 'shop' })).toBeTruthy();
    expect(within(first).getByRole('link', { name: 'orders' })).toBeTruthy();
    // The exact instant on hover.
    const time = first.querySelector('time')!;
    expect(time.getAttribute('title')).toContain(String(ENTRIES[0]!.at));
    const viaToken = screen.getAllByRole('row')[2]!;
    expect(within(viaToken).getByText('API token').getAttribute('title')).toBe('Token 0123456789abcdef');
    expect(within(viaToken).getByText('exec-a')).toBeTruthy();
  });

  it('sends the user, namespace and job filters with the request and keeps them in the URL', async () => {
    const { api, history } = renderApp('/audit', ADMIN);
    await screen.findAllByText('job.update');
    expect(auditCalls(api)[0]!.query.get('user')).toBeNull();

    fireEvent.change(screen.getByLabelText('Filter by user'), { target: { value: 'bob' } });
    await waitFor(() => expect(auditCalls(api).at(-1)!.query.get('user')).toBe('bob'));
    expect(new URLSearchParams(history.location.search).get('user')).toBe('bob');
    await waitFor(() => expect(screen.queryByText('job.update')).toBeNull());
    expect(screen.getByText('executor.drain')).toBeTruthy();

    fireEvent.change(screen.getByLabelText('Filter by namespace'), { target: { value: 'shop' } });
    fireEvent.change(screen.getByLabelText('Filter by job'), { target: { value: 'orders' } });
    await waitFor(() => expect(auditCalls(api).at(-1)!.query.get('job')).toBe('orders'));
    const last = auditCalls(api).at(-1)!.query;
    expect([last.get('user'), last.get('namespace'), last.get('job')]).toEqual(['bob', 'shop', 'orders']);
    expect(await screen.findByText('No entry matches these filters.')).toBeTruthy();
  });

  it('reads its filters from the URL, and a click on a user filters by them', async () => {
    const { api, history } = renderApp('/audit?namespace=shop', ADMIN);
    await screen.findAllByText('job.update');
    expect(auditCalls(api)[0]!.query.get('namespace')).toBe('shop');
    expect((screen.getByLabelText('Filter by namespace') as HTMLInputElement).value).toBe('shop');
    fireEvent.click(screen.getByRole('link', { name: 'bob' }));
    await waitFor(() => expect(auditCalls(api).at(-1)!.query.get('user')).toBe('bob'));
    expect(new URLSearchParams(history.location.search).get('namespace')).toBe('shop');
    expect((screen.getByLabelText('Filter by user') as HTMLInputElement).value).toBe('bob');
  });

  it('filters by time on the loaded entries (the API has no time parameter)', async () => {
    const { api } = renderApp('/audit', ADMIN);
    expect(await screen.findByText('auth.login')).toBeTruthy();
    const calls = auditCalls(api).length;
    fireEvent.change(screen.getByLabelText('Since'), { target: { value: '24h' } });
    await waitFor(() => expect(screen.queryByText('auth.login')).toBeNull());
    expect(screen.getByText('job.update')).toBeTruthy();
    expect(auditCalls(api)).toHaveLength(calls);
  });

  it('expands an entry to its changed fields, before and after', async () => {
    renderApp('/audit', ADMIN);
    const toggle = await screen.findByRole('button', { name: 'Show the changes of entry 1000 (job.update)' });
    expect(toggle.getAttribute('aria-expanded')).toBe('false');
    fireEvent.click(toggle);
    expect(screen.getByRole('button', { name: 'Hide the changes of entry 1000 (job.update)' }).getAttribute('aria-expanded')).toBe('true');
    const changed = screen.getByRole('table', { name: 'Changed fields (2)' });
    const cron = within(changed).getByRole('rowheader', { name: 'cron' }).closest('tr')!;
    expect([...cron.querySelectorAll('td')].map((td) => td.textContent)).toEqual(['0 * * * *', '*/5 * * * *']);
    const shards = within(changed).getByRole('rowheader', { name: 'shardingTotalCount' }).closest('tr')!;
    expect([...shards.querySelectorAll('td')].map((td) => td.textContent)).toEqual(['2', '4']);
    // The unchanged field is folded away, not listed with the changes.
    expect(within(changed).queryByRole('rowheader', { name: 'description' })).toBeNull();
    expect(screen.getByText('Unchanged fields (1)', { selector: 'summary' })).toBeTruthy();
  });

  it('pages with before = the previous page’s next', async () => {
    const many = Array.from({ length: 150 }, (_, i) => entry(2000 - i, { at: NOW - i * 1000 }));
    const { api } = renderApp('/audit', ADMIN, { 'GET /api/v1/audit': listAudit(many) });
    await screen.findByText('100 entries shown');
    expect(auditCalls(api)[0]!.query.get('limit')).toBe('100');
    fireEvent.click(screen.getByRole('button', { name: 'Load older entries' }));
    expect(await screen.findByText('150 entries shown')).toBeTruthy();
    expect(auditCalls(api).at(-1)!.query.get('before')).toBe('1901');
    expect(screen.getByText('No older entries.')).toBeTruthy();
  });

  it('tells a user without the owner role that the log is not theirs', async () => {
    renderApp('/audit', VIEWER, {
      'GET /api/v1/audit': () => answer(403, { error: { code: 'forbidden', message: 'vic may not read the audit log', details: { need: 'owner' } } }),
    });
    expect(await screen.findByText(/The audit log is open to administrators, and to namespace owners/)).toBeTruthy();
  });
});
