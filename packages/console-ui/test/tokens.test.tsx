// The API tokens page through the whole app against a fake API: a new token's secret is shown
// once (with a warning and a copy button) and gone once dismissed — the list never has it; revoke
// after a confirmation; a session signed in with a token cannot create one.
import type { TokenAnswer } from '@orrery/console/api-types';
import { createMemoryHistory } from '@tanstack/react-router';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { App } from '../src/app/App';
import type { Principal } from '../src/api/types';
import { answer, fakeApi, type Call } from './fake-api';

const ME: Principal = { user: 'olga', admin: false, roles: { shop: 'operator' }, via: 'session' };
const SECRET = 'orr_0123456789abcdef_s3cr3t-value-shown-once';
const OLD: TokenAnswer = { id: 'aaaaaaaaaaaaaaaa', user: 'olga', name: 'nightly backup', createdAt: Date.UTC(2025, 5, 1), expiresAt: null };

function renderApp(me: Principal, handlers: Record<string, (call: Call) => unknown> = {}) {
  let tokens: TokenAnswer[] = [OLD];
  const api = fakeApi({
    'GET /api/v1/auth/me': () => me,
    'GET /api/v1/namespaces': () => ({ namespaces: [] }),
    'GET /api/v1/tokens': () => ({ tokens }),
    'POST /api/v1/tokens': (call) => {
      const body = call.body as { name: string; expiresInDays?: number };
      const view: TokenAnswer = { id: 'bbbbbbbbbbbbbbbb', user: me.user, name: body.name, createdAt: Date.now(), expiresAt: body.expiresInDays ? Date.now() + body.expiresInDays * 86_400_000 : null };
      tokens = [...tokens, view];
      return answer(201, { ...view, token: SECRET });
    },
    'DELETE /api/v1/tokens/aaaaaaaaaaaaaaaa': () => {
      tokens = tokens.filter((t) => t.id !== OLD.id);
      return answer(204, null);
    },
    ...handlers,
  });
  render(<App history={createMemoryHistory({ initialEntries: ['/tokens'] })} locale="en" />);
  return api;
}

describe('the API tokens page', () => {
  afterEach(() => {
    delete (navigator as { clipboard?: unknown }).clipboard;
  });

  it('shows a new token’s secret once, with a warning and a copy button', async () => {
    const writeText = vi.fn(async () => undefined);
    Object.defineProperty(navigator, 'clipboard', { configurable: true, value: { writeText } });
    const api = renderApp(ME);
    expect(await screen.findByRole('rowheader', { name: 'nightly backup' })).toBeTruthy();

    fireEvent.change(screen.getByLabelText('Name'), { target: { value: 'ci deploy' } });
    fireEvent.change(screen.getByLabelText('Expires after (days)'), { target: { value: '30' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create token' }));

    const panel = (await screen.findByRole('heading', { name: 'Your new token “ci deploy”' })).closest('section')!;
    expect(api.callsTo('POST', '/api/v1/tokens')[0]!.body).toEqual({ name: 'ci deploy', expiresInDays: 30 });
    expect(within(panel).getByText(/it is shown only this once/)).toBeTruthy();
    expect((within(panel).getByLabelText('The new token') as HTMLInputElement).value).toBe(SECRET);
    expect(screen.getAllByDisplayValue(SECRET)).toHaveLength(1);
    fireEvent.click(within(panel).getByRole('button', { name: 'Copy' }));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith(SECRET));
    expect(await within(panel).findByText('Copied to the clipboard.')).toBeTruthy();
    // The list is read again and shows the new token — without its secret.
    expect(await screen.findByRole('rowheader', { name: 'ci deploy' })).toBeTruthy();
    expect(screen.getByText('bbbbbbbbbbbbbbbb')).toBeTruthy();
    // No second token can be made while the secret is up: the create form comes back after it.
    expect(screen.queryByRole('button', { name: 'Create token' })).toBeNull();

    fireEvent.click(within(panel).getByRole('button', { name: 'I have copied it' }));
    expect(screen.queryByDisplayValue(SECRET)).toBeNull();
    expect(document.body.textContent).not.toContain(SECRET);
    expect(screen.getByRole('button', { name: 'Create token' })).toBeTruthy();
  });

  it('selects the secret for a manual copy when the clipboard is refused', async () => {
    Object.defineProperty(navigator, 'clipboard', { configurable: true, value: { writeText: async () => Promise.reject(new Error('denied')) } });
    renderApp(ME);
    await screen.findByRole('rowheader', { name: 'nightly backup' });
    fireEvent.change(screen.getByLabelText('Name'), { target: { value: 'ci' } });
    fireEvent.change(screen.getByLabelText('Expires after (days)'), { target: { value: '' } });
    expect(screen.getByText('This token will never expire: it works until you revoke it.')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Create token' }));
    const secret = (await screen.findByLabelText('The new token')) as HTMLInputElement;
    expect(screen.getByText('It never expires.', { exact: false })).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Copy' }));
    expect(await screen.findByText(/The browser did not allow copying/)).toBeTruthy();
    expect(document.activeElement).toBe(secret);
  });

  it('revokes a token after a confirmation', async () => {
    const api = renderApp(ME);
    await screen.findByRole('rowheader', { name: 'nightly backup' });
    fireEvent.click(screen.getByRole('button', { name: 'Revoke token nightly backup (aaaaaaaaaaaaaaaa)' }));
    const dialog = await screen.findByRole('alertdialog', { name: 'Revoke token nightly backup?' });
    expect(api.callsTo('DELETE', '/api/v1/tokens/aaaaaaaaaaaaaaaa')).toHaveLength(0);
    fireEvent.click(within(dialog).getByRole('button', { name: 'Revoke' }));
    expect(await screen.findByText('Token nightly backup revoked.')).toBeTruthy();
    expect(api.callsTo('DELETE', '/api/v1/tokens/aaaaaaaaaaaaaaaa')).toHaveLength(1);
    expect(await screen.findByText('You have no API tokens.')).toBeTruthy();
  });

  it('offers no create form to a caller signed in with a token', async () => {
    renderApp({ ...ME, via: 'token' });
    await screen.findByRole('rowheader', { name: 'nightly backup' });
    expect(screen.queryByRole('button', { name: 'Create token' })).toBeNull();
    expect(screen.getByText(/tokens are created from a signed-in session only/)).toBeTruthy();
  });
});
