// The users page through the whole app against a fake API: admins only; create with roles; edit
// roles (compare-and-set — a 409 shows the user as it is now); reset a password; delete after a
// confirmation, with the version read.
import type { UserAnswer } from '@orrery/console/api-types';
import { createMemoryHistory } from '@tanstack/react-router';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { App } from '../src/app/App';
import type { Principal } from '../src/api/types';
import { answer, fakeApi, type Call } from './fake-api';

const ADMIN: Principal = { user: 'ada', admin: true, roles: {}, via: 'session' };
const OWNER: Principal = { user: 'oona', admin: false, roles: { shop: 'owner' }, via: 'session' };

const USERS: UserAnswer[] = [
  { name: 'ada', admin: true, roles: {}, createdAt: Date.UTC(2025, 0, 1), version: 0 },
  { name: 'olga', admin: false, roles: { shop: 'operator', billing: 'viewer' }, createdAt: Date.UTC(2025, 1, 1), version: 3 },
];

function renderApp(me: Principal, handlers: Record<string, (call: Call) => unknown> = {}) {
  const api = fakeApi({
    'GET /api/v1/auth/me': () => me,
    'GET /api/v1/namespaces': () => ({ namespaces: [] }),
    'GET /api/v1/users': () => ({ users: USERS }),
    ...handlers,
  });
  render(<App history={createMemoryHistory({ initialEntries: ['/users'] })} locale="en" />);
  return api;
}

const actionsOf = (name: string) => screen.getByRole('group', { name: `Actions on ${name}` });

