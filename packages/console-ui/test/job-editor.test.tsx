// The job editor through the whole app against a fake API: the schema checker's issues under their
// fields, the cron preview, the server's 400 issues, create and edit requests, and the 409 conflict
// flow (both versions shown; reload and reapply each send the right request).
import { createMemoryHistory } from '@tanstack/react-router';
import { checkJobConfig, type JobConfig } from '@orrery/core/schemas';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { App } from '../src/app/App';
import type { Principal } from '../src/api/types';
import { answer, fakeApi, type Call } from './fake-api';

const OWNER: Principal = { user: 'oona', admin: false, roles: { shop: 'owner' }, via: 'session' };
const OPERATOR: Principal = { user: 'olga', admin: false, roles: { shop: 'operator' }, via: 'session' };

function renderApp(url: string, me: Principal, handlers: Record<string, (call: Call) => unknown> = {}) {
  const api = fakeApi({
    'GET /api/v1/auth/me': () => me,
    'GET /api/v1/namespaces': () => ({ namespaces: [] }),
    'GET /api/v1/namespaces/shop/jobs': () => ({ total: 0, limit: 500, offset: 0, cursor: null, nextCursor: null, filter: { name: null, group: null, state: null }, items: [] }),
    'GET /api/v1/cron/preview': (call) => ({ expr: call.query.get('expr'), timeZone: call.query.get('timeZone'), fires: [], notes: [] }),
    ...handlers,
  });
  const history = createMemoryHistory({ initialEntries: [url] });
  render(<App history={history} locale="en" />);
  return { api, history };
}

/** A normalised config, as the API answers it. */
function config(input: Record<string, unknown>): JobConfig {
  const result = checkJobConfig({ type: 'shell', command: 'echo hi', ...input });
  if (!result.ok) throw new Error(JSON.stringify(result.issues));
  return result.value;
}

/** What core's checker says about `field` of `input`, without the leading `field: `. */
function checkerSays(input: Record<string, unknown>, field: string): string {
  const result = checkJobConfig(input);
  const issue = result.ok ? undefined : result.issues.find((i) => i.field === field);
  if (!issue) throw new Error(`no issue at ${field}`);
  return issue.message.slice(`${field}: `.length);
}

const input = (label: string) => screen.getByLabelText(label) as HTMLInputElement;
const type = (label: string, value: string) => fireEvent.change(input(label), { target: { value } });

