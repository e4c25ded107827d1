// The config history panel against a fake API: the versions, the field-by-field diff of the two
// picked, and the rollback — confirmed first, sent with the current version, a 409 said clearly.
import { QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { createQueryClient } from '../src/app/queryClient';
import type { Principal } from '../src/api/types';
import { JobHistoryPanel } from '../src/features/job-history/JobHistoryPanel';
import { I18nProvider } from '../src/i18n/I18nProvider';
import { answer, fakeApi, type Call } from './fake-api';

const OWNER: Principal = { user: 'oona', admin: false, roles: { shop: 'owner' }, via: 'session' };
const VIEWER: Principal = { user: 'vic', admin: false, roles: { shop: 'viewer' }, via: 'session' };
const BASE = '/api/v1/namespaces/shop/jobs/alpha';
const AT = Date.UTC(2026, 0, 2, 3, 4, 5);

function history(current: number) {
  const versions = [5, 4, 2].filter((v) => v <= current);
  if (current > 5) versions.unshift(current);
  return { job: 'alpha', limit: 50, currentVersion: current, versions: versions.map((version) => ({ version, author: version === 2 ? 'cli:ops@host' : 'oona', at: AT + version * 60_000 })) };
}

/** A diff answer: `cron` changed between any two versions, and `enabled` between 2 and any other. */
function diff(call: Call) {
  const from = Number(call.query.get('from'));
  const to = Number(call.query.get('to'));
  const changes: Array<{ field: string; before: unknown; after: unknown }> = [{ field: 'cron', before: `cron of v${from}`, after: `cron of v${to}` }];
  if ((from === 2) !== (to === 2)) changes.push({ field: 'enabled', before: from !== 2, after: to !== 2 });
  return { job: 'alpha', from, to, changes };
}

function renderPanel(me: Principal, handlers: Record<string, (call: Call) => unknown> = {}) {
  const api = fakeApi({ 'GET /api/v1/auth/me': () => me, [`GET ${BASE}/history`]: () => history(5), [`GET ${BASE}/diff`]: diff, ...handlers });
  render(
    <I18nProvider locale="en">
      <QueryClientProvider client={createQueryClient()}>
        <JobHistoryPanel namespace="shop" job="alpha" />
      </QueryClientProvider>
    </I18nProvider>,
  );
  return api;
}

const diffCalls = (api: ReturnType<typeof fakeApi>) => api.callsTo('GET', `${BASE}/diff`).map((c) => `${c.query.get('from')}→${c.query.get('to')}`);

describe('the config history panel', () => {
  it('lists the versions and diffs the two picked, field by field', async () => {
    const api = renderPanel(VIEWER);
    const table = await screen.findByRole('table', { name: 'Config versions of alpha' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows.map((r) => within(r).getByRole('rowheader').textContent)).toEqual(['Version 5 current', 'Version 4', 'Version 2']);
    expect(within(rows[2]!).getByText('cli:ops@host')).toBeTruthy();

    // The newest two by default.
    const changes = await screen.findByRole('table', { name: 'Changes from version 4 to version 5' });
    expect(within(changes).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['Field', 'Version 4', 'Version 5']);
    expect(within(changes).getByText('cron of v4')).toBeTruthy();
    expect(within(changes).getByText('cron of v5')).toBeTruthy();

    fireEvent.click(screen.getByRole('radio', { name: 'Compare from version 2' }));
    const wider = await screen.findByRole('table', { name: 'Changes from version 2 to version 5' });
    const enabledRow = within(wider).getByRole('rowheader', { name: 'enabled' }).closest('tr')!;
    expect(within(enabledRow).getByText('false')).toBeTruthy();
    expect(within(enabledRow).getByText('true')).toBeTruthy();
    expect(diffCalls(api)).toEqual(['4→5', '2→5']);

    // The same version twice is no comparison.
    fireEvent.click(screen.getByRole('radio', { name: 'Compare to version 2' }));
    expect(screen.getByText('Pick two different versions (From and To) to compare them.')).toBeTruthy();
    // A viewer gets no rollback.
    expect(screen.queryByRole('button', { name: /Roll back/ })).toBeNull();
  });

  it('rolls back after a confirmation that shows what changes, from the current version', async () => {
    const api = renderPanel(OWNER, {
      [`POST ${BASE}/rollback`]: (call) => ({ name: 'alpha', version: 6, config: {}, changed: true, rolledBackTo: (call.body as { version: number }).version }),
    });
    await screen.findByRole('table', { name: 'Config versions of alpha' });
    // No rollback to the version the job is at.
    expect(screen.queryByRole('button', { name: 'Roll back to version 5' })).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Roll back to version 2' }));

    const dialog = screen.getByRole('dialog', { name: 'Roll back to version 2?' });
    expect(within(dialog).getByText(/saved by cli:ops@host/)).toBeTruthy();
    const changes = await within(dialog).findByRole('table', { name: 'These fields change:' });
    expect(within(changes).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['Field', 'Now (version 5)', 'After (as version 2)']);
    expect(within(changes).getByRole('rowheader', { name: 'enabled' })).toBeTruthy();
    expect(api.callsTo('POST', `${BASE}/rollback`)).toHaveLength(0);

    fireEvent.click(within(dialog).getByRole('button', { name: 'Roll back' }));
    expect(await screen.findByText('Rolled back to version 2: the job is now at version 6.')).toBeTruthy();
    expect(api.callsTo('POST', `${BASE}/rollback`).map((c) => c.body)).toEqual([{ version: 2, currentVersion: 5 }]);
    expect(screen.queryByRole('dialog')).toBeNull();
    // The history is read again.
    await waitFor(() => expect(api.callsTo('GET', `${BASE}/history`).length).toBeGreaterThan(1));
  });

  it('says clearly when someone wrote the job meanwhile, and rolls back from the version it is at', async () => {
    let current = 5;
    const api = renderPanel(OWNER, {
      [`GET ${BASE}/history`]: () => history(current),
      [`POST ${BASE}/rollback`]: (call) => {
        const body = call.body as { version: number; currentVersion: number };
        if (body.currentVersion !== current) return answer(409, { error: { code: 'conflict', message: 'changed since', details: { namespace: 'shop', job: 'alpha', version: current, config: {} } } });
        return { name: 'alpha', version: current + 1, config: {}, changed: true, rolledBackTo: body.version };
      },
    });
    await screen.findByRole('table', { name: 'Config versions of alpha' });
    current = 7; // someone saves twice after the history was read
    fireEvent.click(screen.getByRole('button', { name: 'Roll back to version 4' }));
    const dialog = screen.getByRole('dialog', { name: 'Roll back to version 4?' });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Roll back' }));

    expect(await within(dialog).findByText(/Someone else changed the job after this history was loaded \(it is now at version 7\)/)).toBeTruthy();
    // The history is read again, and the dialog now shows the change from version 7.
    expect(await within(dialog).findByRole('columnheader', { name: 'Now (version 7)' })).toBeTruthy();
    const confirm = within(dialog).getByRole('button', { name: 'Roll back' }) as HTMLButtonElement;
    await waitFor(() => expect(confirm.disabled).toBe(false));
    fireEvent.click(confirm);
    expect(await screen.findByText('Rolled back to version 4: the job is now at version 8.')).toBeTruthy();
    expect(api.callsTo('POST', `${BASE}/rollback`).map((c) => c.body)).toEqual([
      { version: 4, currentVersion: 5 },
      { version: 4, currentVersion: 7 },
    ]);
  });
});
