// The jobs page's owner tools through the whole app against a fake API: batch delete with its
// confirmation (enabled jobs refused unless forced), copy, stop, export and import (dry run, then
// apply), and which of them each role sees.
import { createMemoryHistory } from '@tanstack/react-router';
import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { App } from '../src/app/App';
import type { JobListItem, JobListPage, Principal } from '../src/api/types';
import { answer, fakeApi, type Call } from './fake-api';

const OWNER: Principal = { user: 'oona', admin: false, roles: { shop: 'owner' }, via: 'session' };
const OPERATOR: Principal = { user: 'olga', admin: false, roles: { shop: 'operator' }, via: 'session' };
const VIEWER: Principal = { user: 'vic', admin: false, roles: { shop: 'viewer' }, via: 'session' };

function job(name: string, extra: Partial<Extract<JobListItem, { broken: false }>> = {}): JobListItem {
  return {
    name, broken: false, version: 1, type: 'shell', description: '', cron: '0 * * * * *', timeZone: 'UTC',
    nextFireTime: Date.UTC(2026, 0, 1, 12), enabled: true, groups: [], shardCount: 1, localMode: false,
    summary: { running: 0, failing: 0, succeeded: 1, unreadable: 0 }, lastOutcomes: [], ...extra,
  };
}

const JOBS = [job('alpha'), job('beta', { enabled: false }), job('gamma', { summary: { running: 1, failing: 0, succeeded: 0, unreadable: 0 } })];

function renderApp(me: Principal, handlers: Record<string, (call: Call) => unknown> = {}) {
  const page = (): JobListPage => ({ total: JOBS.length, limit: 500, offset: 0, cursor: null, nextCursor: null, filter: { name: null, group: null, state: null }, items: JOBS });
  const api = fakeApi({
    'GET /api/v1/auth/me': () => me,
    'GET /api/v1/namespaces': () => ({ namespaces: [] }),
    'GET /api/v1/namespaces/shop/jobs': page,
    ...handlers,
  });
  render(<App history={createMemoryHistory({ initialEntries: ['/ns/shop/jobs'] })} locale="en" />);
  return api;
}

afterEach(() => vi.restoreAllMocks());