describe('the job editor', () => {
  it('shows the schema checker’s issues under the fields as they are typed, and sends nothing while any remains', async () => {
    const { api, history } = renderApp('/ns/shop/jobs/new', OWNER, {
      'POST /api/v1/namespaces/shop/jobs': (call) => answer(201, { name: 'nightly', version: 0, config: config(call.body as Record<string, unknown>), changed: true }),
    });
    expect(await screen.findByRole('heading', { name: 'New job' })).toBeTruthy();
    // Every section is there.
    for (const section of ['Basics', 'Schedule', 'Sharding', 'Placement', 'Policies', 'Advanced']) expect(screen.getByRole('heading', { name: section })).toBeTruthy();

    type('Cron expression', '61 * * * *');
    const cronIssue = `Invalid cron expression: ${checkerSays({ name: 'x', type: 'shell', command: 'x', cron: '61 * * * *' }, 'cron')}`;
    expect(await screen.findByText(cronIssue)).toBeTruthy();
    expect(input('Cron expression').getAttribute('aria-invalid')).toBe('true');
    expect(input('Cron expression').getAttribute('aria-describedby')).toContain('issues');

    type('Shard count', '0');
    expect(screen.getByText(`Too small: ${checkerSays({ name: 'x', type: 'shell', command: 'x', shardingTotalCount: 0 }, 'shardingTotalCount')}`)).toBeTruthy();
    // Untouched fields keep quiet until a save is tried.
    expect(screen.queryByText(/^Required:/)).toBeNull();

    fireEvent.click(screen.getByRole('button', { name: 'Create job' }));
    const summary = await screen.findByRole('alert');
    expect(within(summary).getByText(/Fix 4 problem\(s\) before saving/)).toBeTruthy();
    expect(within(summary).getByRole('button', { name: /^Command: Required:/ })).toBeTruthy();
    expect(within(summary).getByRole('button', { name: /^Name: Wrong format:/ })).toBeTruthy();
    expect(api.callsTo('POST', '/api/v1/namespaces/shop/jobs')).toHaveLength(0);

    type('Name', 'nightly');
    type('Command', './report.sh');
    type('Cron expression', '0 2 * * *');
    type('Shard count', '2');
    fireEvent.click(screen.getByRole('button', { name: 'Add a parameter' }));
    type('Parameter of row 1', 'north');
    fireEvent.click(screen.getByRole('button', { name: 'Create job' }));

    await waitFor(() => expect(api.callsTo('POST', '/api/v1/namespaces/shop/jobs')).toHaveLength(1));
    const sent = api.callsTo('POST', '/api/v1/namespaces/shop/jobs')[0]!.body as Record<string, unknown>;
    expect(sent).toMatchObject({ name: 'nightly', type: 'shell', command: './report.sh', cron: '0 2 * * *', shardingTotalCount: 2, shardingItemParameters: { '0': 'north' }, enabled: false });
    expect(sent).not.toHaveProperty('handler');
    // What is sent passes the server's checker as it is.
    expect(checkJobConfig(sent).ok).toBe(true);
    await waitFor(() => expect(history.location.pathname).toBe('/ns/shop/jobs/nightly'));
  });

  it('flags a shard item parameter outside the shard range on its row', async () => {
    renderApp('/ns/shop/jobs/new', OWNER);
    await screen.findByRole('heading', { name: 'New job' });
    type('Shard count', '2');
    fireEvent.click(screen.getByRole('button', { name: 'Add a parameter' }));
    type('Item number of row 1', '5');
    const expected = checkerSays({ name: 'x', type: 'shell', command: 'x', shardingTotalCount: 2, shardingItemParameters: { '5': '' } }, 'shardingItemParameters.5');
    expect(await screen.findByText(`Item out of range: ${expected}`)).toBeTruthy();
    expect(input('Item number of row 1').getAttribute('aria-invalid')).toBe('true');
  });

  it('previews the next five fire times in the job’s time zone, with the DST notes', async () => {
    const { api } = renderApp('/ns/shop/jobs/new', OWNER, {
      'GET /api/v1/cron/preview': (call) => ({
        expr: call.query.get('expr'),
        timeZone: 'Europe/Berlin',
        fires: [
          { at: Date.UTC(2025, 2, 29, 1, 30), local: '2025-03-29T02:30:00+01:00', utc: '2025-03-29T01:30:00.000Z', timeZone: 'Europe/Berlin' },
          { at: Date.UTC(2025, 2, 30, 1, 0), local: '2025-03-30T03:00:00+02:00', utc: '2025-03-30T01:00:00.000Z', timeZone: 'Europe/Berlin', dst: 'shifted' },
        ],
        notes: [{ kind: 'skipped', from: '2025-03-30 02:30:00', to: '2025-03-30 02:30:00', count: 1, firesAt: { at: Date.UTC(2025, 2, 30, 1, 0), local: '2025-03-30T03:00:00+02:00', utc: '2025-03-30T01:00:00.000Z', timeZone: 'Europe/Berlin' }, message: '' }],
      }),
    });
    await screen.findByRole('heading', { name: 'New job' });
    expect(screen.getByText(/No cron expression: a passive job/)).toBeTruthy();
    type('Time zone', 'Europe/Berlin');
    type('Cron expression', '30 2 * * *');
    await waitFor(() => expect(api.callsTo('GET', '/api/v1/cron/preview')).toHaveLength(1));
    const query = api.callsTo('GET', '/api/v1/cron/preview')[0]!.query;
    expect([query.get('expr'), query.get('timeZone'), query.get('count')]).toEqual(['30 2 * * *', 'Europe/Berlin', '5']);
    const fires = await screen.findByRole('list', { name: 'Next fire times' });
    expect(within(fires).getAllByRole('listitem')).toHaveLength(2);
    expect(within(fires).getByText('moved by daylight saving')).toBeTruthy();
    expect(screen.getByText(/1 fire time\(s\) from 2025-03-30 02:30:00 to 2025-03-30 02:30:00 do not exist in Europe\/Berlin/)).toBeTruthy();

    // An expression the checker refuses is not sent.
    type('Cron expression', '30 2 * *');
    expect(await screen.findByText('Fix the cron expression and the time zone to see the next fire times.')).toBeTruthy();
    // … and the next valid one is: the requests sent are the two valid expressions, in order.
    type('Cron expression', '0 3 * * *');
    await waitFor(() => expect(api.callsTo('GET', '/api/v1/cron/preview')).toHaveLength(2));
    expect(api.callsTo('GET', '/api/v1/cron/preview').map((c) => c.query.get('expr'))).toEqual(['30 2 * * *', '0 3 * * *']);
  });

  it('shows the server’s 400 issues under their fields', async () => {
    renderApp('/ns/shop/jobs/new', OWNER, {
      'POST /api/v1/namespaces/shop/jobs': () =>
        answer(400, { error: { code: 'validation', message: 'job: 1 problem', details: { issues: [{ field: 'downstream[0]', rule: 'unknown-job', message: "downstream[0]: no job named 'ghost' in namespace 'shop'" }] } } }),
    });
    await screen.findByRole('heading', { name: 'New job' });
    type('Name', 'nightly');
    type('Command', 'true');
    type('Downstream jobs', 'ghost');
    fireEvent.click(screen.getByRole('button', { name: 'Create job' }));
    expect(await screen.findByText("No such job: no job named 'ghost' in namespace 'shop'")).toBeTruthy();
    expect(input('Downstream jobs').getAttribute('aria-invalid')).toBe('true');
    // Editing the field clears the server's word about it (the next save asks again).
    type('Downstream jobs', '');
    expect(screen.queryByText(/No such job/)).toBeNull();
  });

  it('tells a user without the owner role that they cannot edit', async () => {
    renderApp('/ns/shop/jobs/alpha/edit', OPERATOR);
    expect(await screen.findByText(/Only owners of shop can create or edit its jobs/)).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Save' })).toBeNull();
  });
});

