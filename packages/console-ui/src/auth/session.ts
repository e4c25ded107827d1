/** The session: who is signed in (`GET /auth/me`), signing in and out. */
import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../api/client';
import type { Principal } from '../api/types';
import { can, type Action } from './access';

/** Query keys of the session. */
export const sessionKeys = {
  all: ['session'] as const,
  me: () => [...sessionKeys.all, 'me'] as const,
};

/** The signed-in principal (401 when nobody is). */
export const meQuery = () =>
  queryOptions({
    queryKey: sessionKeys.me(),
    queryFn: ({ signal }) => api<Principal>('/auth/me', { signal }),
    staleTime: 60_000,
    retry: false,
  });

/** Signs in; the answer is the principal (with the session cookie set). */
export const login = (user: string, password: string) => api<Principal & { expiresAt: number }>('/auth/login', { method: 'POST', body: { user, password } });
/** Signs out (everywhere: every session of the user on every console). */
export const logout = (everywhere = false) => api<void>('/auth/logout', { method: 'POST', query: { everywhere: everywhere || undefined } });

/** The signed-in principal and a `can` bound to it (inside the signed-in part of the app). */
export function useSession(): { principal: Principal; can: (action: Action, namespace?: string) => boolean } {
  const { data } = useQuery(meQuery());
  // The signed-in routes load it before they render (router.tsx): undefined only after a sign-out.
  const principal = data ?? { user: '', admin: false, roles: {}, via: 'session' as const };
  return { principal, can: (action, namespace) => can(data, action, namespace) };
}