describe('the users page', () => {
  it('tells a non-admin it is for administrators, and asks nothing of the API', async () => {
    const api = renderApp(OWNER);
    expect(await screen.findByText(/Only administrators manage users/)).toBeTruthy();
    expect(api.callsTo('GET', '/api/v1/users')).toHaveLength(0);
    expect(screen.queryByRole('button', { name: 'New user' })).toBeNull();
  });

  it('lists users with the admin flag and their roles per namespace', async () => {
    renderApp(ADMIN);
    const olga = (await screen.findByRole('rowheader', { name: 'olga' })).closest('tr')!;
    expect(within(olga).getByRole('list', { name: 'Roles of olga' }).textContent).toBe('billing viewershop operator');
    const ada = screen.getByRole('rowheader', { name: 'ada you' }).closest('tr')!;
    expect(within(ada).getByText('admin')).toBeTruthy();
  });

  it('creates a user with roles', async () => {
    const api = renderApp(ADMIN, { 'POST /api/v1/users': (call) => answer(201, { ...(call.body as object), createdAt: Date.now(), version: 0 }) });
    await screen.findByRole('rowheader', { name: 'olga' });
    fireEvent.click(screen.getByRole('button', { name: 'New user' }));
    const form = screen.getByRole('form', { name: 'New user' });
    fireEvent.change(within(form).getByLabelText('User name'), { target: { value: 'nina' } });
    fireEvent.change(within(form).getByLabelText('Password'), { target: { value: 'correct horse' } });
    fireEvent.change(within(form).getByLabelText('Repeat the password'), { target: { value: 'correct horse' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Add a role' }));
    fireEvent.change(within(form).getByLabelText('Namespace of role 1'), { target: { value: 'shop' } });
    fireEvent.change(within(form).getByLabelText('Role 1'), { target: { value: 'owner' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Add a role' }));
    fireEvent.change(within(form).getByLabelText('Namespace of role 2'), { target: { value: 'shop' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Create user' }));
    // The same namespace twice is refused here, before any request.
    expect(await within(form).findByText(/This namespace is listed twice/)).toBeTruthy();
    expect(api.callsTo('POST', '/api/v1/users')).toHaveLength(0);

    fireEvent.click(within(form).getByRole('button', { name: 'Remove role 2 (shop)' }));
    fireEvent.click(within(form).getByRole('button', { name: 'Create user' }));
    expect(await screen.findByText('User nina created.')).toBeTruthy();
    expect(api.callsTo('POST', '/api/v1/users')[0]!.body).toEqual({ name: 'nina', password: 'correct horse', admin: false, roles: { shop: 'owner' } });
  });

  it('edits roles from the version read, and shows the current user after a conflict', async () => {
    const current: UserAnswer = { ...USERS[1]!, roles: { shop: 'owner' }, version: 4 };
    let puts = 0;
    const api = renderApp(ADMIN, {
      'PUT /api/v1/users/olga': (call) => {
        puts += 1;
        if (puts === 1) return answer(409, { error: { code: 'conflict', message: "user 'olga' was changed by someone else", details: { user: 'olga', version: 4, current } } });
        return { ...current, ...(call.body as object), version: 5 };
      },
    });
    await screen.findByRole('rowheader', { name: 'olga' });
    fireEvent.click(within(actionsOf('olga')).getByRole('button', { name: 'Edit roles…' }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit olga' });
    expect((within(dialog).getByLabelText('Namespace of role 1') as HTMLInputElement).value).toBe('billing');
    fireEvent.change(within(dialog).getByLabelText('Role 1'), { target: { value: 'operator' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.callsTo('PUT', '/api/v1/users/olga')).toHaveLength(1));
    expect(api.callsTo('PUT', '/api/v1/users/olga')[0]!.body).toEqual({ version: 3, admin: false, roles: { billing: 'operator', shop: 'operator' } });

    // The conflict: the form now holds the user as it is (one role, version 4).
    expect(await within(dialog).findByText(/Someone changed olga meanwhile/)).toBeTruthy();
    expect((within(dialog).getByLabelText('Namespace of role 1') as HTMLInputElement).value).toBe('shop');
    expect((within(dialog).getByLabelText('Role 1') as HTMLSelectElement).value).toBe('owner');
    expect(within(dialog).queryByLabelText('Namespace of role 2')).toBeNull();
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('User olga saved.')).toBeTruthy();
    expect(api.callsTo('PUT', '/api/v1/users/olga')[1]!.body).toEqual({ version: 4, admin: false, roles: { shop: 'owner' } });
  });

  it('resets a password only when both entries match', async () => {
    const api = renderApp(ADMIN, { 'PUT /api/v1/users/olga': () => ({ ...USERS[1]!, version: 4 }) });
    await screen.findByRole('rowheader', { name: 'olga' });
    fireEvent.click(within(actionsOf('olga')).getByRole('button', { name: 'Reset password…' }));
    const dialog = await screen.findByRole('dialog', { name: 'Reset the password of olga' });
    fireEvent.change(within(dialog).getByLabelText('New password'), { target: { value: 'a new password' } });
    fireEvent.change(within(dialog).getByLabelText('Repeat the password'), { target: { value: 'a new passw0rd' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Set password' }));
    expect(await within(dialog).findByText('The two passwords differ.')).toBeTruthy();
    expect(api.callsTo('PUT', '/api/v1/users/olga')).toHaveLength(0);
    fireEvent.change(within(dialog).getByLabelText('Repeat the password'), { target: { value: 'a new password' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Set password' }));
    expect(await screen.findByText('The password of olga was reset; their sessions ended.')).toBeTruthy();
    expect(api.callsTo('PUT', '/api/v1/users/olga')[0]!.body).toEqual({ version: 3, password: 'a new password' });
  });

  it('deletes a user after a confirmation, with the version read', async () => {
    const api = renderApp(ADMIN, { 'DELETE /api/v1/users/olga': () => answer(204, null) });
    await screen.findByRole('rowheader', { name: 'olga' });
    fireEvent.click(within(actionsOf('olga')).getByRole('button', { name: 'Delete…' }));
    const dialog = await screen.findByRole('alertdialog', { name: 'Delete user olga?' });
    expect(within(dialog).getByText(/their API tokens are revoked/)).toBeTruthy();
    expect(api.callsTo('DELETE', '/api/v1/users/olga')).toHaveLength(0);
    fireEvent.click(within(dialog).getByRole('button', { name: 'Delete user' }));
    expect(await screen.findByText('User olga deleted.')).toBeTruthy();
    expect(api.callsTo('DELETE', '/api/v1/users/olga')[0]!.query.get('version')).toBe('3');
  });
});