describe('the job editor on an existing job', () => {
  const base = config({ name: 'alpha', cron: '0 * * * *', description: 'hourly', enabled: true });
  const theirs = config({ name: 'alpha', cron: '0 */2 * * *', description: 'hourly', enabled: true });
  const detail = (version: number, c: JobConfig) => ({ name: 'alpha', version, config: c, assignment: null, summary: null, nextFireTime: null });
  const conflict = answer(409, { error: { code: 'conflict', message: "job 'alpha' was changed by someone else since version 3", details: { namespace: 'shop', job: 'alpha', version: 4, config: theirs } } });

  /** The job at version 3 until someone else writes version 4 (the first PUT meets it). */
  function server() {
    let current = detail(3, base);
    return {
      'GET /api/v1/namespaces/shop/jobs/alpha': () => current,
      'PUT /api/v1/namespaces/shop/jobs/alpha': (call: Call) => {
        const body = call.body as { version: number; config: Record<string, unknown> };
        if (body.version !== 4) {
          current = detail(4, theirs);
          return conflict;
        }
        return { name: 'alpha', version: 5, config: config(body.config), changed: true };
      },
    };
  }

  async function editDescription() {
    expect(await screen.findByRole('heading', { name: 'Edit alpha' })).toBeTruthy();
    expect(input('Name').readOnly).toBe(true);
    expect(input('Cron expression').value).toBe('0 * * * *');
    type('Description', 'hourly, but better');
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    return screen.findByRole('heading', { name: 'Someone else saved this job while you were editing it' });
  }

  it('shows both versions on a 409 and reapplies the edit on the current version', async () => {
    const { api, history } = renderApp('/ns/shop/jobs/alpha/edit', OWNER, server());
    await editDescription();
    const put = api.callsTo('PUT', '/api/v1/namespaces/shop/jobs/alpha');
    expect(put).toHaveLength(1);
    expect(put[0]!.body).toMatchObject({ version: 3, config: { name: 'alpha', description: 'hourly, but better', cron: '0 * * * *' } });

    // Side by side: the fields that differ, who changed which.
    const table = screen.getByRole('table', { name: 'Fields that differ between your edit and the current version' });
    const headers = within(table).getAllByRole('columnheader').map((h) => h.textContent);
    expect(headers).toEqual(['Field', 'Your edit', 'Current (version 4)']);
    const cronRow = within(table).getByRole('rowheader', { name: 'cron' }).closest('tr')!;
    expect(within(cronRow).getByText('0 * * * *')).toBeTruthy();
    expect(within(cronRow).getByText('0 */2 * * *')).toBeTruthy();
    expect(within(cronRow).getByText('they changed it')).toBeTruthy();
    const descriptionRow = within(table).getByRole('rowheader', { name: 'description' }).closest('tr')!;
    expect(within(descriptionRow).getByText('hourly, but better')).toBeTruthy();
    expect(within(descriptionRow).getByText('you changed it')).toBeTruthy();

    fireEvent.click(screen.getByRole('button', { name: 'Reapply my edit on version 4' }));
    await waitFor(() => expect(api.callsTo('PUT', '/api/v1/namespaces/shop/jobs/alpha')).toHaveLength(2));
    expect(api.callsTo('PUT', '/api/v1/namespaces/shop/jobs/alpha')[1]!.body).toMatchObject({ version: 4, config: { description: 'hourly, but better', cron: '0 * * * *' } });
    await waitFor(() => expect(history.location.pathname).toBe('/ns/shop/jobs/alpha'));
  });

  it('reloads the current version on request, discarding the edit', async () => {
    const { api } = renderApp('/ns/shop/jobs/alpha/edit', OWNER, server());
    await editDescription();
    const reads = api.callsTo('GET', '/api/v1/namespaces/shop/jobs/alpha').length;
    fireEvent.click(screen.getByRole('button', { name: 'Reload theirs (discard my edit)' }));
    expect(await screen.findByText('Reloaded version 4; your edit was discarded.')).toBeTruthy();
    expect(api.callsTo('GET', '/api/v1/namespaces/shop/jobs/alpha').length).toBe(reads + 1);
    expect(screen.queryByRole('heading', { name: 'Someone else saved this job while you were editing it' })).toBeNull();
    expect(input('Description').value).toBe('hourly');
    expect(input('Cron expression').value).toBe('0 */2 * * *');
    expect(screen.getByText('Editing version 4')).toBeTruthy();
    // No write on reload; the next save starts from version 4.
    expect(api.callsTo('PUT', '/api/v1/namespaces/shop/jobs/alpha')).toHaveLength(1);
    type('Retries', '2');
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.callsTo('PUT', '/api/v1/namespaces/shop/jobs/alpha')).toHaveLength(2));
    expect(api.callsTo('PUT', '/api/v1/namespaces/shop/jobs/alpha')[1]!.body).toMatchObject({ version: 4, config: { cron: '0 */2 * * *', retry: { count: 2 } } });
  });
});