describe('the jobs page tools', () => {
  it('deletes the selected jobs after a confirmation that names them; enabled ones only when forced', async () => {
    const api = renderApp(OWNER, {
      'POST /api/v1/namespaces/shop/jobs/batch': (call) => {
        const { names, force } = call.body as { names: string[]; force?: boolean };
        if (!force) {
          return answer(400, { error: { code: 'validation', message: 'batch delete: 1 problem; nothing was done', details: { issues: [{ field: 'names[0]', rule: 'disabled', message: "names[0]: job 'alpha' is enabled; disable it first or send force: true" }] } } });
        }
        return { action: 'delete', results: names.map((name) => ({ name, outcome: 'done' })) };
      },
    });
    await screen.findByRole('link', { name: 'alpha' });
    fireEvent.click(screen.getByRole('checkbox', { name: 'Select alpha' }));
    fireEvent.click(screen.getByRole('checkbox', { name: 'Select beta' }));
    fireEvent.click(within(screen.getByRole('toolbar', { name: 'Actions on the selected jobs' })).getByRole('button', { name: 'Delete…' }));

    const dialog = screen.getByRole('dialog', { name: 'Delete 2 job(s)?' });
    const listed = within(within(dialog).getByRole('list', { name: 'Jobs to delete' })).getAllByRole('listitem').map((li) => li.textContent);
    expect(listed).toEqual(['alpha Enabled', 'beta']);
    expect(within(dialog).getByText(/An enabled job is refused unless you force the delete/)).toBeTruthy();
    expect(within(dialog).getByText('1 of them are enabled.')).toBeTruthy();
    // Focus starts inside the dialog.
    expect(dialog.contains(document.activeElement)).toBe(true);

    fireEvent.click(within(dialog).getByRole('button', { name: 'Delete 2 job(s)' }));
    expect(await within(dialog).findByText(/it is enabled — disable it first/)).toBeTruthy();
    expect(api.callsTo('POST', '/api/v1/namespaces/shop/jobs/batch')[0]!.body).toEqual({ action: 'delete', names: ['alpha', 'beta'], force: false });

    fireEvent.click(within(dialog).getByRole('checkbox', { name: 'Delete enabled jobs too (disable them first)' }));
    fireEvent.click(within(dialog).getByRole('button', { name: 'Delete 2 job(s)' }));
    expect(await screen.findByText('2 job(s) deleted.')).toBeTruthy();
    expect(api.callsTo('POST', '/api/v1/namespaces/shop/jobs/batch')[1]!.body).toEqual({ action: 'delete', names: ['alpha', 'beta'], force: true });
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(screen.queryByRole('toolbar')).toBeNull();
  });

  it('closes the delete confirmation on Escape without deleting', async () => {
    const api = renderApp(OWNER);
    await screen.findByRole('link', { name: 'alpha' });
    fireEvent.click(screen.getByRole('button', { name: 'More actions on beta' }));
    fireEvent.click(screen.getByRole('menuitem', { name: 'Delete…' }));
    const dialog = screen.getByRole('dialog', { name: 'Delete 1 job(s)?' });
    fireEvent.keyDown(dialog, { key: 'Escape' });
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(api.calls.filter((c) => c.method !== 'GET')).toHaveLength(0);
  });

  it('deletes one job from its row menu with DELETE', async () => {
    const api = renderApp(OWNER, { 'DELETE /api/v1/namespaces/shop/jobs/beta': () => answer(204, null) });
    await screen.findByRole('link', { name: 'alpha' });
    fireEvent.click(screen.getByRole('button', { name: 'More actions on beta' }));
    fireEvent.click(screen.getByRole('menuitem', { name: 'Delete…' }));
    fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Delete 1 job(s)' }));
    expect(await screen.findByText('1 job(s) deleted.')).toBeTruthy();
    expect(api.callsTo('DELETE', '/api/v1/namespaces/shop/jobs/beta')[0]!.query.get('force')).toBeNull();
  });

  it('copies a job under the name given, and shows the server’s refusal of a name', async () => {
    const api = renderApp(OWNER, {
      'POST /api/v1/namespaces/shop/jobs/alpha/copy': (call) => {
        const { name } = call.body as { name: string };
        if (name === 'alpha-copy') return answer(409, { error: { code: 'already-exists', message: "job 'alpha-copy' already exists" } });
        return answer(201, { name, version: 0, config: {}, changed: true });
      },
    });
    await screen.findByRole('link', { name: 'alpha' });
    fireEvent.click(screen.getByRole('button', { name: 'More actions on alpha' }));
    fireEvent.click(screen.getByRole('menuitem', { name: 'Copy…' }));
    const dialog = screen.getByRole('dialog', { name: 'Copy 1 job(s)' });
    const name = within(dialog).getByLabelText('New name for alpha') as HTMLInputElement;
    expect(name.value).toBe('alpha-copy');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Copy' }));
    expect(await within(dialog).findByText('A job named alpha-copy already exists.')).toBeTruthy();
    fireEvent.change(name, { target: { value: 'alpha-2' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Copy' }));
    expect(await screen.findByText('1 job(s) copied; the copies are disabled.')).toBeTruthy();
    expect(api.callsTo('POST', '/api/v1/namespaces/shop/jobs/alpha/copy').map((c) => c.body)).toEqual([{ name: 'alpha-copy' }, { name: 'alpha-2' }]);
  });

  it('stops a running job from its row, and the selected ones one request each', async () => {
    const api = renderApp(OPERATOR, {
      'POST /api/v1/namespaces/shop/jobs/gamma/stop': () => answer(202, { name: 'gamma' }),
      'POST /api/v1/namespaces/shop/jobs/alpha/stop': () => answer(202, { name: 'alpha' }),
    });
    await screen.findByRole('link', { name: 'alpha' });
    // A running job offers stop in place of run now.
    const gamma = screen.getByRole('group', { name: 'Actions on gamma' });
    expect(within(gamma).queryByRole('button', { name: 'Run now' })).toBeNull();
    fireEvent.click(within(gamma).getByRole('button', { name: 'Stop' }));
    expect(await screen.findByText('Stop: gamma.')).toBeTruthy();

    fireEvent.click(screen.getByRole('checkbox', { name: 'Select alpha' }));
    fireEvent.click(screen.getByRole('checkbox', { name: 'Select gamma' }));
    fireEvent.click(within(screen.getByRole('toolbar')).getByRole('button', { name: 'Stop' }));
    expect(await screen.findByText('Stop: 2 done, 0 unchanged, 0 failed.')).toBeTruthy();
    expect(api.callsTo('POST', '/api/v1/namespaces/shop/jobs/alpha/stop')).toHaveLength(1);
    expect(api.callsTo('POST', '/api/v1/namespaces/shop/jobs/gamma/stop')).toHaveLength(2);
    // An operator has no owner tools.
    expect(screen.queryByRole('link', { name: 'New job' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Import…' })).toBeNull();
    expect(screen.queryByRole('button', { name: /More actions/ })).toBeNull();
  });

  it('exports the jobs as a YAML file', async () => {
    const saved: Blob[] = [];
    // jsdom has no object URLs: record the file offered instead.
    vi.stubGlobal(
      'URL',
      class extends URL {
        static override createObjectURL(blob: Blob) {
          saved.push(blob);
          return 'blob:orrery-test';
        }
        static override revokeObjectURL() {}
      },
    );
    const click = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(() => undefined);
    const api = renderApp(VIEWER, { 'GET /api/v1/namespaces/shop/export': () => 'jobs:\n  - name: alpha\n' });
    await screen.findByRole('link', { name: 'alpha' });
    expect(screen.queryByRole('link', { name: 'New job' })).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Export' }));
    fireEvent.click(screen.getByRole('menuitem', { name: 'As YAML' }));
    expect(await screen.findByText('Exported to shop-jobs.yaml.')).toBeTruthy();
    expect(api.callsTo('GET', '/api/v1/namespaces/shop/export')[0]!.query.get('format')).toBe('yaml');
    expect(saved).toHaveLength(1);
    const text = await new Promise<string>((resolve) => {
      const reader = new FileReader();
      reader.onload = () => resolve(String(reader.result));
      reader.readAsText(saved[0]!);
    });
    expect(text).toContain('name: alpha');
    expect((click.mock.contexts[0] as HTMLAnchorElement).download).toBe('shop-jobs.yaml');
  });

  it('imports a document: a dry run first, its plan shown, then applied', async () => {
    const plan = {
      dryRun: true,
      changes: [
        { name: 'alpha', action: 'update', enabled: true, changes: [{ field: 'cron', before: '0 * * * * *', after: '0 */5 * * * *' }] },
        { name: 'nightly', action: 'create', enabled: false },
      ],
    };
    const api = renderApp(OWNER, {
      'POST /api/v1/namespaces/shop/import': (call) =>
        call.query.get('dryRun') === 'true' ? plan : { ...plan, dryRun: false, result: { written: ['alpha', 'nightly'], unchanged: [], conflicts: [] } },
    });
    await screen.findByRole('link', { name: 'alpha' });
    fireEvent.click(screen.getByRole('button', { name: 'Import…' }));
    const dialog = screen.getByRole('dialog', { name: 'Import jobs' });
    expect((within(dialog).getByRole('button', { name: /^Apply/ }) as HTMLButtonElement).disabled).toBe(true);
    const document = { jobs: [{ name: 'alpha', type: 'shell', command: 'true', cron: '0 */5 * * * *' }, { name: 'nightly', type: 'shell', command: 'true' }] };
    fireEvent.change(within(dialog).getByLabelText('Document (YAML or JSON)'), { target: { value: JSON.stringify(document) } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Preview changes' }));

    const planned = await within(dialog).findByRole('region', { name: 'What the import would do' });
    expect(within(planned).getByText('1 to create, 1 to update, 0 to replace, 0 unchanged')).toBeTruthy();
    expect(within(planned).getByText('An import never deletes jobs: jobs the document leaves out stay as they are.')).toBeTruthy();
    const changes = within(planned).getByRole('table', { name: 'Changes to alpha' });
    expect(within(changes).getByText('0 */5 * * * *')).toBeTruthy();
    const dryRun = api.callsTo('POST', '/api/v1/namespaces/shop/import')[0]!;
    expect(dryRun.query.get('dryRun')).toBe('true');
    expect(dryRun.body).toEqual(document);

    fireEvent.click(within(dialog).getByRole('button', { name: 'Apply 2 change(s)' }));
    expect(await screen.findByText('Import: 2 written, 0 unchanged, 0 conflicts.')).toBeTruthy();
    const applied = api.callsTo('POST', '/api/v1/namespaces/shop/import')[1]!;
    expect(applied.query.get('dryRun')).toBeNull();
    expect(applied.body).toEqual(document);
    expect(screen.queryByRole('dialog')).toBeNull();
  });

  it('imports a Saturn export: from=saturn, what it refuses and cannot carry over shown before the apply', async () => {
    const plan = {
      dryRun: true,
      saturn: {
        refused: [{ job: 'legacy', reason: "a Java job runs a Java class inside Saturn's Java executor" }],
        notes: [{ job: 'settle', field: 'rerun', note: 'not carried over: Orrery re-runs a crashed fire through failover' }],
      },
      changes: [{ name: 'settle', action: 'create', enabled: false }],
    };
    const api = renderApp(OWNER, {
      'POST /api/v1/namespaces/shop/import': (call) =>
        call.query.get('dryRun') === 'true' ? plan : { ...plan, dryRun: false, result: { written: ['settle'], unchanged: [], conflicts: [] } },
    });
    await screen.findByRole('link', { name: 'alpha' });
    fireEvent.click(screen.getByRole('button', { name: 'Import…' }));
    const dialog = screen.getByRole('dialog', { name: 'Import jobs' });
    fireEvent.click(within(dialog).getByRole('radio', { name: 'a Saturn export (JSON)' }));
    expect(within(dialog).getByText(/Saturn's shell jobs are imported disabled/)).toBeTruthy();
    const exported = [{ jobName: 'settle', jobType: 'SHELL_JOB', cron: '0 * * * * ?', rerun: true }, { jobName: 'legacy', jobType: 'JAVA_JOB' }];
    fireEvent.change(within(dialog).getByLabelText('Saturn export (JSON: a list of Saturn job configs)'), { target: { value: JSON.stringify(exported) } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Preview changes' }));

    const planned = await within(dialog).findByRole('region', { name: 'What the import would do' });
    expect(within(planned).getByText('1 Saturn job(s) cannot be imported:')).toBeTruthy();
    expect(within(planned).getByText(/a Java job runs a Java class/)).toBeTruthy();
    expect(within(planned).getByText('1 Saturn field(s) not carried over, or carried over changed')).toBeTruthy();
    const dryRun = api.callsTo('POST', '/api/v1/namespaces/shop/import')[0]!;
    expect([dryRun.query.get('from'), dryRun.query.get('dryRun')]).toEqual(['saturn', 'true']);
    expect(dryRun.body).toEqual(exported);
    // Switching back to an Orrery document makes the preview stale.
    fireEvent.click(within(dialog).getByRole('radio', { name: 'an Orrery document (YAML or JSON)' }));
    expect((within(dialog).getByRole('button', { name: /^Apply/ }) as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(within(dialog).getByRole('radio', { name: 'a Saturn export (JSON)' }));
    fireEvent.click(within(dialog).getByRole('button', { name: 'Apply 1 change(s)' }));
    expect(await screen.findByText('Import: 1 written, 0 unchanged, 0 conflicts.')).toBeTruthy();
    expect(api.callsTo('POST', '/api/v1/namespaces/shop/import')[1]!.query.get('from')).toBe('saturn');
  });

  it('asks for a new preview when the document changes after one', async () => {
    renderApp(OWNER, { 'POST /api/v1/namespaces/shop/import': () => ({ dryRun: true, changes: [{ name: 'alpha', action: 'unchanged', enabled: true }] }) });
    await screen.findByRole('link', { name: 'alpha' });
    fireEvent.click(screen.getByRole('button', { name: 'Import…' }));
    const dialog = screen.getByRole('dialog', { name: 'Import jobs' });
    const text = within(dialog).getByLabelText('Document (YAML or JSON)');
    fireEvent.change(text, { target: { value: '{"jobs": []}' } });
    await act(async () => fireEvent.click(within(dialog).getByRole('button', { name: 'Preview changes' })));
    await within(dialog).findByRole('region', { name: 'What the import would do' });
    fireEvent.change(text, { target: { value: '{"jobs": [{}]}' } });
    expect(within(dialog).getByText(/The document changed since the preview/)).toBeTruthy();
    expect((within(dialog).getByRole('button', { name: /^Apply/ }) as HTMLButtonElement).disabled).toBe(true);
  });

  it('links the job names to their pages and offers owners a new job', async () => {
    renderApp(OWNER);
    const link = await screen.findByRole('link', { name: 'alpha' });
    expect(link.getAttribute('href')).toBe('/ns/shop/jobs/alpha');
    expect(screen.getByRole('link', { name: 'New job' }).getAttribute('href')).toBe('/ns/shop/jobs/new');
    await waitFor(() => expect(screen.getByRole('button', { name: 'Import…' })).toBeTruthy());
  });
});
